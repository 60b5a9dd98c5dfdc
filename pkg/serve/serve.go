// Package serve keeps the last scan of each cluster and serves it: as
// Prometheus metrics (/metrics), as the JSON report (/report), and as
// liveness and readiness (/healthz, /readyz) for the Deployment that runs
// `kubectl doctor serve` in a cluster. It never scans: the command records
// each scan's outcome here.
package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// Namespace prefixes every metric.
const Namespace = "kubectl_doctor"

// Scan is the outcome of one scan of one cluster: a report, or the error
// that kept the scan from running, and what it cost the API server.
type Scan struct {
	Cluster  string
	Report   *doctor.Report
	Err      error
	Started  time.Time
	Duration time.Duration
	// Requests counts HTTP requests sent (retries included), Errors those
	// answered with a status of 400 or more (but 404) or not answered at all, Bytes
	// the response bodies received.
	Requests, Errors int
	Bytes            int64
}

// cluster is what is kept of one cluster between scans.
type cluster struct {
	// report is the last report a scan produced; a failed scan keeps the
	// previous one and sets stale.
	report       *doctor.Report
	stale        bool
	lastErr      string
	lastAttempt  time.Time
	lastSuccess  time.Time
	lastComplete bool
	last         Scan
}

// Server holds the state and the metrics. The zero value is not usable:
// call New.
type Server struct {
	mu       sync.RWMutex
	clusters map[string]*cluster
	// ready is set when every cluster's first scan has finished, whatever
	// its outcome: a cluster that cannot be scanned must still be scraped,
	// or its "scan failing" alert could never fire.
	ready bool
	names []string
	// fleet says whether /report serves a FleetReport (several clusters)
	// rather than one cluster's Report.
	fleet bool

	registry *prometheus.Registry
	duration *prometheus.HistogramVec
	scans    *prometheus.CounterVec
	reqTotal *prometheus.CounterVec
	errTotal *prometheus.CounterVec
}

// New returns a server for the named clusters, with its metrics registered
// on a registry of its own (with the Go and process collectors). With fleet
// /report serves a FleetReport; else names holds the one cluster (its
// context name, "" in-cluster) and /report serves its Report.
func New(names []string, fleet bool) *Server {
	s := &Server{clusters: map[string]*cluster{}, names: append([]string(nil), names...), fleet: fleet}
	for _, n := range names {
		s.clusters[n] = &cluster{}
	}
	s.registry = prometheus.NewRegistry()
	s.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "scan_duration_seconds",
		Help:    "Wall time of each scan: reads, checks and report.",
		Buckets: []float64{0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300},
	}, []string{"cluster"})
	s.scans = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "scans_total",
		Help: "Scans by result: complete, incomplete (a check could not run) or failed (no report; the previous one is kept).",
	}, []string{"cluster", "result"})
	s.reqTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "apiserver_requests_total",
		Help: "HTTP requests sent to the API server by all scans, retries included.",
	}, []string{"cluster"})
	s.errTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "apiserver_request_errors_total",
		Help: "Requests of all scans answered with a status of 400 or more (but 404: the LIST of an add-on kind the cluster does not serve), or not answered.",
	}, []string{"cluster"})
	s.registry.MustRegister(s.duration, s.scans, s.reqTotal, s.errTotal, (*stateCollector)(s),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return s
}

// Registry is where the metrics are registered (tests gather from it).
func (s *Server) Registry() *prometheus.Registry { return s.registry }

