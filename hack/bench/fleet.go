package main

// The fleet, serve, informer and compare modes of the benchmark: a fleet
// run over three clusters, serve's repeated scans, an informer-based client
// doing the same reads for comparison, and this binary against an older
// one. They share one loaded cluster, kept stopped as a "seed": its etcd
// data is copied for each control plane, so three identical 30,600-pod
// clusters cost one load.
//
//	go run ./hack/bench -mode fleet    [-runs 3] [-doctor bin/kubectl-doctor] [-seed DIR]
//	go run ./hack/bench -mode serve    [-scans 10] [-interval 20s]
//	go run ./hack/bench -mode informer [-scans 10] [-interval 20s]
//	go run ./hack/bench -mode compare  -baseline OLD-BINARY [-runs 3]
//
// Several modes may be given, comma-separated; each starts its clusters
// from the seed and stops them when done.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/localcluster"
)

var (
	mode     = flag.String("mode", "", "fleet, serve, informer, compare (comma-separated); empty: the floor against kubectl-doctor")
	seed     = flag.String("seed", "", "directory of the stopped loaded cluster whose etcd data the modes copy (default DIR/seed; loaded when absent)")
	baseline = flag.String("baseline", "", "compare: the other kubectl-doctor binary, measured interleaved with -doctor")
	scans    = flag.Int("scans", 10, "serve, informer: scans (intervals) to measure")
	interval = flag.Duration("interval", 20*time.Second, "serve, informer: time between scans")
	// The informer client runs as a child of the benchmark.
	childKubeconfig = flag.String("kubeconfig", "", "informer-child: the cluster")
)

// loadedMark is written in the seed directory once its cluster is loaded.
const loadedMark = "loaded"

// runModes runs the named modes, one after the other.
func runModes(modes string, runs int, doctorBin, dir string) error {
	if modes == "informer-child" {
		return informerChild(*childKubeconfig, *interval, *scans)
	}
	ctx := context.Background()
	root, err := localcluster.RepoRoot()
	if err != nil {
		return err
	}
	bins, err := localcluster.Build(ctx, root, os.Stderr)
	if err != nil {
		return err
	}
	seedDir := *seed
	if seedDir == "" {
		seedDir = filepath.Join(dir, fmt.Sprintf("seed-%dpods-%dnodes", benchPods, benchNodes))
	}
	if err := prepareSeed(ctx, bins, seedDir); err != nil {
		return err
	}
	absDoctor, err := filepath.Abs(doctorBin)
	if err != nil {
		return err
	}
	if _, err := os.Stat(absDoctor); err != nil {
		return fmt.Errorf("%s: build it first (make build)", doctorBin)
	}
	env := benchEnv{bins: bins, seed: seedDir, dir: dir, doctor: absDoctor, runs: runs}
	for _, m := range strings.Split(modes, ",") {
		fmt.Printf("\n## %s (%s, load average %s)\n\n", m, time.Now().UTC().Format(time.RFC3339), loadAvg())
		var err error
		switch m {
		case "fleet":
			err = env.fleet(ctx)
		case "serve":
			err = env.serve(ctx)
		case "informer":
			err = env.informer(ctx)
		case "compare":
			err = env.compare(ctx, *baseline)
		default:
			err = fmt.Errorf("unknown -mode %q", m)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", m, err)
		}
		fmt.Printf("\n(load average at the end: %s)\n", loadAvg())
	}
	return nil
}

type benchEnv struct {
	bins      localcluster.Binaries
	seed, dir string
	doctor    string
	runs      int
}

// prepareSeed loads the synthetic cluster into dir once and stops it, so
// that its etcd data can be copied.
func prepareSeed(ctx context.Context, bins localcluster.Binaries, dir string) error {
	if _, err := os.Stat(filepath.Join(dir, loadedMark)); err == nil {
		return nil
	}
	_ = localcluster.StopDir(dir)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	c, err := localcluster.Start(ctx, bins, localcluster.Options{Dir: dir, Log: os.Stderr})
	if err != nil {
		return err
	}
	defer c.Stop()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := loadShape(ctx, cfg, shapeFor(benchPods, benchNodes), os.Stderr); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "loaded the synthetic cluster in %s\n", time.Since(start).Round(time.Second))
	c.Stop()
	return os.WriteFile(filepath.Join(dir, loadedMark), nil, 0o644)
}

