package kube

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// VolumeTopology is one volume's restriction on the nodes a pod can run
// on, as the scheduler's VolumeBinding and VolumeZone filters apply it: a
// bound PersistentVolume's spec.nodeAffinity, its zone/region labels, or,
// for a WaitForFirstConsumer claim not bound yet, its StorageClass's
// allowedTopologies.
type VolumeTopology struct {
	Claim  string // the pod's claim
	Volume string // the PersistentVolume; "" for an unbound claim
	Class  string // the StorageClass whose allowedTopologies apply
	// Source says where the restriction is written.
	Source TopologySource
	// Want describes the restriction: "topology.kubernetes.io/zone=eu-west-1c".
	Want string
	// Keys are the node label keys the restriction reads.
	Keys  []string
	match func(*corev1.Node) bool
}

// TopologySource is where a volume's topology restriction is written.
type TopologySource int

const (
	PVNodeAffinity    TopologySource = iota + 1 // the PersistentVolume's spec.nodeAffinity
	PVZoneLabel                                 // the PersistentVolume's zone/region labels
	AllowedTopologies                           // the StorageClass's allowedTopologies
)

// Matches says whether the node satisfies the restriction.
func (v *VolumeTopology) Matches(n *corev1.Node) bool { return v.match(n) }

type pvKey struct{}

func volumesByName(s *snapshot.Snapshot) map[string]*corev1.PersistentVolume {
	return snapshot.Memo(s, pvKey{}, func() map[string]*corev1.PersistentVolume {
		pvs := s.PersistentVolumes()
		out := make(map[string]*corev1.PersistentVolume, len(pvs))
		for i := range pvs {
			out[pvs[i].Name] = &pvs[i]
		}
		return out
	})
}

// The labels the VolumeZone filter compares between a volume and a node
// (the GA and the deprecated beta ones).
var zoneLabels = []string{corev1.LabelTopologyZone, corev1.LabelFailureDomainBetaZone, corev1.LabelTopologyRegion, corev1.LabelFailureDomainBetaRegion}

// VolumeTopologies are the topology restrictions of the pod's claims. The
// PersistentVolumes come from the snapshot when it lists them (an optional
// read); without them only StorageClass allowedTopologies are known.
func VolumeTopologies(s *snapshot.Snapshot, pod *corev1.Pod) []VolumeTopology {
	st := StorageOf(s)
	pvs := volumesByName(s)
	var out []VolumeTopology
	for _, name := range ClaimNames(&pod.Spec) {
		pvc := st.Claim(pod.Namespace, name)
		if pvc == nil {
			continue
		}
		if pvc.Status.Phase == corev1.ClaimBound && pvc.Spec.VolumeName != "" {
			pv := pvs[pvc.Spec.VolumeName]
			if pv == nil {
				continue
			}
			if na := pv.Spec.NodeAffinity; na != nil && na.Required != nil && len(na.Required.NodeSelectorTerms) > 0 {
				sel := nodeaffinity.NewLazyErrorNodeSelector(na.Required)
				out = append(out, VolumeTopology{Claim: name, Volume: pv.Name, Source: PVNodeAffinity,
					Want: describeSelector(na.Required), Keys: selectorKeys(na.Required),
					match: func(n *corev1.Node) bool { ok, err := sel.Match(n); return ok && err == nil }})
			}
			if z := zoneTopology(name, pv); z != nil {
				out = append(out, *z)
			}
			continue
		}
		if !st.WaitsForConsumer(pvc) {
			continue
		}
		sc, _ := st.ClassOf(pvc)
		if sc == nil || len(sc.AllowedTopologies) == 0 {
			continue
		}
		terms := sc.AllowedTopologies
		out = append(out, VolumeTopology{Claim: name, Class: sc.Name, Source: AllowedTopologies,
			Want: describeTopologies(terms), Keys: topologyKeys(terms),
			match: func(n *corev1.Node) bool { return topologyMatches(terms, n) }})
	}
	return out
}

// zoneTopology is the VolumeZone filter's rule: a node that carries any
// zone or region label must carry the volume's value (a volume label may
// list several zones joined by "__"); a node with none is not judged.
func zoneTopology(claim string, pv *corev1.PersistentVolume) *VolumeTopology {
	want := map[string][]string{}
	var keys, parts []string
	for _, k := range zoneLabels {
		if v, ok := pv.Labels[k]; ok && v != "" {
			want[k] = strings.Split(v, "__")
			keys = append(keys, k)
			parts = append(parts, k+"="+strings.Join(want[k], "|"))
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return &VolumeTopology{Claim: claim, Volume: pv.Name, Source: PVZoneLabel, Want: strings.Join(parts, ", "), Keys: keys,
		match: func(n *corev1.Node) bool {
			has := false
			for _, k := range zoneLabels {
				if _, ok := n.Labels[k]; ok {
					has = true
				}
			}
			if !has {
				return true
			}
			for k, vs := range want {
				v := n.Labels[k]
				found := false
				for _, w := range vs {
					found = found || w == v
				}
				if !found {
					return false
				}
			}
			return true
		}}
}

func topologyMatches(terms []corev1.TopologySelectorTerm, n *corev1.Node) bool {
	for _, t := range terms {
		ok := true
		for _, e := range t.MatchLabelExpressions {
			v, has := n.Labels[e.Key]
			found := false
			for _, w := range e.Values {
				found = found || (has && w == v)
			}
			ok = ok && found
		}
		if ok {
			return true
		}
	}
	return false
}

func describeSelector(ns *corev1.NodeSelector) string {
	var terms []string
	for _, t := range ns.NodeSelectorTerms {
		var es []string
		for _, e := range t.MatchExpressions {
			es = append(es, describeRequirement(e.Key, e.Operator, e.Values))
		}
		for _, e := range t.MatchFields {
			es = append(es, describeRequirement(e.Key, e.Operator, e.Values))
		}
		terms = append(terms, strings.Join(es, ", "))
	}
	return strings.Join(terms, " or ")
}

func describeRequirement(key string, op corev1.NodeSelectorOperator, values []string) string {
	switch op {
	case corev1.NodeSelectorOpIn:
		return key + "=" + strings.Join(values, "|")
	case corev1.NodeSelectorOpNotIn:
		return key + "!=" + strings.Join(values, "|")
	case corev1.NodeSelectorOpExists:
		return key
	case corev1.NodeSelectorOpDoesNotExist:
		return "!" + key
	}
	return fmt.Sprintf("%s %s %s", key, op, strings.Join(values, "|"))
}

func selectorKeys(ns *corev1.NodeSelector) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range ns.NodeSelectorTerms {
		for _, e := range t.MatchExpressions {
			if !seen[e.Key] {
				seen[e.Key] = true
				out = append(out, e.Key)
			}
		}
	}
	return out
}

func describeTopologies(terms []corev1.TopologySelectorTerm) string {
	var out []string
	for _, t := range terms {
		var es []string
		for _, e := range t.MatchLabelExpressions {
			es = append(es, e.Key+"="+strings.Join(e.Values, "|"))
		}
		out = append(out, strings.Join(es, ", "))
	}
	return strings.Join(out, " or ")
}

func topologyKeys(terms []corev1.TopologySelectorTerm) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range terms {
		for _, e := range t.MatchLabelExpressions {
			if !seen[e.Key] {
				seen[e.Key] = true
				out = append(out, e.Key)
			}
		}
	}
	return out
}
