package checks

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

A taint that mirrors a condition the node still reports (not-ready or
unreachable with Ready not True, memory-, disk- or pid-pressure,
network-unavailable) is the same root cause node-health reports with the
kubelet's reason: this finding names those nodes (Via), and after every check
has run the engine folds it into node-health's finding ("explains"), so one
NotReady node is one finding. When node-health is skipped or finds nothing
there, this finding stands. For example, with both checks:

    CRITICAL  Node/worker-7  ×2  [node-health]
      2 nodes have been NotReady for 19m: the kubelet reports "container
      runtime is down": ...
        explains node-taints node/worker-9: node worker-9 is tainted
        node.kubernetes.io/not-ready:NoExecute+NoSchedule for 19m: ...

A not-ready or unreachable taint on a node whose kubelet has not posted
status since it registered (no Ready condition) is not a taint that outlived
its condition: an absent Ready is not Ready. It is reported, dated by the
node's ` + "`creationTimestamp`" + `, as a kubelet that never reported (node-health's
finding when both run), once the node is older than 5 minutes; a node that
registered moments ago carries that taint by design and is not reported.

A taint whose condition is gone (the pressure is over, yet the taint stays)
is reported here on its own, dated only by the taint's ` + "`timeAdded`" + `:

    node worker-8 is tainted node.kubernetes.io/memory-pressure:NoSchedule, but
    the node no longer reports MemoryPressure: the taint outlived the condition
    behind it; the node lifecycle controller removes it once it sees that, so
    if it stays, that controller is not running or something re-adds it

A node cordoned by an updater that uncordons it when done (OpenShift's
Machine Config Operator, kured, the cluster autoscaler, Karpenter, told by
their annotations and taints) is never told to uncordon by hand: it is an
info while the updater works, and a warning quoting the updater's own
reason when it says it failed (` + "`failed to drain node ... after 1 hour`" + `, most
often a PodDisruptionBudget that allows no disruption). Unschedulable pods
are not offered to uncordon such a node either.

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
	// conditioned: the node still reports the condition behind the taint
	// (node-health's finding is the cause); false for taints with no
	// condition, and for a taint that outlived its condition.
	conditioned bool
	// silent: the condition behind the taint is Ready and the node's
	// kubelet has not posted status since the Node registered.
	silent bool
	nodes  []string
	oldest *time.Time
}

// conditionStands says whether the node still reports the condition a
// problem taint mirrors: Ready not True for not-ready and unreachable, the
// pressure or network condition True for the others. ok is false for a
// taint no condition stands behind (out-of-service, uninitialized).
func conditionStands(n *corev1.Node, pt kube.NodeProblem) (stands, ok bool) {
	if pt.Condition == "" {
		return false, false
	}
	for _, c := range n.Status.Conditions {
		if c.Type != pt.Condition {
			continue
		}
		if pt.Condition == corev1.NodeReady {
			return c.Status != corev1.ConditionTrue, true
		}
		return c.Status == corev1.ConditionTrue, true
	}
	if pt.Condition == corev1.NodeReady {
		// No Ready condition: the kubelet has not reported since the
		// Node registered, and a node that never said Ready is not
		// Ready (node-health reports it once it is past its grace).
		return true, true
	}
	return false, true
}

// registering says the node has just registered and its kubelet has not
// posted status yet: the not-ready taint it was registered with is expected
// then, and nothing is reported until nodeRegistrationGrace has passed.
func registering(n *corev1.Node, now time.Time) bool {
	reg, never := kube.NeverPostedStatus(n)
	return never && !reg.IsZero() && now.Sub(reg) < nodeRegistrationGrace
}

