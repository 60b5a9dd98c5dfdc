package audit

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// CheckName labels the findings of an audit analysis.
const CheckName = "audit"

const (
	heavyShare    = 0.20 // of all LIST time in the window
	criticalShare = 0.50
	minLists      = 10
	peakParallel  = 4
)

// expensiveClusterLists are resources whose cluster-wide LIST is the most
// expensive read a client can make.
var expensiveClusterLists = map[string]bool{"pods": true, "events": true, "secrets": true, "configmaps": true, "events.events.k8s.io": true}

type clientSum struct {
	user, agent                      string
	lists, watches, noRV, selector   int
	time                             time.Duration
	share                            float64
	peak                             int
	resources, selectorRes, clusterX []string
}

// Findings turns the heaviest clients into findings: one per client (user
// and user agent), naming what makes its LISTs expensive and what to do.
func (a *Analysis) Findings() []doctor.Finding {
	sums := map[string]*clientSum{}
	var order []string
	for _, c := range a.Clients {
		id := c.User + "\x00" + c.UserAgent
		s := sums[id]
		if s == nil {
			s = &clientSum{user: c.User, agent: c.UserAgent}
			sums[id] = s
			order = append(order, id)
		}
		s.lists += c.Lists
		s.watches += c.Watches
		s.noRV += c.WithoutRV
		s.selector += c.WithSelector
		s.time += c.ListTime
		s.share += c.Share
		if c.PeakConcurrency > s.peak {
			s.peak = c.PeakConcurrency
		}
		if c.Lists > 0 {
			s.resources = appendUnique(s.resources, c.Resource)
		}
		if c.WithSelector > 0 {
			s.selectorRes = appendUnique(s.selectorRes, c.Resource)
		}
		if c.Scope == "cluster" && c.Lists > 0 && expensiveClusterLists[c.Resource] {
			s.clusterX = appendUnique(s.clusterX, c.Resource)
		}
	}
	var out []doctor.Finding
	for _, id := range order {
		s := sums[id]
		if s.lists < minLists || s.share < heavyShare {
			continue
		}
		out = append(out, s.finding())
	}
	return out
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func pct(n, of int) int {
	if of == 0 {
		return 0
	}
	return n * 100 / of
}

func (s *clientSum) finding() doctor.Finding {
	sort.Strings(s.resources)
	why := []string{}
	if s.noRV > 0 {
		why = append(why, fmt.Sprintf("%d%% of its LISTs carry no resourceVersion, so each is a consistent read from etcd (from the watch cache only since Kubernetes 1.31, and still the most expensive kind)", pct(s.noRV, s.lists)))
	}
	if len(s.selectorRes) > 0 {
		why = append(why, fmt.Sprintf("%d%% use a label selector on %s, which the server applies after reading every object", pct(s.selector, s.lists), strings.Join(s.selectorRes, ", ")))
	}
	if len(s.clusterX) > 0 {
		why = append(why, "it lists "+strings.Join(s.clusterX, ", ")+" across the whole cluster")
	}
	if s.watches == 0 {
		why = append(why, "it never watches: it polls with LISTs instead of using an informer")
	} else if s.lists > 10*s.watches {
		why = append(why, fmt.Sprintf("%d LISTs for %d WATCHes: an informer lists once, then watches", s.lists, s.watches))
	}
	if s.peak >= peakParallel {
		why = append(why, fmt.Sprintf("up to %d of its LISTs were in flight at once", s.peak))
	}
	sev := doctor.Warning
	if s.share >= criticalShare && (s.noRV > 0 || s.watches == 0) {
		sev = doctor.Critical
	}
	msg := fmt.Sprintf("%s made %s (%s) taking %s, %.0f%% of all LIST time in the window",
		s.user, doctor.Plural(s.lists, "LIST", "LISTs"), strings.Join(s.resources, ", "), s.time.Round(time.Millisecond), s.share*100)
	if len(why) > 0 {
		msg += ": " + strings.Join(why, "; ")
	}
	obj := doctor.ObjectRef{Kind: "User", Name: s.user}
	subject := fmt.Sprintf(`{"kind":"User","user":{"name":%q}}`, s.user)
	if ns, name, ok := serviceAccount(s.user); ok {
		obj = doctor.ObjectRef{APIVersion: "v1", Kind: "ServiceAccount", Namespace: ns, Name: name}
		subject = fmt.Sprintf(`{"kind":"ServiceAccount","serviceAccount":{"namespace":%q,"name":%q}}`, ns, name)
	}
	fsName := "throttle-" + strings.NewReplacer(":", "-", "@", "-", ".", "-").Replace(obj.Name)
	rem := []doctor.Remediation{
		{Text: "serve its reads from a shared informer cache (client-go informers, controller-runtime's cache) instead of LIST calls"},
		{Text: "where it must LIST, set resourceVersion=0 so the watch cache serves it (no label selector pushed to etcd, no pagination needed)"},
		{Text: "until it is fixed, give it a low-priority FlowSchema so it cannot starve other clients",
			Command: fmt.Sprintf(`kubectl apply -f - <<<'{"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"FlowSchema","metadata":{"name":%q},"spec":{"priorityLevelConfiguration":{"name":"workload-low"},"matchingPrecedence":1000,"distinguisherMethod":{"type":"ByUser"},"rules":[{"subjects":[%s],"resourceRules":[{"verbs":["list"],"apiGroups":["*"],"resources":["*"],"clusterScope":true,"namespaces":["*"]}]}]}}'`, fsName, subject)},
	}
	if s.noRV > 0 {
		rem = append(rem, doctor.Remediation{Text: "on clusters older than 1.31, upgrade: consistent LISTs are then served from the watch cache", Command: "kubectl version"})
	}
	return doctor.Finding{
		Check:       CheckName,
		Severity:    sev,
		Object:      obj,
		Message:     msg,
		Count:       s.lists,
		Remediation: rem,
	}
}

func serviceAccount(user string) (ns, name string, ok bool) {
	rest, found := strings.CutPrefix(user, "system:serviceaccount:")
	if !found {
		return "", "", false
	}
	ns, name, ok = strings.Cut(rest, ":")
	return ns, name, ok
}

// Report is the JSON/YAML document of `kubectl doctor audit`, in the style
// of the scan report.
type Report struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Input      InputSummary     `json:"input"`
	Summary    doctor.Summary   `json:"summary"`
	Clients    []ClientRow      `json:"clients"`
	Findings   []doctor.Finding `json:"findings"`
}

