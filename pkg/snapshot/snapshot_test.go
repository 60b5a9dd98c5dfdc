package snapshot

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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

func TestTrimmerSharesEqualResources(t *testing.T) {
	res := func(cpu string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")}}
	}
	pod := func(name, cpu string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "a"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: res(cpu), Env: []corev1.EnvVar{{Name: "X"}}}}}}
	}
	s, err := FromObjects(pod("p1", "500m"), pod("p2", "0.5"), pod("p3", "1"))
	if err != nil {
		t.Fatal(err)
	}
	ptr := func(i int) uintptr {
		return reflect.ValueOf(s.Pods()[i].Spec.Containers[0].Resources.Requests).Pointer()
	}
	if ptr(0) != ptr(1) {
		t.Error("equal requests (500m and 0.5 CPU) must share one ResourceList")
	}
	if ptr(0) == ptr(2) {
		t.Error("different requests must not be shared")
	}
	if q := s.Pods()[2].Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; q.String() != "1" {
		t.Errorf("requests kept: %s", q.String())
	}
	if s.Pods()[0].Spec.Containers[0].Env != nil {
		t.Error("env is trimmed")
	}
}
