package kube

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

func controlled(name, ns string, uid types.UID, kind string, owner types.UID) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, Namespace: ns, UID: uid}
	if owner != "" {
		m.OwnerReferences = []metav1.OwnerReference{{Kind: kind, Name: string(owner), UID: owner, Controller: ptr.To(true)}}
	}
	return m
}

func TestOwnersTop(t *testing.T) {
	s, err := snapshot.FromObjects(
		&appsv1.Deployment{ObjectMeta: controlled("web", "shop", "web", "", "")},
		&appsv1.ReplicaSet{ObjectMeta: controlled("web-1", "shop", "rs1", "Deployment", "web")},
		&corev1.Pod{ObjectMeta: controlled("web-1-a", "shop", "p1", "ReplicaSet", "rs1")},
		&batchv1.CronJob{ObjectMeta: controlled("nightly", "ops", "cj", "", "")},
		&batchv1.Job{ObjectMeta: controlled("nightly-1", "ops", "j1", "CronJob", "cj")},
		&corev1.Pod{ObjectMeta: controlled("nightly-1-x", "ops", "p2", "Job", "j1")},
		&corev1.Pod{ObjectMeta: controlled("orphan", "ops", "p3", "Rollout", "gone")},
		&corev1.Pod{ObjectMeta: controlled("bare", "ops", "p4", "", "")},
	)
	if err != nil {
		t.Fatal(err)
	}
	o := OwnersOf(s)
	if o != OwnersOf(s) {
		t.Error("the owner index must be built once per snapshot")
	}
	want := map[string]string{"web-1-a": "deployment/web", "nightly-1-x": "cronjob/nightly", "orphan": "rollout/gone"}
	for _, p := range s.Pods() {
		w, ok := o.Top(p)
		if p.Name == "bare" {
			if ok {
				t.Errorf("bare pod has owner %v", w.Ref)
			}
			continue
		}
		if !ok || w.KindName() != want[p.Name] {
			t.Errorf("%s: top owner %v, want %s", p.Name, w, want[p.Name])
		}
		if p.Name == "orphan" && w.Spec != nil {
			t.Error("an owner that is not listed has no pod spec")
		}
		if p.Name == "nightly-1-x" && w.SpecPath != "/spec/jobTemplate/spec/template/spec" {
			t.Errorf("CronJob spec path %q", w.SpecPath)
		}
	}
	var top []string
	for w := range TopWorkloads(s) {
		top = append(top, w.KindName())
	}
	// The ReplicaSet and the Job have listed controllers; the bare pod is a
	// workload of its own; pods with a controller are not.
	if got := len(top); got != 3 || top[0] != "deployment/web" || top[1] != "cronjob/nightly" || top[2] != "pod/bare" {
		t.Errorf("top workloads %v", top)
	}
	if w := o.Find(Ref("apps/v1", "Deployment", &metav1.ObjectMeta{Name: "web", Namespace: "shop"})); w == nil || w.Spec == nil {
		t.Error("Find by kind, namespace and name")
	}
}

func TestPlacement(t *testing.T) {
	cordoned := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{"disk": "ssd"}}, Spec: corev1.NodeSpec{Unschedulable: true}}
	gpu := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "g"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}}}
	soft := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "x", Effect: corev1.TaintEffectPreferNoSchedule}}}}
	plain := &corev1.PodSpec{}
	if p := NewPlacement(plain, false); p.Allows(cordoned) || p.Allows(gpu) || !p.Allows(soft) {
		t.Error("a plain pod may not use a cordoned or tainted node, may use a soft-tainted one")
	}
	if got := NewPlacement(plain, false).BlockingTaints(cordoned); len(got) != 1 || got[0].Key != corev1.TaintNodeUnschedulable {
		t.Errorf("the cordon counts as the unschedulable taint: %v", got)
	}
	if !NewPlacement(plain, true).Allows(cordoned) {
		t.Error("daemon pods tolerate the cordon, as the DaemonSet controller makes them")
	}
	tolerant := &corev1.PodSpec{Tolerations: []corev1.Toleration{TolerationFor(gpu.Spec.Taints[0])}}
	if !NewPlacement(tolerant, false).Allows(gpu) {
		t.Error("the toleration made for a taint must tolerate it")
	}
	ssd := NewPlacement(&corev1.PodSpec{NodeSelector: map[string]string{"disk": "ssd"}}, false)
	if !ssd.Restricted || ssd.Matches(gpu) || !ssd.Matches(cordoned) {
		t.Error("nodeSelector matching")
	}
}

