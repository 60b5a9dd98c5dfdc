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

// NeverScheduled is what the cluster recorded about a pod that has no node
// yet, most specific first: the scheduling gates that hold it, else its
// PodScheduled=False condition, else its newest Warning event. With none of
// them no scheduler has acted on it; Scheduler names the one it asks for
// when that is not the default scheduler (one that does not run never
// will).
type NeverScheduled struct {
	Gates     []string
	Condition *corev1.PodCondition
	Event     *Warning
	Scheduler string
}

// Unscheduled reports whether the pod was never bound to a node (no
// spec.nodeName, not finished, not being deleted) and what is known about
// why. x is the scan's Warning events, nil when they could not be read.
func Unscheduled(pod *corev1.Pod, x *WarningIndex) (NeverScheduled, bool) {
	if pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil || Terminal(pod) {
		return NeverScheduled{}, false
	}
	var n NeverScheduled
	if s := pod.Spec.SchedulerName; s != "" && s != corev1.DefaultSchedulerName {
		n.Scheduler = s
	}
	for _, g := range pod.Spec.SchedulingGates {
		n.Gates = append(n.Gates, g.Name)
	}
	if len(n.Gates) > 0 {
		return n, true
	}
	for i := range pod.Status.Conditions {
		if c := &pod.Status.Conditions[i]; c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			n.Condition = c
			return n, true
		}
	}
	if x != nil {
		if ws := NewestDistinct(1, x.AboutPod(pod)); len(ws) > 0 {
			n.Event = ws[0]
		}
	}
	return n, true
}
