package kube

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNeverPostedStatus(t *testing.T) {
	reg := time.Date(2026, 6, 1, 11, 40, 0, 0, time.UTC)
	later := metav1.NewTime(reg.Add(time.Minute))
	node := func(conds ...corev1.NodeCondition) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", CreationTimestamp: metav1.NewTime(reg)},
			Status: corev1.NodeStatus{Conditions: conds}}
	}
	taint := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}
	for _, tc := range []struct {
		name  string
		node  *corev1.Node
		never bool
	}{
		{"no status at all", node(), true},
		{"pressure conditions but no Ready", node(corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}), true},
		{"the controller's never-updated Unknown", node(corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusNeverUpdated", LastTransitionTime: later}), true},
		{"stopped posting (was posting before)", node(corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown", LastTransitionTime: later}), false},
		{"NotReady with a reason", node(corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady", LastTransitionTime: later}), false},
		{"Ready", node(corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}), false},
	} {
		got, never := NeverPostedStatus(tc.node)
		if never != tc.never {
			t.Errorf("%s: never = %t, want %t", tc.name, never, tc.never)
			continue
		}
		if never && !got.Equal(reg) {
			t.Errorf("%s: registered %v, want %v", tc.name, got, reg)
		}
		// The registration dates the not-ready taint of a silent node.
		if s := TaintSince(tc.node, taint); never && (s == nil || !s.Equal(reg)) {
			t.Errorf("%s: TaintSince = %v, want %v", tc.name, s, reg)
		}
	}
}
