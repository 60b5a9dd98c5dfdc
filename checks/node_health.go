package checks

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// NodeHealth reports nodes whose kubelet is not healthy, classified by the
// kubelet's own words, so that nodes sharing a cause are one finding.
var NodeHealth = &doctor.Check{
	Name:     "node-health",
	Severity: doctor.Critical,
	Origin:   "OOM-Killer talk",
	Reads:    []snapshot.Resource{snapshot.Nodes},
	Optional: append([]snapshot.Resource{snapshot.Pods}, kube.WorkloadReads...),
	Run:      runNodeHealth,
	Doc: `Nodes that are NotReady or unreachable, or under memory, disk or PID pressure, and why

## Why it matters
A node whose kubelet is not Ready gets no new pods, and the pods on it are
evicted once their ` + "`not-ready`/`unreachable`" + ` toleration runs out (300 s by
default). The kubelet says why in its Ready condition, but its words can
mislead: in "How the OOM-Killer Deleted My Namespace" (KubeCon NA 2020) kubelets on
a new node image reported "container runtime is down" while
` + "`systemctl status containerd`" + ` said it was running — the runtime's CRI
Status call was stuck behind a CNI plugin whose network-namespace teardown
hung on the new kernel, and ` + "`crictl info`" + ` hung with it. Nodes that fail
together usually share that one cause. The node-taints check reports the
taints Kubernetes then puts on such nodes; this check reports the condition
behind them and its cause.

## How it is detected
From one LIST of nodes, the ` + "`Ready`" + ` condition of every node. A node whose
kubelet has not posted status since it registered (no Ready condition, or the
node lifecycle controller's Ready ` + "`Unknown`" + ` with reason ` + "`NodeStatusNeverUpdated`" + `)
is not Ready: it is a warning once it is older than 5 minutes, dated by its
` + "`creationTimestamp`" + ` ("registered 20m ago and has not been Ready since"); a younger
one is still starting and is not reported. Ready ` + "`Unknown`" + ` (reason
` + "`NodeStatusUnknown`" + `: the kubelet stopped posting) is unreachable; Ready ` + "`False`" + `
is classified from the kubelet's message: ` + "`container runtime is down`" + `,
` + "`container runtime not ready`" + `, ` + "`PLEG is not healthy`" + `,
` + "`container runtime network not ready`" + ` (CNI not initialised), ` + "`node is shutting down`" + `,
or anything else by its reason and message. Nodes that share a cause are one
critical finding with the count, example nodes, how long (the oldest
condition's ` + "`lastTransitionTime`" + `) and, when they all run a kernel no other node
runs, that kernel. ` + "`MemoryPressure`, `DiskPressure`, `PIDPressure`" + ` and
` + "`NetworkUnavailable`" + ` conditions that are True are warnings, one per condition.

## How to fix
Describe the node, then on the node ask what the kubelet asks:
` + "`crictl info`" + ` (if it hangs, the runtime's status path is stuck even when the
service is active), ` + "`systemctl status containerd`" + `, ` + "`journalctl -u kubelet`" + `; a
goroutine dump of containerd (` + "`kill -USR1`" + `) shows the call that is stuck. Cordon
and drain the nodes while you fix or replace them; delete a node whose
machine is gone for good. For pressure, find and limit the pods using the
resource, or give the node more of it. Under DiskPressure, when the
kubelet's ephemeral-storage evictions on those nodes are in the snapshot,
the finding names the container that used the most over its request (the
kubelet's own eviction message says how much) and its workload, and the
first fix gives it an ephemeral-storage request and limit.

## References
- https://www.youtube.com/watch?v=MrNhdmyXXKg
- https://kubernetes.io/docs/reference/node/node-status/#condition
- https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/#taint-based-evictions
- https://kubernetes.io/docs/tasks/debug/debug-cluster/crictl/
- https://kubernetes.io/docs/concepts/scheduling-eviction/node-pressure-eviction/
- https://github.com/containerd/containerd/blob/main/docs/getting-started.md`,
}

