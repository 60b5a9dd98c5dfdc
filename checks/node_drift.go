package checks

import (
	"fmt"
	corev1 "k8s.io/api/core/v1"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// NodeDrift finds node pools whose nodes are not identical (kubelet, kernel,
// OS image, container runtime, architecture) and kubelets outside the
// version-skew policy against the API server.
var NodeDrift = &doctor.Check{
	Name:     "node-drift",
	Severity: doctor.Warning,
	Origin:   "OOM-Killer talk",
	Reads:    []snapshot.Resource{snapshot.Nodes},
	Run:      runNodeDrift,
	Doc: `Node pools that mix kubelet, kernel, OS or runtime versions, and kubelets outside the version-skew policy

## Why it matters
Nodes are not abstract compute: each is a kernel, an OS image, a container
runtime and a kubelet, and a bug or a feature that depends on one of them
shows only on the nodes that have it. In "How the OOM-Killer Deleted My
Namespace" (KubeCon NA 2020) metrics-server broke only when it was rescheduled onto
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
` + "`doks.digitalocean.com/node-pool`, `node.kubernetes.io/pool`" + `), else a pool label
an installer or user set (a key whose last segment names a pool or node
group: ` + "`node-pool`, `nodepool`, `oke.oraclecloud.com/pool.name`, `worker-pool`" + `),
and, as a fallback, ` + "`node.kubernetes.io/instance-type`" + ` (or its beta label on
nodes before 1.17); nodes with none of them form the pool ` + "`<none>`" + `. A pool
that mixes values of a field is one warning naming the field, the values
with their node counts and the odd nodes (those not on the most common
value); a pool split evenly has no odd side: both are named and neither is
drained (two pools without a label, or a node rollout half done). Virtual
kubelets (Azure Container Instances and other virtual-kubelet providers:
the ` + "`virtual-kubelet.io/provider`" + ` taint, ` + "`type=virtual-kubelet`" + `, a ` + "`-vk-`" + ` kubelet
version) run their provider's software, not a machine's, and are left out. Kernels are compared among nodes of the same architecture, and
mixed architectures are reported only for managed node groups (EKS, GKE,
AKS), since Karpenter pools and unlabelled fleets often mix amd64 and arm64
on purpose. Each kubelet version (vendor suffixes such as ` + "`-eks-…`, `+k3s1`" + ` or
` + "`-gke.…`" + ` stripped) is compared with the API server's: newer, or more than
three minors older, is critical; exactly three minors older, at the limit,
is a warning. A pool mix whose odd nodes are all reported for their
kubelet's skew is left to that finding (replacing them ends both): one
finding per node. Nodes without ` + "`nodeInfo`" + ` are ignored. ` + "`kubectl doctor nodes`" + `
prints the same grouping as a table.

When the odd nodes run the newer build of the same software (the same
words, newer numbers: ` + "`CoreOS 9.6.20250815-0`" + ` against ` + "`9.6.20250811-0`" + `), the mix
is an update rolling through the pool, under way or stalled, or newer nodes
added: the finding says so and never proposes to drain the updated nodes and
reinstall the older image; OpenShift's Machine Config Operator state and
reason on the pool's nodes (` + "`Degraded: failed to pull ...`" + `) are quoted.

## How to fix
Drain the odd nodes and replace them through the pool's own tooling (node
group update, node-pool upgrade, or deleting the node so Karpenter replaces
it) so that the whole pool runs one image; upgrade kubelets that are at or
beyond the skew limit before upgrading the control plane again.

## References
- https://www.youtube.com/watch?v=MrNhdmyXXKg
- https://kubernetes.io/releases/version-skew-policy/#kubelet
- https://kubernetes.io/docs/reference/labels-annotations-taints/#nodekubernetesioinstance-type
- https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/
- https://karpenter.sh/docs/concepts/disruption/#drift`,
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
	// Virtual kubelets run the provider's software, not a machine's: no
	// skew or drift of theirs is the operator's to drain and upgrade.
	// The snapshot's nodes as they are, copied only when there are
	// virtual ones to leave out (a Node is 800 bytes; 5,000 of them).
	nodes := p.Snapshot.Nodes()
	for i := range nodes {
		if kube.VirtualNode(&nodes[i]) {
			var real []corev1.Node
			for j := range nodes {
				if !kube.VirtualNode(&nodes[j]) {
					real = append(real, nodes[j])
				}
			}
			nodes = real
			break
		}
	}
	for _, pool := range kube.Pools(nodes) {
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
func reportSkew(p *doctor.Pass, pool *kube.Pool, server *version.Version) map[string]bool {
	type group struct {
		class    skewClass
		versions []string
		nodes    []string
	}
	groups := map[string]*group{}
	var keys []string
	for _, n := range pool.Nodes {
		kv, err := version.ParseGeneric(n.V.Kubelet)
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
		g.nodes = append(g.nodes, n.Name)
		if !slices.Contains(g.versions, n.V.Kubelet) {
			g.versions = append(g.versions, n.V.Kubelet)
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
			if pool.Label == "" {
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
			Object:      kube.NodeRef(g.nodes[0]),
			Message:     fmt.Sprintf("%s kubelet %s, %s", who, strings.Join(g.versions, ", "), g.class.what),
			Count:       len(g.nodes),
			Examples:    doctor.Examples(g.nodes),
			Members:     nodeMembers(g.nodes),
			Remediation: rem,
		})
	}
	return reported
}

// reportDrift reports one finding per pool that mixes versions. A kubelet
// mix that involves a node reported for version skew is left to that finding.
func reportDrift(p *doctor.Pass, pool *kube.Pool, skewed map[string]bool) {
	var parts []string
	oddSet := map[string]bool{}
	for _, d := range pool.Drift() {
		if d.Field.Key == "kubelet" && anySkewed(d, skewed) {
			continue
		}
		if oddAllSkewed(d, skewed) {
			// The odd nodes are reported for their kubelet's skew already,
			// and replacing them (that finding's fix) ends this mix too:
			// one finding per node.
			continue
		}
		title := driftTitles[d.Field.Key]
		if d.Arch != "" && len(archesOf(pool)) > 1 {
			title = d.Arch + " " + title
		}
		// An even split has no majority to call the rest odd: both sides
		// are named and none is drained.
		even := len(d.Values[0].Nodes) == len(d.Values[1].Nodes)
		var vals []string
		for i, vc := range d.Values {
			s := fmt.Sprintf("%s on %s", vc.Value, doctor.Plural(len(vc.Nodes), "node", "nodes"))
			if i > 0 || even {
				s += " (" + exampleList(vc.Nodes) + ")"
			}
			if i > 0 && !even {
				for _, n := range vc.Nodes {
					oddSet[n] = true
				}
			}
			vals = append(vals, s)
		}
		if even {
			title += " (split evenly)"
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
	rem := []doctor.Remediation{{Text: "compare the pool's nodes side by side", Command: listPoolCommand(pool)}}
	object, members := "", odd
	tail := ""
	if len(odd) > 0 && oddNewer(pool.Drift(), skewed) && !anyNotReady(p.Snapshot, odd) {
		// The odd nodes run the newer software: an update rolling through
		// the pool, under way or stalled. Draining the updated nodes to
		// reinstall the older image would undo it.
		known := 0
		for _, n := range pool.Nodes {
			if !n.V.Empty() {
				known++
			}
		}
		tail = fmt.Sprintf("; the odd %s the newer software: an update rolling through the pool, under way or stalled (%d of %d nodes updated), or newer nodes that joined with another image",
			map[bool]string{true: "node runs", false: "nodes run"}[len(odd) == 1], len(odd), known)
		rem[0].Text = "find which image the pool should run: if the newer, let the update finish or find why it stopped on the nodes not yet updated; replace the newer nodes only if the older image is meant"
		if why := machineConfigStates(p.Snapshot, pool); why != "" {
			tail += "; the Machine Config Operator reports " + why
			rem = append(rem, doctor.Remediation{Text: "see the update's progress per pool", Command: "oc get machineconfigpool"})
		}
		object = odd[0]
	} else if len(odd) > 0 {
		if oddNewer(pool.Drift(), skewed) {
			// The newer software fails where it runs: the new image is
			// the suspect, and the nodes on the older one are the baseline.
			tail = "; the odd nodes, on the newer software, are the ones not ready: the new image is the suspect"
		}
		names := strings.Join(doctor.Examples(odd), " ")
		rem = append(rem, doctor.Remediation{Text: "drain the odd nodes", Command: "kubectl drain " + names + " --ignore-daemonsets --delete-emptydir-data"})
		rem = append(rem, replaceRemediation(pool, names, "")...)
		object = odd[0]
	} else {
		// Evenly split: which side is meant is the operator's call (two
		// pools without a label to tell them, or a rollout half done).
		rem[0].Text = "the nodes are split evenly: decide which side is meant (two pools without a pool label, or a node rollout half done) and compare them"
		for _, n := range pool.Nodes {
			if !n.V.Empty() {
				members = append(members, n.Name)
			}
		}
		object = members[0]
	}
	p.Report(doctor.Finding{
		Severity: doctor.Warning,
		Object:   kube.NodeRef(object),
		Message: fmt.Sprintf("%s mixes %s: a bug or feature that depends on the node's software shows only on some of its nodes and follows pods as they are rescheduled%s",
			poolCount(pool), strings.Join(parts, "; "), tail),
		Count:       len(members),
		Examples:    doctor.Examples(members),
		Members:     nodeMembers(members),
		Remediation: rem,
	})
}

// anySkewed: a kubelet mix that involves a kubelet outside the skew policy
// is that finding's business, not a second one.
func anySkewed(d kube.FieldDrift, skewed map[string]bool) bool {
	for _, vc := range d.Values {
		for _, n := range vc.Nodes {
			if skewed[n] {
				return true
			}
		}
	}
	return false
}

func archesOf(pool *kube.Pool) map[string]bool {
	out := map[string]bool{}
	for _, n := range pool.Nodes {
		if n.V.Architecture != "" {
			out[n.V.Architecture] = true
		}
	}
	return out
}

func countReported(pool *kube.Pool) int {
	c := 0
	for _, n := range pool.Nodes {
		if !n.V.Empty() {
			c++
		}
	}
	return c
}

// poolPhrase is "pool drift-pool", "instance type m5.large" (the
// fallback) or "no pool label".
func poolPhrase(pool *kube.Pool) string {
	switch {
	case pool.Label == "":
		return "no pool label"
	case kube.IsInstanceType(pool.Label):
		return "instance type " + pool.Name
	}
	return "pool " + pool.Name
}

// poolCount is "pool drift-pool (4 nodes)" or "the fleet without a pool
// label (4 nodes)", counting the nodes that reported their versions.
func poolCount(pool *kube.Pool) string {
	n := doctor.Plural(countReported(pool), "node", "nodes")
	if pool.Label == "" {
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

func listPoolCommand(pool *kube.Pool) string {
	if pool.Label == "" {
		return "kubectl get nodes -o wide"
	}
	return fmt.Sprintf("kubectl get nodes -o wide -l %s=%s", pool.Label, pool.Name)
}

// replaceRemediation says how the pool's own tooling replaces nodes, to the
// given Kubernetes minor when one is given.
func replaceRemediation(pool *kube.Pool, names, minor string) []doctor.Remediation {
	switch pool.Label {
	case "eks.amazonaws.com/nodegroup":
		cmd := "aws eks update-nodegroup-version --cluster-name <cluster> --nodegroup-name " + pool.Name
		if minor != "" {
			cmd += " --kubernetes-version " + minor
		}
		return []doctor.Remediation{{Text: "then roll the node group onto one AMI release: it replaces every node from its launch template", Command: cmd}}
	case "cloud.google.com/gke-nodepool":
		cmd := "gcloud container clusters upgrade <cluster> --node-pool " + pool.Name
		if minor != "" {
			cmd += " --cluster-version " + minor
		}
		return []doctor.Remediation{{Text: "then upgrade the node pool: GKE recreates its nodes from one image", Command: cmd}}
	case "karpenter.sh/nodepool":
		return []doctor.Remediation{{Text: "then delete the nodes: Karpenter drains them, terminates the instances and launches replacements from the NodePool's current NodeClass (check its AMI selector first)",
			Command: "kubectl delete node " + names}}
	case "kubernetes.azure.com/agentpool":
		cmd := "az aks nodepool upgrade --resource-group <resource-group> --cluster-name <cluster> --name " + pool.Name
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

// driftTitles name each kube.DriftFields field in messages.
var driftTitles = map[string]string{"kubelet": "kubelet", "kernel": "kernel", "osImage": "OS image",
	"containerRuntime": "container runtime", "architecture": "architecture"}

// oddAllSkewed: every node on a value other than the most common one is a
// node reported for kubelet skew (an even split has no odd side).
func oddAllSkewed(d kube.FieldDrift, skewed map[string]bool) bool {
	if len(skewed) == 0 || len(d.Values) < 2 || len(d.Values[0].Nodes) == len(d.Values[1].Nodes) {
		return false
	}
	for _, vc := range d.Values[1:] {
		for _, n := range vc.Nodes {
			if !skewed[n] {
				return false
			}
		}
	}
	return true
}

// oddNewer says whether the pool's odd nodes run newer software than the
// rest: every drift (left out as the report leaves it out) whose values
// compare says the odd value is the newer, and at least one compares.
func oddNewer(drifts []kube.FieldDrift, skewed map[string]bool) bool {
	newer := false
	for _, d := range drifts {
		if d.Field.Key == "kubelet" && anySkewed(d, skewed) || oddAllSkewed(d, skewed) || d.Field.Key == "architecture" {
			continue
		}
		for _, vc := range d.Values[1:] {
			switch versionOrder(vc.Value, d.Values[0].Value) {
			case -1:
				return false
			case 1:
				newer = true
			}
		}
	}
	return newer
}

// versionOrder compares two versions of one build family (the same
// words, only numbers differ: "... CoreOS 9.6.20250815-0 (Plow)" after
// "... CoreOS 9.6.20250811-0 (Plow)") at their first difference, by
// number; 0 for versions of different families (an Ubuntu and an Amazon
// Linux kernel, two build hashes), whose numbers say nothing of age.
func versionOrder(a, b string) int {
	if letters(a) != letters(b) {
		return 0
	}
	for a != "" && b != "" {
		ra, rb := leadingRun(a), leadingRun(b)
		if ra != rb {
			da, db := ra[0] >= '0' && ra[0] <= '9', rb[0] >= '0' && rb[0] <= '9'
			if !da || !db {
				return 0
			}
			na, ea := strconv.ParseUint(ra, 10, 64)
			nb, eb := strconv.ParseUint(rb, 10, 64)
			if ea != nil || eb != nil || na == nb {
				return 0
			}
			if na > nb {
				return 1
			}
			return -1
		}
		a, b = a[len(ra):], b[len(rb):]
	}
	return 0
}

// letters is s without its digits.
func letters(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, s)
}

// leadingRun is s's first run of digits or of other bytes.
func leadingRun(s string) string {
	digit := s[0] >= '0' && s[0] <= '9'
	i := 1
	for i < len(s) && (s[i] >= '0' && s[i] <= '9') == digit {
		i++
	}
	return s[:i]
}

// machineConfigStates says what OpenShift's Machine Config Operator
// records on the pool's nodes that are not done updating ("node
// master-1 Degraded: failed to pull image ..."), "" when none is.
func machineConfigStates(s *snapshot.Snapshot, pool *kube.Pool) string {
	in := map[string]bool{}
	for _, n := range pool.Nodes {
		in[n.Name] = true
	}
	var out []string
	for _, n := range s.Nodes() {
		state := n.Annotations["machineconfiguration.openshift.io/state"]
		if !in[n.Name] || state == "" || state == "Done" {
			continue
		}
		w := fmt.Sprintf("node %s %s", n.Name, state)
		if r := n.Annotations["machineconfiguration.openshift.io/reason"]; r != "" {
			w += ": " + clipLine(r, maxQuote)
		}
		out = append(out, w)
	}
	sort.Strings(out)
	return strings.Join(doctor.Examples(out), "; ")
}

// anyNotReady says whether one of the named nodes is not Ready.
func anyNotReady(s *snapshot.Snapshot, names []string) bool {
	for _, n := range s.Nodes() {
		if !slices.Contains(names, n.Name) {
			continue
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
				return true
			}
		}
	}
	return false
}
