package checks

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// PendingTaints finds pods the scheduler cannot place because every node they
// may use carries a taint they do not tolerate, and names those taints, which
// the scheduler's own message no longer does.
var PendingTaints = &doctor.Check{
	Name:     "pending-taints",
	Severity: doctor.Warning,
	Origin:   "Snowball effect",
	Reads:    []snapshot.Resource{snapshot.Nodes, snapshot.Pods},
	Optional: kube.WorkloadReads,
	Run:      runPendingTaints,
	Doc: `Pods pending because every node they may use has a taint they do not tolerate

## Why it matters
A pod that tolerates none of the taints on the nodes it is allowed to use
stays Pending forever, and nothing else complains: the Deployment is simply
short of replicas. The scheduler's message only says
` + "`0/5 nodes are available: 3 node(s) had untolerated taint(s)`" + ` — recent releases no
longer name the taint — so the operator has to compare every node's taints
with the pod's tolerations by hand, as "The Snowball effect" does
with jsonpath loops over ` + "`.spec.taints`" + `. Two different mistakes look the same
from the pod: a dedicated pool (` + "`dedicated=gpu:NoSchedule`" + `, the control plane)
that the workload was meant for but whose toleration is missing, and nodes
Kubernetes tainted because they are unhealthy or cordoned
(` + "`not-ready`, `unreachable`, `*-pressure`, `unschedulable`" + ` ...), where the pods
wait for the nodes to recover.

## How it is detected
From one LIST each of nodes and pods (and the workloads, to name the owner):
pods with no ` + "`spec.nodeName`" + ` whose ` + "`PodScheduled`" + ` condition is False with reason
` + "`Unschedulable`" + `, pending for more than five minutes. Pending starts at the earliest
evidence of it: the older of the pod's ` + "`creationTimestamp`" + ` and the condition's
` + "`lastTransitionTime`" + `. The nodes a pod may use are those its ` + "`nodeSelector`" + ` and
required node affinity match (` + "`k8s.io/component-helpers`" + `' ` + "`nodeaffinity`" + `, as the
scheduler does). On each of them the NoSchedule and NoExecute taints are
checked against the pod's tolerations with the scheduler's own matching
(` + "`TolerationsTolerateTaint`" + `; a cordon counts as the
` + "`node.kubernetes.io/unschedulable:NoSchedule`" + ` taint). A pod is reported only when
every such node has at least one taint it does not tolerate; pods that match
no node at all, or that some untainted node refuses for another reason (CPU,
memory or room), are left to the unschedulable check, which explains every
node's refusal. Pods are grouped by top owner (pod → ReplicaSet →
Deployment, Job → CronJob, StatefulSet, DaemonSet); bare pods by namespace
and the set of blocking taints. The finding lists each blocking taint with
the nodes that carry it.

## How to fix
When the taints are Kubernetes' problem taints, the nodes are the problem:
describe them and fix the kubelet, the runtime or the pressure (see
node-taints), or uncordon them. When they are intended (a dedicated pool, the
control plane) and the workload belongs there, add the toleration to its pod
template together with a ` + "`nodeSelector`" + ` or node affinity, so that it runs only
there — a toleration lets a pod onto a tainted node, it does not send it there.
The remediation gives the ` + "`kubectl patch`" + ` with the exact toleration. A Job's pod
template cannot be changed: recreate the Job. Bare pods accept new tolerations
in place, but fix the manifest that creates them too.

## References
- https://blenderfox.com/2020/08/07/the-snowball-effect-in-kubernetes/
- https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
- https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodeselector
- https://kubernetes.io/docs/reference/labels-annotations-taints/
- https://github.com/kubernetes/kubernetes/issues/93783`,
}

// pendingTaintsAfter is how long a pod must have been unschedulable before
// it is reported: the scheduler retries, and a new node may be on its way.
const pendingTaintsAfter = kube.UnschedulableGrace

func isProblemTaint(key string) bool {
	c := kube.TaintClass(key)
	return c == kube.TaintProblem || c == kube.TaintCordon
}

