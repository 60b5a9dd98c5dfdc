package checks

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// Unschedulable explains, node by node, why the scheduler finds no node for
// a pod, from the snapshot (volume topology included) rather than from the
// scheduler's terse message, which it never contradicts.
var Unschedulable = &doctor.Check{
	Name:     "unschedulable",
	Severity: doctor.Warning,
	Origin:   "everyday",
	// Claims and classes only judge the pods that have claims: without
	// them (a cluster-info dump) every other pending pod is still judged.
	Reads:    []snapshot.Resource{snapshot.Nodes, snapshot.Pods},
	Optional: append(append([]snapshot.Resource{snapshot.PersistentVolumes}, kube.StorageReads...), kube.WorkloadReads...),
	Run:      runUnschedulable,
	Doc: `Pods no node can take, with each node's reason: selector, cordon, taints, room, claims

## Why it matters
A pod the scheduler cannot place stays Pending and nothing else fails: the
workload is simply short of replicas. The scheduler's verdict,
` + "`0/6 nodes are available: 4 node(s) had untolerated taint(s), 1 node(s) were unschedulable, 1 Insufficient cpu`" + `,
counts reasons but names no node, no taint and no amount, and says nothing
about whether the pod could ever fit: a request larger than every node's
allocatable, or a nodeSelector label that no node carries, waits forever
while a pod one cordon away from running only needs an uncordon.

## How it is detected
Pods with no ` + "`spec.nodeName`" + ` whose ` + "`PodScheduled`" + ` condition is False with reason
` + "`Unschedulable`" + ` for more than five minutes (from the older of the pod's creation
and the condition's transition); a pod Pending with no verdict yet is left
alone. For each node the snapshot gives every obstacle: the ` + "`nodeSelector`" + ` and
required node affinity (` + "`k8s.io/component-helpers`" + ` nodeaffinity), the cordon,
NoSchedule/NoExecute taints the pod does not tolerate (the scheduler's own
toleration matching), and room: the pod's requests
(` + "`k8s.io/component-helpers/resource.PodRequests`" + `: containers summed, an init
container's request when larger, sidecars and overhead included) against the
node's allocatable minus the requests of the non-terminal pods bound there,
and its allocatable pod count. It also flags requests larger than every
node's allocatable (the pod can never fit as the cluster is), selector labels
or values that no node carries, and claims that do not exist.

Volumes restrict nodes too, as the scheduler's VolumeBinding and VolumeZone
filters apply them: a bound PersistentVolume's ` + "`spec.nodeAffinity`" + ` (matched with
` + "`k8s.io/component-helpers`" + ` nodeaffinity, as the scheduler does), its
` + "`topology.kubernetes.io/zone`" + `/region labels (and the deprecated beta ones; a
label may list zones joined by ` + "`__`" + `; a node with no zone label is not judged),
and for a WaitForFirstConsumer claim not bound yet its StorageClass's
` + "`allowedTopologies`" + `. PersistentVolumes are an optional read: without them only
classes are judged, and the coverage says so. A restriction no node meets is
the cause, naming the volume, the claim, the label and the values nodes do
have:

    1 pod of statefulset/db pending for 30m: its volume pv-db-0 (claim
    data-db-0) can only be used on nodes with topology.kubernetes.io/zone=zone-c
    (node affinity), and no node is there (nodes have
    topology.kubernetes.io/zone=zone-a, zone-b)

and one no node allowed by the pod's selector meets says so; otherwise the
nodes outside it are counted in the per-node breakdown ("1 outside the node
affinity of volume pv-rep (claim rep-data) (kubernetes.io/hostname=node-5:
node-6)").

The scheduler has the last word. When the snapshot shows no obstacle on some
node but the scheduler's ` + "`PodScheduled`" + ` message says it found none (host ports,
pod affinity, topology spread, dynamic resources: what the snapshot does not
judge), the finding quotes the scheduler first, gives the per-node reasons it
can compute, and names the nodes where the reason is the scheduler's alone;
it never says "1/7 nodes can take it" of a pod the scheduler refused.

The finding counts nodes per reason, each node under its first obstacle in
the scheduler's order ("4 tainted (dedicated=gpu:NoSchedule), 1 cordoned
(node-5), 1 short of 1.5 CPU (node-6: 0.5 CPU of 4 CPU free)"), and names the
single change that frees a node soonest: uncordon a node whose only obstacle
is the cordon, else tolerate the one intended taint that is the only obstacle
on the most nodes, else free room on the node closest to fitting.

Pods are grouped by top owner (pod → ReplicaSet → Deployment, Job →
CronJob, StatefulSet, DaemonSet); bare pods by namespace and cause. Three
neighbours own their pods, so a cause is reported once: pending-taints when
every node the pod may use is tainted or cordoned, node-pod-capacity when
every node it may use is only full of pods, pvc-pending when the pod waits
for a claim that binds immediately and is not Bound.

A virtual kubelet's allocatable (its provider's quota, such as 10k CPU) does
not count as a node's size for a pod that does not tolerate its taint, and
tolerating a provider taint is never offered as the soonest fix (it moves
the workload off the cluster's machines). A pod that requests more than any
node's allocatable is not offered an uncordon.

Without PersistentVolumeClaims and StorageClasses (a ` + "`kubectl cluster-info dump`" + `
holds neither) the check still runs: a pod without claims is judged as
always, and a pod with claims is reported with what the snapshot shows and
a note that its claims could not be judged (no "soonest fix" then: a node
one uncordon away may be one its volume cannot reach).

Hard topology spread constraints and required inter-pod (anti-)affinity
depend on where other pods run; the snapshot does not compute them, so a pod
that has them is never offered a "soonest fix" (the node one taint away may
fail the same constraint), and the nodes the scheduler refused for no reason
the snapshot shows are said to fail them. A required anti-affinity on
` + "`kubernetes.io/hostname`" + ` against the pod's own labels (one replica per node) is
counted: more such pods than nodes they may run on (matching, uncordoned,
tolerated) is the cause, and the fix scales to that many or relaxes the rule.

A scan of one namespace (` + "`-n`" + `) lists that namespace's pods only, while the
pods of every namespace use the nodes: the room it computes is an upper
bound, so a node that seems to have room is never said to fit, no soonest
fix is offered, and the finding says that its room counts one namespace's
pods.

## How to fix
Follow the soonest change when it is right for the workload: uncordon a node
whose maintenance is over; add a toleration (with a nodeSelector) only if the
workload belongs on the dedicated nodes; lower the requests
(` + "`kubectl set resources`" + `) or free room by moving other pods; fix a nodeSelector
that names a label no node has, or label the nodes meant for it. A request
larger than every node needs a bigger node pool or a smaller request. A
volume pinned to a zone without nodes needs nodes in that zone, or its data
restored into a volume where nodes are; a class whose allowedTopologies name
no node's zone needs a class that allows them.

## References
- https://kubernetes.io/docs/concepts/scheduling-eviction/kube-scheduler/
- https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/
- https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
- https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/#how-pods-with-resource-requests-are-scheduled
- https://kubernetes.io/docs/tasks/debug/debug-application/debug-pods/#my-pod-stays-pending`,
}

