// Command bench measures kubectl-doctor's footprint on a real kube-apiserver
// holding a large synthetic cluster (make bench):
//
//	1,000 nodes; 30,600 pods (25,000 Running, 5,000 Failed OutOfcpu, 600
//	Pending); 1,500 ReplicaSets; 600 Jobs; 2,000 Services and EndpointSlices;
//	5,000 events.
//
// It compares, in the same run, "the floor" — one process that lists exactly
// the resources a scan needs, once each, in parallel, resourceVersion=0,
// protobuf, and decodes them — with a full `kubectl-doctor -o json` scan:
// wall time (median of the runs), peak RSS (the child's rusage), API requests
// by verb and resource (from the API server's audit log), LISTs that reached
// etcd (apiserver_storage_list_total{storage="etcd"} before and after) and
// bytes received.
//
//	go run ./hack/bench [-runs 3] [-doctor bin/kubectl-doctor] [-pods 30600 -nodes 1000]
//	go run ./hack/bench -keep ...          (leave the loaded cluster running)
//	go run ./hack/bench -reuse ...         (measure the cluster -keep left in -dir)
//	go run ./hack/bench floor KUBECONFIG   (the floor client, run as a child)
//
// Each run is a pair, the floor then kubectl-doctor, so that both see the
// same machine load; the report gives medians over the pairs, the median of
// the pairs' ratios, and memory per pod: (peak RSS - the same binary's
// baseline) / pods, the baseline being its peak RSS when it starts and
// exits without reading anything.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "floor-idle" {
		return // the floor's baseline: a started process that reads nothing
	}
	if len(os.Args) > 2 && os.Args[1] == "floor" {
		if err := floor(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "floor:", err)
			os.Exit(1)
		}
		return
	}
	runs := flag.Int("runs", 3, "measured runs of each client")
	doctorBin := flag.String("doctor", "bin/kubectl-doctor", "the kubectl-doctor binary to measure")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "kubectl-doctor-bench"), "state directory of the benchmark cluster")
	keep := flag.Bool("keep", false, "leave the loaded cluster running (for profiling); stop it with: go run ./hack/cluster down with KUBECTL_DOCTOR_DEMO_DIR=DIR")
	flag.IntVar(&benchPods, "pods", runningPods+failedPods+pendingPods, "pods in the synthetic cluster (the other kinds scale with it)")
	flag.IntVar(&benchNodes, "nodes", nodes, "nodes in the synthetic cluster")
	flag.BoolVar(&benchReuse, "reuse", false, "measure the cluster a -keep run left running in -dir instead of loading a new one")
	flag.Parse()
	if *mode != "" { // fleet.go, serve.go
		if err := runModes(*mode, *runs, *doctorBin, *dir); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*runs, *doctorBin, *dir, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

const floorAgent = "kubectl-doctor-floor"

// The size of the cluster to load (-pods, -nodes) and whether to reuse a
// kept one (-reuse).
var (
	benchPods, benchNodes int
	benchReuse            bool
)

// floor is the reference client: every planned read, in parallel, once,
// resourceVersion=0, protobuf, decoded and kept — nothing else.
func floor(kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.UserAgent = floorAgent
	cfg.QPS, cfg.Burst = -1, -1
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	var bytes atomic.Int64
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingRT{rt, &bytes} })
	plan := snapshot.Plan(doctor.Reads(checks.All()))
	kept := make([]runtime.Object, len(plan))
	var wg sync.WaitGroup
	errs := make(chan error, len(plan))
	for i, r := range plan {
		wg.Add(1)
		go func() {
			defer wg.Done()
			obj, err := floorRead(cfg, r)
			if err != nil && r.Extension() && apierrors.IsNotFound(err) {
				err = nil // an API this cluster does not serve (Gateway API): read, empty, as a scan takes it
			}
			if err != nil {
				errs <- fmt.Errorf("%s: %w", r, err)
				return
			}
			kept[i] = obj
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	fmt.Printf(`{"requests":%d,"bytes":%d}`+"\n", len(plan), bytes.Load())
	return nil
}

func floorRead(cfg *rest.Config, r snapshot.Resource) (runtime.Object, error) {
	c := rest.CopyConfig(cfg)
	c.NegotiatedSerializer = snapshot.Codecs().WithoutConversion()
	if r.Path != "" {
		client, err := rest.UnversionedRESTClientFor(c)
		if err != nil {
			return nil, err
		}
		_, err = client.Get().AbsPath(r.Path).DoRaw(context.Background())
		return nil, err
	}
	gv := r.GVR().GroupVersion()
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	if gv.Group == "" {
		c.APIPath = "/api"
	}
	client, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, err
	}
	list, err := snapshot.Scheme().New(gv.WithKind(r.Kind + "List"))
	if err != nil {
		return nil, err
	}
	req := client.Get().Resource(r.Resource).Param("resourceVersion", "0")
	if r.FieldSelector != "" {
		req = req.Param("fieldSelector", r.FieldSelector)
	}
	return list, req.Do(context.Background()).Into(list)
}

