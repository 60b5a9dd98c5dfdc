package kube

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// NodeProblem is a taint Kubernetes puts on an unhealthy node and the node
// condition behind it: the taint, the condition and the pods the taint
// blocks are all judged from this one table.
type NodeProblem struct {
	Taint     string
	Condition corev1.NodeConditionType // "" when no condition dates the taint
}

var nodeProblems = []NodeProblem{
	{Taint: corev1.TaintNodeNotReady, Condition: corev1.NodeReady},
	{Taint: corev1.TaintNodeUnreachable, Condition: corev1.NodeReady},
	{Taint: corev1.TaintNodeMemoryPressure, Condition: corev1.NodeMemoryPressure},
	{Taint: corev1.TaintNodeDiskPressure, Condition: corev1.NodeDiskPressure},
	{Taint: corev1.TaintNodePIDPressure, Condition: corev1.NodePIDPressure},
	{Taint: corev1.TaintNodeNetworkUnavailable, Condition: corev1.NodeNetworkUnavailable},
	{Taint: "node.cloudprovider.kubernetes.io/uninitialized"},
	{Taint: corev1.TaintNodeOutOfService},
}

// ProblemTaint returns what a taint Kubernetes puts on unhealthy nodes
// means; false for any other taint.
func ProblemTaint(key string) (NodeProblem, bool) {
	for _, p := range nodeProblems {
		if p.Taint == key {
			return p, true
		}
	}
	return NodeProblem{}, false
}

// ProblemCondition returns the problem behind a pressure or network
// condition that is True (MemoryPressure, DiskPressure, PIDPressure,
// NetworkUnavailable); Ready is not here: its cause is in its message.
func ProblemCondition(t corev1.NodeConditionType) (NodeProblem, bool) {
	if t == corev1.NodeReady {
		return NodeProblem{}, false
	}
	for _, p := range nodeProblems {
		if p.Condition == t {
			return p, true
		}
	}
	return NodeProblem{}, false
}

// Taint classes: what a taint says about its node.
const (
	TaintProblem      = "problem"       // Kubernetes marks an unhealthy node
	TaintCordon       = "cordon"        // kubectl cordon
	TaintControlPlane = "control-plane" // kubeadm's control-plane nodes
	TaintIntended     = "intended"      // anything an operator put there
)

// TaintClass says what a taint means.
func TaintClass(key string) string {
	if _, ok := ProblemTaint(key); ok {
		return TaintProblem
	}
	switch key {
	case corev1.TaintNodeUnschedulable:
		return TaintCordon
	case "node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master":
		return TaintControlPlane
	}
	return TaintIntended
}

// TaintSince dates a taint: timeAdded when the API server set it (NoExecute
// taints), else the transition of the node condition behind it.
func TaintSince(node *corev1.Node, t corev1.Taint) *time.Time {
	if t.TimeAdded != nil {
		tt := t.TimeAdded.Time
		return &tt
	}
	if p, ok := ProblemTaint(t.Key); ok && p.Condition != "" {
		if reg, never := NeverPostedStatus(node); never && p.Condition == corev1.NodeReady && !reg.IsZero() {
			// The Node was registered with this taint and its kubelet
			// has not reported since: the taint is as old as the Node.
			return &reg
		}
		for _, c := range node.Status.Conditions {
			// Only a condition that still stands dates the taint: a
			// pressure that ended tells when it ended, not when the
			// taint came.
			stands := c.Status == corev1.ConditionTrue
			if c.Type == corev1.NodeReady {
				stands = c.Status != corev1.ConditionTrue
			}
			if c.Type == p.Condition && stands && !c.LastTransitionTime.IsZero() {
				tt := c.LastTransitionTime.Time
				return &tt
			}
		}
	}
	return nil
}

// NodeOutage is a node whose Ready condition is there and not True: False
// (the kubelet says it is not ready) or Unknown (the kubelet stopped
// posting: the node is unreachable), since the condition's last
// transition. A node that has not posted a Ready condition yet is not
// judged (ok false).
type NodeOutage struct {
	Unreachable bool
	Since       time.Time
}