type unschedGroup struct {
	// portHolders are pods holding a host port the oldest pod asks for,
	// on nodes that otherwise fit it.
	portHolders []kube.HostPortHolder
	owner       *kube.Workload // nil for bare pods
	ns          string
	pods        []*corev1.Pod
	start       time.Time
	oldest      *corev1.Pod
	fit         *kube.Fit
	verdict     string // the scheduler's message for the oldest pod
	causeKey    string
	// spread: pods that want a node of their own (required anti-affinity
	// on the hostname against their own labels) and the nodes that can
	// take one; zero when that is not what keeps them pending.
	spreadPods, spreadNodes int
	// surge says the pods over the nodes are a rolling update's surge: the
	// replicas fit, the update's extra pod never does.
	surge bool
}

func runUnschedulable(p *doctor.Pass) error {
	nodes := p.Snapshot.Nodes()
	own := kube.OwnersOf(p.Snapshot)
	groups := map[string]*unschedGroup{}
	causes := map[*kube.Fit]string{}
	taintOnlyBySpec := map[string]bool{}
	for _, pod := range p.Snapshot.Pods() {
		start, cond, ok := kube.UnschedulableSince(pod)
		if !ok || p.Now.Sub(start) < kube.UnschedulableGrace {
			continue
		}
		// Pods of one template share a placement: judge it once per
		// distinct spec, not once per pod (each is a walk over every node).
		spec, err := pod.Spec.Marshal()
		taintOnly, known := taintOnlyBySpec[string(spec)]
		if err != nil || !known {
			_, taintOnly = kube.TaintBlocked(kube.NewPlacement(&pod.Spec, false), nodes)
			if err == nil {
				taintOnlyBySpec[string(spec)] = taintOnly
			}
		}
		if taintOnly {
			continue // pending-taints
		}
		fit := kube.Explain(p.Snapshot, pod)
		if len(fit.UnboundClaims) > 0 || fit.OnlyFull() {
			continue // pvc-pending, node-pod-capacity
		}
		cause, known := causes[fit]
		if !known { // pods of one template share their Fit (kube.Explain): judge it once
			cause = fitCause(fit)
			causes[fit] = cause
		}
		o, hasOwner := own.Top(pod)
		// Bare pods group by cause; the host ports they ask for are judged
		// per pod (the Fit does not hold them), so they part groups too.
		key := "bare|" + pod.Namespace + "|" + cause + "|" + fmt.Sprint(kube.HostPorts(&pod.Spec))
		if hasOwner {
			key = "owner|" + o.Ref.Kind + "|" + pod.Namespace + "/" + o.Ref.Name
		} else {
			o = nil
		}
		g := groups[key]
		if g == nil {
			g = &unschedGroup{owner: o, ns: pod.Namespace, start: start}
			groups[key] = g
		}
		g.pods = append(g.pods, pod)
		if g.oldest == nil || start.Before(g.start) || (start.Equal(g.start) && pod.Name < g.oldest.Name) {
			g.start, g.oldest, g.fit, g.verdict, g.causeKey = start, pod, fit, cond.Message, cause
		}
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		reportUnschedulable(p, groups[k])
	}
	return nil
}

