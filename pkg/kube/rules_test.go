package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// TestTerminal: only Succeeded and Failed pods are finished; a pod with
// no phase yet, Pending, Running or Unknown still holds its node.
func TestTerminal(t *testing.T) {
	for phase, want := range map[corev1.PodPhase]bool{
		corev1.PodSucceeded: true, corev1.PodFailed: true,
		corev1.PodPending: false, corev1.PodRunning: false, corev1.PodUnknown: false, "": false,
	} {
		if got := Terminal(&corev1.Pod{Status: corev1.PodStatus{Phase: phase}}); got != want {
			t.Errorf("Terminal(%q) = %v, want %v", phase, got, want)
		}
	}
}

// TestOwnerKey: the key ignores the API version, so a Deployment named by
// apps/v1 and by extensions/v1beta1 is one owner, and keeps kinds and
// namespaces apart.
func TestOwnerKey(t *testing.T) {
	a := RefKey(doctor.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"})
	if a != "shop/Deployment/web" {
		t.Errorf("RefKey = %q", a)
	}
	if b := RefKey(doctor.ObjectRef{APIVersion: "extensions/v1beta1", Kind: "Deployment", Namespace: "shop", Name: "web"}); b != a {
		t.Errorf("API versions give %q and %q", a, b)
	}
	for _, other := range []doctor.ObjectRef{
		{Kind: "StatefulSet", Namespace: "shop", Name: "web"},
		{Kind: "Deployment", Namespace: "web", Name: "shop"},
	} {
		if RefKey(other) == a {
			t.Errorf("%v collides with %s", other, a)
		}
	}
	if got := OwnerKey(&Workload{Ref: doctor.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}}); got != a {
		t.Errorf("OwnerKey = %q, want %q", got, a)
	}
}

// TestPodsOn counts what the scheduler counts against a node's pod
// capacity: bound pods that have not finished, whatever their phase.
func TestPodsOn(t *testing.T) {
	pod := func(name, node string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: k8stypes.UID("uid-" + name)},
			Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
	}
	s, err := snapshot.FromObjects(
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
		pod("running", "a", corev1.PodRunning), pod("pending-bound", "a", corev1.PodPending),
		pod("unknown", "a", corev1.PodUnknown), pod("done", "a", corev1.PodSucceeded),
		pod("failed", "a", corev1.PodFailed), pod("elsewhere", "b", corev1.PodRunning),
		pod("unbound", "", corev1.PodPending),
	)
	if err != nil {
		t.Fatal(err)
	}
	for node, want := range map[string]int64{"a": 3, "b": 1, "nowhere": 0} {
		if got := PodsOn(s, node); got != want {
			t.Errorf("PodsOn(%s) = %d, want %d", node, got, want)
		}
	}
}
