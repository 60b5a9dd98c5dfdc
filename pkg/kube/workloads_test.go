package kube

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// TestTopWithoutReplicaSets: in a capture of pods and Deployments only,
// a pod is linked to its Deployment the way the controller names the
// ReplicaSet (deployment name + pod-template-hash) when the Deployment's
// selector matches it; otherwise the chain stops at the ReplicaSet.
func TestTopWithoutReplicaSets(t *testing.T) {
	dep := func(name string, sel map[string]string) *appsv1.Deployment {
		return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID("d-" + name)},
			Spec:       appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}}}
	}
	yes := true
	pod := func(name, rs string, l map[string]string) *corev1.Pod {
		return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Labels: l,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: types.UID("rs-" + rs), Controller: &yes}}}}
	}
	web := pod("web-7d9f-a", "web-7d9f", map[string]string{"app": "web", "pod-template-hash": "7d9f"})
	other := pod("api-55aa-a", "api-55aa", map[string]string{"app": "other", "pod-template-hash": "55aa"})
	nohash := pod("cron-x", "cron-1", map[string]string{"app": "cron"})
	s, err := snapshot.FromObjects(dep("web", map[string]string{"app": "web"}), dep("api", map[string]string{"app": "api"}), dep("cron", map[string]string{"app": "cron"}), web, other, nohash)
	if err != nil {
		t.Fatal(err)
	}
	o := OwnersOf(s)
	for _, tc := range []struct {
		pod  *corev1.Pod
		want string
	}{
		{web, "shop/deployment/web"},
		{other, "shop/replicaset/api-55aa"}, // the Deployment's selector does not match
		{nohash, "shop/replicaset/cron-1"},  // no pod-template-hash: not a Deployment's
	} {
		w, ok := o.Top(tc.pod)
		if !ok || w.Ref.String() != tc.want {
			t.Errorf("%s: top %v, want %s", tc.pod.Name, w.Ref, tc.want)
		}
	}
}

// TestCordonedBy: an updater is named only when the node says it is at
// work: the MCO while its desired config differs from its current one,
// kured by its reboot annotation; an MCO state alone (a manual cordon on a
// node Degraded for another reason) names none.
func TestCordonedBy(t *testing.T) {
	node := func(a map[string]string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: a}, Spec: corev1.NodeSpec{Unschedulable: true, Taints: taints}}
	}
	const mco = "machineconfiguration.openshift.io/"
	for _, tc := range []struct {
		name string
		n    *corev1.Node
		who  string
	}{
		{"MCO updating, degraded", node(map[string]string{mco + "state": "Degraded", mco + "currentConfig": "a", mco + "desiredConfig": "b"}), "the Machine Config Operator"},
		{"MCO degraded, no update", node(map[string]string{mco + "state": "Degraded", mco + "currentConfig": "a", mco + "desiredConfig": "a"}), ""},
		{"kured", node(map[string]string{"weave.works/kured-reboot-in-progress": "x"}), "kured"},
		{"autoscaler", node(nil, corev1.Taint{Key: "ToBeDeletedByClusterAutoscaler", Effect: corev1.TaintEffectNoSchedule}), "the cluster autoscaler"},
		{"by hand", node(nil), ""},
	} {
		got := ""
		if c := CordonedBy(tc.n); c != nil {
			got = c.Who
		}
		if got != tc.who {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.who)
		}
	}
}