func reportUnschedulable(p *doctor.Pass, g *unschedGroup) {
	names := make([]string, len(g.pods))
	for i, pod := range g.pods {
		names[i] = pod.Name
	}
	sort.Strings(names)
	age := human(p.Now.Sub(g.start))
	var who string
	var ref doctor.ObjectRef
	switch {
	case g.owner != nil:
		who = fmt.Sprintf("%s of %s", doctor.Plural(len(g.pods), "pod", "pods"), g.owner.KindName())
		ref = g.owner.Ref
	case len(g.pods) == 1:
		who = fmt.Sprintf("pod %s in namespace %s", names[0], g.ns)
		ref = doctor.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: g.ns, Name: names[0]}
	default:
		who = fmt.Sprintf("%d bare pods in namespace %s", len(g.pods), g.ns)
		ref = doctor.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: g.ns, Name: names[0]}
	}
	msg := fmt.Sprintf("%s pending for %s: %s", who, age, g.causeKey)
	if f := g.fit; f.AnyFits() && g.verdict != "" && len(f.MissingClaims)+len(f.NeverFits)+len(f.VolumeNowhere) == 0 {
		// Something the snapshot does not judge (host ports, pod
		// affinity, topology spread, dynamic resources) keeps it off.
		// The scheduler has the last word: never say a node can take a
		// pod it just refused.
		fits, parts := fitBreakdown(f)
		msg = fmt.Sprintf("%s pending for %s: the scheduler says: %s", who, age, strings.TrimSuffix(clipLine(g.verdict, 2*maxQuote), "."))
		if len(parts) > 0 {
			msg += "; by the snapshot: " + strings.Join(parts, ", ")
		}
		// Host ports the snapshot can judge: the pods holding them.
		var unexplained []string
		ported := 0
		for _, node := range fits {
			held := kube.HostPortConflicts(p.Snapshot, g.oldest, node)
			if len(held) == 0 {
				unexplained = append(unexplained, node)
				continue
			}
			if ported++; ported <= 3 {
				msg += fmt.Sprintf("; on %s %s", node, hostPortWords(held))
				g.portHolders = append(g.portHolders, held...)
			}
		}
		if ported > 3 {
			msg += fmt.Sprintf("; and on %s the host ports it asks for are held too", doctor.Plural(ported-3, "more node", "more nodes"))
		}
		if n, nodes, port := siblingHostPorts(p, g, f, len(unexplained) == 0); n > nodes {
			// Every node that could take it has the port held by a
			// replica of the same workload: moving one only moves the
			// conflict. One replica per node is the limit.
			g.spreadPods, g.spreadNodes = n, nodes
			want := fmt.Sprintf("%d want one", n)
			if r := desiredReplicas(g.owner); g.owner.Ref.Kind == "Deployment" && r > 0 && int(r) <= nodes {
				// As many replicas as nodes: the extra pod is the rolling
				// update's surge, which no node can ever take.
				g.surge = true
				want = fmt.Sprintf("%d want one (%d replicas and the rolling update's surge)", n, r)
			}
			msg += fmt.Sprintf("; host port %s allows one of these pods per node, and every node that could take one already runs one: %s and it may run on %s (the others are cordoned, tainted or excluded by its selector)",
				port, want, doctor.Plural(nodes, "node", "nodes"))
		} else if n, nodes := selfAntiAffinity(p, g.oldest, f); n > nodes {
			g.spreadPods, g.spreadNodes = n, nodes
			msg += fmt.Sprintf("; its required pod anti-affinity (topologyKey %s) allows one of these pods per node: %d want one and it may run on %s (the others are cordoned, tainted or excluded by its selector)",
				corev1.LabelHostname, n, doctor.Plural(nodes, "node", "nodes"))
			unexplained = nil
		}
		switch {
		case len(unexplained) > 0 && len(f.Unjudged) > 0:
			msg += fmt.Sprintf("; on %s the scheduler's reason is one the snapshot does not judge: its %s", strings.Join(doctor.Examples(unexplained), ", "), strings.Join(f.Unjudged, " and "))
			if f.PodsOf != "" {
				msg += fmt.Sprintf(", or the requests of pods in other namespaces (not listed by a scan of namespace %s)", f.PodsOf)
			}
		case len(unexplained) > 0 && f.PodsOf != "":
			msg += fmt.Sprintf("; on %s the scheduler's reason is one this scan cannot see: the requests of pods in other namespaces (not listed by a scan of namespace %s), or host ports, pod affinity, topology spread, dynamic resources",
				strings.Join(doctor.Examples(unexplained), ", "), f.PodsOf)
		case len(unexplained) > 0:
			msg += fmt.Sprintf("; on %s the scheduler's reason is one the snapshot does not show (host ports, pod affinity, topology spread, dynamic resources)",
				strings.Join(doctor.Examples(unexplained), ", "))
		}
		if s := soonestWords(f.Soonest()); s != "" {
			msg += "; soonest fix: " + s
		}
	}
	f := doctor.Finding{Object: ref, Message: msg, Count: len(g.pods), Examples: doctor.Examples(names),
		Remediation: unschedRemediation(g)}
	var partial []string
	if u := g.fit.UnreadClaims; len(u) > 0 {
		partial = append(partial, fmt.Sprintf("its claims (%s) could not be judged: PersistentVolumeClaims or StorageClasses were not read; a claim that does not bind also keeps it pending",
			strings.Join(doctor.Examples(u), ", ")))
	}
	if ns := g.fit.PodsOf; ns != "" {
		partial = append(partial, fmt.Sprintf("room on nodes counts the pods of namespace %s only: a scan of one namespace does not list the pods of others, which use the same nodes", ns))
	}
	f.Partial = strings.Join(partial, "; ")
	p.Report(f)
}