// startCopy starts a control plane on a copy of the seed's etcd data.
func (e benchEnv) startCopy(ctx context.Context, name string) (*localcluster.Cluster, error) {
	dir := filepath.Join(e.dir, name)
	_ = localcluster.StopDir(dir)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if out, err := exec.Command("cp", "-a", filepath.Join(e.seed, "etcd"), filepath.Join(dir, "etcd")).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("copying the seed: %v: %s", err, out)
	}
	start := time.Now()
	c, err := localcluster.Start(ctx, e.bins, localcluster.Options{Dir: dir, Log: io.Discard})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "cluster %s ready in %s at %s\n", name, time.Since(start).Round(100*time.Millisecond), c.URL)
	return c, nil
}

// mergedKubeconfig writes one kubeconfig with a context per cluster.
func mergedKubeconfig(path string, clusters map[string]*localcluster.Cluster) error {
	out := clientcmdapi.NewConfig()
	for name, c := range clusters {
		cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
		if err != nil {
			return err
		}
		ctx := cfg.Contexts[cfg.CurrentContext]
		out.Clusters[name] = cfg.Clusters[ctx.Cluster]
		out.AuthInfos[name] = cfg.AuthInfos[ctx.AuthInfo]
		out.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	return clientcmd.WriteToFile(*out, path)
}

// run is one timed child process.
type timed struct {
	wall   time.Duration
	maxRSS int64 // KiB
	stderr string
}

func runTimed(cmd *exec.Cmd) (timed, error) {
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	t := timed{wall: time.Since(start), stderr: errOut.String()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		t.maxRSS = ru.Maxrss
	}
	if err != nil {
		return t, fmt.Errorf("%v: %s", err, errOut.String())
	}
	return t, nil
}

// fleet compares a fleet run of three identical clusters with a single scan
// of each, interleaved: the fleet should cost about the slowest single scan,
// not the sum.
func (e benchEnv) fleet(ctx context.Context) error {
	names := []string{"a", "b", "c"}
	clusters := map[string]*localcluster.Cluster{}
	defer func() {
		for _, c := range clusters {
			c.Stop()
		}
	}()
	for _, n := range names {
		c, err := e.startCopy(ctx, "fleet-"+n)
		if err != nil {
			return err
		}
		clusters[n] = c
	}
	kc := filepath.Join(e.dir, "fleet.kubeconfig")
	if err := mergedKubeconfig(kc, clusters); err != nil {
		return err
	}
	type variant struct {
		name string
		args []string
	}
	variants := []variant{{"fleet a,b,c", []string{"--context", "a,b,c"}}}
	for _, n := range names {
		variants = append(variants, variant{"single " + n, []string{"--context", n}})
	}
	results := map[string][]timed{}
	for i := -1; i < e.runs; i++ {
		// Rotate the order so that no variant always runs first.
		for j := range variants {
			v := variants[(j+max(i, 0))%len(variants)]
			// A long --timeout: on a loaded machine three parallel reads of
			// 30,600 pods can pass the default, and an incomplete scan is
			// no measurement.
			cmd := exec.Command(e.doctor, append([]string{"-o", "json", "--fail-on", "never", "--stats", "--timeout", "10m"}, v.args...)...)
			cmd.Env = append(os.Environ(), "KUBECONFIG="+kc)
			t, err := runTimed(cmd)
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			fmt.Fprintf(os.Stderr, "run %d %s: %.2f s, %d MiB (load %s)\n", i, v.name, t.wall.Seconds(), t.maxRSS/1024, loadAvg())
			if i >= 0 {
				results[v.name] = append(results[v.name], t)
			}
		}
	}
	fmt.Printf("| run | wall (median of %d) | runs | peak RSS (median) |\n|---|---|---|---|\n", e.runs)
	var slowest, sum float64
	for _, v := range variants {
		var walls, rss []float64
		for _, t := range results[v.name] {
			walls = append(walls, t.wall.Seconds())
			rss = append(rss, float64(t.maxRSS)/1024)
		}
		fmt.Printf("| %s | %.2f s | %s | %.0f MiB |\n", v.name, median(walls), joinSeconds(walls), median(rss))
		if strings.HasPrefix(v.name, "single") {
			slowest = max(slowest, median(walls))
			sum += median(walls)
		}
	}
	var fleetWalls []float64
	for _, t := range results["fleet a,b,c"] {
		fleetWalls = append(fleetWalls, t.wall.Seconds())
	}
	f := median(fleetWalls)
	fmt.Printf("\nfleet / slowest single: %.2f×; fleet / sum of singles (a serial loop): %.2f×\n", f/slowest, f/sum)
	return nil
}

func joinSeconds(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strings.Join(s, ", ")
}

// compare measures two kubectl-doctor binaries on the same cluster,
// interleaved: requests (from the audit log), wall, peak RSS, bytes.
func (e benchEnv) compare(ctx context.Context, other string) error {
	if other == "" {
		return errors.New("-baseline: the other binary is required")
	}
	other, err := filepath.Abs(other)
	if err != nil {
		return err
	}
	c, err := e.startCopy(ctx, "compare")
	if err != nil {
		return err
	}
	defer c.Stop()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return err
	}
	bins := []string{e.doctor, other}
	results := map[string][]measurement{}
	for i := -1; i < e.runs; i++ {
		for j := range bins {
			bin := bins[(j+max(i, 0))%len(bins)]
			cmd := exec.Command(bin, "-o", "json", "--fail-on", "never", "--stats")
			cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig)
			m, err := measure(cfg, c.AuditLog(), "kubectl-doctor/", cmd)
			if err != nil {
				return fmt.Errorf("%s: %w", bin, err)
			}
			fmt.Fprintf(os.Stderr, "run %d %s: %.2f s, %d MiB, %d requests (load %s)\n", i, bin, m.wall.Seconds(), m.maxRSS/1024, total(m.requests), loadAvg())
			if i >= 0 {
				results[bin] = append(results[bin], m)
			}
		}
	}
	fmt.Printf("| binary | requests (audit log) | wall (median of %d) | walls | peak RSS (median) | received | LISTs from etcd |\n|---|---|---|---|---|---|---|\n", e.runs)
	for _, bin := range bins {
		var walls, rss, bytes, reqs, etcd []float64
		for _, m := range results[bin] {
			walls = append(walls, m.wall.Seconds())
			rss = append(rss, float64(m.maxRSS)/1024)
			bytes = append(bytes, float64(m.bytes)/(1<<20))
			reqs = append(reqs, float64(total(m.requests)))
			etcd = append(etcd, m.etcd)
		}
		fmt.Printf("| %s | %.0f | %.2f s | %s | %.0f MiB | %.1f MiB | %.0f |\n", bin, median(reqs), median(walls), joinSeconds(walls), median(rss), median(bytes), median(etcd))
	}
	for _, bin := range bins {
		ms := results[bin]
		if len(ms) == 0 {
			continue
		}
		fmt.Printf("\n%s, requests of the last run:\n", bin)
		reqs := ms[len(ms)-1].requests
		keys := make([]string, 0, len(reqs))
		for k := range reqs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Printf("  %4d  %s\n", reqs[k], k)
		}
	}
	return nil
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// procStat is a process's resident set (KiB) and CPU time, from /proc.
func procStat(pid int) (rssKiB int64, cpu time.Duration, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rssKiB, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// Fields after the command name (which may hold spaces): utime is the
	// 14th field, stime the 15th; clock ticks are 100 Hz on Linux.
	s := string(st)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	stt, _ := strconv.ParseInt(f[12], 10, 64)
	return rssKiB, time.Duration(ut+stt) * 10 * time.Millisecond, nil
}

// pidOf reads a component's pid file in a cluster directory.
func pidOf(c *localcluster.Cluster, name string) int {
	b, _ := os.ReadFile(filepath.Join(c.Dir, name+".pid"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

func printJSON(v any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}