// InputSummary describes what was read.
type InputSummary struct {
	Files   []string  `json:"files"`
	Lines   int       `json:"lines"`
	Events  int       `json:"events"`
	Corrupt int       `json:"corruptLines"`
	Stage   string    `json:"stage"`
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
}

// ClientRow is one ranked row: a client's use of one resource.
type ClientRow struct {
	Key
	Lists           int             `json:"lists"`
	Watches         int             `json:"watches"`
	ListTime        doctor.Duration `json:"listTime"`
	P95             doctor.Duration `json:"p95"`
	Share           float64         `json:"share"`
	WithoutRV       int             `json:"listsWithoutResourceVersion"`
	WithSelector    int             `json:"listsWithLabelSelector"`
	PeakConcurrency int             `json:"peakConcurrentLists"`
}

// Report builds the document, keeping the top rows (all when top <= 0).
func (a *Analysis) Report(top int) *Report {
	r := &Report{APIVersion: doctor.APIVersion, Kind: "AuditReport",
		Input:    InputSummary{Files: a.Files, Lines: a.Lines, Events: a.Events, Corrupt: a.Corrupt, Stage: a.Stage, From: a.From, To: a.To},
		Findings: a.Findings(), Clients: []ClientRow{}}
	for i, c := range a.Clients {
		if top > 0 && i >= top {
			break
		}
		r.Clients = append(r.Clients, ClientRow{Key: c.Key, Lists: c.Lists, Watches: c.Watches, ListTime: doctor.Duration(c.ListTime),
			P95: doctor.Duration(c.P95), Share: c.Share, WithoutRV: c.WithoutRV, WithSelector: c.WithSelector, PeakConcurrency: c.PeakConcurrency})
	}
	if r.Findings == nil {
		r.Findings = []doctor.Finding{}
	}
	for _, f := range r.Findings {
		switch f.Severity {
		case doctor.Critical:
			r.Summary.Critical++
		case doctor.Warning:
			r.Summary.Warning++
		default:
			r.Summary.Info++
		}
	}
	return r
}
