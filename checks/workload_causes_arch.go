package checks

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// An image built for one architecture meets a node of another: the pull
// finds no build for the node's platform in the image's manifest list, or
// the image has one build and its program is refused by the kernel ("exec
// format error"). Both happen when arm64 nodes (Graviton, Ampere, Apple
// silicon) join amd64 clusters, and the fix is the same: keep the pods on
// the architecture the image is built for, or publish the image for both.

// platformOf is a node's "linux/arm64", from its nodeInfo or its
// well-known labels; "" when unknown.
func platformOf(n *corev1.Node) string {
	os, arch := n.Status.NodeInfo.OperatingSystem, n.Status.NodeInfo.Architecture
	if os == "" {
		os = n.Labels[corev1.LabelOSStable]
	}
	if arch == "" {
		arch = n.Labels[corev1.LabelArchStable]
	}
	if arch == "" {
		return ""
	}
	if os == "" {
		os = "linux"
	}
	return os + "/" + arch
}

// archOf is the architecture part of a platform.
func archOf(platform string) string {
	_, arch, _ := strings.Cut(platform, "/")
	return arch
}

// groupPlatforms are the platforms of the nodes the group's pods are on,
// sorted; nil when nodes were not read.
func groupPlatforms(p *doctor.Pass, g *kube.OwnerProblem) []string {
	if p.Snapshot.Err(snapshot.Nodes) != nil {
		return nil
	}
	nodes := kube.NodesByName(p.Snapshot)
	var out []string
	for _, name := range g.Nodes() {
		if n := nodes[name]; n != nil {
			if pl := platformOf(n); pl != "" && !slices.Contains(out, pl) {
				out = append(out, pl)
			}
		}
	}
	sort.Strings(out)
	return out
}

// platformWords is " (node n1 is linux/arm64)" for the group's nodes, ""
// when unknown.
func platformWords(p *doctor.Pass, g *kube.OwnerProblem) string {
	pl := groupPlatforms(p, g)
	if len(pl) == 0 {
		return ""
	}
	nodes := g.Nodes()
	if len(nodes) == 1 {
		return fmt.Sprintf(" (node %s is %s)", nodes[0], pl[0])
	}
	return fmt.Sprintf(" (its nodes are %s)", strings.Join(pl, ", "))
}

// archRemediation keeps the pods on the architecture the image is built
// for (a nodeSelector on kubernetes.io/arch: the one other architecture the
// cluster's nodes have, when there is exactly one) or has the image built
// for the nodes' architecture too.
func archRemediation(p *doctor.Pass, g *kube.OwnerProblem) []doctor.Remediation {
	ns := g.Owner.Ref.Namespace
	failing := map[string]bool{}
	for _, pl := range groupPlatforms(p, g) {
		failing[archOf(pl)] = true
	}
	other := "" // the one other architecture the nodes have, when there is one
	if len(failing) > 0 {
		var others []string
		for _, n := range kube.NodesByName(p.Snapshot) {
			if a := archOf(platformOf(n)); a != "" && !failing[a] && !slices.Contains(others, a) {
				others = append(others, a)
			}
		}
		if len(others) == 1 {
			other = others[0]
		}
	}
	var rem []doctor.Remediation
	switch {
	case g.Owner.Spec == nil || g.Owner.Ref.Kind == "Pod":
	case other == "":
		// Which architecture to pin to is not known (no node read, or
		// several others): the nodes' architectures, to choose from.
		rem = append(rem, doctor.Remediation{Text: "keep the pods on nodes of the architecture the image is built for (a nodeSelector on kubernetes.io/arch): the nodes' architectures",
			Command: "kubectl get nodes -L kubernetes.io/arch"})
	default:
		if patch, ok := nodeSelectorPatch(g.Owner.SpecPath, other); ok {
			rem = append(rem, doctor.Remediation{Text: "keep the pods on nodes of the architecture the image is built for",
				Command: fmt.Sprintf("kubectl patch %s -n %s -p '%s'", g.Owner.KindName(), ns, patch)})
		}
	}
	var archs []string
	for a := range failing {
		archs = append(archs, a)
	}
	sort.Strings(archs)
	target := "the nodes' architecture"
	if len(archs) > 0 {
		target = strings.Join(archs, ", ")
	}
	rem = append(rem, doctor.Remediation{Text: "or publish the image for " + target + " too (a multi-architecture image), and see which platforms it has",
		Command: "docker buildx imagetools inspect " + g.Example().Image})
	return rem
}

// nodeSelectorPatch is a merge patch that sets the pod template's
// nodeSelector kubernetes.io/arch at the template spec's JSON pointer
// ("/spec/template/spec", "/spec/jobTemplate/spec/template/spec").
func nodeSelectorPatch(specPath, arch string) (string, bool) {
	parts := strings.Split(strings.Trim(specPath, "/"), "/")
	if len(parts) == 0 || parts[0] == "" {
		return "", false
	}
	var v any = map[string]any{"nodeSelector": map[string]string{corev1.LabelArchStable: arch}}
	for i := len(parts) - 1; i >= 0; i-- {
		v = map[string]any{parts[i]: v}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", false
	}
	return string(b), true
}
