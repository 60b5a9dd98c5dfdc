package snapshot

import (
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Objects returns the listed objects of r, typed, in list order; nil when r
// was not listed. They are the snapshot's own
// (trimmed) objects: callers must not modify them.
func (s *Snapshot) Objects(r Resource) []runtime.Object {
	l := s.list(r)
	switch l.(type) {
	case nil:
		return nil
	case *podPointerList:
		out := make([]runtime.Object, 0, len(s.pods))
		for _, p := range s.pods {
			out = append(out, p)
		}
		return out
	}
	var out []runtime.Object
	_ = meta.EachListItem(l, func(o runtime.Object) error {
		out = append(out, o)
		return nil
	})
	return out
}

// Metadata returns the object metadata of r's objects, sorted by namespace
// and name: for code that needs only names, labels and annotations of any
// kind (suppressions, custom checks).
func (s *Snapshot) Metadata(r Resource) []metav1.Object {
	var out []metav1.Object
	for _, o := range s.Objects(r) {
		if m, err := meta.Accessor(o); err == nil {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].GetNamespace() != out[j].GetNamespace() {
			return out[i].GetNamespace() < out[j].GetNamespace()
		}
		return out[i].GetName() < out[j].GetName()
	})
	return out
}
