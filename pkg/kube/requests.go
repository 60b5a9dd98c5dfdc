package kube

import (
	"slices"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// The scheduler's arithmetic: what a pod requests, and what the pods
// bound to each node already hold.

// PodRequests is what the scheduler counts for a pod
// (k8s.io/component-helpers/resource.PodRequests: the sum over containers,
// or an init container's request when larger, sidecars included, plus pod
// overhead and pod-level resources). A container with a limit and no request
// counts its limit, as API defaulting would have set it.
func PodRequests(pod *corev1.Pod) corev1.ResourceList {
	if needsDefaulting(&pod.Spec) {
		p := *pod
		p.Spec.Containers = defaultRequests(pod.Spec.Containers)
		p.Spec.InitContainers = defaultRequests(pod.Spec.InitContainers)
		pod = &p
	}
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

func needsDefaulting(spec *corev1.PodSpec) bool {
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range cs {
			for r := range c.Resources.Limits {
				if _, ok := c.Resources.Requests[r]; !ok {
					return true
				}
			}
		}
	}
	return false
}

func defaultRequests(cs []corev1.Container) []corev1.Container {
	out := slices.Clone(cs)
	for i := range out {
		req := out[i].Resources.Requests.DeepCopy()
		for r, q := range out[i].Resources.Limits {
			if _, ok := req[r]; !ok {
				if req == nil {
					req = corev1.ResourceList{}
				}
				req[r] = q
			}
		}
		out[i].Resources.Requests = req
	}
	return out
}

// nodeUse is what the non-terminal pods bound to a node request.
type nodeUse struct {
	requested corev1.ResourceList
	pods      int64
}

type nodeUseKey struct{}

// PodsOn is how many pods are bound to the node and not Succeeded or
// Failed: what its allocatable pods are measured against.
func PodsOn(s *snapshot.Snapshot, node string) int64 {
	if u := nodeUses(s)[node]; u != nil {
		return u.pods
	}
	return 0
}

// nodeUses sums, per node, the requests of the pods bound there that are
// not Succeeded or Failed, as the scheduler's NodeInfo does.
func nodeUses(s *snapshot.Snapshot) map[string]*nodeUse {
	return snapshot.Memo(s, nodeUseKey{}, func() map[string]*nodeUse {
		out := map[string]*nodeUse{}
		// The pods of one template share their containers (the snapshot's
		// trimmer shares equal slices), so their requests are summed once.
		type shape struct {
			containers, init *corev1.Container
			nc, ni           int
			resources        *corev1.ResourceRequirements
		}
		requests := map[shape]corev1.ResourceList{}
		for _, p := range s.Pods() {
			if p.Spec.NodeName == "" || Terminal(p) {
				continue
			}
			u := out[p.Spec.NodeName]
			if u == nil {
				u = &nodeUse{requested: corev1.ResourceList{}}
				out[p.Spec.NodeName] = u
			}
			u.pods++
			var req corev1.ResourceList
			if p.Spec.Overhead == nil {
				k := shape{containers: unsafe.SliceData(p.Spec.Containers), init: unsafe.SliceData(p.Spec.InitContainers),
					nc: len(p.Spec.Containers), ni: len(p.Spec.InitContainers), resources: p.Spec.Resources}
				var ok bool
				if req, ok = requests[k]; !ok {
					req = PodRequests(p)
					requests[k] = req
				}
			} else {
				req = PodRequests(p)
			}
			for r, q := range req {
				sum := u.requested[r]
				sum.Add(q)
				u.requested[r] = sum
			}
		}
		return out
	})
}
