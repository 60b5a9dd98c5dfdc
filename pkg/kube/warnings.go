package kube

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// WarningEventReads is the one event read of a scan: every Warning event of
// the cluster (the scope), listed once from the watch cache. The kubelet,
// the scheduler and the controllers write the *why* of a failure there;
// Normal events say what went right and are never read. Checks that need
// events declare this and look them up in WarningEventsOf.
var WarningEventReads = snapshot.Events("type=Warning")

// Warning is one Warning event, reduced to what a finding quotes.
type Warning struct {
	Reason  string
	Message string
	// Kind, Namespace, Name and UID are the involved object's.
	Kind, Namespace, Name string
	UID                   types.UID
	FieldPath             string // "spec.containers{app}"
	First, Last           time.Time
	Count                 int
	Source                string // component that wrote it: kubelet, default-scheduler, replicaset-controller...
	Host                  string // the node, for kubelet events
	Event                 *corev1.Event
}

// WarningIndex holds a scan's Warning events by involved object.
type WarningIndex struct {
	all    []*Warning
	byKey  map[string][]*Warning // kind/namespace/name
	byUID  map[types.UID][]*Warning
	reason map[string][]*Warning
}

type warningKey struct{}

// WarningEventsOf indexes the snapshot's Warning events, once per snapshot:
// by involved object (kind, namespace and name, and UID) and by reason,
// each list newest first. Snapshots built from captures hold every event
// type; only Warnings are kept here.
func WarningEventsOf(s *snapshot.Snapshot) *WarningIndex {
	return snapshot.Memo(s, warningKey{}, func() *WarningIndex {
		x := &WarningIndex{byKey: map[string][]*Warning{}, byUID: map[types.UID][]*Warning{}, reason: map[string][]*Warning{}}
		evs := s.Events(WarningEventReads.FieldSelector)
		for i := range evs {
			e := &evs[i]
			if e.Type != corev1.EventTypeWarning {
				continue
			}
			first, last, count := EventTimes(e)
			ns := e.InvolvedObject.Namespace
			if ns == "" && e.InvolvedObject.Kind != "Node" {
				ns = e.Namespace
			}
			src := e.Source.Component
			if src == "" {
				src = e.ReportingController
			}
			host := e.Source.Host
			if host == "" && e.InvolvedObject.Kind == "Pod" && e.ReportingInstance != "" && src == "kubelet" {
				host = e.ReportingInstance
			}
			w := &Warning{Reason: e.Reason, Message: EventMessage(e.Message), Kind: e.InvolvedObject.Kind, Namespace: ns,
				Name: e.InvolvedObject.Name, UID: e.InvolvedObject.UID, FieldPath: e.InvolvedObject.FieldPath,
				First: first, Last: last, Count: count, Source: src, Host: host, Event: e}
			x.all = append(x.all, w)
		}
		sort.SliceStable(x.all, func(i, j int) bool { return x.all[i].Last.After(x.all[j].Last) })
		for _, w := range x.all {
			k := w.Kind + "/" + w.Namespace + "/" + w.Name
			x.byKey[k] = append(x.byKey[k], w)
			if w.UID != "" {
				x.byUID[w.UID] = append(x.byUID[w.UID], w)
			}
			x.reason[w.Reason] = append(x.reason[w.Reason], w)
		}
		return x
	})
}

// All is every Warning event, newest first.
func (x *WarningIndex) All() []*Warning { return x.all }

// Reason is the Warning events with this reason, newest first.
func (x *WarningIndex) Reason(reason string) []*Warning { return x.reason[reason] }

// About is the Warning events about one object, newest first. An event
// naming another UID is about an earlier object of the same name and is
// left out; one without a UID (or a uid of "") is kept.
func (x *WarningIndex) About(kind, namespace, name string, uid types.UID) []*Warning {
	var out []*Warning
	if uid != "" {
		if ws := x.byUID[uid]; len(ws) > 0 {
			out = append(out, ws...)
		}
	}
	for _, w := range x.byKey[kind+"/"+namespace+"/"+name] {
		if w.UID == "" || uid == "" {
			out = append(out, w)
		}
	}
	if len(out) > 1 {
		sort.SliceStable(out, func(i, j int) bool { return out[i].Last.After(out[j].Last) })
	}
	return out
}

// AboutPod is About for a pod.
func (x *WarningIndex) AboutPod(p *corev1.Pod) []*Warning {
	return x.About("Pod", p.Namespace, p.Name, p.UID)
}

// NewestDistinct is the newest Warning events of the objects, newest
// first, one per reason and message, at most max.
func NewestDistinct(max int, lists ...[]*Warning) []*Warning {
	var all []*Warning
	for _, l := range lists {
		all = append(all, l...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Last.After(all[j].Last) })
	seen := map[string]bool{}
	var out []*Warning
	for _, w := range all {
		k := w.Reason + "\x00" + w.Message
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, w)
		if len(out) == max {
			break
		}
	}
	return out
}
