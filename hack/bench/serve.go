package main

// serve: `kubectl doctor serve` over 10 scans of the 30,600-pod cluster —
// memory after each scan and just before the next (no growth), what each
// scan costs the API server (requests, bytes, CPU).
//
// informer: the alternative design measured the same way — shared informers
// (one LIST and one watch per resource, objects trimmed by a transform
// that drops managedFields and everything else a scan does not keep) held
// between scans, the checks run over the informers' objects each interval;
// only the reads no watch cache serves (field-selected events, /metrics)
// are repeated.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

const informerAgent = "kubectl-doctor-informer"

// sample is one point of a long-running client's life.
type sample struct {
	Scan       int     `json:"scan"`
	ScanSec    float64 `json:"scanSeconds"`
	Findings   int     `json:"findings"`
	Requests   int     `json:"requests"` // the client's own count
	Bytes      int64   `json:"bytes"`    // received during this scan (or interval)
	HeapAfter  uint64  `json:"heapAfter"`
	RSSAfter   int64   `json:"rssAfterKiB"`
	HeapBefore uint64  `json:"heapBefore"` // held between scans: just before this scan
	RSSBefore  int64   `json:"rssBeforeKiB"`
	CPU        float64 `json:"cpuSeconds"` // the client's CPU since the previous sample
	CopySec    float64 `json:"copySeconds,omitempty"`
}

// row is a sample with the API server's side added by the parent.
type row struct {
	sample
	audit  int     // requests completed, from the audit log
	apiCPU float64 // the API server's CPU since the previous row
	load   string
}

func printRows(rows []row, what string) {
	fmt.Printf("| scan | scan time | requests (audit) | received | API server CPU | %s CPU | heap after | RSS after | heap just before this scan | RSS just before this scan | load |\n|---|---|---|---|---|---|---|---|---|---|---|\n", what)
	for _, r := range rows {
		fmt.Printf("| %d | %.2f s | %d | %.1f MiB | %.2f s | %.2f s | %.0f MiB | %.0f MiB | %.0f MiB | %.0f MiB | %s |\n",
			r.Scan, r.ScanSec, r.audit, float64(r.Bytes)/(1<<20), r.apiCPU, r.CPU,
			float64(r.HeapAfter)/(1<<20), float64(r.RSSAfter)/1024, float64(r.HeapBefore)/(1<<20), float64(r.RSSBefore)/1024, r.load)
	}
}

// serve runs `kubectl doctor serve` and reads its /metrics after each scan
// and just before the next.
func (e benchEnv) serve(ctx context.Context) error {
	c, err := e.startCopy(ctx, "serve")
	if err != nil {
		return err
	}
	defer c.Stop()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(e.doctor, "serve", "--interval", interval.String(), "--listen", addr)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig)
	var logs lockedBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		fmt.Fprintf(os.Stderr, "serve's log:\n%s", logs.String())
	}()
	apiPid := pidOf(c, "kube-apiserver")
	_, apiCPU, _ := procStat(apiPid)
	_, ownCPU, _ := procStat(cmd.Process.Pid)
	auditOff := fileSize(c.AuditLog())
	var rows []row
	var before struct {
		heap uint64
		rss  int64
	}
	deadline := time.Now().Add(time.Duration(*scans+2)*(*interval) + 5*time.Minute)
	for len(rows) < *scans {
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d scans in time; log:\n%s", len(rows), logs.String())
		}
		time.Sleep(200 * time.Millisecond)
		m, err := scrape("http://" + addr + "/metrics")
		if err != nil {
			continue
		}
		if int(m["kubectl_doctor_scans_total"]) <= len(rows) {
			continue
		}
		rss, cpu, _ := procStat(cmd.Process.Pid)
		_, acpu, _ := procStat(apiPid)
		r := row{sample: sample{Scan: len(rows) + 1, ScanSec: m["kubectl_doctor_last_scan_duration_seconds"],
			Requests: int(m["kubectl_doctor_last_scan_apiserver_requests"]), Bytes: int64(m["kubectl_doctor_last_scan_apiserver_response_bytes"]),
			HeapAfter: uint64(m["go_memstats_heap_alloc_bytes"]), RSSAfter: rss, HeapBefore: before.heap, RSSBefore: before.rss,
			CPU: (cpu - ownCPU).Seconds()}, apiCPU: (acpu - apiCPU).Seconds(), load: loadAvg()}
		if r.ScanSec == 0 {
			r.ScanSec = scanSeconds(logs.String())
		}
		ownCPU, apiCPU = cpu, acpu
		time.Sleep(500 * time.Millisecond) // the audit backend writes in blocking mode; be safe
		reqs := map[string]int{}
		if err := countAudit(c.AuditLog(), auditOff, "kubectl-doctor/", reqs); err != nil {
			return err
		}
		auditOff = fileSize(c.AuditLog())
		r.audit = total(reqs)
		rows = append(rows, r)
		fmt.Fprintf(os.Stderr, "serve scan %d: %.2f s, %d requests, RSS %d MiB (load %s)\n", r.Scan, r.ScanSec, r.audit, rss/1024, r.load)
		// Just before the next scan: what serve holds between scans (0 when
		// the scan overran the interval and the next one started at once).
		before.heap, before.rss = 0, 0
		wait := *interval - time.Duration(r.ScanSec*float64(time.Second)) - 1500*time.Millisecond
		if len(rows) < *scans && wait > 0 {
			time.Sleep(wait)
			if m, err := scrape("http://" + addr + "/metrics"); err == nil {
				before.heap = uint64(m["go_memstats_heap_alloc_bytes"])
			}
			before.rss, _, _ = procStat(cmd.Process.Pid)
		}
	}
	printRows(rows, "serve")
	fmt.Printf("\n(requests in the first column are counted by the API server's audit log; serve's own counter said %d on the last scan)\n", rows[len(rows)-1].Requests)
	return nil
}

