package kube_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

// TestEvictedAt: the DisruptionTarget condition's time when it has one,
// else the containers' termination, the Ready condition, the start, the
// creation, in that order; a condition without a time never means "never".
func TestEvictedAt(t *testing.T) {
	at := func(m int) metav1.Time { return metav1.NewTime(time.Date(2026, 6, 1, 12, m, 0, 0, time.UTC)) }
	disrupted := func(tm metav1.Time) corev1.PodCondition {
		return corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, LastTransitionTime: tm}
	}
	finished := []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: at(30)}}}}
	for _, tc := range []struct {
		name string
		pod  corev1.Pod
		want metav1.Time
	}{
		{"condition", corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{disrupted(at(20))}, ContainerStatuses: finished}}, at(20)},
		{"condition without a time", corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{disrupted(metav1.Time{})}, ContainerStatuses: finished}}, at(30)},
		{"ready turned false", corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: at(40)}}}}, at(40)},
		{"start", corev1.Pod{Status: corev1.PodStatus{StartTime: ptr.To(at(5))}}, at(5)},
		{"creation", corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: at(1)}}, at(1)},
	} {
		if got := kube.EvictedAt(&tc.pod); !got.Equal(tc.want.Time) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want.Time)
		}
	}
}
