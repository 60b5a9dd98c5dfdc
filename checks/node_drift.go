package checks

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// NodeDrift finds node pools whose nodes are not identical (kubelet, kernel,
// OS image, container runtime, architecture) and kubelets outside the
// version-skew policy against the API server.
var NodeDrift = &doctor.Check{
	Name:     "node-drift",
	Severity: doctor.Warning,
	Reads:    []snapshot.Resource{snapshot.Nodes},
	Run:      runNodeDrift,
	Doc: `Node pools that mix kubelet, kernel, OS or runtime versions, and kubelets outside the version-skew policy

## Why it matters
Nodes are not abstract compute: each is a kernel, an OS image, a container
runtime and a kubelet, and a bug or a feature that depends on one of them
shows only on the nodes that have it. In "How the OOM-Killer Deleted My
Namespace" (seed 003) metrics-server broke only when it was rescheduled onto
an older node that lacked a kubelet feature gate the newer nodes had, and a
new node image with a new kernel made kubelets report "container runtime is
down" after a few days. A pool whose nodes differ makes such failures follow
pods around as they are rescheduled. Separately, the Kubernetes version-skew
policy supports kubelets at most three minor versions older than
kube-apiserver and never newer: outside it, API fields the kubelet does not
know are silently ignored and the next control-plane upgrade is unsafe.

## How it is detected
From one LIST of nodes, each node's ` + "`status.nodeInfo`" + ` (kubeletVersion,
kernelVersion, osImage, containerRuntimeVersion, architecture) is grouped by
pool: the first of the providers' pool labels (` + "`eks.amazonaws.com/nodegroup`" + `,
` + "`alpha.eksctl.io/nodegroup-name`, `cloud.google.com/gke-nodepool`" + `,
` + "`karpenter.sh/nodepool`, `kubernetes.azure.com/agentpool`" + `,
` + "`doks.digitalocean.com/node-pool`, `node.kubernetes.io/pool`" + `) and, as a fallback,
` + "`node.kubernetes.io/instance-type`" + `; nodes with none of them form the pool
` + "`<none>`" + `. A pool that mixes values of a field is one warning naming the field,
the values with their node counts and the odd nodes (those not on the most
common value). Kernels are compared among nodes of the same architecture, and
mixed architectures are reported only for managed node groups (EKS, GKE,
AKS), since Karpenter pools and unlabelled fleets often mix amd64 and arm64
on purpose. Each kubelet version (vendor suffixes such as ` + "`-eks-…`, `+k3s1`" + ` or
` + "`-gke.…`" + ` stripped) is compared with the API server's: newer, or more than
three minors older, is critical; exactly three minors older, at the limit,
is a warning. Nodes without ` + "`nodeInfo`" + ` are ignored. ` + "`kubectl doctor nodes`" + `
prints the same grouping as a table.

## How to fix
Drain the odd nodes and replace them through the pool's own tooling (node
group update, node-pool upgrade, or deleting the node so Karpenter replaces
it) so that the whole pool runs one image; upgrade kubelets that are at or
beyond the skew limit before upgrading the control plane again.

## References
- https://kubernetes.io/releases/version-skew-policy/#kubelet
- https://kubernetes.io/docs/reference/labels-annotations-taints/#nodekubernetesioinstance-type
- https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/
- https://karpenter.sh/docs/concepts/disruption/#drift`,
}

// ProviderPoolLabels name a node's pool as providers and autoscalers label
// it, in order of preference. node-drift and node-pod-capacity share them.
var ProviderPoolLabels = []string{
	"eks.amazonaws.com/nodegroup",
	"alpha.eksctl.io/nodegroup-name",
	"cloud.google.com/gke-nodepool",
	"karpenter.sh/nodepool",
	"kubernetes.azure.com/agentpool",
	"doks.digitalocean.com/node-pool",
	"node.kubernetes.io/pool",
}

// PoolLabels are ProviderPoolLabels plus the instance type, node-drift's
// fallback for fleets without a pool label.
var PoolLabels = append(slices.Clone(ProviderPoolLabels), "node.kubernetes.io/instance-type")

// providerPool is the node's provider pool label and value, if it has one.
func providerPool(n *corev1.Node) (label, value string, ok bool) {
	for _, l := range ProviderPoolLabels {
		if v := n.Labels[l]; v != "" {
			return l, v, true
		}
	}
	return "", "", false
}