// scanSeconds reads the duration of the last scan from serve's log line
// when the histogram is all that /metrics has.
func scanSeconds(log string) float64 {
	lines := strings.Split(strings.TrimSpace(log), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if !strings.Contains(lines[i], "API requests") {
			continue
		}
		f := strings.Fields(lines[i])
		if d, err := time.ParseDuration(f[len(f)-1]); err == nil {
			return d.Seconds()
		}
	}
	return 0
}

// scrape reads a Prometheus text endpoint into "name" -> value, summing
// the series of each name (histograms: their _sum).
func scrape(url string) (map[string]float64, error) {
	resp, err := http.Get(url) //nolint:gosec,noctx // loopback, the benchmark's own child
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			switch {
			case m.Gauge != nil:
				out[name] += m.GetGauge().GetValue()
			case m.Counter != nil:
				out[name] += m.GetCounter().GetValue()
			case m.Untyped != nil:
				out[name] += m.GetUntyped().GetValue()
			}
		}
	}
	return out, nil
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// informer runs the informer client as a child and adds the API server's
// side to each of its samples.
func (e benchEnv) informer(ctx context.Context) error {
	c, err := e.startCopy(ctx, "informer")
	if err != nil {
		return err
	}
	defer c.Stop()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "-mode", "informer-child", "-kubeconfig", c.Kubeconfig, "-interval", interval.String(), "-scans", fmt.Sprint(*scans))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	apiPid := pidOf(c, "kube-apiserver")
	_, apiCPU, _ := procStat(apiPid)
	auditOff := fileSize(c.AuditLog())
	if err := cmd.Start(); err != nil {
		return err
	}
	var rows []row
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var s sample
		if json.Unmarshal(sc.Bytes(), &s) != nil {
			continue
		}
		_, acpu, _ := procStat(apiPid)
		time.Sleep(500 * time.Millisecond)
		reqs := map[string]int{}
		if err := countAudit(c.AuditLog(), auditOff, informerAgent, reqs); err != nil {
			return err
		}
		auditOff = fileSize(c.AuditLog())
		r := row{sample: s, audit: total(reqs), apiCPU: (acpu - apiCPU).Seconds(), load: loadAvg()}
		apiCPU = acpu
		rows = append(rows, r)
		fmt.Fprintf(os.Stderr, "informer scan %d: %.2f s, %d requests completed, RSS %d MiB (load %s) %v\n", s.Scan, s.ScanSec, r.audit, s.RSSAfter/1024, r.load, reqs)
	}
	if err := cmd.Wait(); err != nil {
		return err
	}
	printRows(rows, "informer client")
	fmt.Println("\n(scan 0 is the informers' initial LIST+WATCH until synced; requests are those the audit log saw complete: the watches stay open)")
	return nil
}

