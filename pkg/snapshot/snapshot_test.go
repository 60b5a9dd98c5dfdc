package snapshot

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPlanListsEachResourceOnce(t *testing.T) {
	got := Plan([]Resource{Pods, Nodes, Pods, Namespaces, Nodes, Events(""), Events("reason=FailedCreate"), Events("reason=FailedCreate")})
	want := []Resource{Pods, Nodes, Namespaces, Events("reason=FailedCreate")}
	if len(got) != len(want) {
		t.Fatalf("plan %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("plan[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestFromObjectsAndAccessors(t *testing.T) {
	s, err := FromObjects(
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "b"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
		&corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e1", Namespace: "x"}, Reason: "FailedCreate"},
		&corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e2", Namespace: "x"}, Reason: "Scheduled"},
	)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Nodes()) != 1 || len(s.Pods()) != 0 || s.Err(Pods) != nil {
		t.Errorf("nodes %d pods %d err %v", len(s.Nodes()), len(s.Pods()), s.Err(Pods))
	}
	if ev := s.Events("reason=FailedCreate"); len(ev) != 1 || ev[0].Name != "e1" {
		t.Errorf("events filtered wrongly: %v", ev)
	}
	md := s.Metadata(Namespaces)
	if len(md) != 2 || md[0].GetName() != "a" {
		t.Errorf("metadata not sorted: %v", md)
	}
	if _, err := FromObjects(&corev1.Secret{}); err == nil {
		t.Error("a snapshot must refuse to hold Secrets")
	}
}

func TestString(t *testing.T) {
	for r, want := range map[Resource]string{Pods: "pods", ReplicaSets: "replicasets.apps", Events("reason=X"): "events(reason=X)"} {
		if r.String() != want {
			t.Errorf("%s, want %s", r.String(), want)
		}
	}
}
