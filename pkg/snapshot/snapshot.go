package snapshot

import (
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	dto "github.com/prometheus/client_model/go"
)

// Snapshot holds the lists of one scan. It is read-only once built, so checks
// may read it concurrently.
type Snapshot struct {
	lists   map[Resource]runtime.Object
	errs    map[Resource]error
	metrics map[string]*dto.MetricFamily
	// pods are kept as the decoder's own objects: at tens of thousands of
	// pods, copying each into one array would double the largest list.
	pods []*corev1.Pod
	// Namespace is the scope of namespaced lists; "" is the whole cluster.
	Namespace string
	// captured, for an offline input, holds the namespaces it has any
	// object of (see Covers); nil when every namespace was listed.
	captured map[string]bool
	// memo holds values derived from the lists (see Memo).
	memo sync.Map
	// ServerVersion is the API server's gitVersion ("v1.37.2") from GET
	// /version, for version-skew checks; "" when unknown.
	ServerVersion string
	// absent, when set, is why a resource that was not read is missing
	// ("not in the dump"): offline snapshots (see Builder) hold only what
	// their input held.
	absent string
	// notServed holds the add-on kinds the API server answered 404 for
	// (not installed): read as empty, and said so (see NotServed).
	notServed map[Resource]bool
}

// NotServed says whether the API server does not serve r, an add-on's
// kind (cert-manager's, Argo CD's, ...): the add-on is not installed, so
// r was read as empty. False offline, where absence cannot be told apart
// from a capture that left the kind out.
func (s *Snapshot) NotServed(r Resource) bool { return s.notServed[r] }

func newSnapshot() *Snapshot {
	return &Snapshot{lists: map[Resource]runtime.Object{}, errs: map[Resource]error{}}
}

// FromObjects builds a snapshot from objects in memory (fixtures, dumps).
// Every known resource is present, possibly empty, as if listed successfully.
// Objects are trimmed and shared exactly as a live scan keeps them.
func FromObjects(objs ...runtime.Object) (*Snapshot, error) {
	return fromObjects(NewTrimmer(), objs)
}

// Untrimmed is FromObjects without trimming or sharing: every field as
// given. It exists for the test that proves no check reads what Trim drops
// (the same fixtures give byte-identical reports both ways).
func Untrimmed(objs ...runtime.Object) (*Snapshot, error) {
	return fromObjects(nil, objs)
}

func fromObjects(trim *Trimmer, objs []runtime.Object) (*Snapshot, error) {
	s := newSnapshot()
	byKind := map[string]Resource{}
	s.metrics = map[string]*dto.MetricFamily{}
	for _, r := range known {
		byKind[r.Kind] = r
		l, err := Scheme().New(r.GVR().GroupVersion().WithKind(r.Kind + "List"))
		if err != nil {
			return nil, fmt.Errorf("no list type for %s: %w", r, err)
		}
		s.lists[r] = l
	}
	items := map[Resource][]runtime.Object{}
	for _, o := range objs {
		kind := o.GetObjectKind().GroupVersionKind().Kind
		if kind == "" {
			if gvks, _, err := Scheme().ObjectKinds(o); err == nil {
				kind = gvks[0].Kind
			}
		}
		r, ok := byKind[kind]
		if !ok {
			return nil, fmt.Errorf("snapshot does not hold %q objects", kind)
		}
		items[r] = append(items[r], o.DeepCopyObject()) // trimming must not touch the caller's objects
	}
	for r, objs := range items {
		if err := meta.SetList(s.lists[r], objs); err != nil {
			return nil, fmt.Errorf("filing %s: %w", r, err)
		}
		if trim != nil {
			trim.trimList(s.lists[r]) // exactly what a live scan keeps
		}
	}
	s.pods = podPointers(s.lists[Pods])
	return s, nil
}

// Covers says whether namespaced lists hold the objects of namespace ns:
// a scan narrowed to another namespace (-n) did not list them, nor did a
// capture that holds no object of ns at all; an object of ns absent from
// the snapshot is then not known to be absent.
func (s *Snapshot) Covers(ns string) bool {
	return (s.Namespace == "" || s.Namespace == ns) && (s.captured == nil || s.captured[ns])
}

// Err is the error that kept r from being listed, nil when it was listed.
func (s *Snapshot) Err(r Resource) error {
	if err, ok := s.errs[r]; ok {
		return err
	}
	if r.Kind == "Event" {
		// An input that failed to hold its events (a bundle's
		// events-errors.json, an unreadable events file) failed every
		// event read, whatever its field selector.
		if err, ok := s.errs[allEvents]; ok {
			return err
		}
	}
	if r.Path != "" {
		if s.metrics == nil {
			return &ListError{Resource: r, Reason: s.absentReason(r, "not read by this scan"), Skip: true, Cause: CauseAbsent}
		}
		return nil
	}
	if s.list(r) == nil {
		return &ListError{Resource: r, Reason: s.absentReason(r, "not listed by this scan"), Skip: true, Cause: CauseAbsent}
	}
	return nil
}

func (s *Snapshot) list(r Resource) runtime.Object {
	if r.Kind == "Event" {
		if l, ok := s.lists[r]; ok {
			return l
		}
		return s.lists[allEvents] // fixtures: filtered by Events()
	}
	return s.lists[r]
}

// podPointers points into a PodList's items.
func podPointers(list runtime.Object) []*corev1.Pod {
	l, _ := list.(*corev1.PodList)
	if l == nil {
		return nil
	}
	out := make([]*corev1.Pod, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out
}

// WithError returns a copy of s in which r failed to list with err, as the
// loader records it: for tests of how checks degrade.
func WithError(s *Snapshot, r Resource, err error) *Snapshot {
	c := &Snapshot{lists: map[Resource]runtime.Object{}, errs: map[Resource]error{}, Namespace: s.Namespace, captured: s.captured, ServerVersion: s.ServerVersion, metrics: s.metrics, pods: s.pods, absent: s.absent}
	for k, v := range s.lists {
		c.lists[k] = v
	}
	for k, v := range s.errs {
		c.errs[k] = v
	}
	delete(c.lists, r)
	if r.Path != "" {
		c.metrics = nil
	}
	if r == Pods {
		c.pods = nil
	}
	c.errs[r] = classifyAPIError(r, s.Namespace, err)
	return c
}

// WithoutMemo returns a snapshot sharing s's lists without the indexes
// checks derived from them (Memo): for benchmarks that measure a check's
// whole cost, indexes included, on one loaded snapshot.
func WithoutMemo(s *Snapshot) *Snapshot {
	return &Snapshot{lists: s.lists, errs: s.errs, metrics: s.metrics, pods: s.pods, Namespace: s.Namespace, captured: s.captured,
		ServerVersion: s.ServerVersion, absent: s.absent}
}

// podPointerList stands in the lists map for pods streamed as pointers, so
// that Err and Metadata see them as listed.
type podPointerList struct{ corev1.PodList }
