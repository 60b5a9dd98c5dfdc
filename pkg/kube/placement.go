package kube

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// daemonTolerations are the tolerations the DaemonSet controller adds to
// every daemon pod (pkg/controller/daemon/util in kubernetes/kubernetes).
var daemonTolerations = []corev1.Toleration{
	{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeDiskPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodePIDPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
}

var daemonHostNetworkTolerations = []corev1.Toleration{
	{Key: corev1.TaintNodeNetworkUnavailable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
}

// EffectiveTaints is the node's taints plus its cordon, which the scheduler
// treats as the node.kubernetes.io/unschedulable:NoSchedule taint.
func EffectiveTaints(node *corev1.Node) []corev1.Taint {
	taints := node.Spec.Taints
	if node.Spec.Unschedulable && !slices.ContainsFunc(taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeUnschedulable }) {
		taints = append(slices.Clone(taints), corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
	}
	return taints
}

// Placement decides, as the scheduler and the DaemonSet controller do,
// whether pods with a spec may be placed on a node: the nodeSelector and
// required node affinity match, and every NoSchedule or NoExecute taint
// (a cordon included) is tolerated. Daemon pods get the tolerations their
// controller adds. Resources are not considered.
type Placement struct {
	affinity    nodeaffinity.RequiredNodeAffinity
	tolerations []corev1.Toleration
	// Restricted says the spec has a nodeSelector or required node affinity.
	Restricted bool
}

// NewPlacement prepares the placement rules of spec; daemon adds the
// DaemonSet controller's tolerations.
func NewPlacement(spec *corev1.PodSpec, daemon bool) *Placement {
	tols := spec.Tolerations
	if daemon {
		tols = append(slices.Clone(tols), daemonTolerations...)
		if spec.HostNetwork {
			tols = append(tols, daemonHostNetworkTolerations...)
		}
	}
	restricted := len(spec.NodeSelector) > 0 || (spec.Affinity != nil && spec.Affinity.NodeAffinity != nil &&
		spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil)
	return &Placement{affinity: nodeaffinity.NewRequiredNodeAffinity(spec.NodeSelector, spec.Affinity), tolerations: tols, Restricted: restricted}
}

// Matches says whether the node's labels satisfy the nodeSelector and
// required node affinity.
func (p *Placement) Matches(node *corev1.Node) bool {
	ok, err := p.affinity.Match(node)
	return ok && err == nil
}

// BlockingTaints are the node's taints (its cordon included) that keep the
// pods off: NoSchedule and NoExecute taints (PreferNoSchedule only lowers
// the score) that no toleration tolerates, matched as the scheduler does.
func (p *Placement) BlockingTaints(node *corev1.Node) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range EffectiveTaints(node) {
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		// A pod carries Lt/Gt tolerations only where the API server allows them.
		if !corev1helpers.TolerationsTolerateTaint(klog.Logger{}, p.tolerations, &t, true) {
			out = append(out, t)
		}
	}
	return out
}

// Allows says whether the pods may be placed on the node.
func (p *Placement) Allows(node *corev1.Node) bool {
	return p.Matches(node) && len(p.BlockingTaints(node)) == 0
}

// MatchingNodes are the nodes the nodeSelector and node affinity match.
func (p *Placement) MatchingNodes(nodes []corev1.Node) []*corev1.Node {
	var out []*corev1.Node
	for i := range nodes {
		if p.Matches(&nodes[i]) {
			out = append(out, &nodes[i])
		}
	}
	return out
}

// TolerationFor is the toleration that tolerates exactly t.
func TolerationFor(t corev1.Taint) corev1.Toleration {
	if t.Value == "" {
		return corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpExists, Effect: t.Effect}
	}
	return corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: t.Value, Effect: t.Effect}
}