// healthCause is one reason for an unhealthy node: what the kubelet's
// words mean and what to do about them.
type healthCause struct {
	state   string // "NotReady", "unreachable", "under MemoryPressure"
	meaning string // "" when the kubelet's words are all there is
	effect  string
	sev     doctor.Severity
	fix     func(names, first string) []doctor.Remediation
}

const notReadyEffect = "no new pods are scheduled there, and pods without a longer not-ready toleration are evicted after the default 300s (DaemonSet pods stay)"

func cordonDrain(names string) []doctor.Remediation {
	return []doctor.Remediation{
		{Text: "keep new pods off while you investigate", Command: "kubectl cordon " + names},
		{Text: "move the pods elsewhere before restarting the runtime or replacing the machine", Command: "kubectl drain " + names + " --ignore-daemonsets --delete-emptydir-data"},
	}
}

func withDescribe(names string, rest ...doctor.Remediation) []doctor.Remediation {
	return append([]doctor.Remediation{describeNodes(names)}, rest...)
}

var healthCauses = map[string]healthCause{
	"runtime-down": {state: "NotReady", sev: doctor.Critical, effect: notReadyEffect,
		meaning: "the kubelet's CRI Status call to the container runtime fails or times out: the runtime is dead, or alive with one call stuck inside it (a CNI plugin hung in network teardown holds its lock, and crictl info hangs too) while systemctl shows it running",
		fix: func(n, _ string) []doctor.Remediation {
			return append(withDescribe(n,
				doctor.Remediation{Text: "on the node, ask the runtime what the kubelet asks: if crictl info hangs while the service is active, a call inside the runtime is stuck", Command: "crictl info; systemctl status containerd; journalctl -u kubelet --since -1h"},
				doctor.Remediation{Text: "on the node, dump containerd's goroutines to its log to find the blocked call (look for goroutines waiting on a lock in the CNI plugin)", Command: "kill -USR1 $(pidof containerd); journalctl -u containerd --since -5m"},
			), cordonDrain(n)...)
		}},
	"runtime-not-ready": {state: "NotReady", sev: doctor.Critical, effect: notReadyEffect,
		meaning: "the container runtime answers but reports itself not ready",
		fix: func(n, _ string) []doctor.Remediation {
			return append(withDescribe(n,
				doctor.Remediation{Text: "on the node, read the runtime's own status and logs", Command: "crictl info; systemctl status containerd; journalctl -u containerd --since -1h"},
			), cordonDrain(n)...)
		}},
	"pleg": {state: "NotReady", sev: doctor.Critical, effect: notReadyEffect,
		meaning: "the kubelet's pod lifecycle event generator could not relist the containers within its threshold: the runtime answers too slowly (a hung call, too many containers, a saturated disk or CPU)",
		fix: func(n, _ string) []doctor.Remediation {
			return append(withDescribe(n,
				doctor.Remediation{Text: "on the node, time the runtime's listing and count its containers", Command: "time crictl ps -a | wc -l; journalctl -u kubelet --since -1h | grep -i pleg"},
				doctor.Remediation{Text: "on the node, check the runtime itself", Command: "crictl info; systemctl status containerd"},
			), cordonDrain(n)...)
		}},
	"network": {state: "NotReady", sev: doctor.Critical, effect: notReadyEffect,
		meaning: "the runtime's pod network is not ready: the CNI plugin has written no configuration to /etc/cni/net.d or its agent is not running there, so no pod sandbox can be created",
		fix: func(n, first string) []doctor.Remediation {
			return append(withDescribe(n,
				doctor.Remediation{Text: "check the CNI agent pod (DaemonSet) on the node", Command: "kubectl get pods -n kube-system -o wide --field-selector spec.nodeName=" + first},
				doctor.Remediation{Text: "on the node, check the CNI configuration the runtime loads", Command: "ls -l /etc/cni/net.d; journalctl -u containerd --since -1h | grep -i cni"},
			), cordonDrain(n)...)
		}},
	"shutdown": {state: "NotReady", sev: doctor.Critical, effect: notReadyEffect,
		meaning: "the kubelet is shutting the node down (graceful node shutdown)",
		fix: func(n, _ string) []doctor.Remediation {
			return withDescribe(n, doctor.Remediation{Text: "if the machine is gone for good, delete the Node so its pods are recreated elsewhere at once", Command: "kubectl delete node " + n})
		}},
	"other": {state: "NotReady", sev: doctor.Critical, effect: notReadyEffect,
		fix: func(n, _ string) []doctor.Remediation {
			return append(withDescribe(n,
				doctor.Remediation{Text: "on the node, read the kubelet's log", Command: "systemctl status kubelet; journalctl -u kubelet --since -1h"},
			), cordonDrain(n)...)
		}},
}

