package kube

import (
	"sort"

	"k8s.io/apimachinery/pkg/api/resource"
)

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
	if len(f.UnreadClaims) > 0 || f.PodsOf != "" || len(f.Unjudged) > 0 {
		// The volumes' own restrictions are unknown: a node one uncordon
		// away may still be one the volume cannot reach. Or the pods of
		// other namespaces were not listed: room is not known anywhere.
		// Or the pod's spread or inter-pod affinity, which the snapshot
		// does not judge, may keep it off that node too.
		return nil
	}
	var uncordon []string
	tolerate := map[string][]string{}
	var shortOnly []*NodeFit
	for i := range f.Nodes {
		n := &f.Nodes[i]
		if n.SelectorMismatch || n.Fits() || len(n.Volumes) > 0 {
			continue
		}
		switch {
		case n.Cordoned && len(n.Taints) == 0 && len(n.Short) == 0 && CordonedBy(n.Node) == nil:
			// (A node an updater cordoned is not uncordoned by hand.)
			uncordon = append(uncordon, n.Node.Name)
		case !n.Cordoned && len(n.Taints) == 1 && len(n.Short) == 0 && TaintClass(n.Taints[0].Key) != TaintProblem && !VirtualNode(n.Node):
			// (A virtual kubelet's provider taint is not tolerated to make
			// room: that moves the workload off the cluster's machines.)
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
