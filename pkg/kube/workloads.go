package kube

import (
	"iter"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// WorkloadReads are the resources that carry pod templates and own pods; a
// check that groups pods by owner, or looks at templates, declares them.
var WorkloadReads = []snapshot.Resource{snapshot.ReplicaSets, snapshot.Deployments, snapshot.StatefulSets,
	snapshot.DaemonSets, snapshot.Jobs, snapshot.CronJobs}

// Workload is an object with a pod template (or a bare pod): its name, its
// metadata, its pod spec and where that spec sits, for JSON patches.
type Workload struct {
	Ref  doctor.ObjectRef
	Meta *metav1.ObjectMeta
	// Spec is the pod template's spec; nil for an owner that is not in the
	// snapshot (a pod's controller of a kind kubectl-doctor does not read).
	Spec *corev1.PodSpec
	// SpecPath is the JSON pointer of Spec: "/spec/template/spec".
	SpecPath string
	// Selector is the workload's pod selector (nil for CronJobs and pods).
	Selector *metav1.LabelSelector
	// Object is the workload itself (*appsv1.Deployment, *corev1.Pod, ...).
	Object runtime.Object
}

// KindName is "deployment/web", as kubectl takes it.
func (w *Workload) KindName() string { return w.Ref.KindName() }

// Daemon says whether the DaemonSet controller places its pods.
func (w *Workload) Daemon() bool { return w.Ref.Kind == "DaemonSet" }

func newWorkload(apiVersion, kind string, m *metav1.ObjectMeta, obj runtime.Object, sel *metav1.LabelSelector) *Workload {
	spec, path := snapshot.PodSpecOf(obj)
	return &Workload{Ref: Ref(apiVersion, kind, m), Meta: m, Spec: spec, SpecPath: path, Selector: sel, Object: obj}
}

// Workloads yields every object with a pod template in the snapshot:
// ReplicaSets, Deployments, StatefulSets, DaemonSets, Jobs and CronJobs,
// in that order. Use TopWorkloads for the ones users manage.
func Workloads(s *snapshot.Snapshot) iter.Seq[*Workload] {
	return func(yield func(*Workload) bool) {
		rss := s.ReplicaSets()
		for i := range rss {
			if !yield(newWorkload("apps/v1", "ReplicaSet", &rss[i].ObjectMeta, &rss[i], rss[i].Spec.Selector)) {
				return
			}
		}
		deps := s.Deployments()
		for i := range deps {
			if !yield(newWorkload("apps/v1", "Deployment", &deps[i].ObjectMeta, &deps[i], deps[i].Spec.Selector)) {
				return
			}
		}
		sts := s.StatefulSets()
		for i := range sts {
			if !yield(newWorkload("apps/v1", "StatefulSet", &sts[i].ObjectMeta, &sts[i], sts[i].Spec.Selector)) {
				return
			}
		}
		dss := s.DaemonSets()
		for i := range dss {
			if !yield(newWorkload("apps/v1", "DaemonSet", &dss[i].ObjectMeta, &dss[i], dss[i].Spec.Selector)) {
				return
			}
		}
		jobs := s.Jobs()
		for i := range jobs {
			if !yield(newWorkload("batch/v1", "Job", &jobs[i].ObjectMeta, &jobs[i], jobs[i].Spec.Selector)) {
				return
			}
		}
		cjs := s.CronJobs()
		for i := range cjs {
			if !yield(newWorkload("batch/v1", "CronJob", &cjs[i].ObjectMeta, &cjs[i], nil)) {
				return
			}
		}
	}
}

// TopWorkloads yields the workloads users manage: every workload that no
// other workload controls (not a Deployment's ReplicaSets, not a CronJob's
// Jobs), then the bare pods (pods with no controller). Those are the objects
// whose template a fix changes.
func TopWorkloads(s *snapshot.Snapshot) iter.Seq[*Workload] {
	return func(yield func(*Workload) bool) {
		o := OwnersOf(s)
		for w := range Workloads(s) {
			if o.parent(w) != nil {
				continue
			}
			if !yield(w) {
				return
			}
		}
		for _, p := range s.Pods() {
			if metav1.GetControllerOfNoCopy(p) != nil {
				continue
			}
			if !yield(&Workload{Ref: Ref("v1", "Pod", p), Meta: &p.ObjectMeta, Spec: &p.Spec, SpecPath: "/spec", Object: p}) {
				return
			}
		}
	}
}

// Owners resolves pods to the workloads that own them.
type Owners struct {
	byUID map[types.UID]*Workload
	byRef map[doctor.ObjectRef]*Workload // APIVersion left empty
	crons *CronJobIndex
}

type ownersKey struct{}

// OwnersOf returns the snapshot's owner index, built once per snapshot.
func OwnersOf(s *snapshot.Snapshot) *Owners {
	return snapshot.Memo(s, ownersKey{}, func() *Owners {
		o := &Owners{byUID: map[types.UID]*Workload{}, byRef: map[doctor.ObjectRef]*Workload{}, crons: CronJobsOf(s)}
		for w := range Workloads(s) {
			o.byUID[w.Meta.UID] = w
			o.byRef[refKey(w.Ref)] = w
		}
		return o
	})
}

func refKey(r doctor.ObjectRef) doctor.ObjectRef {
	r.APIVersion = ""
	return r
}

// Find returns the listed workload that ref names (whatever its
// apiVersion), or nil.
func (o *Owners) Find(ref doctor.ObjectRef) *Workload { return o.byRef[refKey(ref)] }

// Top is the pod's top owner: pod → ReplicaSet → Deployment, pod → Job →
// CronJob, StatefulSet, DaemonSet. A controller that is not listed is
// returned with only its name (Spec nil). False for a bare pod.
func (o *Owners) Top(p *corev1.Pod) (*Workload, bool) {
	c := metav1.GetControllerOfNoCopy(p)
	if c == nil {
		return nil, false
	}
	if c.Kind == "Node" {
		// A mirror pod: the kubelet runs it from a manifest on the node
		// (a static pod), and the pod is what a finding names.
		return &Workload{Ref: Ref("v1", "Pod", &p.ObjectMeta), Meta: &p.ObjectMeta, Spec: &p.Spec, SpecPath: "/spec", Object: p}, true
	}
	cur := o.byUID[c.UID]
	if cur == nil {
		if d := o.deploymentOfUnlisted(p, c); d != nil {
			return d, true
		}
		return &Workload{Ref: doctor.ObjectRef{APIVersion: c.APIVersion, Kind: c.Kind, Namespace: p.Namespace, Name: c.Name}}, true
	}
	return o.climb(cur), true
}

// deploymentOfUnlisted links a pod whose ReplicaSet was not listed (a
// capture of pods and Deployments only) to its Deployment the way the
// Deployment controller names them: the ReplicaSet is the Deployment's name
// and the pod's pod-template-hash label, and the Deployment's selector
// matches the pod. Nil when nothing links them so.
func (o *Owners) deploymentOfUnlisted(p *corev1.Pod, c *metav1.OwnerReference) *Workload {
	hash := p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
	name, ok := strings.CutSuffix(c.Name, "-"+hash)
	if c.Kind != "ReplicaSet" || hash == "" || !ok {
		return nil
	}
	w := o.byRef[doctor.ObjectRef{Kind: "Deployment", Namespace: p.Namespace, Name: name}]
	if w == nil {
		return nil
	}
	d, ok := w.Object.(*appsv1.Deployment)
	if !ok || d.Spec.Selector == nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(p.Labels)) {
		return nil
	}
	return w
}

