package checks

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// NodePodCapacity finds nodes at or near their pod limit (allocatable pods,
// the kubelet's max-pods), and says when pods are waiting for room there.
var NodePodCapacity = &doctor.Check{
	Name:     "node-pod-capacity",
	Severity: doctor.Warning,
	Origin:   "VPC CNI #714",
	Reads:    []snapshot.Resource{snapshot.Nodes, snapshot.Pods},
	Run:      runNodePodCapacity,
	Doc: `Nodes at or near their pod limit (max-pods)

## Why it matters
Every node accepts a fixed number of pods, the kubelet's ` + "`--max-pods`" + ` (` + "`maxPods`" + `,
110 by default, often much less on managed node pools), published as
` + "`status.allocatable.pods`" + `. A node at its limit takes no new pod however much CPU
and memory it has left: the scheduler says ` + "`Too many pods`" + ` and the pods wait
Pending, or crowd onto the other nodes. The limit must match what the CNI can
address: on EKS the VPC CNI gives each pod an IP from the instance's ENIs, so
a small EC2 type addresses only 14 or 28 pods (in amazon-vpc-cni-k8s #714,
nodes "stalled at 14 pods, the other at 28"). A max-pods set above
that is worse than a full node: the scheduler keeps placing pods there and
they fail sandbox creation (` + "`failed to assign an IP address`" + `) and restart
instead of waiting for a node with room.

## How it is detected
From one LIST each of nodes and pods: per node with ` + "`status.allocatable.pods`" + `
(nodes without it are skipped), the non-terminal pods (phase neither
Succeeded nor Failed) whose ` + "`spec.nodeName`" + ` is that node, as the scheduler counts
them. A node at 90% or more of its allocatable pods is a warning. A node at
100% is critical when pods are waiting for room on it: Pending pods whose
` + "`PodScheduled`" + ` condition is False/Unschedulable, that may use the node (their
` + "`nodeSelector`" + ` and required node affinity match it and they tolerate its
taints), and whose scheduler message says ` + "`Too many pods`" + ` or whose usable nodes
are all full; without such pods a full node is a warning. Nodes of one node
pool (labels ` + "`eks.amazonaws.com/nodegroup`, `cloud.google.com/gke-nodepool`" + `,
` + "`kubernetes.azure.com/agentpool`, `karpenter.sh/nodepool`" + ` ...) in the same state
are one finding with the count and examples; other nodes are one finding each.

## How to fix
Describe the node and compare its pods with ` + "`Allocatable: pods`" + `. Raise max-pods
(kubelet ` + "`--max-pods`" + ` / ` + "`maxPods`" + `, or the node pool's max-pods setting) only as
far as the CNI can give pods addresses — on EKS enable prefix delegation or
use a larger instance type first; otherwise add nodes to the pool so that pods
spread out.

## References
- https://kubernetes.io/docs/reference/config-api/kubelet-config.v1beta1/#kubelet-config-k8s-io-v1beta1-KubeletConfiguration
- https://github.com/aws/amazon-vpc-cni-k8s/pull/714
- https://docs.aws.amazon.com/eks/latest/userguide/choosing-instance-type.html#determine-max-pods
- https://kubernetes.io/docs/setup/best-practices/cluster-large/`,
}

const podCapacityWarning = 0.9

type nodeLoad struct {
	node       *corev1.Node
	used, max  int64
	waiting    map[string]bool // ns/name of pods waiting for room here
	tooManyMsg bool
}

type capacityGroup struct {
	sev       doctor.Severity
	full      bool
	poolKey   string
	poolValue string
	nodes     []*nodeLoad
}