func runNodeTaints(p *doctor.Pass) error {
	groups := map[string]*taintGroup{}
	var cordoned []string
	var managed []managedCordon
	var cordonedSince time.Time // the oldest cordon's taint time, when known
	nodes := p.Snapshot.Nodes()
	now := p.Now
	for i := range nodes {
		n := &nodes[i]
		effects := map[string][]corev1.TaintEffect{}
		var since = map[string]*time.Time{}
		cordon := n.Spec.Unschedulable
		for _, t := range n.Spec.Taints {
			if t.Key == corev1.TaintNodeUnschedulable {
				cordon = true
				if t.TimeAdded != nil && (cordonedSince.IsZero() || t.TimeAdded.Before(&metav1.Time{Time: cordonedSince})) {
					cordonedSince = t.TimeAdded.Time
				}
				continue
			}
			pt, ok := kube.ProblemTaint(t.Key)
			if !ok || (pt.Condition == corev1.NodeReady && registering(n, now)) {
				continue
			}
			effects[t.Key] = append(effects[t.Key], t.Effect)
			s := kube.TaintSince(n, t)
			if s != nil && (since[t.Key] == nil || s.Before(*since[t.Key])) {
				since[t.Key] = s
			}
		}
		if cordon {
			if by := kube.CordonedBy(n); by != nil {
				managed = append(managed, managedCordon{node: n.Name, by: by})
			} else {
				cordoned = append(cordoned, n.Name)
			}
		}
		for key, effs := range effects {
			sort.Slice(effs, func(a, b int) bool { return effs[a] < effs[b] })
			names := make([]string, len(effs))
			noExec := false
			for j, e := range effs {
				names[j] = string(e)
				noExec = noExec || e == corev1.TaintEffectNoExecute
			}
			pt, _ := kube.ProblemTaint(key)
			stands, judged := conditionStands(n, pt)
			_, never := kube.NeverPostedStatus(n)
			silent := never && pt.Condition == corev1.NodeReady
			id := fmt.Sprintf("%s|%s|%t|%t|%t", key, strings.Join(names, "+"), stands, judged, silent)
			g := groups[id]
			if g == nil {
				g = &taintGroup{key: key, effects: strings.Join(names, "+"), noExecute: noExec, conditioned: stands, silent: silent}
				groups[id] = g
			}
			g.nodes = append(g.nodes, n.Name)
			if s := since[key]; s != nil && (g.oldest == nil || s.Before(*g.oldest)) {
				g.oldest = s
			}
		}
	}
	ids := make([]string, 0, len(groups))
	for id := range groups {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		g := groups[id]
		sort.Strings(g.nodes)
		pt, _ := kube.ProblemTaint(g.key)
		words := nodeProblemWords[g.key]
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
			age = " for " + human(p.Now.Sub(*g.oldest))
		}
		msg := fmt.Sprintf("%s tainted %s:%s%s: %s; %s", who, g.key, g.effects, age, words.Meaning, consequence)
		rem := words.Fix(strings.Join(doctor.Examples(g.nodes), " "), g.nodes[0])
		if g.silent {
			msg = fmt.Sprintf("%s tainted %s:%s%s: %s; %s", who, g.key, g.effects, age, neverPostedMeaning, consequence)
			rem = neverPostedFix(strings.Join(doctor.Examples(g.nodes), " "))
		}
		if _, judged := conditionStands(&corev1.Node{}, pt); judged && !g.conditioned {
			state := "is no longer " + words.State
			if pt.Condition != corev1.NodeReady {
				state = "no longer reports " + string(pt.Condition)
			}
			msg = fmt.Sprintf("%s tainted %s:%s%s, but the node %s: the taint outlived the condition behind it; the node lifecycle controller removes it once it sees that, so if it stays, that controller is not running or something re-adds it; %s",
				who, g.key, g.effects, age, state, consequence)
			rem = []doctor.Remediation{describeNodes(strings.Join(doctor.Examples(g.nodes), " ")),
				{Text: "if the taint stays, remove it", Command: fmt.Sprintf("kubectl taint nodes %s %s-", strings.Join(doctor.Examples(g.nodes), " "), g.key)}}
		}
		f := doctor.Finding{
			Severity:    sev,
			Object:      kube.NodeRef(g.nodes[0]),
			Message:     msg,
			Count:       len(g.nodes),
			Examples:    doctor.Examples(g.nodes),
			Members:     nodeMembers(g.nodes),
			Remediation: rem,
		}
		if g.conditioned {
			// The taint mirrors a condition node-health reports with its
			// cause: one finding, at the cause. When node-health is not
			// run (or finds nothing on these nodes) this one stands.
			for _, n := range g.nodes {
				f.Via = append(f.Via, kube.NodeRef(n))
			}
			f.ViaChecks = []string{NodeHealth.Name}
		}
		p.Report(f)
	}
	reportManagedCordons(p, managed)
	if len(cordoned) > 0 {
		sort.Strings(cordoned)
		who := "node " + cordoned[0] + " is"
		if len(cordoned) > 1 {
			who = doctor.Plural(len(cordoned), "node", "nodes") + " are"
		}
		names := strings.Join(doctor.Examples(cordoned), " ")
		// How long: the node controller dates the cordon's taint
		// (timeAdded); a cordon left for days is a forgotten one.
		how := " cordoned (unschedulable)"
		if !cordonedSince.IsZero() && now.After(cordonedSince) {
			how = " cordoned (unschedulable) for " + human(now.Sub(cordonedSince))
			if len(cordoned) > 1 {
				how = " cordoned (unschedulable), the oldest for " + human(now.Sub(cordonedSince))
			}
		}
		p.Report(doctor.Finding{
			Severity: doctor.Info,
			Object:   kube.NodeRef(cordoned[0]),
			Message:  who + how + ": existing pods stay, no new pods are scheduled there",
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

// managedCordon is a node cordoned by a controller that uncordons it when
// done (an OS update, a reboot, a scale-down).
type managedCordon struct {
	node string
	by   *kube.Cordoner
}

// reportManagedCordons groups nodes cordoned by an updater by who and
// state: a stalled update (the controller says it failed) is a warning with
// its reason, one in progress an info; neither is told to uncordon, which
// would fight the controller.
func reportManagedCordons(p *doctor.Pass, managed []managedCordon) {
	groups := map[string][]managedCordon{}
	var keys []string
	for _, m := range managed {
		k := m.by.Who + "|" + m.by.Failed
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], m)
	}
	sort.Strings(keys)
	for _, k := range keys {
		g := groups[k]
		var names []string
		for _, m := range g {
			names = append(names, m.node)
		}
		sort.Strings(names)
		by := g[0].by
		who, them, stay := "node "+names[0]+" is", "it", "it stays"
		if len(names) > 1 {
			who, them, stay = doctor.Plural(len(names), "node", "nodes")+" are", "them", "they stay"
		}
		f := doctor.Finding{Severity: doctor.Info, Object: kube.NodeRef(names[0]), Count: len(names), Examples: doctor.Examples(names), Members: nodeMembers(names),
			Message:     fmt.Sprintf("%s cordoned by %s: %s; it uncordons %s when done, so do not uncordon by hand", who, by.Who, by.Doing, them),
			Remediation: []doctor.Remediation{{Text: "follow its progress", Command: by.Progress}}}
		if by.Failed != "" {
			f.Severity = doctor.Warning
			f.Message = fmt.Sprintf("%s cordoned by %s, which reports that it failed: %s; %s cordoned until it succeeds", who, by.Who, quote(by.Failed), stay)
			if by.Hint != "" {
				f.Remediation = append(f.Remediation, doctor.Remediation{Text: by.Hint, Command: by.HintCommand})
			}
		}
		p.Report(f)
	}
}