// climb goes from a listed workload to its top listed controller.
func (o *Owners) climb(cur *Workload) *Workload {
	for depth := 0; cur != nil && depth < 3; depth++ {
		next := o.parent(cur)
		if next == nil {
			break
		}
		cur = next
	}
	return cur
}

// parent is the workload's listed controller, nil when none: by the
// controller's UID, and for a Job its CronJob as CronJobIndex.RunOf links
// them.
func (o *Owners) parent(w *Workload) *Workload {
	if c := metav1.GetControllerOfNoCopy(w.Meta); c != nil {
		if p := o.byUID[c.UID]; p != nil {
			return p
		}
	}
	if j, ok := w.Object.(*batchv1.Job); ok {
		if cj := o.crons.RunOf(j); cj != nil {
			return o.byRef[refKey(Ref("batch/v1", "CronJob", cj))]
		}
	}
	return nil
}

// TopOf climbs from a listed object (a ReplicaSet, a Job) to its top
// listed controller (the Deployment, the CronJob); the object's own
// workload when it has none, nil when the object is not listed.
func (o *Owners) TopOf(m *metav1.ObjectMeta) *Workload {
	return o.climb(o.byUID[m.UID])
}

// MirrorPod says whether the pod is the API's copy of a static pod, which
// the kubelet runs from a manifest on its node (kube-apiserver,
// kube-scheduler, etcd on kubeadm control planes): deleting or editing it
// changes nothing; the manifest does.
func MirrorPod(p *corev1.Pod) bool {
	if _, ok := p.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return true
	}
	c := metav1.GetControllerOfNoCopy(p)
	return c != nil && c.Kind == "Node"
}