// informerChild is the informer-based client: run as a child so that its
// RSS and CPU are its own.
func informerChild(kubeconfig string, every time.Duration, n int) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50) // as kubectl-doctor does
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.UserAgent = informerAgent
	cfg.QPS, cfg.Burst = -1, -1
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	var received atomic.Int64
	var requests atomic.Int64
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return countingRT{rtFunc(func(r *http.Request) (*http.Response, error) { requests.Add(1); return rt.RoundTrip(r) }), &received}
	})
	all := checks.All()
	plan := snapshot.Plan(doctor.Reads(all))
	trim := snapshot.NewTrimmer()
	var trimMu sync.Mutex
	var informers []cache.SharedIndexInformer
	var periodic []snapshot.Resource
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	_, cpu0, _ := procStat(os.Getpid())
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	_, served, err := disc.ServerGroupsAndResources()
	if err != nil {
		return err
	}
	isServed := map[schema.GroupVersionResource]bool{}
	for _, l := range served {
		gv, _ := schema.ParseGroupVersion(l.GroupVersion)
		for _, res := range l.APIResources {
			isServed[gv.WithResource(res.Name)] = true
		}
	}
	for _, r := range plan {
		if r.Path != "" || r.FieldSelector != "" {
			periodic = append(periodic, r)
			continue
		}
		if !isServed[r.GVR()] {
			continue // not served here (the Gateway API): a scan skips it too
		}
		inf, err := newInformer(cfg, r, func(o any) (any, error) {
			if obj, ok := o.(kruntime.Object); ok {
				trimMu.Lock()
				trim.Trim(obj)
				trimMu.Unlock()
			}
			return o, nil
		})
		if err != nil {
			return fmt.Errorf("%s: %w", r, err)
		}
		informers = append(informers, inf)
		go inf.RunWithContext(ctx)
	}
	syncCtx, cancelSync := context.WithTimeout(ctx, 5*time.Minute)
	defer cancelSync()
	for i, inf := range informers {
		if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
			return fmt.Errorf("informer %d did not sync in 5 minutes", i)
		}
	}
	rss, cpu, _ := procStat(os.Getpid())
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	printJSON(sample{Scan: 0, ScanSec: time.Since(start).Seconds(), Requests: int(requests.Swap(0)), Bytes: received.Swap(0),
		HeapAfter: ms.HeapAlloc, RSSAfter: rss, CPU: (cpu - cpu0).Seconds()})
	prevCPU := cpu
	next := time.Now()
	for i := 1; i <= n; i++ {
		next = next.Add(every)
		if i > 1 {
			time.Sleep(time.Until(next))
		}
		rssBefore, _, _ := procStat(os.Getpid())
		runtime.ReadMemStats(&ms)
		heapBefore := ms.HeapAlloc
		scanStart := time.Now()
		var objs []kruntime.Object
		seen := map[types.UID]bool{}
		for _, r := range periodic {
			l, err := floorRead(cfg, r)
			if err != nil {
				return fmt.Errorf("%s: %w", r, err)
			}
			if el, ok := l.(*corev1.EventList); ok {
				items, _ := meta.ExtractList(el)
				for _, it := range items {
					if u := it.(metav1.Object).GetUID(); !seen[u] {
						seen[u] = true
						objs = append(objs, it)
					}
				}
			}
		}
		for _, inf := range informers {
			for _, o := range inf.GetStore().List() {
				objs = append(objs, o.(kruntime.Object))
			}
		}
		copyStart := time.Now()
		snap, err := snapshot.FromObjects(objs...)
		if err != nil {
			return err
		}
		copySec := time.Since(copyStart).Seconds()
		rep := doctor.Run(ctx, snap, all, time.Now())
		scanSec := time.Since(scanStart).Seconds()
		objs, snap = nil, nil
		rss, cpu, _ := procStat(os.Getpid())
		runtime.ReadMemStats(&ms)
		printJSON(sample{Scan: i, ScanSec: scanSec, Findings: len(rep.Findings), Requests: int(requests.Swap(0)), Bytes: received.Swap(0),
			HeapAfter: ms.HeapAlloc, RSSAfter: rss, HeapBefore: heapBefore, RSSBefore: rssBefore, CPU: (cpu - prevCPU).Seconds(), CopySec: copySec})
		prevCPU = cpu
	}
	return nil
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// newInformer is a shared informer of one resource, through a REST client
// that speaks protobuf, with the transform applied to every object before
// it is stored.
func newInformer(cfg *rest.Config, r snapshot.Resource, transform cache.TransformFunc) (cache.SharedIndexInformer, error) {
	c := rest.CopyConfig(cfg)
	c.NegotiatedSerializer = snapshot.Codecs().WithoutConversion()
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
	example, err := snapshot.Scheme().New(gv.WithKind(r.Kind))
	if err != nil {
		return nil, err
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (kruntime.Object, error) {
			list, err := snapshot.Scheme().New(gv.WithKind(r.Kind + "List"))
			if err != nil {
				return nil, err
			}
			return list, client.Get().Resource(r.Resource).VersionedParams(&opts, metav1.ParameterCodec).Do(ctx).Into(list)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.Watch = true
			return client.Get().Resource(r.Resource).VersionedParams(&opts, metav1.ParameterCodec).Watch(ctx)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, example, 0, cache.Indexers{})
	if err := inf.SetTransform(transform); err != nil {
		return nil, err
	}
	return inf, nil
}
