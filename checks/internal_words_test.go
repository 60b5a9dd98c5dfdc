package checks

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
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

// TestOptionalNodeClass: whole words only ("hotspot", "output" are not
// spot or TPU nodes).
func TestOptionalNodeClass(t *testing.T) {
	for sel, want := range map[string]bool{
		"nodeSelector nvidia.com/gpu.present=true": true, "nodeSelector cloud.google.com/gke-spot=true": true,
		"nodeSelector machine.openshift.io/interruptible-instance=": true,
		"nodeSelector zone=hotspot":                                 false, "nodeSelector app=log-output": false, "nodeSelector disk=ssd": false,
	} {
		if got := optionalNodeClass.MatchString(sel); got != want {
			t.Errorf("%q: %v, want %v", sel, got, want)
		}
	}
}

// TestControllersStalledNeedsBoth: two Deployments a helm upgrade moved a
// second ago lag behind their controller without any outage; a Deployment
// being deleted lags by design. Neither is reported without an object
// never observed for five minutes.
func TestControllersStalledNeedsBoth(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	dep := func(name string, gen, observed int64, created time.Time, deleting bool) runtime.Object {
		d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Generation: gen, CreationTimestamp: metav1.NewTime(created)},
			Status:     appsv1.DeploymentStatus{ObservedGeneration: observed}}
		if deleting {
			ts := metav1.NewTime(now.Add(-time.Minute))
			d.DeletionTimestamp = &ts
		}
		return d
	}
	old := now.Add(-48 * time.Hour)
	for name, objs := range map[string][]runtime.Object{
		"two lagging":          {dep("a", 8, 7, old, false), dep("b", 4, 3, old, false)},
		"lagging and deleting": {dep("a", 8, 7, old, false), dep("gone", 3, 0, now.Add(-time.Hour), true)},
		"never seen, no lag":   {dep("new", 1, 0, now.Add(-time.Hour), false), dep("new2", 1, 0, now.Add(-time.Hour), false)},
	} {
		s, err := snapshot.FromObjects(objs...)
		if err != nil {
			t.Fatal(err)
		}
		r := doctor.Run(context.Background(), s, []*doctor.Check{ControllersStalled}, now)
		if len(r.Findings) != 0 {
			t.Errorf("%s: %s", name, r.Findings[0].Message)
		}
	}
	s, err := snapshot.FromObjects(dep("a", 8, 7, old, false), dep("new", 1, 0, now.Add(-time.Hour), false))
	if err != nil {
		t.Fatal(err)
	}
	if r := doctor.Run(context.Background(), s, []*doctor.Check{ControllersStalled}, now); len(r.Findings) != 1 {
		t.Errorf("lagging and never seen for 60m: %d findings, want 1", len(r.Findings))
	}
}
