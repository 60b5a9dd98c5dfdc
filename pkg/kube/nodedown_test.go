package kube

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// TestNodeDown: a pod's node is down by its Ready condition (False or
// Unknown, dated); a node whose kubelet never posted status is down from
// its registration, and not judged when nothing dates it; when
// nodes cannot be read, the node controller's NodeNotReady mark on the
// pod says it.
func TestNodeDown(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 6, 1, 11, 20, 0, 0, time.UTC))
	node := func(name string, conds ...corev1.NodeCondition) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Conditions: conds}}
	}
	pod := func(name, nodeName string, conds ...corev1.PodCondition) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "a"}, Spec: corev1.PodSpec{NodeName: nodeName},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: conds}}
	}
	marked := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "NodeNotReady", LastTransitionTime: at}
	lost, fresh, ok, silent := pod("lost", "n-lost", marked), pod("fresh", "n-new"), pod("ok", "n-ok"), pod("silent", "n-silent")
	registered := node("n-silent")
	registered.CreationTimestamp = at
	s, err := snapshot.FromObjects(lost, fresh, ok, silent, registered,
		node("n-lost", corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown", LastTransitionTime: at}),
		node("n-new"),
		node("n-ok", corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: at}))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pod    *corev1.Pod
		down   bool
		reason string
	}{{lost, true, "NodeStatusUnknown"}, {fresh, false, ""}, {ok, false, ""}, {silent, true, "NodeStatusNeverUpdated"}} {
		got, down := NodeDown(s, c.pod)
		if down != c.down || got.Reason != c.reason || (down && !got.LastTransitionTime.Equal(&at)) {
			t.Errorf("%s: %+v %v, want down %v reason %q", c.pod.Name, got, down, c.down, c.reason)
		}
	}
	blind := snapshot.WithError(s, snapshot.Nodes, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "", errors.New("RBAC")))
	if got, down := NodeDown(blind, lost); !down || got.Reason != "NodeNotReady" {
		t.Errorf("without nodes, marked pod: %+v %v", got, down)
	}
	if _, down := NodeDown(blind, ok); down {
		t.Error("without nodes, an unmarked pod is called down")
	}
}
