package checks

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

// The words of kube.Fit: why no node takes a pod, for unschedulable and
// pvc-pending.

// fitSummary says, per reason, how many nodes refuse the pod, each node counted
// once under its first obstacle in the scheduler's order (selector, cordon,
// taints, room): "0/6 nodes can take it: 4 tainted (dedicated=gpu:NoSchedule),
// 1 cordoned (node-5), 1 short of 1.5 CPU (node-6)".
func fitSummary(f *kube.Fit) string {
	fits, parts := fitBreakdown(f)
	head := fmt.Sprintf("%d/%d nodes can take it", len(fits), len(f.Nodes))
	if len(parts) == 0 {
		return head
	}
	return head + ": " + strings.Join(parts, ", ")
}

// fitBreakdown is fitSummary's parts: the nodes nothing in the snapshot keeps
// off, and the per-reason counts of the others.
func fitBreakdown(f *kube.Fit) (fits, parts []string) {
	var selector, cordoned []string
	tainted := map[string][]string{} // taint -> nodes
	taintedNodes := 0
	short := map[corev1.ResourceName][]kube.Shortage{}
	shortNodes := map[corev1.ResourceName][]string{}
	shortCount := 0
	volumeNodes := map[*kube.VolumeTopology][]string{}
	var volumeOrder []*kube.VolumeTopology
	for i := range f.Nodes {
		n := &f.Nodes[i]
		switch {
		case n.SelectorMismatch:
			selector = append(selector, n.Node.Name)
		case n.Cordoned:
			cordoned = append(cordoned, n.Node.Name)
		case len(n.Taints) > 0:
			taintedNodes++
			for _, t := range n.Taints {
				tainted[t.ToString()] = append(tainted[t.ToString()], n.Node.Name)
			}
		case len(n.Short) > 0:
			shortCount++
			for _, s := range n.Short {
				short[s.Resource] = append(short[s.Resource], s)
				shortNodes[s.Resource] = append(shortNodes[s.Resource], n.Node.Name)
			}
		case len(n.Volumes) > 0:
			v := n.Volumes[0]
			if volumeNodes[v] == nil {
				volumeOrder = append(volumeOrder, v)
			}
			volumeNodes[v] = append(volumeNodes[v], n.Node.Name)
		default:
			fits = append(fits, n.Node.Name)
		}
	}
	if len(selector) > 0 {
		parts = append(parts, fmt.Sprintf("%d not matching its node selector/affinity", len(selector)))
	}
	if len(cordoned) > 0 {
		parts = append(parts, fmt.Sprintf("%d cordoned (%s)", len(cordoned), examplesEllipsis(cordoned)))
	}
	if taintedNodes > 0 {
		ts := make([]string, 0, len(tainted))
		for t := range tainted {
			ts = append(ts, t)
		}
		sort.Slice(ts, func(i, j int) bool {
			if len(tainted[ts[i]]) != len(tainted[ts[j]]) {
				return len(tainted[ts[i]]) > len(tainted[ts[j]])
			}
			return ts[i] < ts[j]
		})
		var named []string
		for _, t := range ts {
			if len(ts) == 1 {
				named = append(named, t)
			} else {
				named = append(named, fmt.Sprintf("%s ×%d", t, len(tainted[t])))
			}
		}
		parts = append(parts, fmt.Sprintf("%d tainted (%s)", taintedNodes, strings.Join(named, ", ")))
	}
	if shortCount > 0 {
		rs := make([]corev1.ResourceName, 0, len(short))
		for r := range short {
			rs = append(rs, r)
		}
		sort.Slice(rs, func(i, j int) bool { return rs[i] < rs[j] })
		for _, r := range rs {
			best := short[r][0]
			bestNode := shortNodes[r][0]
			for k, s := range short[r] {
				if m, b := s.Missing(), best.Missing(); m.Cmp(b) < 0 {
					best, bestNode = s, shortNodes[r][k]
				}
			}
			switch {
			case r == corev1.ResourcePods:
				parts = append(parts, fmt.Sprintf("%d full of pods (%s)", len(short[r]), examplesEllipsis(shortNodes[r])))
			case len(short[r]) == 1:
				parts = append(parts, fmt.Sprintf("1 short of %s (%s: %s of %s free)", formatQuantity(r, best.Missing()), bestNode,
					formatQuantity(r, kube.NonNegative(best.Free)), formatQuantity(r, best.Allocatable)))
			default:
				parts = append(parts, fmt.Sprintf("%d short of %s (at least %s missing, on %s)", len(short[r]), resourceTitle(r),
					formatQuantity(r, best.Missing()), bestNode))
			}
		}
	}
	for _, v := range volumeOrder {
		parts = append(parts, fmt.Sprintf("%d outside the %s of %s (%s: %s)", len(volumeNodes[v]), topologySource[v.Source], volumeName(v), v.Want, examplesEllipsis(volumeNodes[v])))
	}
	return fits, parts
}

// resourceTitle is how messages name a resource: "CPU", "memory", "nvidia.com/gpu".
func resourceTitle(r corev1.ResourceName) string {
	if r == corev1.ResourceCPU {
		return "CPU"
	}
	return string(r)
}

// formatQuantity writes a quantity for people: CPU in cores ("1.5 CPU",
// "0.25 CPU"), memory and storage in Gi or Mi ("1.5Gi memory"), others as counts.
func formatQuantity(r corev1.ResourceName, q resource.Quantity) string {
	switch r {
	case corev1.ResourceCPU:
		return strconv.FormatFloat(float64(q.MilliValue())/1000, 'f', -1, 64) + " CPU"
	case corev1.ResourceMemory, corev1.ResourceEphemeralStorage, corev1.ResourceStorage:
		return bytesWords(q.Value()) + " " + string(r)
	}
	return q.String() + " " + string(r)
}

