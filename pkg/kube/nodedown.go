package kube

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// NodeNotReady: the pod is bound to a node that is not Ready (its kubelet
// stopped reporting, or says it is not ready): the pod's
// container statuses are what that kubelet last wrote, and the node, not
// the containers, is why the pod does not serve.
const NodeNotReady Cause = "node-not-ready"

type nodesByNameKey struct{}

// NodesByName indexes the snapshot's nodes by name, once per snapshot;
// read-only.
func NodesByName(s *snapshot.Snapshot) map[string]*corev1.Node {
	return snapshot.Memo(s, nodesByNameKey{}, func() map[string]*corev1.Node {
		nodes := s.Nodes()
		out := make(map[string]*corev1.Node, len(nodes))
		for i := range nodes {
			out[nodes[i].Name] = &nodes[i]
		}
		return out
	})
}

// NodeDown says whether the pod's node is listed and its Ready condition
// is False or Unknown, with that condition (dated by its transition).
func NodeDown(s *snapshot.Snapshot, pod *corev1.Pod) (corev1.NodeCondition, bool) {
	if pod.Spec.NodeName == "" {
		return corev1.NodeCondition{}, false
	}
	var n *corev1.Node
	if s.Err(snapshot.Nodes) == nil {
		n = NodesByName(s)[pod.Spec.NodeName]
	}
	if n == nil {
		// Nodes not readable (a namespaced user) or this one not listed:
		// the node lifecycle controller's mark on the pod says it.
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionFalse && c.Reason == "NodeNotReady" && !c.LastTransitionTime.IsZero() {
				return corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeNotReady",
					Message: "the node controller marked the pod not ready; the node itself could not be read", LastTransitionTime: c.LastTransitionTime}, true
			}
		}
		return corev1.NodeCondition{}, false
	}
	if c, down := notReady(n); down && !c.LastTransitionTime.IsZero() && c.Reason != "NodeStatusNeverUpdated" {
		return c, true
	}
	// A kubelet that registered its node and never posted status (no Ready
	// condition, or the controller's NodeStatusNeverUpdated): dated by the
	// registration; undated (a capture that left status out) says nothing.
	if registered, never := NeverPostedStatus(n); never && !registered.IsZero() {
		return corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusNeverUpdated",
			Message: "its kubelet has never posted status since the node registered", LastTransitionTime: metav1.NewTime(registered)}, true
	}
	return corev1.NodeCondition{}, false
}

// nodeDownProblem is the problem of a pod whose node is down, for its
// first container.
func nodeDownProblem(s *snapshot.Snapshot, pod *corev1.Pod) (ContainerProblem, bool) {
	if pod.DeletionTimestamp != nil || Terminal(pod) || len(pod.Spec.Containers) == 0 {
		return ContainerProblem{}, false
	}
	c, down := NodeDown(s, pod)
	if !down {
		return ContainerProblem{}, false
	}
	return ContainerProblem{Cause: NodeNotReady, Container: pod.Spec.Containers[0].Name, Image: pod.Spec.Containers[0].Image,
		Reason: c.Reason, Message: c.Message, Since: c.LastTransitionTime.Time}, true
}

// ToleratesForever says whether the pod tolerates its node being
// unreachable or not ready without a time limit (DaemonSet pods, explicit
// tolerations): it is never evicted, so its owner never replaces it.
func ToleratesForever(pod *corev1.Pod) bool {
	for _, key := range []string{corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady} {
		taint := corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute}
		for i := range pod.Spec.Tolerations {
			t := &pod.Spec.Tolerations[i]
			if t.TolerationSeconds == nil && t.ToleratesTaint(klog.Logger{}, &taint, true) {
				return true
			}
		}
	}
	return false
}