func unschedRemediation(g *unschedGroup) []doctor.Remediation {
	pod := g.oldest
	target := fmt.Sprintf("pod/%s", pod.Name)
	if g.owner != nil && g.owner.Ref.Kind != "Job" && g.owner.Spec != nil {
		target = g.owner.KindName()
	}
	rem := []doctor.Remediation{{Text: "read the scheduler's events for the pod",
		Command: fmt.Sprintf("kubectl describe pod %s -n %s", pod.Name, pod.Namespace)}}
	if strings.Contains(g.verdict, "topology spread constraints (missing required label)") {
		// Nodes without the constraint's topologyKey label are not
		// candidates at all: label them (or fix the key).
		keys := []string{}
		for _, c := range pod.Spec.TopologySpreadConstraints {
			if !slices.Contains(keys, c.TopologyKey) {
				keys = append(keys, c.TopologyKey)
			}
		}
		rem = append(rem, doctor.Remediation{Text: "some nodes lack the label its topologySpreadConstraints spread over, so the scheduler does not consider them: label them (or fix topologyKey)",
			Command: "kubectl get nodes -L " + strings.Join(keys, ",")})
	} else if strings.Contains(g.verdict, "topology spread constraints") && len(pod.Spec.TopologySpreadConstraints) > 0 {
		// The scheduler refused nodes with room to keep the spread: the
		// constraint, not capacity, is what to change (or the capacity
		// of the domain it asks for).
		rem = append(rem, doctor.Remediation{Text: "its topologySpreadConstraints (whenUnsatisfiable: DoNotSchedule) keep it off nodes that have room: allow more skew (maxSkew), use whenUnsatisfiable: ScheduleAnyway, or add room in the zone or node the spread asks for",
			Command: fmt.Sprintf("kubectl get %s -n %s -o jsonpath='{..topologySpreadConstraints}'", ownerOrPod(g), pod.Namespace)})
	}
	if g.surge {
		return append(rem, doctor.Remediation{Text: "roll it out without a surge pod: replace a replica at a time (maxSurge 0, maxUnavailable 1), or add a node",
			Command: fmt.Sprintf(`kubectl patch %s -n %s --type=merge -p '{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":0,"maxUnavailable":1}}}}'`, g.owner.KindName(), g.ns)})
	}
	if g.spreadPods > 0 {
		text := "run no more replicas than nodes that can take one, make the anti-affinity preferred (preferredDuringSchedulingIgnoredDuringExecution), or add nodes"
		if len(g.portHolders) > 0 {
			text = "run no more replicas than nodes that can take one (or run it as a DaemonSet), drop hostPort (a Service reaches the pods without one), or add nodes"
		}
		if g.owner != nil && g.spreadNodes > 0 && (g.owner.Ref.Kind == "Deployment" || g.owner.Ref.Kind == "StatefulSet") {
			return append(rem, doctor.Remediation{Text: text, Command: fmt.Sprintf("kubectl scale %s -n %s --replicas=%d", g.owner.KindName(), g.ns, g.spreadNodes)})
		}
		return append(rem, doctor.Remediation{Text: text, Command: "kubectl get nodes"})
	}
	if len(g.portHolders) > 0 {
		h := g.portHolders[0]
		rem = append(rem, doctor.Remediation{Text: fmt.Sprintf("free host port %s: move or remove the pod that holds it, or drop hostPort from this pod (a Service reaches it without one)", h.Port),
			Command: fmt.Sprintf("kubectl get pod %s -n %s -o wide", h.Pod.Name, h.Pod.Namespace)})
	}
	f := g.fit
	var cordoned []string
	short := map[corev1.ResourceName]bool{}
	var shortNodes []string
	for i := range f.Nodes {
		n := &f.Nodes[i]
		if n.SelectorMismatch || len(n.Volumes) > 0 {
			continue // neither an uncordon nor room would let the pod there
		}
		if n.Cordoned {
			cordoned = append(cordoned, n.Node.Name)
		}
		if !n.Cordoned && len(n.Taints) == 0 && len(n.Short) > 0 {
			shortNodes = append(shortNodes, n.Node.Name)
			for _, s := range n.Short {
				short[s.Resource] = true
			}
		}
	}
	if len(f.MissingClaims) > 0 {
		rem = append(rem, doctor.Remediation{Text: "create the missing claim, or fix the volume's claimName",
			Command: fmt.Sprintf("kubectl get pvc -n %s", pod.Namespace)})
	}
	rem = append(rem, volumeRemediation(f)...)
	// An uncordon helps only a pod some node could hold: not one that
	// requests more than any node's allocatable.
	if len(cordoned) > 0 && !strings.Contains(g.causeKey, "no node matches") && len(f.NeverFits) == 0 {
		sort.Strings(cordoned)
		rem = append(rem, doctor.Remediation{Text: "uncordon the nodes whose maintenance is over",
			Command: "kubectl uncordon " + strings.Join(cordoned, " ")})
	}
	if len(f.NeverFits) > 0 || len(shortNodes) > 0 {
		var sets []string
		for _, s := range f.NeverFits {
			sets = append(sets, fmt.Sprintf("%s=%s", s.Resource, s.Allocatable.String()))
		}
		if mutable := g.owner != nil && g.owner.Ref.Kind != "Job" && g.owner.Spec != nil; !mutable {
			rem = append(rem, doctor.Remediation{Text: "a pod's (and a Job's) requests cannot be changed in place: recreate it with requests a node can hold",
				Command: fmt.Sprintf("kubectl get %s -n %s -o yaml", ownerOrPod(g), pod.Namespace)})
		} else if len(sets) > 0 || short[corev1.ResourceCPU] || short[corev1.ResourceMemory] {
			c := "kubectl set resources " + target + " -n " + pod.Namespace
			if len(pod.Spec.Containers) > 1 {
				c += " -c " + pod.Spec.Containers[0].Name
			}
			text := "lower the requests to what a node can hold (the values shown are the largest node's allocatable: choose what the workload really needs)"
			if len(sets) == 0 {
				// The current requests are what does not fit: the
				// command asks for less than them, never repeats them.
				text = "lower the requests to what a node can hold (choose what the workload really needs)"
				for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
					if q, ok := pod.Spec.Containers[0].Resources.Requests[r]; ok && short[r] {
						sets = append(sets, fmt.Sprintf("%s=<less than %s>", r, q.String()))
					}
				}
			}
			if len(sets) > 0 {
				rem = append(rem, doctor.Remediation{Text: text, Command: c + " --requests=" + strings.Join(sets, ",")})
			}
		}
		if len(shortNodes) > 0 {
			sort.Strings(shortNodes)
			rem = append(rem, doctor.Remediation{Text: "see what is already requested on the nodes short of room (Allocated resources)",
				Command: "kubectl describe node " + strings.Join(doctor.Examples(shortNodes), " ")})
		}
	}
	if strings.Contains(g.causeKey, "no node matches") {
		keys := map[string]bool{}
		for k := range pod.Spec.NodeSelector {
			keys[k] = true
		}
		var ks []string
		for k := range keys {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		cmd := "kubectl get nodes --show-labels"
		if len(ks) > 0 {
			cmd = "kubectl get nodes -L " + strings.Join(ks, ",")
		}
		rem = append(rem, doctor.Remediation{Text: "fix the node selector or affinity, or label the nodes meant for it", Command: cmd})
	}
	if strings.Contains(g.causeKey, "soonest fix: tolerate") {
		rem = append(rem, doctor.Remediation{Text: "if the workload belongs on the tainted nodes, add the toleration (and a nodeSelector) to its pod template",
			Command: fmt.Sprintf("kubectl edit %s -n %s", target, pod.Namespace)})
	}
	return rem
}

