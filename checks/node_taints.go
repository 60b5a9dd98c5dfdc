package checks

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// NodeTaints reports the taints Kubernetes itself puts on sick nodes. They are
// the cluster's own verdict that a node cannot run (or keep) pods, and they
// outlive the alert that fired when the node went bad.
var NodeTaints = &doctor.Check{
	Name:     "node-taints",
	Severity: doctor.Warning,
	Origin:   "Snowball effect",
	Reads:    []snapshot.Resource{snapshot.Nodes},
	Run:      runNodeTaints,
	Doc: `Nodes tainted by Kubernetes as unhealthy, out of service or cordoned

## Why it matters
Kubernetes taints a node when it decides the node should not get new pods:
the node lifecycle controller adds ` + "`node.kubernetes.io/not-ready`" + ` and
` + "`unreachable`" + ` when the kubelet stops reporting Ready, the kubelet's
conditions become ` + "`memory-pressure`, `disk-pressure`, `pid-pressure`" + ` taints,
the cloud provider leaves ` + "`node.cloudprovider.kubernetes.io/uninitialized`" + `
on a node it never finished, and operators add ` + "`node.kubernetes.io/out-of-service`" + `
to a dead node. With effect NoExecute every pod without a matching toleration
is evicted (after 300 s by default for not-ready/unreachable). A forgotten
cordon quietly shrinks the cluster. "The Snowball effect" starts
its investigation by listing node taints for exactly this reason.

## How it is detected
Every node's ` + "`spec.taints`" + ` is read from one LIST of nodes. Problem taints
are warnings, critical when their effect is NoExecute; a cordon
(` + "`spec.unschedulable`" + ` or the ` + "`node.kubernetes.io/unschedulable`" + ` taint) is
info. Nodes sharing the same problem taint are one finding with a count and
examples, dated by the taint's ` + "`timeAdded`" + ` or the matching node condition's
` + "`lastTransitionTime`" + `. Intended taints (control-plane, dedicated pools) are not
findings; ` + "`kubectl doctor taints`" + ` lists every taint of every node.

## How to fix
Describe the node and read its conditions and events; fix the kubelet, the
container runtime or the pressure that the taint reports; uncordon a node
whose maintenance is over; remove ` + "`out-of-service`" + ` once the node is back or
deleted. The remediation lines give the command with the node names filled in.

## References
- https://blenderfox.com/2020/08/07/the-snowball-effect-in-kubernetes/
- https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/#taint-based-evictions
- https://kubernetes.io/docs/reference/labels-annotations-taints/
- https://kubernetes.io/docs/concepts/cluster-administration/node-shutdown/#non-graceful-node-shutdown`,
}

type taintGroup struct {
	key, effects string
	noExecute    bool
	nodes        []string
	oldest       *time.Time
}

func runNodeTaints(p *doctor.Pass) error {
	groups := map[string]*taintGroup{}
	var cordoned []string
	nodes := p.Snapshot.Nodes()
	for i := range nodes {
		n := &nodes[i]
		effects := map[string][]corev1.TaintEffect{}
		var since = map[string]*time.Time{}
		cordon := n.Spec.Unschedulable
		for _, t := range n.Spec.Taints {
			if t.Key == corev1.TaintNodeUnschedulable {
				cordon = true
				continue
			}
			if _, ok := kube.ProblemTaint(t.Key); !ok {
				continue
			}
			effects[t.Key] = append(effects[t.Key], t.Effect)
			if s := kube.TaintSince(n, t); s != nil && (since[t.Key] == nil || s.Before(*since[t.Key])) {
				since[t.Key] = s
			}
		}
		if cordon {
			cordoned = append(cordoned, n.Name)
		}
		for key, effs := range effects {
			sort.Slice(effs, func(a, b int) bool { return effs[a] < effs[b] })
			names := make([]string, len(effs))
			noExec := false
			for j, e := range effs {
				names[j] = string(e)
				noExec = noExec || e == corev1.TaintEffectNoExecute
			}
			id := key + "|" + strings.Join(names, "+")
			g := groups[id]
			if g == nil {
				g = &taintGroup{key: key, effects: strings.Join(names, "+"), noExecute: noExec}
				groups[id] = g
			}
			g.nodes = append(g.nodes, n.Name)
			if s := since[key]; s != nil && (g.oldest == nil || s.Before(*g.oldest)) {
				g.oldest = s
			}
		}
	}
	for _, g := range groups {
		sort.Strings(g.nodes)
		pt, _ := kube.ProblemTaint(g.key)
		sev := doctor.Warning
		consequence := "no new pods are scheduled there"
		if g.noExecute {
			sev = doctor.Critical
			consequence = "pods without a matching toleration are evicted"
		}
		who := "node " + g.nodes[0] + " is"
		if len(g.nodes) > 1 {
			who = doctor.Plural(len(g.nodes), "node", "nodes") + " are"
		}
		age := ""
		if g.oldest != nil {
			age = " for " + duration.HumanDuration(p.Now.Sub(*g.oldest))
		}
		p.Report(doctor.Finding{
			Severity:    sev,
			Object:      kube.NodeRef(g.nodes[0]),
			Message:     fmt.Sprintf("%s tainted %s:%s%s: %s; %s", who, g.key, g.effects, age, pt.Meaning, consequence),
			Count:       len(g.nodes),
			Examples:    doctor.Examples(g.nodes),
			Members:     nodeMembers(g.nodes),
			Remediation: pt.Fix(strings.Join(doctor.Examples(g.nodes), " "), g.nodes[0]),
		})
	}
	if len(cordoned) > 0 {
		sort.Strings(cordoned)
		who := "node " + cordoned[0] + " is"
		if len(cordoned) > 1 {
			who = doctor.Plural(len(cordoned), "node", "nodes") + " are"
		}
		names := strings.Join(doctor.Examples(cordoned), " ")
		p.Report(doctor.Finding{
			Severity: doctor.Info,
			Object:   kube.NodeRef(cordoned[0]),
			Message:  who + " cordoned (unschedulable): existing pods stay, no new pods are scheduled there",
			Count:    len(cordoned),
			Examples: doctor.Examples(cordoned),
			Members:  nodeMembers(cordoned),
			Remediation: []doctor.Remediation{
				{Text: "uncordon once the maintenance is over", Command: "kubectl uncordon " + names},
			},
		})
	}
	return nil
}