// bytesWords is a byte count in Gi (one decimal) or Mi.
func bytesWords(b int64) string {
	const mi, gi = 1 << 20, 1 << 30
	if b >= gi || -b >= gi {
		return strconv.FormatFloat(math.Round(float64(b)/gi*10)/10, 'f', -1, 64) + "Gi"
	}
	return strconv.FormatInt((b+mi-1)/mi, 10) + "Mi"
}

// fitCause says what keeps the pod pending, most definitive first: missing
// claims, requests no node can hold, a selector no node matches; else the
// per-node summary and the soonest fix.
func fitCause(f *kube.Fit) string {
	var causes []string
	for _, c := range f.MissingClaims {
		causes = append(causes, fmt.Sprintf("its persistentvolumeclaim %s does not exist", c))
	}
	for _, s := range f.NeverFits {
		causes = append(causes, fmt.Sprintf("it requests %s, more than any node's allocatable (the largest has %s): it can never fit as the cluster is",
			formatQuantity(s.Resource, s.Request), formatQuantity(s.Resource, s.Allocatable)))
	}
	matching := 0
	for i := range f.Nodes {
		if !f.Nodes[i].SelectorMismatch {
			matching++
		}
	}
	switch {
	case len(f.Nodes) == 0:
		causes = append(causes, "the cluster has no node")
	case len(f.VolumeNowhere) > 0:
		for _, v := range f.VolumeNowhere {
			causes = append(causes, volumeNowhereWords(v))
		}
	case matching == 0:
		c := "no node matches its node selector/affinity"
		if len(f.AbsentLabels) > 0 {
			words := make([]string, len(f.AbsentLabels))
			for i, a := range f.AbsentLabels {
				words[i] = absentLabelWords(a)
			}
			c += ": " + strings.Join(words, "; ")
		}
		causes = append(causes, c)
	case len(causes) == 0:
		c := fitSummary(f)
		if s := soonestWords(f.Soonest()); s != "" {
			c += "; soonest fix: " + s
		}
		causes = append(causes, c)
	}
	return strings.Join(causes, "; ")
}

// soonestWords is a kube.SoonestFix in words, "" for none.
func soonestWords(s *kube.SoonestFix) string {
	if s == nil {
		return ""
	}
	switch s.Kind {
	case kube.FixUncordon:
		return fmt.Sprintf("uncordon %s (the cordon is its only obstacle)", s.Node)
	case kube.FixTolerate:
		return fmt.Sprintf("tolerate %s, if the workload belongs there (the only obstacle on %s)", s.Taint, doctor.Plural(s.Nodes, "node", "nodes"))
	}
	sh := s.Shortage
	if sh.Resource == corev1.ResourcePods {
		return fmt.Sprintf("make room for one pod on %s (it runs its %s allocatable pods)", s.Node, sh.Allocatable.String())
	}
	free := kube.NonNegative(sh.Free)
	if free.IsZero() {
		// Nothing is left there: lowering the request cannot help.
		return fmt.Sprintf("free %s on %s (room is its only obstacle)", formatQuantity(sh.Resource, sh.Missing()), s.Node)
	}
	return fmt.Sprintf("free %s on %s, or lower the request to %s (room is its only obstacle)", formatQuantity(sh.Resource, sh.Missing()),
		s.Node, formatQuantity(sh.Resource, free))
}

// volumeName is how messages name a volume: "volume pv-data (claim
// data-db-0)", "claim data-db-0 (storageclass zonal)".
func volumeName(v *kube.VolumeTopology) string {
	if v.Volume != "" {
		return fmt.Sprintf("volume %s (claim %s)", v.Volume, v.Claim)
	}
	return fmt.Sprintf("claim %s (storageclass %s)", v.Claim, v.Class)
}

// volumeNowhereWords: "its volume pv-a (claim data) can only be used on
// nodes with topology.kubernetes.io/zone=eu-west-1c (node affinity), and
// no node is there (nodes have ...)".
func volumeNowhereWords(v kube.VolumeNowhere) string {
	vt := v.Volume
	if v.Conflict {
		return fmt.Sprintf("no node fits both its node selector/affinity and the %s of its %s (%s)", topologySource[vt.Source], volumeName(vt), vt.Want)
	}
	var parts []string
	for _, k := range vt.Keys {
		if len(v.Have[k]) == 0 {
			parts = append(parts, "no node has the label "+k)
			continue
		}
		parts = append(parts, fmt.Sprintf("nodes have %s=%s", k, strings.Join(someValues(v.Have[k]), ", ")))
	}
	return fmt.Sprintf("its %s can only be used on nodes with %s (%s), and no node is there (%s)",
		volumeName(vt), vt.Want, topologySource[vt.Source], strings.Join(parts, "; "))
}

// absentLabelWords: "no node has the label pool", "no node has pool=tpu
// (nodes have cpu, gpu)".
func absentLabelWords(a kube.AbsentLabel) string {
	if len(a.Have) == 0 {
		return fmt.Sprintf("no node has the label %s", a.Key)
	}
	return fmt.Sprintf("no node has %s=%s (nodes have %s)", a.Key, strings.Join(a.Want, "|"), strings.Join(someValues(a.Have), ", "))
}

// someValues are the first five label values, "..." for the rest.
func someValues(vs []string) []string {
	if len(vs) > 5 {
		return append(vs[:5:5], "...")
	}
	return vs
}

// topologySource names where a volume's topology restriction is written.
var topologySource = map[kube.TopologySource]string{kube.PVNodeAffinity: "node affinity", kube.PVZoneLabel: "zone label",
	kube.AllowedTopologies: "allowedTopologies"}