// cause returns the health cause: NotReady causes from the table above,
// unreachable and the pressure conditions from kube's node problems.
func cause(key string) healthCause {
	if hc, ok := healthCauses[key]; ok {
		return hc
	}
	if key == "never-posted" {
		return healthCause{state: "not Ready", sev: doctor.Warning, meaning: neverPostedMeaning,
			effect: "no new pods are scheduled there",
			fix:    func(n, _ string) []doctor.Remediation { return neverPostedFix(n) }}
	}
	if key == "unreachable" {
		np := nodeProblemWords[corev1.TaintNodeUnreachable]
		return healthCause{state: np.State, sev: doctor.Critical, effect: np.Effect, fix: np.Fix,
			meaning: "the machine is down, cut off from the API server, or its kubelet is stopped"}
	}
	pc, _ := kube.ProblemCondition(corev1.NodeConditionType(key))
	np := nodeProblemWords[pc.Taint]
	return healthCause{state: np.State, sev: doctor.Warning, effect: np.Effect, fix: np.Fix}
}

// classifyReady names the cause of a Ready condition that is not True, from
// the kubelet's message (pkg/kubelet/runtime.go, nodestatus/setters.go).
func classifyReady(c corev1.NodeCondition) string {
	if c.Status == corev1.ConditionUnknown || c.Reason == "NodeStatusUnknown" || c.Reason == "NodeStatusNeverUpdated" {
		return "unreachable"
	}
	m := strings.ToLower(c.Message)
	switch {
	case strings.Contains(m, "container runtime is down"), strings.Contains(m, "container runtime status check may not have completed yet"):
		return "runtime-down"
	case strings.Contains(m, "container runtime not ready"):
		return "runtime-not-ready"
	case strings.Contains(m, "pleg is not healthy"), strings.Contains(m, "pleg has yet to be successful"):
		return "pleg"
	case strings.Contains(m, "container runtime network not ready"), strings.Contains(m, "networkpluginnotready"), strings.Contains(m, "cni plugin not initialized"):
		return "network"
	case strings.Contains(m, "node is shutting down"):
		return "shutdown"
	}
	return "other"
}

type healthGroup struct {
	cause  string
	nodes  []string
	words  string // the first node's reason/message, quoted as evidence
	oldest time.Time
	dated  bool
}

func (g *healthGroup) add(node string, c corev1.NodeCondition, words string) {
	g.nodes = append(g.nodes, node)
	if g.words == "" {
		g.words = words
	}
	if t := c.LastTransitionTime.Time; !t.IsZero() && (!g.dated || t.Before(g.oldest)) {
		g.oldest, g.dated = t, true
	}
}

