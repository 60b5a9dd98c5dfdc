package kube

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// UnschedulableGrace is how long a pod must have been unschedulable before
// it is reported: the scheduler retries, and a new node may be on its way.
const UnschedulableGrace = 5 * time.Minute

// SchedulingReads are what Explain reads: nodes and pods for placement and
// room, claims and classes for the pod's volumes.
var SchedulingReads = append([]snapshot.Resource{snapshot.Nodes, snapshot.Pods}, StorageReads...)

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
			for r, q := range PodRequests(p) {
				sum := u.requested[r]
				sum.Add(q)
				u.requested[r] = sum
			}
		}
		return out
	})
}

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
	// AbsentLabels describe nodeSelector/affinity requirements no node
	// satisfies at all: "pool=tpu (nodes have pool=cpu, gpu)".
	AbsentLabels []string
	// MissingClaims do not exist; UnboundClaims exist, bind immediately
	// and are not Bound: the scheduler waits for them.
	MissingClaims, UnboundClaims []string
	// Volumes are the topology restrictions of the pod's volumes;
	// VolumeNowhere says, for those no node can meet (or none of the
	// nodes its selector allows), why: the definitive cause.
	Volumes       []VolumeTopology
	VolumeNowhere []string
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
	f := &Fit{Requests: PodRequests(pod), Volumes: VolumeTopologies(s, pod)}
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
			for _, r := range resNames {
				req := f.Requests[r]
				alloc := n.Status.Allocatable[r]
				if l, ok := largest[r]; !ok || alloc.Cmp(l) > 0 {
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
	f.VolumeNowhere = volumeNowhere(f, nodes)
	st := StorageOf(s)
	for _, name := range ClaimNames(&pod.Spec) {
		pvc := st.Claim(pod.Namespace, name)
		switch {
		case pvc == nil:
			f.MissingClaims = append(f.MissingClaims, name)
		case pvc.Status.Phase != corev1.ClaimBound && !st.WaitsForConsumer(pvc):
			f.UnboundClaims = append(f.UnboundClaims, name)
		}
	}
	return f
}

// nodeLabelValues indexes the values of every node label, once per snapshot.
func nodeLabelValues(s *snapshot.Snapshot) map[string]map[string]bool {
	return snapshot.Memo(s, nodeLabelsKey{}, func() map[string]map[string]bool {
		values := map[string]map[string]bool{}
		nodes := s.Nodes()
		for i := range nodes {
			for k, v := range nodes[i].Labels {
				if values[k] == nil {
					values[k] = map[string]bool{}
				}
				values[k][v] = true
			}
		}
		return values
	})
}

type nodeLabelsKey struct{}

// absentLabels are the pod's node requirements that no node meets at all:
// nodeSelector entries, and In/Exists expressions of affinity terms when
// there is a single term (with several, any one term may match).
func absentLabels(spec *corev1.PodSpec, values map[string]map[string]bool) []string {
	var out []string
	check := func(key string, want []string) {
		have := values[key]
		if len(have) == 0 {
			out = append(out, fmt.Sprintf("no node has the label %s", key))
			return
		}
		for _, w := range want {
			if have[w] {
				return
			}
		}
		vs := make([]string, 0, len(have))
		for v := range have {
			vs = append(vs, v)
		}
		sort.Strings(vs)
		if len(vs) > 5 {
			vs = append(vs[:5], "...")
		}
		out = append(out, fmt.Sprintf("no node has %s=%s (nodes have %s)", key, strings.Join(want, "|"), strings.Join(vs, ", ")))
	}
	keys := make([]string, 0, len(spec.NodeSelector))
	for k := range spec.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		check(k, []string{spec.NodeSelector[k]})
	}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		if terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms; len(terms) == 1 {
			for _, e := range terms[0].MatchExpressions {
				switch e.Operator {
				case corev1.NodeSelectorOpIn:
					check(e.Key, e.Values)
				case corev1.NodeSelectorOpExists:
					check(e.Key, nil)
				}
			}
		}
	}
	return out
}

// TaintBlocked says whether every node the pod's nodeSelector and affinity
// allow has a taint it does not tolerate (a cordon counts), and returns
// them by node; false when no node is allowed at all. pending-taints owns
// such pods; the unschedulable check leaves them to it.
func TaintBlocked(place *Placement, nodes []corev1.Node) (map[string][]corev1.Taint, bool) {
	allowed := place.MatchingNodes(nodes)
	if len(allowed) == 0 {
		return nil, false
	}
	blocking := map[string][]corev1.Taint{}
	for _, n := range allowed {
		ts := place.BlockingTaints(n)
		if len(ts) == 0 {
			return nil, false
		}
		blocking[n.Name] = ts
	}
	return blocking, true
}

