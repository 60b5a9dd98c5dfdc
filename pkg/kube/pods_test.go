package kube

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

func TestUnscheduled(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	pod := func(name string, f func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID("uid-" + name)},
			Spec: corev1.PodSpec{SchedulerName: corev1.DefaultSchedulerName}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
		f(p)
		return p
	}
	unschedulable := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available"}
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "shop"}, Type: "Warning", Reason: "FailedScheduling",
		Message: "binding rejected", InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "evented", UID: "uid-evented"},
		LastTimestamp: metav1.NewTime(t0)}
	s, err := snapshot.FromObjects(ev)
	if err != nil {
		t.Fatal(err)
	}
	x := WarningEventsOf(s)
	for _, tc := range []struct {
		pod       *corev1.Pod
		x         *WarningIndex
		never     bool
		gates     int
		cond      string
		event     string
		scheduler string
	}{
		{pod: pod("bound", func(p *corev1.Pod) { p.Spec.NodeName = "node-1" })},
		{pod: pod("done", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed })},
		{pod: pod("deleting", func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: t0} })},
		{pod: pod("gated", func(p *corev1.Pod) {
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/queue"}}
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "SchedulingGated"}}
		}), x: x, never: true, gates: 1},
		{pod: pod("unschedulable", func(p *corev1.Pod) { p.Status.Conditions = []corev1.PodCondition{unschedulable} }), x: x, never: true, cond: "Unschedulable"},
		{pod: pod("evented", func(*corev1.Pod) {}), x: x, never: true, event: "FailedScheduling"},
		{pod: pod("evented", func(*corev1.Pod) {}), x: nil, never: true}, // events unread: nothing known
		{pod: pod("nobody", func(p *corev1.Pod) { p.Spec.SchedulerName = "volcano" }), x: x, never: true, scheduler: "volcano"},
		{pod: pod("unset", func(p *corev1.Pod) { p.Spec.SchedulerName = "" }), x: x, never: true},
		// Just created: no phase yet, no node, nothing recorded.
		{pod: pod("phaseless", func(p *corev1.Pod) { p.Status.Phase = "" }), x: x, never: true},
	} {
		n, never := Unscheduled(tc.pod, tc.x)
		if never != tc.never {
			t.Errorf("%s: never scheduled %v, want %v", tc.pod.Name, never, tc.never)
			continue
		}
		cond, event := "", ""
		if n.Condition != nil {
			cond = n.Condition.Reason
		}
		if n.Event != nil {
			event = n.Event.Reason
		}
		if len(n.Gates) != tc.gates || cond != tc.cond || event != tc.event || n.Scheduler != tc.scheduler {
			t.Errorf("%s: got gates %v, condition %q, event %q, scheduler %q; want %d gates, %q, %q, %q",
				tc.pod.Name, n.Gates, cond, event, n.Scheduler, tc.gates, tc.cond, tc.event, tc.scheduler)
		}
	}
}