func runNodePodCapacity(p *doctor.Pass) error {
	nodes := p.Snapshot.Nodes()
	pods := p.Snapshot.Pods()
	loads := map[string]*nodeLoad{}
	for i := range nodes {
		q, ok := nodes[i].Status.Allocatable[corev1.ResourcePods]
		if !ok || q.Value() <= 0 {
			continue
		}
		loads[nodes[i].Name] = &nodeLoad{node: &nodes[i], max: q.Value(), used: kube.PodsOn(p.Snapshot, nodes[i].Name), waiting: map[string]bool{}}
	}
	full := func(name string) bool { l := loads[name]; return l != nil && l.used >= l.max }
	for i := range pods {
		pod := pods[i]
		start, cond, ok := kube.UnschedulableSince(pod)
		// Waiting counts after kube.UnschedulableGrace, as in the other
		// scheduling checks: a pod the scheduler retries for seconds
		// during a scale-up is not yet waiting on a full node.
		if !ok || p.Now.Sub(start) < kube.UnschedulableGrace {
			continue
		}
		tooMany := strings.Contains(cond.Message, "Too many pods")
		var usable []string
		place := kube.NewPlacement(&pod.Spec, false)
		for i := range nodes {
			if place.Allows(&nodes[i]) {
				usable = append(usable, nodes[i].Name)
			}
		}
		onlyFull := len(usable) > 0
		for _, n := range usable {
			onlyFull = onlyFull && full(n)
		}
		if !tooMany && !onlyFull {
			continue
		}
		for _, n := range usable {
			if full(n) {
				loads[n].waiting[pod.Namespace+"/"+pod.Name] = true
				loads[n].tooManyMsg = loads[n].tooManyMsg || tooMany
			}
		}
	}

	groups := map[string]*capacityGroup{}
	for _, l := range loads {
		isFull := l.used >= l.max
		if !isFull && float64(l.used) < podCapacityWarning*float64(l.max) {
			continue
		}
		sev := doctor.Warning
		if isFull && len(l.waiting) > 0 {
			sev = doctor.Critical
		}
		g := &capacityGroup{sev: sev, full: isFull}
		key := fmt.Sprintf("%d|%t|node|%s", sev, isFull, l.node.Name)
		if pl, v, ok := kube.ProviderPool(l.node); ok {
			g.poolKey, g.poolValue = pl, v
			key = fmt.Sprintf("%d|%t|%s=%s", sev, isFull, pl, v)
		}
		if existing := groups[key]; existing != nil {
			g = existing
		}
		g.nodes = append(g.nodes, l)
		groups[key] = g
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		reportPodCapacity(p, groups[k])
	}
	return nil
}

func reportPodCapacity(p *doctor.Pass, g *capacityGroup) {
	sort.Slice(g.nodes, func(i, j int) bool { return g.nodes[i].node.Name < g.nodes[j].node.Name })
	names := make([]string, len(g.nodes))
	waiting := map[string]bool{}
	tooMany := false
	for i, l := range g.nodes {
		names[i] = l.node.Name
		for w := range l.waiting {
			waiting[w] = true
		}
		tooMany = tooMany || l.tooManyMsg
	}
	var msg string
	if len(g.nodes) == 1 {
		l := g.nodes[0]
		msg = fmt.Sprintf("node %s runs %d of its %d allocatable pods (%d%%)", l.node.Name, l.used, l.max, l.used*100/l.max)
	} else {
		var each []string
		for i, l := range g.nodes {
			if i == doctor.MaxExamples {
				each = append(each, "...")
				break
			}
			each = append(each, fmt.Sprintf("%s %d/%d", l.node.Name, l.used, l.max))
		}
		state := "run 90% or more of their allocatable pods"
		if g.full {
			state = "run all their allocatable pods"
		}
		msg = fmt.Sprintf("%d nodes of pool %s (%s) %s (%s)", len(g.nodes), g.poolValue, g.poolKey, state, strings.Join(each, ", "))
	}
	if g.full {
		msg += ": the scheduler places no new pod there, whatever CPU and memory are left"
	}
	nodeArgs := strings.Join(doctor.Examples(names), " ")
	rem := []doctor.Remediation{
		{Text: "compare the pods on the node with its Allocatable pods (the kubelet's max-pods)", Command: "kubectl describe node " + nodeArgs},
	}
	if len(waiting) > 0 {
		ws := make([]string, 0, len(waiting))
		for w := range waiting {
			ws = append(ws, w)
		}
		sort.Strings(ws)
		msg += fmt.Sprintf("; %s waiting for room: %s", doctor.Plural(len(ws), "pending pod is", "pending pods are"), examplesEllipsis(ws))
		if tooMany {
			msg += " (the scheduler reports Too many pods)"
		}
		ns, name, _ := strings.Cut(ws[0], "/")
		rem = append(rem, doctor.Remediation{Text: "read why the scheduler cannot place the waiting pods", Command: fmt.Sprintf("kubectl describe pod %s -n %s", name, ns)})
	}
	rem = append(rem,
		doctor.Remediation{Text: "raise max-pods (kubelet --max-pods / maxPods, or the node pool's max-pods setting) only as far as the CNI can address pods: beyond that, pods fail sandbox creation instead of waiting"},
		doctor.Remediation{Text: "or add nodes so that pods spread out; see what runs on the node", Command: "kubectl get pods -A -o wide --field-selector spec.nodeName=" + names[0]},
	)
	p.Report(doctor.Finding{Severity: g.sev, Object: kube.NodeRef(names[0]), Message: msg, Count: len(g.nodes), Examples: doctor.Examples(names),
		Members: nodeMembers(names), Remediation: rem})
}
