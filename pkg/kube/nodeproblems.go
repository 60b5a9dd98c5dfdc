package kube

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// NodeProblem is a taint Kubernetes puts on an unhealthy node, the node
// condition behind it, what it means and what to do. node-taints explains
// the taint, node-health the condition, pending-taints the pods it blocks:
// all from this one table.
type NodeProblem struct {
	Taint     string
	Condition corev1.NodeConditionType // "" when no condition dates the taint
	// State completes "node X has been ...": "under MemoryPressure".
	State string
	// Meaning says why the taint is there.
	Meaning string
	// Effect says what the condition does to pods.
	Effect string
	// Fix gives the remediation for the nodes (space-separated names) and
	// the first of them, for commands that take one node.
	Fix func(names, first string) []doctor.Remediation
}

// DescribeNodes is the first step of every node remediation.
func DescribeNodes(names string) doctor.Remediation {
	return doctor.Remediation{Text: "read the node's conditions and recent events", Command: "kubectl describe node " + names}
}

func podsOn(first string) string {
	return "kubectl get pods -A -o wide --field-selector spec.nodeName=" + first
}

var nodeProblems = []NodeProblem{
	{Taint: corev1.TaintNodeNotReady, Condition: corev1.NodeReady, State: "NotReady",
		Meaning: "the kubelet reports NotReady (runtime, network or PLEG trouble)",
		Fix: func(n, _ string) []doctor.Remediation {
			return []doctor.Remediation{DescribeNodes(n),
				{Text: "on the node, check the kubelet and the container runtime", Command: "journalctl -u kubelet --since -1h; crictl info"}}
		}},
	{Taint: corev1.TaintNodeUnreachable, Condition: corev1.NodeReady, State: "unreachable",
		Meaning: "the node controller has lost contact with the kubelet",
		Effect:  "no new pods are scheduled there, and pods without a longer unreachable toleration are evicted after the default 300s",
		Fix: func(n, _ string) []doctor.Remediation {
			return []doctor.Remediation{DescribeNodes(n),
				{Text: "from the node or its serial console, check the kubelet", Command: "systemctl status kubelet; journalctl -u kubelet --since -1h"},
				{Text: "keep new pods off it", Command: "kubectl cordon " + n},
				{Text: "if the machine is gone for good, delete the Node so its pods are recreated elsewhere at once (a drain would wait for a kubelet that never answers), or mark it out of service so its stateful pods and volumes move",
					Command: "kubectl taint nodes " + n + " " + corev1.TaintNodeOutOfService + "=nodeshutdown:NoExecute"}}
		}},
	{Taint: corev1.TaintNodeMemoryPressure, Condition: corev1.NodeMemoryPressure, State: "under MemoryPressure",
		Meaning: "the kubelet reports MemoryPressure and is evicting pods",
		Effect:  "the kubelet evicts pods to reclaim memory, BestEffort and those over their requests first, and admits no new BestEffort pods",
		Fix: func(n, first string) []doctor.Remediation {
			return []doctor.Remediation{DescribeNodes(n),
				{Text: "find the pods on the node and give the biggest consumers memory limits", Command: podsOn(first)},
				{Text: "on the node, see what uses the memory", Command: "crictl stats; free -m"}}
		}},
	{Taint: corev1.TaintNodeDiskPressure, Condition: corev1.NodeDiskPressure, State: "under DiskPressure",
		Meaning: "the kubelet reports DiskPressure (node filesystem or image store nearly full)",
		Effect:  "the kubelet garbage-collects images and evicts pods to free its filesystems, and admits no new pods",
		Fix: func(n, _ string) []doctor.Remediation {
			return []doctor.Remediation{DescribeNodes(n),
				{Text: "on the node, find what fills the disk and prune unused images", Command: "df -h /var/lib/kubelet /var/lib/containerd; du -sh /var/log/pods; crictl rmi --prune"}}
		}},
	{Taint: corev1.TaintNodePIDPressure, Condition: corev1.NodePIDPressure, State: "under PIDPressure",
		Meaning: "the kubelet reports PIDPressure (process IDs nearly exhausted)",
		Effect:  "the kubelet evicts pods to free process IDs and admits no new pods",
		Fix: func(n, first string) []doctor.Remediation {
			return []doctor.Remediation{DescribeNodes(n),
				{Text: "find the pods on the node; cap processes per pod with the kubelet's podPidsLimit", Command: podsOn(first)},
				{Text: "on the node, find the processes", Command: "ps -eLf --no-headers | wc -l; ps -e -o pid,nlwp,cmd --sort=-nlwp | head"}}
		}},
	{Taint: corev1.TaintNodeNetworkUnavailable, Condition: corev1.NodeNetworkUnavailable, State: "NetworkUnavailable",
		Meaning: "the node's network is not configured (NetworkUnavailable: the CNI or route controller has not finished)",
		Effect:  "the node's pod network (routes or CNI) is not configured, so pods there have no network; no new pods are scheduled there",
		Fix: func(n, first string) []doctor.Remediation {
			return []doctor.Remediation{DescribeNodes(n),
				{Text: "check the CNI agent pod on the node (or the cloud route controller)", Command: "kubectl get pods -n kube-system -o wide --field-selector spec.nodeName=" + first}}
		}},
	{Taint: "node.cloudprovider.kubernetes.io/uninitialized",
		Meaning: "the cloud controller manager has not initialised the node",
		Fix: func(n, first string) []doctor.Remediation {
			return []doctor.Remediation{DescribeNodes(n),
				{Text: "check the cloud-controller-manager's events and logs for this node", Command: "kubectl get events -A --field-selector involvedObject.name=" + first}}
		}},
	{Taint: corev1.TaintNodeOutOfService,
		Meaning: "the node is marked out of service: its pods are force-deleted and volumes detached",
		Fix: func(n, _ string) []doctor.Remediation {
			return []doctor.Remediation{{Text: "once the node is back or deleted, remove the taint", Command: "kubectl taint nodes " + n + " " + corev1.TaintNodeOutOfService + "-"}}
		}},
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
// NetworkUnavailable); Ready is judged by its message (node-health).
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

// Taint classes, as `kubectl doctor taints` prints them.
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
