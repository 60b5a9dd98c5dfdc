package checks_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

func terminatedPods(n int) []runtime.Object {
	objs := make([]runtime.Object, n)
	for i := range objs {
		objs[i] = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("done-%05d", i), Namespace: "batch", CreationTimestamp: metav1.NewTime(fixture.Now().Add(-time.Hour))},
			Status:     corev1.PodStatus{Phase: corev1.PodSucceeded},
		}
	}
	return objs
}

// TestPodStormGCThreshold: terminated pods are only garbage-collected above
// --terminated-pod-gc-threshold (12,500); warn from 80% of it, not below.
func TestPodStormGCThreshold(t *testing.T) {
	for _, tc := range []struct {
		pods int
		want bool
	}{{9999, false}, {10000, true}} {
		s, err := snapshot.FromObjects(terminatedPods(tc.pods)...)
		if err != nil {
			t.Fatal(err)
		}
		r := doctor.Run(context.Background(), s, []*doctor.Check{checks.PodStorm}, fixture.Now())
		got := len(r.Findings) == 1 && r.Findings[0].Object.Name == "kube-controller-manager" && r.Findings[0].Severity == doctor.Warning
		if got != tc.want || (!tc.want && len(r.Findings) != 0) {
			t.Errorf("%d terminated pods: findings %+v, want GC warning %v", tc.pods, r.Findings, tc.want)
		}
	}
}

// BenchmarkPodStorm100k runs the check over 100,000 pods: 80,000 running
// pods of 4,000 ReplicaSets and a 20,000-pod storm of one Deployment.
func BenchmarkPodStorm100k(b *testing.B) {
	var objs []runtime.Object
	for i := 0; i < 100000; i++ {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%06d", i), Namespace: fmt.Sprintf("ns-%d", i%50),
			CreationTimestamp: metav1.NewTime(fixture.Now().Add(-time.Duration(i) * time.Second))},
			Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i%1000)}}
		if i < 20000 {
			p.Namespace = "storm"
			p.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "OutOfcpu", Message: "Pod was rejected: Node didn't have enough resource: cpu"}
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "agent-1", UID: "rs-agent", Controller: ptr.To(true)}}
		} else {
			p.Status = corev1.PodStatus{Phase: corev1.PodRunning}
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: fmt.Sprintf("rs-%d", i%4000), UID: "x", Controller: ptr.To(true)}}
		}
		objs = append(objs, p)
	}
	s, err := snapshot.FromObjects(objs...)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r := doctor.Run(context.Background(), s, []*doctor.Check{checks.PodStorm}, fixture.Now())
		if len(r.Findings) != 2 { // the storm, and the GC-threshold warning (20,000 terminated)
			b.Fatalf("findings: %+v", r.Findings)
		}
	}
}