// Record keeps the outcome of one scan. A failed scan (no report) keeps
// the cluster's previous report and marks it stale.
func (s *Server) Record(sc Scan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.clusters[sc.Cluster]
	if c == nil {
		c = &cluster{}
		s.clusters[sc.Cluster] = c
		s.names = append(s.names, sc.Cluster)
	}
	end := sc.Started.Add(sc.Duration)
	c.lastAttempt, c.last = end, sc
	result := "failed"
	switch {
	case sc.Report == nil:
		c.stale = c.report != nil
		c.lastComplete = false
		c.lastErr = "the scan did not run"
		if sc.Err != nil {
			c.lastErr = sc.Err.Error()
		}
	default:
		c.report, c.stale, c.lastErr = sc.Report, false, ""
		c.lastSuccess = end
		c.lastComplete = sc.Report.Complete
		result = "incomplete"
		if sc.Report.Complete {
			result = "complete"
		}
	}
	s.duration.WithLabelValues(sc.Cluster).Observe(sc.Duration.Seconds())
	s.scans.WithLabelValues(sc.Cluster, result).Inc()
	s.reqTotal.WithLabelValues(sc.Cluster).Add(float64(sc.Requests))
	s.errTotal.WithLabelValues(sc.Cluster).Add(float64(sc.Errors))
	ready := true
	for _, n := range s.names {
		if s.clusters[n].lastAttempt.IsZero() {
			ready = false
		}
	}
	s.ready = ready
}

// Ready says whether every cluster's first scan has finished.
func (s *Server) Ready() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ready
}

// Handler serves /metrics, /report, /healthz and /readyz.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{Registry: s.registry}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !s.Ready() {
			http.Error(w, "first scan not finished", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /report", s.serveReport)
	return mux
}