func runNodeHealth(p *doctor.Pass) error {
	nodes := append([]corev1.Node(nil), p.Snapshot.Nodes()...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	groups := map[string]*healthGroup{}
	var order []string
	group := func(key, cause string) *healthGroup {
		g := groups[key]
		if g == nil {
			g = &healthGroup{cause: cause}
			groups[key] = g
			order = append(order, key)
		}
		return g
	}
	kernels := map[string]string{}
	for i := range nodes {
		n := &nodes[i]
		kernels[n.Name] = n.Status.NodeInfo.KernelVersion
		reg, never := kube.NeverPostedStatus(n)
		if never && !reg.IsZero() && p.Now.Sub(reg) >= nodeRegistrationGrace {
			// A kubelet posts its first status seconds after it
			// registers the Node: only one silent past the grace is
			// reported, dated by the registration. A young one, or a
			// Node without a creationTimestamp (a hand-written object),
			// is not judged on Ready.
			group("never-posted", "never-posted").add(n.Name, corev1.NodeCondition{LastTransitionTime: metav1.NewTime(reg)}, "")
			continue
		}
		for _, c := range n.Status.Conditions {
			switch {
			case c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue && !never:
				cause := classifyReady(c)
				words := strings.TrimSpace(c.Message)
				key := cause
				if cause == "other" {
					if words == "" {
						words = c.Reason
					}
					key = cause + "|" + words
				}
				if cause == "unreachable" {
					words = strings.TrimSpace(strings.Trim(fmt.Sprintf("Ready is %s: %s", c.Status, c.Reason), ": "))
				}
				group(key, cause).add(n.Name, c, words)
			case c.Status == corev1.ConditionTrue && isProblemCondition(c.Type):
				words := strings.TrimSpace(strings.Trim(c.Reason+": "+c.Message, ": "))
				group(string(c.Type), string(c.Type)).add(n.Name, c, words)
			}
		}
	}
	for _, key := range order {
		g := groups[key]
		hc := cause(g.cause)
		names := strings.Join(doctor.Examples(g.nodes), " ")
		msg, rem := healthMessage(p.Now, g, hc, kernels), hc.fix(names, g.nodes[0])
		if g.cause == string(corev1.NodeDiskPressure) {
			if words, fix, ok := diskFiller(p, g.nodes); ok {
				msg += "; " + words
				rem = append([]doctor.Remediation{fix}, rem...)
			}
		}
		p.Report(doctor.Finding{
			Severity:    hc.sev,
			Object:      kube.NodeRef(g.nodes[0]),
			Message:     msg,
			Count:       len(g.nodes),
			Examples:    doctor.Examples(g.nodes),
			Members:     nodeMembers(g.nodes),
			Remediation: rem,
		})
	}
	return nil
}

// diskFiller names, for nodes under DiskPressure, the container the
// kubelet's ephemeral-storage evictions there say used the most disk over
// its request, with its workload: what fills the disk, from the evicted
// pods' own messages. ok is false when no such eviction is in the snapshot.
func diskFiller(p *doctor.Pass, nodes []string) (words string, fix doctor.Remediation, ok bool) {
	if p.Snapshot.Err(snapshot.Pods) != nil {
		return "", fix, false
	}
	// Evictions of this pressure episode only: evicted pods linger until
	// deleted, and one from weeks ago says nothing of today's disk.
	on := map[string]time.Time{}
	for _, n := range nodes {
		on[n] = time.Time{}
	}
	for _, n := range p.Snapshot.Nodes() {
		if _, ok := on[n.Name]; !ok {
			continue
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeDiskPressure && c.Status == corev1.ConditionTrue {
				on[n.Name] = c.LastTransitionTime.Time
			}
		}
	}
	evicted := 0
	where := map[string]bool{}
	var top *corev1.Pod
	var topUse kube.ContainerUsage
	var most resource.Quantity
	for _, pod := range p.Snapshot.Pods() {
		since, ok := on[pod.Spec.NodeName]
		if !ok || !kube.PodEvicted(pod) {
			continue
		}
		if at := kube.EvictedAt(pod); !at.IsZero() && !since.IsZero() && at.Before(since.Add(-10*time.Minute)) {
			continue // an earlier episode's (the condition flaps, hence the slack)
		}
		e := kube.EvictionOf(pod)
		if e.Resource != string(corev1.ResourceEphemeralStorage) {
			continue
		}
		evicted++
		where[pod.Spec.NodeName] = true
		for _, c := range e.Containers {
			q, err := resource.ParseQuantity(c.Usage)
			if err == nil && (top == nil || q.Cmp(most) > 0) {
				top, topUse, most = pod, c, q
			}
		}
	}
	if top == nil {
		return "", fix, false
	}
	who, target := "pod "+top.Namespace+"/"+top.Name, "pod/"+top.Name
	if w, ok := kube.OwnersOf(p.Snapshot).Top(top); ok && w.Ref.Kind != "Pod" {
		who, target = w.KindName()+" in namespace "+top.Namespace, w.KindName()
	}
	largest := "the largest user"
	if p.Snapshot.Namespace != "" {
		largest = "the largest user in namespace " + p.Snapshot.Namespace + " (other namespaces' pods were not read)"
	}
	words = fmt.Sprintf("the kubelet evicted %s for ephemeral-storage on %s; "+largest+": container %s of %s (%s used, %s requested)",
		doctor.Plural(evicted, "pod", "pods"), strings.Join(doctor.Examples(slices.Sorted(maps.Keys(where))), ", "), topUse.Name, who, topUse.Usage, orNone(topUse.Request))
	fix = doctor.Remediation{Text: fmt.Sprintf("bound what container %s writes to the node's disk: an ephemeral-storage request the scheduler reserves and a limit the kubelet enforces (or write to a volume)", topUse.Name),
		Command: fmt.Sprintf("kubectl set resources %s -n %s -c %s --requests=ephemeral-storage=<usage> --limits=ephemeral-storage=<usage+headroom>", target, top.Namespace, topUse.Name)}
	return words, fix, true
}

func orNone(s string) string {
	if s == "" || s == "0" {
		return "none"
	}
	return s
}

func isProblemCondition(t corev1.NodeConditionType) bool {
	_, ok := kube.ProblemCondition(t)
	return ok
}

func healthMessage(now time.Time, g *healthGroup, hc healthCause, kernels map[string]string) string {
	var b strings.Builder
	if g.cause == "never-posted" {
		// Dated by the registration (creationTimestamp), the oldest of
		// the group when several.
		if len(g.nodes) == 1 {
			fmt.Fprintf(&b, "node %s registered %s ago and has not been Ready since: %s; %s", g.nodes[0], human(now.Sub(g.oldest)), hc.meaning, hc.effect)
		} else {
			fmt.Fprintf(&b, "%s registered up to %s ago and have not been Ready since: %s; %s", doctor.Plural(len(g.nodes), "node", "nodes"), human(now.Sub(g.oldest)), hc.meaning, hc.effect)
		}
		return b.String()
	}
	if len(g.nodes) == 1 {
		fmt.Fprintf(&b, "node %s has been %s", g.nodes[0], hc.state)
	} else {
		fmt.Fprintf(&b, "%s have been %s", doctor.Plural(len(g.nodes), "node", "nodes"), hc.state)
	}
	if g.dated {
		b.WriteString(" for " + human(now.Sub(g.oldest)))
	}
	switch {
	case g.cause == "unreachable":
		fmt.Fprintf(&b, ": the kubelet stopped posting node status (%s): %s", g.words, hc.meaning)
	case hc.state == "NotReady" && g.words == "":
		b.WriteString(": the kubelet gives no reason")
	case hc.state == "NotReady":
		fmt.Fprintf(&b, ": the kubelet reports %q", g.words)
		if hc.meaning != "" {
			b.WriteString(": " + hc.meaning)
		}
	case g.words != "":
		fmt.Fprintf(&b, " (%s)", g.words)
	}
	if k := sharedKernel(g.nodes, kernels); k != "" {
		if len(g.nodes) == 1 {
			fmt.Fprintf(&b, "; it runs kernel %s, which no other node runs", k)
		} else {
			fmt.Fprintf(&b, "; all run kernel %s, which no other node runs", k)
		}
	}
	b.WriteString("; " + hc.effect)
	return b.String()
}

// sharedKernel is the kernel every node of the group runs when no other
// node (of those that report one) runs it: a hint that the kernel is the
// cause. "" otherwise.
func sharedKernel(group []string, kernels map[string]string) string {
	k := kernels[group[0]]
	if k == "" {
		return ""
	}
	in := map[string]bool{}
	for _, n := range group {
		if kernels[n] != k {
			return ""
		}
		in[n] = true
	}
	others := 0
	for n, kv := range kernels {
		if in[n] || kv == "" {
			continue
		}
		if kv == k {
			return ""
		}
		others++
	}
	if others == 0 {
		return ""
	}
	return k
}
