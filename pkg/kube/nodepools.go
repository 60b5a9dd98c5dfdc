package kube

import (
	"regexp"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// providerPoolLabels name a node's pool as providers and autoscalers label
// it, in order of preference (unexported: a shared slice must not be changed).
var providerPoolLabels = []string{
	"eks.amazonaws.com/nodegroup",
	"alpha.eksctl.io/nodegroup-name",
	"cloud.google.com/gke-nodepool",
	"karpenter.sh/nodepool",
	"kubernetes.azure.com/agentpool",
	"doks.digitalocean.com/node-pool",
	"node.kubernetes.io/pool",
}

// instanceTypeLabels group fleets without a pool label by machine type
// (the beta label is all that nodes before 1.17 carry).
var instanceTypeLabels = []string{"node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"}

// genericPoolKey matches the pool labels that installers and users set
// themselves ("node-pool", "nodepool", "oke.oraclecloud.com/pool.name",
// "example.com/worker-pool", "nodegroup"): the last path segment of the
// key names a pool or a node group and no version.
var genericPoolKey = regexp.MustCompile(`(?i)^(?:[^/]*/)?(?:[a-z0-9]+[-_.])*(?:node-?pool|pool|node-?group|agentpool)(?:[-_.](?:name|id))?$`)

// poolLabelOf is the node's pool label: a provider's, else one set by an
// installer or user (genericPoolKey; sorted, the first wins), else the
// instance type.
func poolLabelOf(n *corev1.Node) (label, value string) {
	for _, l := range providerPoolLabels {
		if v := n.Labels[l]; v != "" {
			return l, v
		}
	}
	var generic []string
	for k, v := range n.Labels {
		if v != "" && genericPoolKey.MatchString(k) && !strings.Contains(strings.ToLower(k), "version") {
			generic = append(generic, k)
		}
	}
	if len(generic) > 0 {
		sort.Strings(generic)
		return generic[0], n.Labels[generic[0]]
	}
	for _, l := range instanceTypeLabels {
		if v := n.Labels[l]; v != "" {
			return l, v
		}
	}
	return "", ""
}

// IsInstanceType: the pool is the fallback grouping by machine type.
func IsInstanceType(label string) bool { return slices.Contains(instanceTypeLabels, label) }

// ProviderPool is the node's provider pool label and value, if it has one.
func ProviderPool(n *corev1.Node) (label, value string, ok bool) {
	for _, l := range providerPoolLabels {
		if v := n.Labels[l]; v != "" {
			return l, v, true
		}
	}
	return "", "", false
}

// VirtualNode: the node is a virtual kubelet (Azure Container Instances,
// other virtual-kubelet providers) that hands pods to a service instead of
// running them: its version, kernel and runtime are the provider's, not a
// machine's to drain and upgrade. Known by the provider taint, the type
// label virtual-kubelet sets, or a kubelet version the project stamps.
func VirtualNode(n *corev1.Node) bool {
	if n.Labels["type"] == "virtual-kubelet" || strings.Contains(n.Status.NodeInfo.KubeletVersion, "-vk-") {
		return true
	}
	for _, t := range n.Spec.Taints {
		if t.Key == "virtual-kubelet.io/provider" {
			return true
		}
	}
	return false
}

// NoPool is the pool of nodes that carry no pool label (poolLabelOf).
const NoPool = "<none>"

// NodePool returns the node's pool and the label that names it ("" for NoPool).
func NodePool(n *corev1.Node) (pool, label string) {
	if l, v := poolLabelOf(n); l != "" {
		return v, l
	}
	return NoPool, ""
}

// NodeVersions is what a node runs, from its status.nodeInfo.
type NodeVersions struct {
	Kubelet          string `json:"kubelet"`
	Kernel           string `json:"kernel"`
	OSImage          string `json:"osImage"`
	ContainerRuntime string `json:"containerRuntime"`
	Architecture     string `json:"architecture"`
}

// Versions reads a node's NodeVersions from its status.nodeInfo.
func Versions(n *corev1.Node) NodeVersions {
	i := n.Status.NodeInfo
	return NodeVersions{Kubelet: i.KubeletVersion, Kernel: i.KernelVersion, OSImage: i.OSImage,
		ContainerRuntime: i.ContainerRuntimeVersion, Architecture: i.Architecture}
}

// Empty is true for a node that has not reported its nodeInfo.
func (v NodeVersions) Empty() bool { return v == NodeVersions{} }

// DriftField is one field of NodeVersions compared within a pool.
type DriftField struct {
	Key string // JSON name, listed in a node listing's odd fields
	Get func(NodeVersions) string
}

var DriftFields = []DriftField{
	{"kubelet", func(v NodeVersions) string { return v.Kubelet }},
	{"kernel", func(v NodeVersions) string { return v.Kernel }},
	{"osImage", func(v NodeVersions) string { return v.OSImage }},
	{"containerRuntime", func(v NodeVersions) string { return v.ContainerRuntime }},
	{"architecture", func(v NodeVersions) string { return v.Architecture }},
}

// perArch: kernel releases are built per architecture (…x86_64, …aarch64),
// so kernels are compared only among nodes of the same architecture.
func (f DriftField) perArch() bool { return f.Key == "kernel" }

// archMixIsOdd: managed node groups run one machine type, so one
// architecture; Karpenter pools and unlabelled fleets may mix on purpose.
func archMixIsOdd(label string) bool {
	switch label {
	case "eks.amazonaws.com/nodegroup", "cloud.google.com/gke-nodepool", "kubernetes.azure.com/agentpool":
		return true
	}
	return false
}

type PoolNode struct {
	Name string
	V    NodeVersions
}

type Pool struct {
	Name, Label string
	Nodes       []PoolNode // sorted by name; nodes without nodeInfo included
}

// Pools groups nodes by pool, sorted by pool name.
func Pools(nodes []corev1.Node) []*Pool {
	byName := map[string]*Pool{}
	var out []*Pool
	for i := range nodes {
		n := &nodes[i]
		name, label := NodePool(n)
		p := byName[name]
		if p == nil {
			p = &Pool{Name: name, Label: label}
			byName[name] = p
			out = append(out, p)
		}
		p.Nodes = append(p.Nodes, PoolNode{Name: n.Name, V: Versions(n)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	for _, p := range out {
		sort.Slice(p.Nodes, func(i, j int) bool { return p.Nodes[i].Name < p.Nodes[j].Name })
	}
	return out
}

// ValueCount is one value of a field within a pool and the nodes that have it.
type ValueCount struct {
	Value string
	Nodes []string
}

// FieldDrift is a field whose value differs within (part of) a pool: the
// values, most common first; every value after the first is odd.
type FieldDrift struct {
	Field  DriftField
	Arch   string // the architecture compared within, for per-arch fields
	Values []ValueCount
}

// drift returns the fields that differ within the pool, in DriftFields order.
func (p *Pool) Drift() []FieldDrift {
	var out []FieldDrift
	for _, f := range DriftFields {
		if f.Key == "architecture" && !archMixIsOdd(p.Label) {
			continue
		}
		groups := map[string][]PoolNode{"": nil}
		if f.perArch() {
			groups = map[string][]PoolNode{}
		}
		for _, n := range p.Nodes {
			if n.V.Empty() {
				continue
			}
			key := ""
			if f.perArch() {
				key = n.V.Architecture
			}
			groups[key] = append(groups[key], n)
		}
		var arches []string
		for a := range groups {
			arches = append(arches, a)
		}
		sort.Strings(arches)
		for _, a := range arches {
			counts := map[string][]string{}
			for _, n := range groups[a] {
				if v := f.Get(n.V); v != "" {
					counts[v] = append(counts[v], n.Name)
				}
			}
			if len(counts) < 2 {
				continue
			}
			d := FieldDrift{Field: f, Arch: a}
			for v, names := range counts {
				d.Values = append(d.Values, ValueCount{Value: v, Nodes: names})
			}
			sort.Slice(d.Values, func(i, j int) bool {
				if len(d.Values[i].Nodes) != len(d.Values[j].Nodes) {
					return len(d.Values[i].Nodes) > len(d.Values[j].Nodes)
				}
				return d.Values[i].Value < d.Values[j].Value
			})
			out = append(out, d)
		}
	}
	return out
}

// odd maps node name to the field keys on which it differs from its pool.
func OddFields(drift []FieldDrift) map[string][]string {
	out := map[string][]string{}
	for _, d := range drift {
		for _, vc := range d.Values[1:] {
			for _, n := range vc.Nodes {
				out[n] = append(out[n], d.Field.Key)
			}
		}
	}
	return out
}
