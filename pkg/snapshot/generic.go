package snapshot

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// Readable is every resource a check may read as a whole list, in a stable
// order: what custom checks and config files may name. It is derived from
// the loader's own list, so a resource added there is readable here at once.
// Events are left out: they are only ever read with a field selector.
func Readable() []Resource {
	var out []Resource
	for _, r := range known {
		if r.Kind == "Event" || r.Path != "" {
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Lookup finds a readable resource by the name kubectl-doctor prints for
// it: "deployments.apps", "pods", or the plural alone ("deployments") when
// only one group has it. Unknown names are an error that lists the valid ones.
func Lookup(name string) (Resource, error) {
	var byPlural []Resource
	var names []string
	for _, r := range Readable() {
		if r.String() == name {
			return r, nil
		}
		if r.Resource == name {
			byPlural = append(byPlural, r)
		}
		names = append(names, r.String())
	}
	if len(byPlural) == 1 {
		return byPlural[0], nil
	}
	return Resource{}, fmt.Errorf("unknown resource %q (known: %s)", name, strings.Join(names, ", "))
}

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

// ResourceFor is the resource that holds objects of kind in group (""
// for the core group), for finding the metadata of a finding's object.
func ResourceFor(group, kind string) (Resource, bool) {
	for _, r := range known {
		if r.Kind == kind && r.Group == group && r.Path == "" {
			return r, true
		}
	}
	return Resource{}, false
}
