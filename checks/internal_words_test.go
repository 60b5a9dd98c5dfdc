package checks

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// TestVersionOrder: versions of one build family compare by their numbers;
// versions of different families (words differ) do not compare.
func TestVersionOrder(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"Red Hat Enterprise Linux CoreOS 9.6.20250815-0 (Plow)", "Red Hat Enterprise Linux CoreOS 9.6.20250811-0 (Plow)", 1},
		{"5.15.0-1071-aws", "6.8.0-1021-aws", -1},
		{"containerd://1.7.10", "containerd://1.7.9", 1},
		{"v1.30.2", "v1.30.2", 0},
		{"6.8.0-1015-aws", "6.1.102-111.182.amzn2023.x86_64", 0},                  // Ubuntu vs Amazon Linux
		{"cri-o://1.33.3-5.git22d4f06.el9", "cri-o://1.33.3-3.giteaa7ec8.el9", 0}, // build hashes differ
	} {
		if got := versionOrder(tc.a, tc.b); got != tc.want {
			t.Errorf("versionOrder(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestUnreadyComponent: the default scheduler is called down only when
// every one of its pods is unready; a ready replica, or no scheduler pod in
// the snapshot (a managed control plane), says nothing.
func TestUnreadyComponent(t *testing.T) {
	pod := func(name string, ready corev1.ConditionStatus) *corev1.Pod {
		return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", Labels: map[string]string{"component": "kube-scheduler"}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}}}
	}
	for _, tc := range []struct {
		pods []runtime.Object
		want int
	}{
		{nil, 0},
		{[]runtime.Object{pod("kube-scheduler-a", corev1.ConditionFalse)}, 1},
		{[]runtime.Object{pod("kube-scheduler-a", corev1.ConditionFalse), pod("kube-scheduler-b", corev1.ConditionTrue)}, 0},
	} {
		s, err := snapshot.FromObjects(tc.pods...)
		if err != nil {
			t.Fatal(err)
		}
		if got := unreadyComponent(&doctor.Pass{Snapshot: s}, "kube-scheduler"); len(got) != tc.want {
			t.Errorf("%d scheduler pods: %v, want %d down", len(tc.pods), got, tc.want)
		}
	}
}
