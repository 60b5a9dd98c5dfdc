package kube

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// UnschedulableSince returns when the pod started waiting for a node: the
// earliest evidence of Pending (creation, or an older lastTransitionTime of
// its PodScheduled=False/Unschedulable condition), and false unless the
// scheduler has found no node for it.
func UnschedulableSince(pod *corev1.Pod) (time.Time, *corev1.PodCondition, bool) {
	if pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil ||
		(pod.Status.Phase != corev1.PodPending && pod.Status.Phase != "") {
		return time.Time{}, nil, false
	}
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type != corev1.PodScheduled || c.Status != corev1.ConditionFalse || c.Reason != corev1.PodReasonUnschedulable {
			continue
		}
		start := pod.CreationTimestamp.Time
		if t := c.LastTransitionTime.Time; !t.IsZero() && (start.IsZero() || t.Before(start)) {
			start = t
		}
		return start, c, true
	}
	return time.Time{}, nil, false
}