// NoPool is the pool of nodes that carry none of PoolLabels.
const NoPool = "<none>"

// NodePool returns the node's pool and the label that names it ("" for NoPool).
func NodePool(n *corev1.Node) (pool, label string) {
	for _, l := range PoolLabels {
		if v := n.Labels[l]; v != "" {
			return v, l
		}
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

func nodeVersions(n *corev1.Node) NodeVersions {
	i := n.Status.NodeInfo
	return NodeVersions{Kubelet: i.KubeletVersion, Kernel: i.KernelVersion, OSImage: i.OSImage,
		ContainerRuntime: i.ContainerRuntimeVersion, Architecture: i.Architecture}
}

// Empty is true for a node that has not reported its nodeInfo.
func (v NodeVersions) Empty() bool { return v == NodeVersions{} }

// driftField is one field of NodeVersions compared within a pool.
type driftField struct {
	key   string // JSON name, listed in NodeRow.Odd
	title string // in messages
	get   func(NodeVersions) string
}

var driftFields = []driftField{
	{"kubelet", "kubelet", func(v NodeVersions) string { return v.Kubelet }},
	{"kernel", "kernel", func(v NodeVersions) string { return v.Kernel }},
	{"osImage", "OS image", func(v NodeVersions) string { return v.OSImage }},
	{"containerRuntime", "container runtime", func(v NodeVersions) string { return v.ContainerRuntime }},
	{"architecture", "architecture", func(v NodeVersions) string { return v.Architecture }},
}

// perArch: kernel releases are built per architecture (…x86_64, …aarch64),
// so kernels are compared only among nodes of the same architecture.
func (f driftField) perArch() bool { return f.key == "kernel" }

// archMixIsOdd: managed node groups run one machine type, so one
// architecture; Karpenter pools and unlabelled fleets may mix on purpose.
func archMixIsOdd(label string) bool {
	switch label {
	case "eks.amazonaws.com/nodegroup", "cloud.google.com/gke-nodepool", "kubernetes.azure.com/agentpool":
		return true
	}
	return false
}

type poolNode struct {
	name string
	v    NodeVersions
}

type nodePool struct {
	name, label string
	nodes       []poolNode // sorted by name; nodes without nodeInfo included
}

// nodePools groups nodes by pool, sorted by pool name.
func nodePools(nodes []corev1.Node) []*nodePool {
	byName := map[string]*nodePool{}
	var out []*nodePool
	for i := range nodes {
		n := &nodes[i]
		name, label := NodePool(n)
		p := byName[name]
		if p == nil {
			p = &nodePool{name: name, label: label}
			byName[name] = p
			out = append(out, p)
		}
		p.nodes = append(p.nodes, poolNode{name: n.Name, v: nodeVersions(n)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	for _, p := range out {
		sort.Slice(p.nodes, func(i, j int) bool { return p.nodes[i].name < p.nodes[j].name })
	}
	return out
}

// valueCount is one value of a field within a pool and the nodes that have it.
type valueCount struct {
	value string
	nodes []string
}

// fieldDrift is a field whose value differs within (part of) a pool: the
// values, most common first; every value after the first is odd.
type fieldDrift struct {
	field  driftField
	arch   string // the architecture compared within, for per-arch fields
	values []valueCount
}

// drift returns the fields that differ within the pool, in driftFields order.
func (p *nodePool) drift() []fieldDrift {
	var out []fieldDrift
	for _, f := range driftFields {
		if f.key == "architecture" && !archMixIsOdd(p.label) {
			continue
		}
		groups := map[string][]poolNode{"": nil}
		if f.perArch() {
			groups = map[string][]poolNode{}
		}
		for _, n := range p.nodes {
			if n.v.Empty() {
				continue
			}
			key := ""
			if f.perArch() {
				key = n.v.Architecture
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
				if v := f.get(n.v); v != "" {
					counts[v] = append(counts[v], n.name)
				}
			}
			if len(counts) < 2 {
				continue
			}
			d := fieldDrift{field: f, arch: a}
			for v, names := range counts {
				d.values = append(d.values, valueCount{value: v, nodes: names})
			}
			sort.Slice(d.values, func(i, j int) bool {
				if len(d.values[i].nodes) != len(d.values[j].nodes) {
					return len(d.values[i].nodes) > len(d.values[j].nodes)
				}
				return d.values[i].value < d.values[j].value
			})
			out = append(out, d)
		}
	}
	return out
}

// odd maps node name to the field keys on which it differs from its pool.
func oddFields(drift []fieldDrift) map[string][]string {
	out := map[string][]string{}
	for _, d := range drift {
		for _, vc := range d.values[1:] {
			for _, n := range vc.nodes {
				out[n] = append(out[n], d.field.key)
			}
		}
	}
	return out
}

// NodeRow is one row of `kubectl doctor nodes`: the nodes of one pool that
// run the same versions.
type NodeRow struct {
	Pool      string `json:"pool"`
	PoolLabel string `json:"poolLabel,omitempty"`
	Count     int    `json:"count"`
	NodeVersions
	Nodes []string `json:"nodes"`
	// Odd lists the fields (kubelet, kernel, osImage, containerRuntime,
	// architecture) whose value is not the most common one in the pool.
	Odd []string `json:"odd,omitempty"`
}

// NodeRows groups the fleet into pools and, within each pool, into rows of
// identical versions: most nodes first, odd rows marked. Nodes that have not
// reported their nodeInfo are a row of their own, never odd.
func NodeRows(nodes []corev1.Node) []NodeRow {
	var rows []NodeRow
	for _, p := range nodePools(nodes) {
		odd := oddFields(p.drift())
		byKey := map[string]*NodeRow{}
		var pool []*NodeRow
		for _, n := range p.nodes {
			fields := odd[n.name]
			key := fmt.Sprintf("%q|%v", n.v, fields)
			r := byKey[key]
			if r == nil {
				r = &NodeRow{Pool: p.name, PoolLabel: p.label, NodeVersions: n.v, Odd: fields}
				byKey[key] = r
				pool = append(pool, r)
			}
			r.Nodes = append(r.Nodes, n.name)
			r.Count++
		}
		sort.SliceStable(pool, func(i, j int) bool {
			a, b := pool[i], pool[j]
			if (len(a.Odd) == 0) != (len(b.Odd) == 0) {
				return len(a.Odd) == 0
			}
			if a.Count != b.Count {
				return a.Count > b.Count
			}
			return fmt.Sprint(a.NodeVersions) < fmt.Sprint(b.NodeVersions)
		})
		for _, r := range pool {
			rows = append(rows, *r)
		}
	}
	return rows
}

// skewClass sorts a kubelet against the API server: 0 supported, otherwise
// the severity and what is wrong.
type skewClass struct {
	severity doctor.Severity
	what     string
	newer    bool
}

func kubeletSkew(kubelet, server *version.Version) (skewClass, bool) {
	if kubelet.Major() != server.Major() {
		return skewClass{severity: doctor.Critical, what: fmt.Sprintf("a different major version than the API server v%s: outside the version-skew policy", server)}, true
	}
	behind := int(server.Minor()) - int(kubelet.Minor())
	switch {
	case behind < 0:
		return skewClass{doctor.Critical, fmt.Sprintf("%s newer than the API server v%s: the version-skew policy never supports a kubelet newer than kube-apiserver, and the kubelet may rely on API fields the server drops",
			doctor.Plural(-behind, "minor version", "minor versions"), server), true}, true
	case behind > 3:
		return skewClass{doctor.Critical, fmt.Sprintf("%d minor versions older than the API server v%s, beyond the version-skew policy (at most 3 older): an unsupported combination where pod fields the kubelet does not know are silently ignored",
			behind, server), false}, true
	case behind == 3:
		return skewClass{doctor.Warning, fmt.Sprintf("3 minor versions older than the API server v%s, at the limit of the version-skew policy: the next control-plane minor upgrade is unsupported until these nodes are upgraded",
			server), false}, true
	}
	return skewClass{}, false
}

func runNodeDrift(p *doctor.Pass) error {
	server, _ := version.ParseGeneric(p.Snapshot.ServerVersion)
	for _, pool := range nodePools(p.Snapshot.Nodes()) {
		skewed := map[string]bool{}
		if server != nil {
			skewed = reportSkew(p, pool, server)
		}
		reportDrift(p, pool, skewed)
	}
	return nil
}

// reportSkew reports the pool's kubelets outside the skew policy, one
// finding per kubelet minor, and returns the nodes it reported.
func reportSkew(p *doctor.Pass, pool *nodePool, server *version.Version) map[string]bool {
	type group struct {
		class    skewClass
		versions []string
		nodes    []string
	}
	groups := map[string]*group{}
	var keys []string
	for _, n := range pool.nodes {
		kv, err := version.ParseGeneric(n.v.Kubelet)
		if err != nil {
			continue
		}
		class, bad := kubeletSkew(kv, server)
		if !bad {
			continue
		}
		key := fmt.Sprintf("%d.%d", kv.Major(), kv.Minor())
		g := groups[key]
		if g == nil {
			g = &group{class: class}
			groups[key] = g
			keys = append(keys, key)
		}
		g.nodes = append(g.nodes, n.name)
		if !slices.Contains(g.versions, n.v.Kubelet) {
			g.versions = append(g.versions, n.v.Kubelet)
		}
	}
	reported := map[string]bool{}
	for _, key := range keys {
		g := groups[key]
		sort.Strings(g.versions)
		for _, n := range g.nodes {
			reported[n] = true
		}
		who := fmt.Sprintf("node %s (%s) runs", g.nodes[0], poolPhrase(pool))
		if len(g.nodes) > 1 {
			who = fmt.Sprintf("%s of %s run", doctor.Plural(len(g.nodes), "node", "nodes"), poolPhrase(pool))
			if pool.label == "" {
				who = doctor.Plural(len(g.nodes), "node", "nodes") + " without a pool label run"
			}
		}
		names := strings.Join(doctor.Examples(g.nodes), " ")
		rem := []doctor.Remediation{
			{Text: "list the pool's nodes with their kubelet versions", Command: listPoolCommand(pool)},
			{Text: "drain the nodes before replacing them", Command: "kubectl drain " + names + " --ignore-daemonsets --delete-emptydir-data"},
		}
		rem = append(rem, replaceRemediation(pool, names, fmt.Sprintf("%d.%d", server.Major(), server.Minor()))...)
		if g.class.newer {
			rem = append(rem, doctor.Remediation{Text: "or, if these kubelets are the target, upgrade the control plane to their minor first (kube-apiserver must never be older than a kubelet): compare with the server's version",
				Command: "kubectl version"})
		}
		p.Report(doctor.Finding{
			Severity:    g.class.severity,
			Object:      nodeRef(g.nodes[0]),
			Message:     fmt.Sprintf("%s kubelet %s, %s", who, strings.Join(g.versions, ", "), g.class.what),
			Count:       len(g.nodes),
			Examples:    doctor.Examples(g.nodes),
			Remediation: rem,
		})
	}
	return reported
}

// reportDrift reports one finding per pool that mixes versions. A kubelet
// mix that involves a node reported for version skew is left to that finding.
func reportDrift(p *doctor.Pass, pool *nodePool, skewed map[string]bool) {
	var parts []string
	oddSet := map[string]bool{}
	for _, d := range pool.drift() {
		if d.field.key == "kubelet" && anySkewed(d, skewed) {
			continue
		}
		title := d.field.title
		if d.arch != "" && len(archesOf(pool)) > 1 {
			title = d.arch + " " + title
		}
		var vals []string
		for i, vc := range d.values {
			s := fmt.Sprintf("%s on %s", vc.value, doctor.Plural(len(vc.nodes), "node", "nodes"))
			if i > 0 {
				s += " (" + exampleList(vc.nodes) + ")"
				for _, n := range vc.nodes {
					oddSet[n] = true
				}
			}
			vals = append(vals, s)
		}
		parts = append(parts, title+" "+strings.Join(vals, ", "))
	}
	if len(parts) == 0 {
		return
	}
	var odd []string
	for n := range oddSet {
		odd = append(odd, n)
	}
	sort.Strings(odd)
	names := strings.Join(doctor.Examples(odd), " ")
	rem := []doctor.Remediation{
		{Text: "compare the pool's nodes side by side", Command: listPoolCommand(pool)},
		{Text: "drain the odd nodes", Command: "kubectl drain " + names + " --ignore-daemonsets --delete-emptydir-data"},
	}
	rem = append(rem, replaceRemediation(pool, names, "")...)
	p.Report(doctor.Finding{
		Severity: doctor.Warning,
		Object:   nodeRef(odd[0]),
		Message: fmt.Sprintf("%s mixes %s: a bug or feature that depends on the node's software shows only on some of its nodes and follows pods as they are rescheduled",
			poolCount(pool), strings.Join(parts, "; ")),
		Count:       len(odd),
		Examples:    doctor.Examples(odd),
		Remediation: rem,
	})
}

// anySkewed: a kubelet mix that involves a kubelet outside the skew policy
// is that finding's business, not a second one.
func anySkewed(d fieldDrift, skewed map[string]bool) bool {
	for _, vc := range d.values {
		for _, n := range vc.nodes {
			if skewed[n] {
				return true
			}
		}
	}
	return false
}

func archesOf(pool *nodePool) map[string]bool {
	out := map[string]bool{}
	for _, n := range pool.nodes {
		if n.v.Architecture != "" {
			out[n.v.Architecture] = true
		}
	}
	return out
}

func countReported(pool *nodePool) int {
	c := 0
	for _, n := range pool.nodes {
		if !n.v.Empty() {
			c++
		}
	}
	return c
}

// poolPhrase is "pool drift-pool", "instance type m5.large" (the
// fallback) or "no pool label".
func poolPhrase(pool *nodePool) string {
	switch pool.label {
	case "":
		return "no pool label"
	case "node.kubernetes.io/instance-type":
		return "instance type " + pool.name
	}
	return "pool " + pool.name
}

// poolCount is "pool drift-pool (4 nodes)" or "the fleet without a pool
// label (4 nodes)", counting the nodes that reported their versions.
func poolCount(pool *nodePool) string {
	n := doctor.Plural(countReported(pool), "node", "nodes")
	if pool.label == "" {
		return "the fleet without a pool label (" + n + ")"
	}
	return poolPhrase(pool) + " (" + n + ")"
}

// exampleList is "a, b, c" or "a, b, c and 5 more".
func exampleList(names []string) string {
	ex := doctor.Examples(names)
	s := strings.Join(ex, ", ")
	if len(names) > len(ex) {
		s += fmt.Sprintf(" and %d more", len(names)-len(ex))
	}
	return s
}

func listPoolCommand(pool *nodePool) string {
	if pool.label == "" {
		return "kubectl get nodes -o wide"
	}
	return fmt.Sprintf("kubectl get nodes -o wide -l %s=%s", pool.label, pool.name)
}

// replaceRemediation says how the pool's own tooling replaces nodes, to the
// given Kubernetes minor when one is given.
func replaceRemediation(pool *nodePool, names, minor string) []doctor.Remediation {
	switch pool.label {
	case "eks.amazonaws.com/nodegroup":
		cmd := "aws eks update-nodegroup-version --cluster-name <cluster> --nodegroup-name " + pool.name
		if minor != "" {
			cmd += " --kubernetes-version " + minor
		}
		return []doctor.Remediation{{Text: "then roll the node group onto one AMI release: it replaces every node from its launch template", Command: cmd}}
	case "cloud.google.com/gke-nodepool":
		cmd := "gcloud container clusters upgrade <cluster> --node-pool " + pool.name
		if minor != "" {
			cmd += " --cluster-version " + minor
		}
		return []doctor.Remediation{{Text: "then upgrade the node pool: GKE recreates its nodes from one image", Command: cmd}}
	case "karpenter.sh/nodepool":
		return []doctor.Remediation{{Text: "then delete the nodes: Karpenter drains them, terminates the instances and launches replacements from the NodePool's current NodeClass (check its AMI selector first)",
			Command: "kubectl delete node " + names}}
	case "kubernetes.azure.com/agentpool":
		cmd := "az aks nodepool upgrade --resource-group <resource-group> --cluster-name <cluster> --name " + pool.name
		if minor != "" {
			cmd += " --kubernetes-version " + minor
		} else {
			cmd += " --node-image-only"
		}
		return []doctor.Remediation{{Text: "then upgrade the node pool's image: AKS reimages every node", Command: cmd}}
	}
	if minor != "" {
		return []doctor.Remediation{{Text: "then upgrade their kubelet to " + minor + " (kubeadm: kubeadm upgrade node, then the kubelet package, one minor at a time) or replace them through whatever provisions these nodes"}}
	}
	return []doctor.Remediation{{Text: "then reinstall or replace them with the image the rest of the pool runs, through whatever provisions these nodes"}}
}