type measurement struct {
	wall     time.Duration
	maxRSS   int64 // KiB
	bytes    int64
	requests map[string]int // "verb resource" from the audit log
	etcd     float64        // LISTs served by etcd
}

func run(runs int, doctorBin, dir string, keep bool) error {
	ctx := context.Background()
	if _, err := os.Stat(doctorBin); err != nil {
		return fmt.Errorf("%s: build it first (make build)", doctorBin)
	}
	sh := shapeFor(benchPods, benchNodes)
	c, stop, err := benchCluster(ctx, dir, keep, sh)
	if err != nil {
		return err
	}
	defer stop()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	absDoctor, _ := filepath.Abs(doctorBin)
	clients := []struct {
		name, agent string
		cmd         func() *exec.Cmd
	}{
		{"floor", floorAgent, func() *exec.Cmd { return exec.Command(self, "floor", c.Kubeconfig) }},
		{"kubectl-doctor", "kubectl-doctor/", func() *exec.Cmd {
			// --timeout: the default minute is for an interactive scan; at
			// 150,000 pods on a loaded machine the pod read alone can take it.
			cmd := exec.Command(absDoctor, "-o", "json", "--fail-on", "never", "--stats", "--timeout", "10m")
			cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig)
			return cmd
		}},
	}
	results := map[string][]measurement{}
	baseline := map[string]int64{}
	for name, cmd := range map[string]*exec.Cmd{"floor": exec.Command(self, "floor-idle"), "kubectl-doctor": exec.Command(absDoctor, "version")} {
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s baseline: %w", name, err)
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			baseline[name] = ru.Maxrss
		}
	}
	fmt.Fprintf(os.Stdout, "%d pods, %d nodes; load average before: %s\n", sh.pods(), sh.nodes, loadAvg())
	// One warm-up run each, not measured, then alternate.
	for i := -1; i < runs; i++ {
		for _, cl := range clients {
			m, err := measure(cfg, c.AuditLog(), cl.agent, cl.cmd())
			if err != nil {
				return fmt.Errorf("%s: %w", cl.name, err)
			}
			if i >= 0 {
				results[cl.name] = append(results[cl.name], m)
			}
		}
	}
	fmt.Fprintf(os.Stdout, "load average after: %s\n", loadAvg())
	report(os.Stdout, results, runs)
	reportPairs(os.Stdout, results, baseline, sh.pods())
	return nil
}

// countingRT counts response body bytes, as kubectl-doctor's --stats does.
type countingRT struct {
	next  http.RoundTripper
	bytes *atomic.Int64
}

func (t countingRT) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err == nil {
		resp.Body = &countingBody{resp.Body, t.bytes}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// measure runs one client and reads what it cost from the API server's side.
func measure(cfg *rest.Config, auditLog, agent string, cmd *exec.Cmd) (measurement, error) {
	m := measurement{requests: map[string]int{}}
	before, err := etcdLists(cfg)
	if err != nil {
		return m, err
	}
	auditStart := fileSize(auditLog)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return m, fmt.Errorf("%v: %s", err, errOut.String())
	}
	m.wall = time.Since(start)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.maxRSS = ru.Maxrss
	}
	after, err := etcdLists(cfg)
	if err != nil {
		return m, err
	}
	m.etcd = after - before
	time.Sleep(500 * time.Millisecond) // the audit backend flushes in blocking mode; be safe
	if err := countAudit(auditLog, auditStart, agent, m.requests); err != nil {
		return m, err
	}
	m.bytes = clientBytes(out.String(), errOut.String())
	return m, nil
}