func ownerOrPod(g *unschedGroup) string {
	if g.owner != nil {
		return g.owner.KindName()
	}
	return "pod/" + g.oldest.Name
}

// volumeRemediation: for volume topology no node meets, where to look and
// what changes it: nodes in the volume's zone, or the data (or the class)
// moved to where nodes are.
func volumeRemediation(f *kube.Fit) []doctor.Remediation {
	if len(f.VolumeNowhere) == 0 {
		return nil
	}
	var rem []doctor.Remediation
	keys := map[string]bool{}
	for i := range f.Volumes {
		v := &f.Volumes[i]
		blocked := false
		for j := range f.Nodes {
			for _, x := range f.Nodes[j].Volumes {
				blocked = blocked || x == v
			}
		}
		if !blocked {
			continue
		}
		for _, k := range v.Keys {
			keys[k] = true
		}
		if v.Volume != "" {
			rem = append(rem, doctor.Remediation{
				Text:    fmt.Sprintf("volume %s can only be attached where its %s says (%s): add nodes there (a node pool in that zone), or restore its data into a volume where nodes are (snapshot and restore) and rebind the claim", v.Volume, topologySource[v.Source], v.Want),
				Command: fmt.Sprintf("kubectl get pv %s -o yaml", v.Volume)})
		} else {
			rem = append(rem, doctor.Remediation{
				Text:    fmt.Sprintf("storageclass %s provisions only where its allowedTopologies say (%s): use a class that allows the nodes' zones (allowedTopologies cannot be changed in place), or add nodes there", v.Class, v.Want),
				Command: fmt.Sprintf("kubectl get storageclass %s -o yaml", v.Class)})
		}
	}
	if len(keys) > 0 {
		ks := make([]string, 0, len(keys))
		for k := range keys {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		rem = append(rem, doctor.Remediation{Text: "see where the nodes are", Command: "kubectl get nodes -L " + strings.Join(ks, ",")})
	}
	return rem
}

// hostPortWords: "host port 80/TCP is held by pod kube-system/svclb-x",
// "host ports 80/TCP, 443/TCP are held by pods a/x, a/y".
func hostPortWords(held []kube.HostPortHolder) string {
	var ports, pods []string
	for _, h := range held {
		if s := h.Port.String(); !slices.Contains(ports, s) {
			ports = append(ports, s)
		}
		if s := h.Pod.Namespace + "/" + h.Pod.Name; !slices.Contains(pods, s) {
			pods = append(pods, s)
		}
	}
	port, pod := "host port", "is held by pod"
	if len(ports) > 1 {
		port = "host ports"
	}
	if len(ports) > 1 || len(pods) > 1 {
		pod = "are held by"
		if len(pods) > 1 {
			pod += " pods"
		} else {
			pod += " pod"
		}
	}
	return fmt.Sprintf("%s %s %s %s", port, strings.Join(ports, ", "), pod, strings.Join(doctor.Examples(pods), ", "))
}

// siblingHostPorts: when every node the pod otherwise fits has its host
// port held by pods of the pod's own workload (and no node is left
// unexplained), the replicas of that workload wanting a node, the nodes
// that could take one, and the port.
// desiredReplicas is a Deployment's or StatefulSet's spec.replicas (1 when
// unset), 0 for other workloads.
func desiredReplicas(w *kube.Workload) int32 {
	switch o := w.Object.(type) {
	case *appsv1.Deployment:
		return replicasOf(o.Spec.Replicas)
	case *appsv1.StatefulSet:
		return replicasOf(o.Spec.Replicas)
	}
	return 0
}

func siblingHostPorts(p *doctor.Pass, g *unschedGroup, f *kube.Fit, allExplained bool) (pods, nodes int, port string) {
	if g.owner == nil || len(g.portHolders) == 0 || !allExplained {
		return 0, 0, ""
	}
	own := kube.OwnersOf(p.Snapshot)
	for _, h := range g.portHolders {
		if w, ok := own.Top(h.Pod); !ok || w.Ref != g.owner.Ref {
			return 0, 0, ""
		}
	}
	for _, other := range p.Snapshot.Pods() {
		if other.Namespace != g.ns || kube.Terminal(other) || other.DeletionTimestamp != nil {
			continue
		}
		if w, ok := own.Top(other); ok && w.Ref == g.owner.Ref {
			pods++
		}
	}
	for i := range f.Nodes {
		n := &f.Nodes[i]
		if !n.SelectorMismatch && !n.Cordoned && len(n.Taints) == 0 {
			nodes++
		}
	}
	return pods, nodes, g.portHolders[0].Port.String()
}

// selfAntiAffinity counts, for a pod whose required anti-affinity on the
// hostname selects pods like itself (one replica per node), the pods of its
// namespace that term selects and are not finished, and the nodes that
// could take one of them: nodes it matches, uncordoned, with no taint it
// does not tolerate. Zeros when the pod has no such term.
func selfAntiAffinity(p *doctor.Pass, pod *corev1.Pod, f *kube.Fit) (pods, nodes int) {
	a := pod.Spec.Affinity
	if a == nil || a.PodAntiAffinity == nil {
		return 0, 0
	}
	for _, term := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		if term.TopologyKey != corev1.LabelHostname || term.LabelSelector == nil || len(term.Namespaces) > 0 || term.NamespaceSelector != nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		for _, other := range p.Snapshot.Pods() {
			if other.Namespace == pod.Namespace && !kube.Terminal(other) && other.DeletionTimestamp == nil && sel.Matches(labels.Set(other.Labels)) {
				pods++
			}
		}
		for i := range f.Nodes {
			n := &f.Nodes[i]
			if !n.SelectorMismatch && !n.Cordoned && len(n.Taints) == 0 {
				nodes++
			}
		}
		return pods, nodes
	}
	return 0, 0
}
