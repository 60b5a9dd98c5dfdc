package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/localcluster"
)

// benchCluster starts and loads a cluster of shape sh in dir, or, with
// -reuse, returns the one a -keep run left there. stop stops what this
// process started, unless keep.
func benchCluster(ctx context.Context, dir string, keep bool, sh shape) (*localcluster.Cluster, func(), error) {
	if benchReuse {
		c := &localcluster.Cluster{Dir: dir, Kubeconfig: filepath.Join(dir, localcluster.AdminUser+".kubeconfig")}
		if _, err := os.Stat(c.Kubeconfig); err != nil {
			return nil, nil, fmt.Errorf("-reuse: no cluster kept in %s (run with -keep first): %w", dir, err)
		}
		return c, func() {}, nil
	}
	root, err := localcluster.RepoRoot()
	if err != nil {
		return nil, nil, err
	}
	bins, err := localcluster.Build(ctx, root, os.Stderr)
	if err != nil {
		return nil, nil, err
	}
	_ = localcluster.StopDir(dir)
	time.Sleep(time.Second)
	if err := os.RemoveAll(dir); err != nil {
		return nil, nil, err
	}
	c, err := localcluster.Start(ctx, bins, localcluster.Options{Dir: dir, Log: os.Stderr, Detach: keep})
	if err != nil {
		return nil, nil, err
	}
	stop := c.Stop
	if keep {
		stop = func() {
			fmt.Fprintf(os.Stderr, "the cluster keeps running: KUBECONFIG=%s (measure it again with -reuse -dir %s)\n", c.Kubeconfig, dir)
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		stop()
		return nil, nil, err
	}
	start := time.Now()
	if err := loadShape(ctx, cfg, sh, os.Stderr); err != nil {
		stop()
		return nil, nil, err
	}
	fmt.Fprintf(os.Stderr, "loaded the synthetic cluster (%d pods, %d nodes) in %s\n", sh.pods(), sh.nodes, time.Since(start).Round(time.Second))
	return c, stop, nil
}

// loadAvg is the machine's 1-, 5- and 15-minute load average.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// reportPairs prints each floor/doctor pair, the medians of their ratios and
// the memory per pod: (peak RSS - baseline) / pods.
func reportPairs(w io.Writer, results map[string][]measurement, baseline map[string]int64, pods int) {
	fl, dr := results["floor"], results["kubectl-doctor"]
	n := min(len(fl), len(dr))
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "| pair | floor wall | doctor wall | wall ratio | floor RSS | doctor RSS | RSS ratio |\n|---|---|---|---|---|---|---|\n")
	var walls, rsss []float64
	for i := range n {
		wr := dr[i].wall.Seconds() / fl[i].wall.Seconds()
		rr := float64(dr[i].maxRSS) / float64(max(fl[i].maxRSS, 1))
		walls, rsss = append(walls, wr), append(rsss, rr)
		fmt.Fprintf(w, "| %d | %.2f s | %.2f s | %.2f× | %.0f MiB | %.0f MiB | %.2f× |\n", i+1,
			fl[i].wall.Seconds(), dr[i].wall.Seconds(), wr, float64(fl[i].maxRSS)/1024, float64(dr[i].maxRSS)/1024, rr)
	}
	fmt.Fprintf(w, "| median | | | %.2f× | | | %.2f× |\n\n", median(walls), median(rsss))
	names := []string{"floor", "kubectl-doctor"}
	sort.Strings(names)
	for _, name := range names {
		var rss []float64
		for _, m := range results[name] {
			rss = append(rss, float64(m.maxRSS))
		}
		b := float64(baseline[name])
		fmt.Fprintf(w, "%s: baseline %.0f MiB, median peak %.0f MiB, %.2f KiB per pod ((peak - baseline) / %d pods)\n",
			name, b/1024, median(rss)/1024, (median(rss)-b)/float64(pods), pods)
	}
}
