package snapshot

import (
	"fmt"
	"io"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// This file is the snapshot's side of offline use: a Builder for
// snapshots read from dumps and support bundles, which, unlike FromObjects,
// knows which resources its input held, and Objects, which a dump writer
// reads a snapshot back out with.

// Builder assembles a snapshot from objects read offline: a kubectl-doctor
// dump, a support bundle, kubectl output. Only the resources it is told were
// present count as listed; every other read is skipped with the Builder's
// absent reason ("not in the dump"), so a check whose input is missing is
// never reported as passed.
type Builder struct {
	// capturedOnly: namespaces without any object in the input were not
	// captured (see CoverCapturedNamespacesOnly).
	capturedOnly bool
	absent       string
	items        map[Resource][]runtime.Object
	present      map[Resource]bool
	errs         map[Resource]error
	metrics      io.Reader
}

// NewBuilder returns an empty builder; absent is the reason given for reads
// the input lacks.
func NewBuilder(absent string) *Builder {
	return &Builder{absent: absent, items: map[Resource][]runtime.Object{}, present: map[Resource]bool{}, errs: map[Resource]error{}}
}

// CoverCapturedNamespacesOnly says that the input holds the namespaces it
// holds any object of, and no others: a capture collected per namespace (a
// support bundle's chosen namespaces, ` + "`kubectl get -n X`" + `) says nothing of
// the Services of a namespace it never visited, so the snapshot's Covers is
// false for those.
func (b *Builder) CoverCapturedNamespacesOnly() { b.capturedOnly = true }

// Present records that r was read, possibly empty.
func (b *Builder) Present(r Resource) { b.present[r] = true }

// Add files obj under r and marks r present. obj must be of r's type: the
// caller decodes and converts.
func (b *Builder) Add(r Resource, obj runtime.Object) {
	b.Present(r)
	b.items[r] = append(b.items[r], obj)
}

// Fail records that r could not be read (or only in part) when the input
// was captured, with the reason the capture gave; skip makes the checks that
// need r skipped rather than errored, as for a live scan. A failure wins
// over objects of r: a partial list must not let a check pass.
func (b *Builder) Fail(r Resource, reason string, skip bool) {
	if _, ok := b.errs[r]; !ok {
		b.errs[r] = &ListError{Resource: r, Reason: reason, Skip: skip}
	}
}

// Holds says whether r was added or marked present.
func (b *Builder) Holds(r Resource) bool { return b.present[r] }

// Empty says whether nothing was added, marked present or failed.
func (b *Builder) Empty() bool {
	return len(b.present) == 0 && len(b.errs) == 0 && b.metrics == nil
}

// SetMetrics records the API server's /metrics text; it is parsed by Build.
func (b *Builder) SetMetrics(text io.Reader) { b.metrics = text }

// Build returns the snapshot: present resources listed and trimmed exactly
// as a live scan keeps them, failed ones with their errors, the rest absent.
func (b *Builder) Build(namespace, serverVersion string) (*Snapshot, error) {
	s := newSnapshot()
	s.absent = b.absent
	s.Namespace = namespace
	s.ServerVersion = serverVersion
	trim := NewTrimmer()
	for r := range b.present {
		if _, failed := b.errs[r]; failed {
			continue
		}
		l, err := Scheme().New(r.GVR().GroupVersion().WithKind(r.Kind + "List"))
		if err != nil {
			return nil, fmt.Errorf("no list type for %s: %w", r, err)
		}
		if err := meta.SetList(l, b.items[r]); err != nil {
			return nil, fmt.Errorf("filing %s: %w", r, err)
		}
		trim.trimList(l)
		s.lists[r] = l
	}
	for r, err := range b.errs {
		s.errs[r] = err
	}
	s.pods = podPointers(s.lists[Pods])
	if b.capturedOnly {
		s.captured = map[string]bool{}
		for r, objs := range b.items {
			if !r.Namespaced {
				continue
			}
			for _, o := range objs {
				if m, err := meta.Accessor(o); err == nil && m.GetNamespace() != "" {
					s.captured[m.GetNamespace()] = true
				}
			}
		}
	}
	if b.metrics != nil {
		if err := s.SetMetrics(b.metrics); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// ReadObjects returns what read r gave, as a scan's checks see it: unlike
// Objects, events are filtered by r's field selector (in-memory snapshots
// hold all events in one list); nil when r was not read. A dump writer
// reads the snapshot back with it.
func (s *Snapshot) ReadObjects(r Resource) []runtime.Object {
	if s.Err(r) != nil || r.Path != "" {
		return nil
	}
	if r.Kind != "Event" {
		return s.Objects(r)
	}
	evs := s.Events(r.FieldSelector)
	out := make([]runtime.Object, len(evs))
	for i := range evs {
		out[i] = &evs[i]
	}
	return out
}

// Listed returns the resources s holds (listed, possibly empty), sorted by
// name: what an offline input contained.
func (s *Snapshot) Listed() []Resource {
	var out []Resource
	for r := range s.lists {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func (s *Snapshot) absentReason(r Resource, live string) string {
	if s.absent != "" {
		return s.absent + ": " + r.String()
	}
	return live
}