// serveReport writes the last report as `-o json` would: one cluster's
// Report, or a FleetReport over several. A stale report (the last scan
// failed) is served with X-Kubectl-Doctor-Stale: true; before any report
// exists the answer is 503.
func (s *Server) serveReport(w http.ResponseWriter, _ *http.Request) {
	s.mu.RLock()
	var body any
	stale := false
	if !s.fleet {
		c := s.clusters[s.names[0]]
		if c.report != nil {
			body, stale = c.report, c.stale
		}
	} else {
		var results []doctor.ClusterResult
		var total time.Duration
		for _, n := range s.names {
			c := s.clusters[n]
			res := doctor.ClusterResult{Name: n, Report: c.report}
			if c.report == nil {
				res.Err = fmt.Errorf("%s", c.lastErr)
			}
			stale = stale || c.stale
			total = max(total, c.last.Duration)
			results = append(results, res)
		}
		body = doctor.Merge(results, doctor.Duration(total))
	}
	s.mu.RUnlock()
	if body == nil {
		http.Error(w, "no report yet: the first scan has not finished or failed", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if stale {
		w.Header().Set("X-Kubectl-Doctor-Stale", "true")
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(body)
}

// stateCollector turns the kept state into gauges at scrape time, so a
// finding that is gone leaves no series behind.
type stateCollector Server

var (
	findingDesc = prometheus.NewDesc(Namespace+"_finding",
		"One series per finding of the last report: its value is the number of objects the finding stands for (members are counted, never labelled).",
		[]string{"cluster", "check", "severity", "namespace", "kind", "name", "cause"}, nil)
	findingsDesc = prometheus.NewDesc(Namespace+"_findings",
		"Findings of the last report by severity (known baseline findings included).",
		[]string{"cluster", "severity"}, nil)
	checkDesc = prometheus.NewDesc(Namespace+"_check_status",
		"1 for each check with its status in the last report: passed, failed (has findings), skipped (not permitted or not served) or error (could not run).",
		[]string{"cluster", "check", "status"}, nil)
	lastScanDesc = prometheus.NewDesc(Namespace+"_last_scan_timestamp_seconds",
		"When the last scan attempt ended (Unix time), whatever its outcome.", []string{"cluster"}, nil)
	lastSuccessDesc = prometheus.NewDesc(Namespace+"_last_successful_scan_timestamp_seconds",
		"When the last scan that produced a report ended (Unix time).", []string{"cluster"}, nil)
	completeDesc = prometheus.NewDesc(Namespace+"_last_scan_complete",
		"1 when the last scan attempt produced a complete report, 0 when it failed or some check could not run.", []string{"cluster"}, nil)
	staleDesc = prometheus.NewDesc(Namespace+"_report_stale",
		"1 when the last scan failed and the findings served are those of an earlier scan.", []string{"cluster"}, nil)
	upDesc = prometheus.NewDesc(Namespace+"_last_scan_success",
		"1 when the last scan attempt produced a report (complete or not), 0 when it failed.", []string{"cluster"}, nil)
	reqDesc = prometheus.NewDesc(Namespace+"_last_scan_apiserver_requests",
		"HTTP requests the last scan sent to the API server, retries included.", []string{"cluster"}, nil)
	errDesc = prometheus.NewDesc(Namespace+"_last_scan_apiserver_request_errors",
		"Requests of the last scan answered with a status of 400 or more (but 404: the LIST of an add-on kind the cluster does not serve), or not answered.", []string{"cluster"}, nil)
	bytesDesc = prometheus.NewDesc(Namespace+"_last_scan_apiserver_response_bytes",
		"Response body bytes the last scan received from the API server.", []string{"cluster"}, nil)
)

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{findingDesc, findingsDesc, checkDesc, lastScanDesc, lastSuccessDesc, completeDesc, staleDesc, upDesc, reqDesc, errDesc, bytesDesc} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	s := (*Server)(c)
	s.mu.RLock()
	defer s.mu.RUnlock()
	names := append([]string(nil), s.names...)
	sort.Strings(names)
	for _, n := range names {
		cl := s.clusters[n]
		if cl.lastAttempt.IsZero() {
			continue
		}
		gauge := func(d *prometheus.Desc, v float64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{n}, labels...)...)
		}
		gauge(lastScanDesc, float64(cl.lastAttempt.UnixMilli())/1000)
		if !cl.lastSuccess.IsZero() {
			gauge(lastSuccessDesc, float64(cl.lastSuccess.UnixMilli())/1000)
		}
		gauge(completeDesc, b2f(cl.lastComplete))
		gauge(staleDesc, b2f(cl.stale))
		gauge(upDesc, b2f(cl.last.Report != nil))
		gauge(reqDesc, float64(cl.last.Requests))
		gauge(errDesc, float64(cl.last.Errors))
		gauge(bytesDesc, float64(cl.last.Bytes))
		r := cl.report
		if r == nil {
			continue
		}
		for _, chk := range r.Checks {
			gauge(checkDesc, 1, chk.Name, chk.Status)
		}
		bySev := map[string]int{}
		for _, sev := range []doctor.Severity{doctor.Critical, doctor.Warning, doctor.Info} {
			bySev[sev.String()] = 0
		}
		// One series per finding; two findings that share every label
		// (a check reporting one object twice without a cause) are summed.
		type key struct{ check, sev, ns, kind, name, cause string }
		series := map[key]int{}
		var order []key
		for _, f := range r.Findings {
			bySev[f.Severity.String()]++
			k := key{f.Check, f.Severity.String(), f.Object.Namespace, f.Object.Kind, f.Object.Name, f.Cause}
			if _, ok := series[k]; !ok {
				order = append(order, k)
			}
			series[k] += max(f.Count, 1)
		}
		for _, k := range order {
			gauge(findingDesc, float64(series[k]), k.check, k.sev, k.ns, k.kind, k.name, k.cause)
		}
		for sev, v := range bySev {
			gauge(findingsDesc, float64(v), sev)
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Describe is a one-line summary of a scan for the log.
func Describe(sc Scan) string {
	name := sc.Cluster
	if name == "" {
		name = "cluster"
	}
	cost := fmt.Sprintf("%d API requests (%d errors), %s received, %s", sc.Requests, sc.Errors, doctor.HumanBytes(sc.Bytes), sc.Duration.Round(time.Millisecond))
	if sc.Report == nil {
		msg := "no report"
		if sc.Err != nil {
			msg = sc.Err.Error()
		}
		return fmt.Sprintf("%s: scan failed (the last report, if any, is still served): %s; %s", name, strings.ReplaceAll(msg, "\n", " "), cost)
	}
	s := sc.Report.Summary
	state := "complete"
	if !sc.Report.Complete {
		state = "incomplete"
	}
	return fmt.Sprintf("%s: %s scan, %d critical, %d warning, %d info; %s", name, state, s.Critical, s.Warning, s.Info, cost)
}
