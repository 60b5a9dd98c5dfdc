package kube

import (
	"fmt"
	"slices"
	"sort"
	"strings"

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

// absentLabels are the pod's node requirements that no node meets at all:
// nodeSelector entries, and In/Exists expressions of affinity terms when
// there is a single term (with several, any one term may match).
func absentLabels(spec *corev1.PodSpec, values map[string]map[string]bool) []string {
	var out []string
	check := func(key string, want []string) {
		have := values[key]
		if len(have) == 0 {
			out = append(out, fmt.Sprintf("no node has the label %s", key))
			return
		}
		for _, w := range want {
			if have[w] {
				return
			}
		}
		vs := make([]string, 0, len(have))
		for v := range have {
			vs = append(vs, v)
		}
		sort.Strings(vs)
		if len(vs) > 5 {
			vs = append(vs[:5], "...")
		}
		out = append(out, fmt.Sprintf("no node has %s=%s (nodes have %s)", key, strings.Join(want, "|"), strings.Join(vs, ", ")))
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
// none of the nodes the pod's selector allows ("its volume pv-a (claim
// data) has node affinity topology.kubernetes.io/zone=eu-west-1c: no node
// is there (nodes have ...)").
func volumeNowhere(f *Fit, nodes []corev1.Node) []string {
	selectable := false
	for i := range f.Nodes {
		selectable = selectable || !f.Nodes[i].SelectorMismatch
	}
	var out []string
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
			out = append(out, fmt.Sprintf("its %s can only be used on nodes with %s (%s), and no node is there (%s)",
				vt.Name(), vt.Want, vt.Source, NodesHave(vt.Keys, nodes)))
		case !allowed && selectable:
			out = append(out, fmt.Sprintf("no node fits both its node selector/affinity and the %s of its %s (%s)",
				vt.Source, vt.Name(), vt.Want))
		}
	}
	return out
}
