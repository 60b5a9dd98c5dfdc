package kube

import (
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// What no node offers at all: node labels a pod's selector wants and no
// node has, volume topologies no (allowed) node meets. Either is the
// definitive cause of a pending pod.

// nodeLabelValues indexes the values of every node label, once per snapshot.
func nodeLabelValues(s *snapshot.Snapshot) map[string]map[string]bool {
	return snapshot.Memo(s, nodeLabelsKey{}, func() map[string]map[string]bool {
		values := map[string]map[string]bool{}
		nodes := s.Nodes()
		for i := range nodes {
			for k, v := range nodes[i].Labels {
				if values[k] == nil {
					values[k] = map[string]bool{}
				}
				values[k][v] = true
			}
		}
		return values
	})
}

type nodeLabelsKey struct{}

// AbsentLabel is a node requirement of a pod that no node meets: the label
// Key with one of the values Want (an Exists requirement wants none). Have
// are the values the nodes carry for Key, sorted; none when no node has
// the label.
type AbsentLabel struct {
	Key        string
	Want, Have []string
}

// VolumeNowhere is a volume topology restriction of a pod that no node
// meets, or (Conflict) that only nodes the pod's selector excludes meet.
type VolumeNowhere struct {
	Volume   *VolumeTopology
	Conflict bool
	// Have are the values the nodes carry for the restriction's keys, by
	// key, sorted.
	Have map[string][]string
}

// labelValues are the values the nodes carry for the label, sorted.
func labelValues(values map[string]map[string]bool, key string) []string {
	vs := make([]string, 0, len(values[key]))
	for v := range values[key] {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	return vs
}

// absentLabels are the pod's node requirements that no node meets at all:
// nodeSelector entries, and In/Exists expressions of affinity terms when
// there is a single term (with several, any one term may match).
func absentLabels(spec *corev1.PodSpec, values map[string]map[string]bool) []AbsentLabel {
	var out []AbsentLabel
	check := func(key string, want []string) {
		have := values[key]
		if want == nil && len(have) > 0 { // Exists: any node with the label meets it
			return
		}
		for _, w := range want {
			if have[w] {
				return
			}
		}
		out = append(out, AbsentLabel{Key: key, Want: want, Have: labelValues(values, key)})
	}
	keys := make([]string, 0, len(spec.NodeSelector))
	for k := range spec.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		check(k, []string{spec.NodeSelector[k]})
	}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		if terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms; len(terms) == 1 {
			for _, e := range terms[0].MatchExpressions {
				switch e.Operator {
				case corev1.NodeSelectorOpIn:
					check(e.Key, e.Values)
				case corev1.NodeSelectorOpExists:
					check(e.Key, nil)
				}
			}
		}
	}
	return out
}

// volumeNowhere: each volume restriction that no node meets at all, or
// none of the nodes the pod's selector allows.
func volumeNowhere(f *Fit, values map[string]map[string]bool) []VolumeNowhere {
	selectable := false
	for i := range f.Nodes {
		selectable = selectable || !f.Nodes[i].SelectorMismatch
	}
	var out []VolumeNowhere
	for v := range f.Volumes {
		vt := &f.Volumes[v]
		some, allowed := false, false
		for i := range f.Nodes {
			n := &f.Nodes[i]
			if slices.Contains(n.Volumes, vt) {
				continue
			}
			some = true
			allowed = allowed || !n.SelectorMismatch
		}
		switch {
		case len(f.Nodes) == 0:
		case !some:
			have := map[string][]string{}
			for _, k := range vt.Keys {
				have[k] = labelValues(values, k)
			}
			out = append(out, VolumeNowhere{Volume: vt, Have: have})
		case !allowed && selectable:
			out = append(out, VolumeNowhere{Volume: vt, Conflict: true})
		}
	}
	return out
}