type blockingTaint struct {
	taint corev1.Taint
	nodes map[string]bool
}

type pendingGroup struct {
	owner      *kube.Workload
	hasOwner   bool
	ns         string
	pods       []*corev1.Pod
	start      time.Time
	restricted bool // the pods have a nodeSelector or required node affinity
	taints     map[string]*blockingTaint
}

func runPendingTaints(p *doctor.Pass) error {
	nodes := p.Snapshot.Nodes()
	own := kube.OwnersOf(p.Snapshot)
	groups := map[string]*pendingGroup{}
	pods := p.Snapshot.Pods()
	for i := range pods {
		pod := pods[i]
		start, _, ok := kube.UnschedulableSince(pod)
		if !ok || p.Now.Sub(start) < pendingTaintsAfter {
			continue
		}
		place := kube.NewPlacement(&pod.Spec, false)
		// Pods with an untainted node to use, or none at all, are the
		// unschedulable check's.
		blocking, ok := kube.TaintBlocked(place, nodes)
		if !ok {
			continue
		}
		ids := map[string]bool{}
		for _, ts := range blocking {
			for _, t := range ts {
				ids[t.ToString()] = true
			}
		}
		o, hasOwner := own.Top(pod)
		key := ""
		if hasOwner {
			key = "owner|" + o.Ref.Kind + "|" + pod.Namespace + "/" + o.Ref.Name
		}
		if !hasOwner {
			set := make([]string, 0, len(ids))
			for id := range ids {
				set = append(set, id)
			}
			sort.Strings(set)
			key = "bare|" + pod.Namespace + "|" + strings.Join(set, ",")
		}
		g := groups[key]
		if g == nil {
			g = &pendingGroup{owner: o, hasOwner: hasOwner, ns: pod.Namespace, start: start, taints: map[string]*blockingTaint{}}
			groups[key] = g
		}
		g.pods = append(g.pods, pod)
		if start.Before(g.start) {
			g.start = start
		}
		g.restricted = g.restricted || place.Restricted
		for node, ts := range blocking {
			for _, t := range ts {
				id := t.ToString()
				bt := g.taints[id]
				if bt == nil {
					bt = &blockingTaint{taint: t, nodes: map[string]bool{}}
					g.taints[id] = bt
				}
				bt.nodes[node] = true
			}
		}
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		reportPendingTaints(p, groups[k], nodes)
	}
	return nil
}

// sortedTaints orders a group's taints by how many nodes carry them, then by name.
func (g *pendingGroup) sortedTaints() []*blockingTaint {
	out := make([]*blockingTaint, 0, len(g.taints))
	for _, bt := range g.taints {
		out = append(out, bt)
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].nodes) != len(out[j].nodes) {
			return len(out[i].nodes) > len(out[j].nodes)
		}
		return out[i].taint.ToString() < out[j].taint.ToString()
	})
	return out
}