// OnlyFull says the nodes the pod may use (selector, taints and cordon
// allow) exist and are all full of pods: node-pod-capacity reports it.
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

// SoonestFix is the single change that frees a node for a pod soonest.
type SoonestFix struct {
	Kind FixKind
	// Node is the node to uncordon or to make room on.
	Node string
	// Taint (as Taint.ToString) is the taint to tolerate, the only
	// obstacle on Nodes nodes.
	Taint string
	Nodes int
	// Shortage is the node's one missing resource, for FixRoom.
	Shortage Shortage
}

// FixKind is what a SoonestFix changes.
type FixKind int

const (
	FixUncordon FixKind = iota + 1 // the cordon is the node's only obstacle
	FixTolerate                    // one intended taint is the only obstacle
	FixRoom                        // room (one resource) is the only obstacle
)

// Soonest is the single change that frees a node soonest, in this order:
// uncordon a node whose only obstacle is its cordon; tolerate the one
// intended taint that is the only obstacle on the most nodes; free room on
// the node closest to fitting. Nodes the selector excludes are not
// considered. Nil when no single change frees a node.
func (f *Fit) Soonest() *SoonestFix {
	var uncordon []string
	tolerate := map[string][]string{}
	var shortOnly []*NodeFit
	for i := range f.Nodes {
		n := &f.Nodes[i]
		if n.SelectorMismatch || n.Fits() || len(n.Volumes) > 0 {
			continue
		}
		switch {
		case n.Cordoned && len(n.Taints) == 0 && len(n.Short) == 0:
			uncordon = append(uncordon, n.Node.Name)
		case !n.Cordoned && len(n.Taints) == 1 && len(n.Short) == 0 && TaintClass(n.Taints[0].Key) != TaintProblem:
			tolerate[n.Taints[0].ToString()] = append(tolerate[n.Taints[0].ToString()], n.Node.Name)
		case !n.Cordoned && len(n.Taints) == 0 && len(n.Short) == 1:
			shortOnly = append(shortOnly, n)
		}
	}
	if len(uncordon) > 0 {
		return &SoonestFix{Kind: FixUncordon, Node: uncordon[0]}
	}
	if len(tolerate) > 0 {
		best := ""
		for t, ns := range tolerate {
			if best == "" || len(ns) > len(tolerate[best]) || (len(ns) == len(tolerate[best]) && t < best) {
				best = t
			}
		}
		return &SoonestFix{Kind: FixTolerate, Taint: best, Nodes: len(tolerate[best])}
	}
	if len(shortOnly) > 0 {
		sort.SliceStable(shortOnly, func(i, j int) bool {
			a, b := shortOnly[i].Short[0], shortOnly[j].Short[0]
			// Closest to fitting: the smallest share of allocatable missing.
			return share(a) < share(b)
		})
		n := shortOnly[0]
		return &SoonestFix{Kind: FixRoom, Node: n.Node.Name, Shortage: n.Short[0]}
	}
	return nil
}

func share(s Shortage) float64 {
	m := s.Missing()
	if s.Allocatable.IsZero() {
		return 1e18
	}
	return float64(m.MilliValue()) / float64(s.Allocatable.MilliValue())
}

// NonNegative is q, or zero when q is negative (a node whose bound pods
// request more than its allocatable has nothing free).
func NonNegative(q resource.Quantity) resource.Quantity {
	if q.Sign() < 0 {
		return resource.Quantity{}
	}
	return q
}

// volumeNowhere: each volume restriction that no node meets at all, or
// none of the nodes the pod's selector allows ("its volume pv-a (claim
// data) has node affinity topology.kubernetes.io/zone=eu-west-1c: no node
// is there (nodes have ...)").
func volumeNowhere(f *Fit, nodes []corev1.Node) []string {
	selectable := false
	for i := range f.Nodes {
		selectable = selectable || !f.Nodes[i].SelectorMismatch
	}
	var out []string
	for v := range f.Volumes {
		vt := &f.Volumes[v]
		some, allowed := false, false
		for i := range f.Nodes {
			n := &f.Nodes[i]
			if slices.Contains(n.Volumes, vt) {
				continue
			}
			some = true
			allowed = allowed || !n.SelectorMismatch
		}
		switch {
		case len(f.Nodes) == 0:
		case !some:
			out = append(out, fmt.Sprintf("its %s can only be used on nodes with %s (%s), and no node is there (%s)",
				vt.Name(), vt.Want, vt.Source, NodesHave(vt.Keys, nodes)))
		case !allowed && selectable:
			out = append(out, fmt.Sprintf("no node fits both its node selector/affinity and the %s of its %s (%s)",
				vt.Source, vt.Name(), vt.Want))
		}
	}
	return out
}