// NodeOutageOf returns the node's NotReady state, ok false when it is
// Ready or has no Ready condition.
func NodeOutageOf(n *corev1.Node) (NodeOutage, bool) {
	c, down := notReady(n)
	if !down {
		return NodeOutage{}, false
	}
	return NodeOutage{Unreachable: c.Status == corev1.ConditionUnknown || c.Reason == "NodeStatusUnknown", Since: c.LastTransitionTime.Time}, true
}

// notReady is the node's Ready condition when it is there and not True.
func notReady(n *corev1.Node) (corev1.NodeCondition, bool) {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c, c.Status != corev1.ConditionTrue
		}
	}
	return corev1.NodeCondition{}, false
}

// NeverPostedStatus says the node's kubelet has not posted status since the
// Node was registered, and returns the registration time (creationTimestamp).
// Two shapes say so: no Ready condition at all (the kubelet registered the
// Node and never reported), and the node lifecycle controller's Ready
// Unknown with reason NodeStatusNeverUpdated, which it writes once such a
// node outlives its grace period. An absent Ready condition is not Ready.
func NeverPostedStatus(n *corev1.Node) (registered time.Time, never bool) {
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status == corev1.ConditionUnknown && c.Reason == "NodeStatusNeverUpdated" {
			return n.CreationTimestamp.Time, true
		}
		return time.Time{}, false
	}
	return n.CreationTimestamp.Time, true
}

// Cordoner is the controller that cordoned a node to work on it and will
// uncordon it when done, as the node's annotations or taints say.
type Cordoner struct {
	Who, Doing string // "the Machine Config Operator", "applying an OS and configuration update"
	// Failed is the controller's own account of why it is stuck, "" while
	// it works.
	Failed string
	// Progress is the command that shows its progress; Hint and
	// HintCommand what usually unblocks it when it failed.
	Progress, Hint, HintCommand string
}

// CordonedBy says which updater cordoned the node, nil for a cordon of no
// known controller (a person's kubectl cordon or drain): OpenShift's Machine
// Config Operator (machineconfiguration.openshift.io/state Working or
// Degraded while its desiredConfig differs from its currentConfig), kured
// (weave.works/kured-reboot-in-progress), the cluster autoscaler
// (ToBeDeletedByClusterAutoscaler) and Karpenter (karpenter.sh/disrupted).
func CordonedBy(n *corev1.Node) *Cordoner {
	const mco = "machineconfiguration.openshift.io/"
	// The MCO cordons a node to apply a new configuration: its desired one
	// differs from its current one while it works.
	updating := n.Annotations[mco+"desiredConfig"] != "" && n.Annotations[mco+"desiredConfig"] != n.Annotations[mco+"currentConfig"]
	switch st := n.Annotations[mco+"state"]; {
	case updating && (st == "Working" || st == "Degraded"):
		c := &Cordoner{Who: "the Machine Config Operator", Doing: "it applies an OS and configuration update",
			Progress: "oc get machineconfigpool"}
		if st == "Degraded" {
			c.Failed = n.Annotations[mco+"reason"]
			if c.Failed == "" {
				c.Failed = "Degraded"
			}
			c.Hint = "a drain that never ends is most often a PodDisruptionBudget that allows no disruption: find it, and read the machine-config-daemon's log on the node"
			c.HintCommand = "kubectl get pdb -A"
		}
		return c
	}
	if _, ok := n.Annotations["weave.works/kured-reboot-in-progress"]; ok {
		// (kured marks the node so only with --annotate-nodes; its lock is
		// on its DaemonSet.)
		return &Cordoner{Who: "kured", Doing: "it reboots the node for pending OS updates",
			Progress: "kubectl -n kube-system get daemonset -l app.kubernetes.io/name=kured -o jsonpath='{.items[*].metadata.annotations}'"}
	}
	for _, t := range n.Spec.Taints {
		switch t.Key {
		case "ToBeDeletedByClusterAutoscaler":
			return &Cordoner{Who: "the cluster autoscaler", Doing: "it scales the node down",
				Progress: "kubectl -n kube-system describe configmap cluster-autoscaler-status"}
		case "karpenter.sh/disrupted", "karpenter.sh/disruption":
			return &Cordoner{Who: "Karpenter", Doing: "it disrupts the node (consolidation, drift or expiry) and replaces it",
				Progress: "kubectl get nodeclaims"}
		}
	}
	return nil
}