func nodeList(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func reportPendingTaints(p *doctor.Pass, g *pendingGroup, nodes []corev1.Node) {
	names := make([]string, len(g.pods))
	for i, pod := range g.pods {
		names[i] = pod.Name
	}
	sort.Strings(names)
	taints := g.sortedTaints()
	var parts []string
	var problem, intended []*blockingTaint
	for _, bt := range taints {
		ns := nodeList(bt.nodes)
		list := examplesEllipsis(ns)
		parts = append(parts, fmt.Sprintf("%s (%s: %s)", bt.taint.ToString(), doctor.Plural(len(ns), "node", "nodes"), list))
		if isProblemTaint(bt.taint.Key) {
			problem = append(problem, bt)
		} else {
			intended = append(intended, bt)
		}
	}
	age := human(p.Now.Sub(g.start))
	who, subject := "", "it does"
	switch {
	case g.hasOwner:
		who = fmt.Sprintf("%s of %s", doctor.Plural(len(g.pods), "pod", "pods"), g.owner.KindName())
	case len(g.pods) == 1:
		who = fmt.Sprintf("pod %s in namespace %s", names[0], g.ns)
	default:
		who, subject = fmt.Sprintf("%d bare pods in namespace %s", len(g.pods), g.ns), "they do"
	}
	it, _, _ := strings.Cut(subject, " ")
	msg := fmt.Sprintf("%s pending for %s: every node %s may use has a taint %s not tolerate: %s",
		who, age, it, subject, strings.Join(parts, ", "))
	if len(intended) == 0 {
		msg += "; Kubernetes put these taints on unhealthy or cordoned nodes, and the pods wait for them to recover"
	}

	var rem []doctor.Remediation
	if len(intended) > 0 {
		rem = append(rem, tolerationRemediation(p.Snapshot, g, intended, nodes, names))
	}
	if len(problem) > 0 {
		set := map[string]bool{}
		cordoned := map[string]bool{}
		for _, bt := range problem {
			for n := range bt.nodes {
				set[n] = true
				if bt.taint.Key == corev1.TaintNodeUnschedulable {
					cordoned[n] = true
				}
			}
		}
		rem = append(rem, doctor.Remediation{Text: "nodes tainted by Kubernetes are unhealthy or cordoned: read their conditions and events (see node-taints)",
			Command: "kubectl describe node " + strings.Join(doctor.Examples(nodeList(set)), " ")})
		if len(cordoned) > 0 {
			rem = append(rem, doctor.Remediation{Text: "uncordon the nodes whose maintenance is over",
				Command: "kubectl uncordon " + strings.Join(nodeList(cordoned), " ")})
		}
	}
	var ref doctor.ObjectRef
	if g.hasOwner {
		ref = g.owner.Ref
	} else {
		ref = doctor.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: g.ns, Name: names[0]}
	}
	p.Report(doctor.Finding{Object: ref, Message: msg, Count: len(g.pods), Examples: doctor.Examples(names), Remediation: rem})
}

// tolerationRemediation is the patch that adds the missing tolerations (and,
// for pods not yet restricted to the tainted nodes, a nodeSelector that sends
// them there) to the workload, or to bare pods in place.
func tolerationRemediation(s *snapshot.Snapshot, g *pendingGroup, intended []*blockingTaint, nodes []corev1.Node, podNames []string) doctor.Remediation {
	// A pod free to go anywhere is meant for one pool: the first intended
	// taint that is not the control plane's, else the control plane.
	chosen := intended
	if !g.restricted {
		pick := intended[0]
		for _, bt := range intended {
			if kube.TaintClass(bt.taint.Key) != kube.TaintControlPlane {
				pick = bt
				break
			}
		}
		chosen = []*blockingTaint{pick}
	}
	var tols []corev1.Toleration
	var shown []string
	for _, bt := range chosen {
		tols = append(tols, kube.TolerationFor(bt.taint))
		shown = append(shown, bt.taint.ToString())
	}
	var selector map[string]string
	if !g.restricted {
		if k, v, ok := poolLabel(chosen[0].taint.Key, chosen[0].nodes, nodes); ok {
			selector = map[string]string{k: v}
		}
	}
	taints := strings.Join(shown, ", ")
	if !g.hasOwner {
		allHave := true
		for _, pod := range g.pods {
			allHave = allHave && len(pod.Spec.Tolerations) > 0
		}
		patch := jsonPatch(addTolerationOps("/spec", tols, allHave))
		cmd := fmt.Sprintf("kubectl patch pod %s -n %s --type=json -p '%s'", podNames[0], g.ns, patch)
		if len(podNames) > 1 {
			cmd = fmt.Sprintf(`for p in %s; do kubectl patch pod "$p" -n %s --type=json -p '%s'; done`, strings.Join(podNames, " "), g.ns, patch)
		}
		return doctor.Remediation{
			Text:    fmt.Sprintf("if they belong on those nodes, add the toleration for %s to the pods (tolerations can be added in place), and put it with a nodeSelector in the manifest that creates them", taints),
			Command: cmd,
		}
	}
	kind := g.owner.Ref.Kind
	ns := g.owner.Ref.Namespace
	spec, prefix := g.owner.Spec, g.owner.SpecPath
	text := fmt.Sprintf("if %s belongs on those nodes, add the toleration for %s to its pod template", g.owner.KindName(), taints)
	if selector != nil {
		text += " with a nodeSelector that sends it there (a toleration alone only allows the nodes)"
	}
	if kind == "Job" || spec == nil {
		tolJSON, _ := json.Marshal(tols)
		what := fmt.Sprintf("tolerations: %s", tolJSON)
		if selector != nil {
			selJSON, _ := json.Marshal(selector)
			what += fmt.Sprintf(" and nodeSelector: %s", selJSON)
		}
		if kind != "Job" {
			return doctor.Remediation{
				Text:    fmt.Sprintf("if %s belongs on those nodes, add %s to its pod template", g.owner.KindName(), what),
				Command: fmt.Sprintf("kubectl edit %s -n %s", g.owner.KindName(), ns),
			}
		}
		return doctor.Remediation{
			Text:    fmt.Sprintf("if %s belongs on those nodes, recreate it with %s in its pod template (a Job's pod template cannot be changed)", g.owner.KindName(), what),
			Command: fmt.Sprintf("kubectl get %s -n %s -o yaml", g.owner.KindName(), ns),
		}
	}
	ops := addTolerationOps(prefix, tols, len(spec.Tolerations) > 0)
	if selector != nil {
		ops = append(ops, map[string]any{"op": "add", "path": prefix + "/nodeSelector", "value": selector})
	}
	return doctor.Remediation{
		Text:    text,
		Command: fmt.Sprintf("kubectl patch %s -n %s --type=json -p '%s'", g.owner.KindName(), ns, jsonPatch(ops)),
	}
}

