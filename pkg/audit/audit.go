// Package audit finds the API clients that overload the API server, from its
// audit logs, the way the team in seed 003 found the controller whose
// un-cached LIST calls took etcd down: by summing LIST time per user.
//
// Logs are streamed line by line in constant memory: state grows with the
// number of distinct clients and resources, never with the number of events.
package audit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"sort"
	"strings"
	"time"
)

// maxLine bounds one audit event; longer lines are counted as corrupt.
const maxLine = 4 << 20

// maxRequest bounds a plausible request duration (long watches included);
// an event claiming more has broken timestamps and is counted as corrupt.
const maxRequest = 24 * time.Hour

// sniffLines is how many lines may pass without one audit event before an
// input is declared not to be an audit log.
const sniffLines = 100

// event is the part of an audit.k8s.io/v1 Event the analysis reads; decoding
// only these fields keeps the per-line cost low.
type event struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	AuditID    string `json:"auditID"`
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	UserAgent string `json:"userAgent"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		APIGroup    string `json:"apiGroup"`
	} `json:"objectRef"`
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
	StageTimestamp  time.Time `json:"stageTimestamp"`
}

// Key identifies one client's use of one resource.
type Key struct {
	User      string `json:"user"`
	UserAgent string `json:"userAgent"`
	Resource  string `json:"resource"` // pods, deployments.apps
	Scope     string `json:"scope"`    // cluster or namespace
}

// Client is what one client did to one resource in the window.
type Client struct {
	Key
	Lists           int           `json:"lists"`
	Watches         int           `json:"watches"`
	ListTime        time.Duration `json:"listTime"`
	P95             time.Duration `json:"p95"`
	Share           float64       `json:"share"` // of all LIST time in the window
	WithoutRV       int           `json:"listsWithoutResourceVersion"`
	WithSelector    int           `json:"listsWithLabelSelector"`
	PeakConcurrency int           `json:"peakConcurrentLists"`
	hist            histogram
	inflight        endHeap
}

// Analysis is the result over all inputs.
type Analysis struct {
	Files     []string      `json:"files"`
	Lines     int           `json:"lines"`
	Events    int           `json:"events"` // events used (see Stage)
	Corrupt   int           `json:"corruptLines"`
	Stage     string        `json:"stage"` // the stage the figures come from
	From      time.Time     `json:"from"`
	To        time.Time     `json:"to"`
	TotalList time.Duration `json:"totalListTime"`
	Clients   []*Client     `json:"clients"` // ranked by LIST time, heaviest first
}

// ErrNotAuditLog is returned for an input without any audit event.
var ErrNotAuditLog = errors.New("not a Kubernetes audit log")

// Input is one named stream (a file, or "-" for stdin).
type Input struct {
	Name string
	R    io.Reader
}

type aggregator struct {
	clients map[Key]*Client
	events  int
	from    time.Time
	to      time.Time
}

func newAggregator() *aggregator { return &aggregator{clients: map[Key]*Client{}} }

// Analyze streams the inputs and aggregates LIST and WATCH calls per client.
// It prefers ResponseComplete events and falls back to ResponseStarted or
// Panic events when a log holds no ResponseComplete stage at all.
func Analyze(inputs []Input) (*Analysis, error) {
	a := &Analysis{}
	complete, other := newAggregator(), newAggregator()
	for _, in := range inputs {
		a.Files = append(a.Files, in.Name)
		if err := a.read(in, complete, other); err != nil {
			return nil, err
		}
	}
	if a.Lines == 0 {
		return nil, fmt.Errorf("%s: %w (empty)", strings.Join(a.Files, ", "), ErrNotAuditLog)
	}
	use := complete
	a.Stage = "ResponseComplete"
	if complete.events == 0 {
		use, a.Stage = other, "ResponseStarted/Panic (no ResponseComplete events in the input)"
	}
	a.Events, a.From, a.To = use.events, use.from, use.to
	for _, c := range use.clients {
		a.TotalList += c.ListTime
		c.P95 = c.hist.quantile(0.95)
		a.Clients = append(a.Clients, c)
	}
	for _, c := range a.Clients {
		if a.TotalList > 0 {
			c.Share = float64(c.ListTime) / float64(a.TotalList)
		}
	}
	sort.Slice(a.Clients, func(i, j int) bool {
		x, y := a.Clients[i], a.Clients[j]
		if x.ListTime != y.ListTime {
			return x.ListTime > y.ListTime
		}
		if x.Lists != y.Lists {
			return x.Lists > y.Lists
		}
		return x.Key.String() < y.Key.String()
	})
	return a, nil
}

func (k Key) String() string { return k.User + "|" + k.UserAgent + "|" + k.Resource + "|" + k.Scope }

func (a *Analysis) read(in Input, complete, other *aggregator) error {
	br := bufio.NewReaderSize(in.R, 1<<20)
	// gzip is recognised by its magic bytes, whatever the file is called.
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: %w", in.Name, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 1<<20)
	}
	lines, valid := 0, 0
	var ev event
	for {
		line, err := readLine(br)
		if len(line) > 0 {
			lines++
			a.Lines++
			switch {
			case len(line) > maxLine:
				a.Corrupt++
			default:
				ev = event{}
				if jerr := json.Unmarshal(line, &ev); jerr != nil || ev.Kind != "Event" || !strings.HasPrefix(ev.APIVersion, "audit.k8s.io/") {
					a.Corrupt++
				} else {
					valid++
					if ev.RequestReceived.IsZero() || ev.StageTimestamp.IsZero() || ev.StageTimestamp.Sub(ev.RequestReceived) > maxRequest {
						a.Corrupt++
						continue
					}
					switch ev.Stage {
					case "ResponseComplete":
						complete.add(&ev)
					case "ResponseStarted", "Panic":
						other.add(&ev)
					}
				}
			}
			if valid == 0 && lines >= sniffLines {
				return fmt.Errorf("%s: %w (no audit.k8s.io Event in its first %d lines)", in.Name, ErrNotAuditLog, sniffLines)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if valid > 0 {
				break // a truncated compressed stream: its partial last line was counted above
			}
			return fmt.Errorf("%s: %w", in.Name, err)
		}
	}
	if valid == 0 && lines > 0 {
		return fmt.Errorf("%s: %w (no audit.k8s.io Event in %d lines)", in.Name, ErrNotAuditLog, lines)
	}
	return nil // an empty input (a just-rotated log) adds nothing
}

// readLine returns the next line without its newline; lines longer than
// maxLine are returned truncated to maxLine+1 bytes so the caller can count
// them as corrupt without holding them.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) <= maxLine+1 {
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(buf, "\r\n"), err
	}
}

func (g *aggregator) add(ev *event) {
	if ev.Verb != "list" && ev.Verb != "watch" || ev.ObjectRef == nil || ev.ObjectRef.Resource == "" {
		return
	}
	g.events++
	if g.from.IsZero() || ev.RequestReceived.Before(g.from) {
		g.from = ev.RequestReceived
	}
	if ev.StageTimestamp.After(g.to) {
		g.to = ev.StageTimestamp
	}
	res := ev.ObjectRef.Resource
	if ev.ObjectRef.APIGroup != "" {
		res += "." + ev.ObjectRef.APIGroup
	}
	scope := "namespace"
	if ev.ObjectRef.Namespace == "" {
		scope = "cluster"
	}
	k := Key{User: ev.User.Username, UserAgent: ev.UserAgent, Resource: res, Scope: scope}
	c := g.clients[k]
	if c == nil {
		c = &Client{Key: k}
		g.clients[k] = c
	}
	q := query(ev.RequestURI)
	if ev.Verb == "watch" || q.Get("watch") == "true" || q.Get("watch") == "1" {
		c.Watches++
		return
	}
	c.Lists++
	d := ev.StageTimestamp.Sub(ev.RequestReceived)
	if d < 0 {
		d = 0
	}
	c.ListTime += d
	c.hist.add(d)
	if q.Get("resourceVersion") == "" {
		c.WithoutRV++
	}
	if q.Get("labelSelector") != "" {
		c.WithSelector++
	}
	// Concurrency: events arrive roughly in completion order; the LISTs of
	// this client still in flight when this one started overlap it.
	for c.inflight.Len() > 0 && !c.inflight[0].After(ev.RequestReceived) {
		heap.Pop(&c.inflight)
	}
	heap.Push(&c.inflight, ev.StageTimestamp)
	if n := c.inflight.Len(); n > c.PeakConcurrency {
		c.PeakConcurrency = n
	}
	if c.inflight.Len() > 1024 { // bound memory for pathological logs
		heap.Pop(&c.inflight)
	}
}

func query(uri string) url.Values {
	_, q, ok := strings.Cut(uri, "?")
	if !ok {
		return url.Values{}
	}
	v, _ := url.ParseQuery(q)
	return v
}

// histogram keeps latencies in logarithmic buckets (4% wide) from 100µs to
// about 4.5 hours (100µs × 1.04^511): constant memory, quantiles within a
// bucket's width.
type histogram struct {
	buckets [512]uint32
	n       uint64
}

const histBase = 1.04

func bucketOf(d time.Duration) int {
	us := float64(d) / float64(time.Microsecond)
	if us < 100 {
		return 0
	}
	b := int(math.Log(us/100)/math.Log(histBase)) + 1
	if b >= len(histogram{}.buckets) {
		b = len(histogram{}.buckets) - 1
	}
	return b
}

func (h *histogram) add(d time.Duration) {
	h.buckets[bucketOf(d)]++
	h.n++
}

func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	target := uint64(math.Ceil(q * float64(h.n)))
	var seen uint64
	for i, c := range h.buckets {
		seen += uint64(c)
		if seen >= target {
			if i == 0 {
				return 100 * time.Microsecond
			}
			return time.Duration(100*math.Pow(histBase, float64(i))) * time.Microsecond
		}
	}
	return 0
}

// endHeap is a min-heap of end times.
type endHeap []time.Time

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i].Before(h[j]) }
func (h endHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)        { *h = append(*h, x.(time.Time)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