func TestEventTimesSeries(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	e := &corev1.Event{EventTime: metav1.NewMicroTime(t0), Series: &corev1.EventSeries{Count: 42, LastObservedTime: metav1.NewMicroTime(t0.Add(time.Hour))}}
	first, last, n := EventTimes(e)
	if !first.Equal(t0) || !last.Equal(t0.Add(time.Hour)) || n != 42 {
		t.Errorf("series event: %v %v %d", first, last, n)
	}
	old := &corev1.Event{FirstTimestamp: metav1.NewTime(t0), LastTimestamp: metav1.NewTime(t0.Add(time.Minute)), Count: 3}
	if _, last, n := EventTimes(old); !last.Equal(t0.Add(time.Minute)) || n != 3 {
		t.Errorf("core/v1 event: %v %d", last, n)
	}
}

func TestMemoBuildsOnceConcurrently(t *testing.T) {
	s, err := snapshot.FromObjects()
	if err != nil {
		t.Fatal(err)
	}
	type key struct{}
	var builds atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v := snapshot.Memo(s, key{}, func() int { builds.Add(1); return 7 }); v != 7 {
				t.Errorf("memo value %d", v)
			}
		}()
	}
	wg.Wait()
	if builds.Load() != 1 {
		t.Errorf("built %d times", builds.Load())
	}
}

func TestTaintClassAndProblems(t *testing.T) {
	for key, want := range map[string]string{corev1.TaintNodeNotReady: TaintProblem, corev1.TaintNodeUnschedulable: TaintCordon,
		"node-role.kubernetes.io/control-plane": TaintControlPlane, "dedicated": TaintIntended} {
		if got := TaintClass(key); got != want {
			t.Errorf("TaintClass(%s) = %s, want %s", key, got, want)
		}
	}
	if _, ok := ProblemCondition(corev1.NodeReady); ok {
		t.Error("Ready is judged by its message, not by this table")
	}
	if p, ok := ProblemCondition(corev1.NodeDiskPressure); !ok || p.Taint != corev1.TaintNodeDiskPressure {
		t.Error("DiskPressure maps to its taint")
	}
}

// TestAPIServiceDown: only an Available condition that is there and not
// True says the aggregator cannot reach the backend.
func TestAPIServiceDown(t *testing.T) {
	with := func(c ...apiregistrationv1.APIServiceCondition) *apiregistrationv1.APIService {
		return &apiregistrationv1.APIService{Status: apiregistrationv1.APIServiceStatus{Conditions: c}}
	}
	avail := func(s apiregistrationv1.ConditionStatus) apiregistrationv1.APIServiceCondition {
		return apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: s}
	}
	for _, c := range []struct {
		name string
		a    *apiregistrationv1.APIService
		want bool
	}{
		{"no condition yet", with(), false},
		{"available", with(avail(apiregistrationv1.ConditionTrue)), false},
		{"not available", with(avail(apiregistrationv1.ConditionFalse)), true},
		{"unknown", with(avail(apiregistrationv1.ConditionUnknown)), true},
	} {
		if got := APIServiceDown(c.a); got != c.want {
			t.Errorf("%s: %t, want %t", c.name, got, c.want)
		}
	}
}

// TestNodeOutageOf: a Ready condition that is False is not ready, one that
// is Unknown is unreachable; Ready or no condition at all is not judged.
func TestNodeOutageOf(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 6, 1, 11, 35, 0, 0, time.UTC))
	node := func(c ...corev1.NodeCondition) *corev1.Node {
		return &corev1.Node{Status: corev1.NodeStatus{Conditions: c}}
	}
	for _, c := range []struct {
		name string
		node *corev1.Node
		ok   bool
		want NodeOutage
	}{
		{"ready", node(corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}), false, NodeOutage{}},
		{"no status", node(), false, NodeOutage{}},
		{"not ready", node(corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
			corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady", LastTransitionTime: at}), true, NodeOutage{Since: at.Time}},
		{"unreachable", node(corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown", LastTransitionTime: at}), true, NodeOutage{Unreachable: true, Since: at.Time}},
	} {
		got, ok := NodeOutageOf(c.node)
		if ok != c.ok || got != c.want {
			t.Errorf("%s: NodeOutageOf = %+v, %v; want %+v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