// addTolerationOps appends to an existing tolerations list, or creates it.
func addTolerationOps(prefix string, tols []corev1.Toleration, exists bool) []map[string]any {
	if !exists {
		return []map[string]any{{"op": "add", "path": prefix + "/tolerations", "value": tols}}
	}
	var ops []map[string]any
	for _, t := range tols {
		ops = append(ops, map[string]any{"op": "add", "path": prefix + "/tolerations/-", "value": t})
	}
	return ops
}

func jsonPatch(ops []map[string]any) string {
	// Keys in a fixed order, so the command reads op, path, value.
	parts := make([]string, len(ops))
	for i, op := range ops {
		v, _ := json.Marshal(op["value"])
		parts[i] = fmt.Sprintf(`{"op":"%s","path":"%s","value":%s}`, op["op"], op["path"], v)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// perNodeLabels say nothing about a pool: every node has its own value, or
// every node the same.
var perNodeLabels = []string{corev1.LabelHostname, corev1.LabelOSStable, corev1.LabelArchStable,
	"beta.kubernetes.io/os", "beta.kubernetes.io/arch", corev1.LabelTopologyZone, corev1.LabelTopologyRegion,
	corev1.LabelFailureDomainBetaZone, corev1.LabelFailureDomainBetaRegion}

// poolLabel is a label that the tainted nodes all carry with one value and no
// other node does, for a nodeSelector; a label named like the taint wins.
func poolLabel(taintKey string, tainted map[string]bool, nodes []corev1.Node) (string, string, bool) {
	common := map[string]string{}
	first := true
	for i := range nodes {
		n := &nodes[i]
		if !tainted[n.Name] {
			continue
		}
		if first {
			for k, v := range n.Labels {
				if !slices.Contains(perNodeLabels, k) {
					common[k] = v
				}
			}
			first = false
			continue
		}
		for k, v := range common {
			if n.Labels[k] != v {
				delete(common, k)
			}
		}
	}
	for i := range nodes {
		n := &nodes[i]
		if tainted[n.Name] {
			continue
		}
		for k, v := range common {
			if lv, ok := n.Labels[k]; ok && lv == v {
				delete(common, k)
			}
		}
	}
	if len(common) == 0 {
		return "", "", false
	}
	if v, ok := common[taintKey]; ok {
		return taintKey, v, true
	}
	keys := make([]string, 0, len(common))
	for k := range common {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys[0], common[keys[0]], true
}
