package kube

import (
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// UnschedulableGrace is how long a pod must have been unschedulable before
// it is reported: the scheduler retries, and a new node may be on its way.
const UnschedulableGrace = 5 * time.Minute

// SchedulingReads are what Explain reads: nodes and pods for placement and
// room, claims and classes for the pod's volumes (without those, its claims
// are UnreadClaims).
var SchedulingReads = append([]snapshot.Resource{snapshot.Nodes, snapshot.Pods}, StorageReads...)

// Shortage is a resource a node has too little of for a pod.
type Shortage struct {
	Resource    corev1.ResourceName
	Request     resource.Quantity // what the pod asks for (1 for pods)
	Free        resource.Quantity // allocatable minus what bound pods request
	Allocatable resource.Quantity
}

// Missing is how much more the node would need free.
func (s Shortage) Missing() resource.Quantity {
	m := s.Request.DeepCopy()
	m.Sub(s.Free)
	return m
}

// NodeFit is what keeps one node from taking a pod.
type NodeFit struct {
	Node *corev1.Node
	// SelectorMismatch: the nodeSelector or required node affinity does not match.
	SelectorMismatch bool
	Cordoned         bool
	// Taints are the NoSchedule/NoExecute taints the pod does not tolerate, the cordon's excluded.
	Taints []corev1.Taint
	// Short are the resources (pods included) the node lacks, given what is bound there.
	Short []Shortage
	// Volumes are the pod's volume topology restrictions the node does
	// not meet (a PV's node affinity or zone, a class's allowedTopologies).
	Volumes []*VolumeTopology
}

// Fits says nothing keeps the node from taking the pod, as far as the snapshot tells.
func (f *NodeFit) Fits() bool {
	return !f.SelectorMismatch && !f.Cordoned && len(f.Taints) == 0 && len(f.Short) == 0 && len(f.Volumes) == 0
}

// Fit explains, from the snapshot, why no node takes a pod.
type Fit struct {
	Requests corev1.ResourceList
	Nodes    []NodeFit // sorted by node name
	// NeverFits are the requests larger than every node's allocatable;
	// Allocatable holds the largest.
	NeverFits []Shortage
	// AbsentLabels are nodeSelector/affinity requirements no node
	// satisfies at all.
	AbsentLabels []AbsentLabel
	// MissingClaims do not exist; UnboundClaims exist and are Lost, or
	// bind immediately and are not Bound: the scheduler waits for them.
	MissingClaims, UnboundClaims []string
	// UnreadClaims are the pod's claims when the snapshot could not read
	// PersistentVolumeClaims or StorageClasses (a kubectl cluster-info
	// dump holds neither): whether they bind is unknown, so they are
	// neither missing nor unbound.
	UnreadClaims []string
	// Volumes are the topology restrictions of the pod's volumes;
	// VolumeNowhere are those no node can meet (or none of the nodes
	// its selector allows): the definitive cause.
	Volumes       []VolumeTopology
	VolumeNowhere []VolumeNowhere
	// PodsOf, when set, is the one namespace whose pods were listed (a
	// scan narrowed by -n): the room it computes on nodes leaves out the
	// pods of every other namespace, so a node's free room is an upper
	// bound and "it fits there" is not known.
	PodsOf string
	// Unjudged are the pod's scheduling constraints the snapshot does not
	// evaluate ("topology spread constraints", "required pod
	// anti-affinity", "required pod affinity"): a node that seems one
	// step away from fitting may fail them too.
	Unjudged []string
}

// UnjudgedConstraints lists what a pod spec asks of the scheduler that
// Explain does not compute: hard topology spread and required inter-pod
// (anti-)affinity, which depend on where other pods run by zone or host.
func UnjudgedConstraints(spec *corev1.PodSpec) []string {
	var out []string
	for _, c := range spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable == corev1.DoNotSchedule {
			out = append(out, "topology spread constraints")
			break
		}
	}
	if a := spec.Affinity; a != nil {
		if a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
			out = append(out, "required pod anti-affinity")
		}
		if a.PodAffinity != nil && len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
			out = append(out, "required pod affinity")
		}
	}
	return out
}

// Explain computes, node by node, what keeps pod off it: the nodeSelector
// and required affinity, the cordon, untolerated taints, and room (CPU,
// memory, pods and any other requested resource) given the requests of the
// pods already bound there; and the pod's claims.
//
// The answer depends only on the pod's namespace and spec, and a thousand
// pending pods of one template share both: it is computed once per distinct
// (namespace, spec) in a snapshot and shared. Callers must not modify it.
func Explain(s *snapshot.Snapshot, pod *corev1.Pod) *Fit {
	c := snapshot.Memo(s, explainKey{}, func() *explainCache { return &explainCache{fits: map[string]*Fit{}} })
	spec, err := pod.Spec.Marshal()
	if err != nil {
		return explain(s, pod)
	}
	key := pod.Namespace + "\x00" + string(spec)
	c.mu.Lock()
	f, ok := c.fits[key]
	c.mu.Unlock()
	if ok {
		return f
	}
	f = explain(s, pod)
	c.mu.Lock()
	c.fits[key] = f
	c.mu.Unlock()
	return f
}

type explainKey struct{}

type explainCache struct {
	mu   sync.Mutex
	fits map[string]*Fit
}