// etcdLists is the API server's count of LISTs served by etcd, not the cache.
// The scrape itself is a GET of /metrics, not a LIST.
func etcdLists(cfg *rest.Config) (float64, error) {
	c := rest.CopyConfig(cfg)
	c.NegotiatedSerializer = snapshot.Codecs().WithoutConversion()
	client, err := rest.UnversionedRESTClientFor(c)
	if err != nil {
		return 0, err
	}
	body, err := client.Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		return 0, err
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		return 0, err
	}
	var n float64
	for _, m := range fams["apiserver_storage_list_total"].GetMetric() {
		if label(m, "storage") == "etcd" {
			n += m.GetCounter().GetValue()
		}
	}
	return n, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// countAudit counts the client's requests, by verb and resource, in the audit
// log written since offset.
func countAudit(path string, offset int64, agent string, into map[string]int) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return err
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e struct {
			Stage, Verb, UserAgent, RequestURI string
			ObjectRef                          *struct{ Resource, APIGroup string }
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Stage != "ResponseComplete" || !strings.HasPrefix(e.UserAgent, agent) {
			continue
		}
		what := e.RequestURI
		if e.ObjectRef != nil {
			what = e.ObjectRef.Resource
			if e.ObjectRef.APIGroup != "" {
				what += "." + e.ObjectRef.APIGroup
			}
			if u, err := url.Parse(e.RequestURI); err == nil && u.Query().Get("fieldSelector") != "" {
				what += "(" + u.Query().Get("fieldSelector") + ")"
			}
		} else if u, err := url.Parse(e.RequestURI); err == nil {
			what = u.Path
		}
		into[e.Verb+" "+what]++
	}
	return sc.Err()
}

// clientBytes reads the body bytes each client reports: the floor prints
// {"bytes":N}; kubectl-doctor --stats prints "N API requests, X MiB received".
func clientBytes(stdout, stderr string) int64 {
	var f struct{ Bytes int64 }
	if json.Unmarshal([]byte(strings.TrimSpace(stdout)), &f) == nil && f.Bytes > 0 {
		return f.Bytes
	}
	for _, line := range strings.Split(stderr, "\n") {
		var n int
		var size float64
		var unit string
		if _, err := fmt.Sscanf(line, "%d API requests, %f %s received:", &n, &size, &unit); err == nil {
			switch unit {
			case "MiB":
				return int64(size * (1 << 20))
			case "KiB":
				return int64(size * (1 << 10))
			}
			return int64(size)
		}
	}
	return 0
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func report(w io.Writer, results map[string][]measurement, runs int) {
	type row struct{ wall, rss, bytes, etcd float64 }
	sum := map[string]row{}
	for name, ms := range results {
		var walls, rss, bytes, etcd []float64
		for _, m := range ms {
			walls = append(walls, m.wall.Seconds())
			rss = append(rss, float64(m.maxRSS)/1024)
			bytes = append(bytes, float64(m.bytes)/(1<<20))
			etcd = append(etcd, m.etcd)
		}
		sum[name] = row{median(walls), median(rss), median(bytes), median(etcd)}
	}
	fmt.Fprintf(w, "\n| client | wall (median of %d) | peak RSS | received | LISTs from etcd |\n|---|---|---|---|---|\n", runs)
	for _, name := range []string{"floor", "kubectl-doctor"} {
		r := sum[name]
		fmt.Fprintf(w, "| %s | %.2f s | %.0f MiB | %.1f MiB | %.0f |\n", name, r.wall, r.rss, r.bytes, r.etcd)
	}
	f, d := sum["floor"], sum["kubectl-doctor"]
	fmt.Fprintf(w, "| doctor/floor | %.2f× | %.2f× | %.2f× | |\n\n", d.wall/f.wall, d.rss/f.rss, d.bytes/max(f.bytes, 1e-9))
	for _, name := range []string{"floor", "kubectl-doctor"} {
		ms := results[name]
		if len(ms) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s, requests of the last run (from the API server's audit log):\n", name)
		reqs := ms[len(ms)-1].requests
		keys := make([]string, 0, len(reqs))
		for k := range reqs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		total := 0
		for _, k := range keys {
			fmt.Fprintf(w, "  %4d  %s\n", reqs[k], k)
			total += reqs[k]
		}
		fmt.Fprintf(w, "  %4d  total\n\n", total)
	}
}