func explain(s *snapshot.Snapshot, pod *corev1.Pod) *Fit {
	nodes := s.Nodes()
	uses := nodeUses(s)
	place := NewPlacement(&pod.Spec, false)
	f := &Fit{Requests: PodRequests(pod), Volumes: VolumeTopologies(s, pod), PodsOf: s.Namespace, Unjudged: UnjudgedConstraints(&pod.Spec)}
	var resNames []corev1.ResourceName
	for r, q := range f.Requests {
		if !q.IsZero() {
			resNames = append(resNames, r)
		}
	}
	sort.Slice(resNames, func(i, j int) bool { return resNames[i] < resNames[j] })
	largest := map[corev1.ResourceName]resource.Quantity{}
	judged := 0
	for i := range nodes {
		n := &nodes[i]
		nf := NodeFit{Node: n, SelectorMismatch: !place.Matches(n)}
		for v := range f.Volumes {
			if !f.Volumes[v].Matches(n) {
				nf.Volumes = append(nf.Volumes, &f.Volumes[v])
			}
		}
		for _, t := range place.BlockingTaints(n) {
			if t.Key == corev1.TaintNodeUnschedulable {
				nf.Cordoned = true
				continue
			}
			nf.Taints = append(nf.Taints, t)
		}
		if len(n.Status.Allocatable) > 0 {
			judged++
			u := uses[n.Name]
			if u == nil {
				u = &nodeUse{}
			}
			if alloc, ok := n.Status.Allocatable[corev1.ResourcePods]; ok && u.pods+1 > alloc.Value() {
				free := *resource.NewQuantity(max(alloc.Value()-u.pods, 0), resource.DecimalSI)
				nf.Short = append(nf.Short, Shortage{Resource: corev1.ResourcePods, Request: *resource.NewQuantity(1, resource.DecimalSI), Free: free, Allocatable: alloc})
			}
			// A virtual kubelet's allocatable is its provider's quota
			// (10k CPU, 4Ti memory), not a machine's: it says nothing of
			// whether the pod fits a node, unless the pod may go there.
			virtual := VirtualNode(n) && len(nf.Taints) > 0
			for _, r := range resNames {
				req := f.Requests[r]
				alloc := n.Status.Allocatable[r]
				if l, ok := largest[r]; !virtual && (!ok || alloc.Cmp(l) > 0) {
					largest[r] = alloc.DeepCopy()
				}
				free := alloc.DeepCopy()
				free.Sub(u.requested[r])
				if req.Cmp(free) > 0 {
					nf.Short = append(nf.Short, Shortage{Resource: r, Request: req, Free: free, Allocatable: alloc})
				}
			}
		}
		f.Nodes = append(f.Nodes, nf)
	}
	sort.Slice(f.Nodes, func(i, j int) bool { return f.Nodes[i].Node.Name < f.Nodes[j].Node.Name })
	if judged > 0 {
		for _, r := range resNames {
			req, l := f.Requests[r], largest[r]
			if req.Cmp(l) > 0 {
				f.NeverFits = append(f.NeverFits, Shortage{Resource: r, Request: req, Allocatable: l})
			}
		}
	}
	f.AbsentLabels = absentLabels(&pod.Spec, nodeLabelValues(s))
	f.VolumeNowhere = volumeNowhere(f, nodeLabelValues(s))
	if s.Err(snapshot.PersistentVolumeClaims) != nil || s.Err(snapshot.StorageClasses) != nil {
		f.UnreadClaims = ClaimNames(&pod.Spec)
		return f
	}
	st := StorageOf(s)
	for _, name := range ClaimNames(&pod.Spec) {
		pvc := st.Claim(pod.Namespace, name)
		switch {
		case pvc == nil:
			f.MissingClaims = append(f.MissingClaims, name)
		case pvc.Status.Phase == corev1.ClaimLost:
			// Its volume is gone: it never binds again by itself, whatever
			// its class's binding mode (pvc-pending reports it).
			f.UnboundClaims = append(f.UnboundClaims, name)
		case pvc.Status.Phase != corev1.ClaimBound && !st.WaitsForConsumer(pvc):
			f.UnboundClaims = append(f.UnboundClaims, name)
		}
	}
	return f
}

// TaintBlocked says whether every node the pod's nodeSelector and affinity
// allow has a taint it does not tolerate (a cordon counts), and returns
// them by node; false when no node is allowed at all: such a pod waits for
// a taint to go, not for room.
func TaintBlocked(place *Placement, nodes []corev1.Node) (map[string][]corev1.Taint, bool) {
	// One pass, no list of the matching nodes: a pending pod is judged
	// against every node, and the first matching node without a blocking
	// taint ends it.
	var blocking map[string][]corev1.Taint
	for i := range nodes {
		n := &nodes[i]
		if !place.Matches(n) {
			continue
		}
		ts := place.BlockingTaints(n)
		if len(ts) == 0 {
			return nil, false
		}
		if blocking == nil {
			blocking = map[string][]corev1.Taint{}
		}
		blocking[n.Name] = ts
	}
	return blocking, blocking != nil
}

// OnlyFull says the nodes the pod may use (selector, taints and cordon
// allow) exist and are all full of pods: the pod waits for pod room alone.
func (f *Fit) OnlyFull() bool {
	usable := 0
	for i := range f.Nodes {
		n := &f.Nodes[i]
		if n.SelectorMismatch || n.Cordoned || len(n.Taints) > 0 || len(n.Volumes) > 0 {
			continue
		}
		usable++
		full := false
		for _, s := range n.Short {
			full = full || s.Resource == corev1.ResourcePods
		}
		if !full {
			return false
		}
	}
	return usable > 0
}

// AnyFits says some node could take the pod as far as the snapshot tells
// (the scheduler may know more: ports, pod affinity, topology spread, volumes' zones).
func (f *Fit) AnyFits() bool {
	for i := range f.Nodes {
		if f.Nodes[i].Fits() {
			return true
		}
	}
	return false
}
