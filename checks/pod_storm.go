package checks

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// PodStorm finds controllers that recreate pods the kubelet keeps rejecting,
// and the piles of failed pods nobody garbage-collects.
var PodStorm = &doctor.Check{
	Name:     "pod-storm",
	Severity: doctor.Warning,
	Origin:   "Pinniped #1507",
	Reads:    []snapshot.Resource{snapshot.Pods},
	Optional: append(slices.Clone(kube.WorkloadReads), kube.WarningEventReads),
	Run:      runPodStorm,
	Doc: `Pod storms: controllers recreating pods the kubelet rejects, and piles of failed pods

## Why it matters
When the kubelet rejects a pod at admission (not enough CPU, a node affinity
that does not match, a taint...), the pod ends Failed with a
` + "`Pod was rejected:`" + ` message, and its controller creates a replacement at once,
with no backoff. When the pod template pins ` + "`spec.nodeName`" + `, the scheduler is
bypassed, capacity is never checked, and the loop never ends: in Pinniped issue
#1507 one Deployment pinned to a full control-plane node made about
1,000 Failed pods every seven minutes. kube-controller-manager garbage-collects
terminated pods only above ` + "`--terminated-pod-gc-threshold`" + ` (12,500 by default), so
they accumulate, bloating etcd, every pod LIST and every client cache
(kubernetes#113907).

## How it is detected
From the one LIST of pods: Failed pods whose message begins ` + "`Pod was rejected:`" + ` or
whose reason is a kubelet admission reason (` + "`OutOfcpu`, `OutOfmemory`, `OutOfpods`" + `,
` + "`OutOf<resource>`, `NodeAffinity`, `NodeName`, `NodePorts`, `TaintToleration`" + `,
` + "`UnexpectedAdmissionError`, `NodeShutdown`, `TopologyAffinityError`" + `, ...) are grouped
by their top owner (pod → ReplicaSet → Deployment; StatefulSet; DaemonSet;
Job → CronJob; bare pods by node). One finding per owner gives the count, the
reasons, the nodes, the time span and the rate (from creation timestamps) and
three example pods, and says when the owner's template sets ` + "`spec.nodeName`" + `.
Twenty rejected pods make a warning; 200, or a sustained rate of ten a minute
still going on, are critical; fewer than twenty are not reported. All
terminated pods together are a warning from 10,000, as they approach the
garbage-collection threshold.

Evictions are a class of their own, grouped at the same top owner (bare
pods per namespace). A pod counts as evicted when the kubelet failed it with
reason ` + "`Evicted`" + ` (node pressure, a local-storage limit, a refusal under a
pressure condition) or ` + "`Preempting`" + ` (room made for a critical pod), or while
it terminates with a ` + "`DisruptionTarget`" + ` condition from the taint manager
(` + "`DeletionByTaintManager`" + `) or the scheduler (` + "`PreemptionByScheduler`" + `); drains
through the Eviction API are voluntary and not counted. Pods that are gone
(a StatefulSet or DaemonSet deletes each evicted pod and recreates it) are
counted from the kubelet's ` + "`Evicted`" + ` Warning events, one per pod UID, and
attributed by name to the StatefulSet (NAME-ORDINAL) or the ReplicaSet,
DaemonSet or Job (NAME-xxxxx) of that name. The time of each eviction is the
` + "`DisruptionTarget`" + ` condition's, else the containers' termination, the Ready
condition's change, the start or the creation. The finding gives the count,
the nodes, the time span, each kind of eviction with its count, parsed from
the kubelet's message (pkg/kubelet/eviction: the resource the node ran short
of — memory, ephemeral-storage, inodes, pids — with the threshold, what was
left and which container used how much over its request; a container over
its own ephemeral-storage limit; the pod over the sum of those limits; an
emptyDir over its sizeLimit), whether the containers request or limit that
resource, whether the owner is fully available now, and the newest message
as evidence. Severity counts recent evictions, not debris: 20 or more in the
last 24 hours (or 200 in all) make a warning, even when the workload is
healthy now; three in the last 24 hours, or ten in all, are info; a few old
ones are not reported. For example, a Deployment healthy now:

    24 pods evicted on 2 nodes (w1, w2) between 4h and 10m ago: node short of
    memory ×24 (newest: threshold 100Mi, 91396Ki left; container app used
    1532812Ki with a request of 128Mi); memory: app requests 128Mi; 2 of 2
    replicas available now
      Evicted shop/cart-5f7d9-e00 (10m ago): The node was low on resource:
      memory. Threshold quantity: 100Mi, available: 91396Ki. Container app was
      using 1532812Ki, request is 128Mi, has larger consumption of memory.

A StatefulSet hides the storm from that count: it deletes each rejected pod
and recreates it under the same name, so only one Failed pod exists at any
time. Its storm is read from the scan's one list of Warning events:
the StatefulSet controller's ` + "`RecreatingFailedPod`" + ` warnings (their count, first
and last time) and the kubelet's ` + "`OutOfcpu`/`OutOfmemory`" + ` rejections of its pods,
counted by pod UID. Twenty recreations or rejections make a finding, with the
same severity rule as above.

## How to fix
For evictions: request the memory or ephemeral-storage the pods really use
(the kubelet evicts first the pods using most above their request), raise
the limit a container or emptyDir passed or move the data to a volume, and
look at the node's pressure conditions (` + "`kubectl describe node`" + `).

Replace ` + "`nodeName`" + ` with a ` + "`nodeSelector`" + ` (or required node affinity) on
` + "`kubernetes.io/hostname`" + `, so the pod waits Pending when the node is full instead of
failing in a loop; or, as Pinniped did, request no CPU or memory. Then delete
the debris: ` + "`kubectl delete pods --field-selector=status.phase=Failed`" + ` with the
owner's label selector.

## References
- https://github.com/vmware-tanzu/pinniped/issues/1507
- https://github.com/kubernetes/kubernetes/issues/113907
- https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename
- https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-garbage-collection
- https://kubernetes.io/docs/concepts/scheduling-eviction/node-pressure-eviction/
- https://kubernetes.io/docs/concepts/workloads/pods/disruptions/#pod-disruption-conditions`,
}

// kubelet admission rejection reasons (pkg/kubelet/lifecycle/predicate.go
// and the admit handlers); OutOf<resource> is matched by prefix.
var admissionReasons = map[string]bool{
	"NodeAffinity": true, "NodeName": true, "NodePorts": true, "TaintToleration": true,
	"UnexpectedAdmissionError": true, "NodeShutdown": true, "TopologyAffinityError": true,
	"InvalidNodeInfo": true, "PodOSNotSupported": true, "PodOSSelectorNodeLabelDoesNotMatch": true,
	"SysctlForbidden": true, "InitContainerRestartPolicyForbidden": true, "UnexpectedPredicateFailureType": true,
	"NodeResourcesFit": true,
}

const (
	stormWarning      = 20
	stormCritical     = 200
	stormRatePerMin   = 10.0
	stormOngoing      = 10 * time.Minute
	evictedInfo       = 10
	evictedWarning    = 200
	podGCThreshold    = 12500
	podGCWarnFraction = 0.8
)

func rejected(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodFailed {
		return false
	}
	return strings.HasPrefix(p.Status.Message, "Pod was rejected:") || admissionReasons[p.Status.Reason] ||
		strings.HasPrefix(p.Status.Reason, "OutOf")
}

type stormGroup struct {
	owner         *kube.Workload // nil for bare pods, grouped by node
	node          string
	count         int
	reasons       map[string]int
	nodes         map[string]int
	first, newest time.Time
	names         []string
}

func runPodStorm(p *doctor.Pass) error {
	own := kube.OwnersOf(p.Snapshot)
	groups := map[string]*stormGroup{}
	terminated := 0
	pods := p.Snapshot.Pods()
	for i := range pods {
		pod := pods[i]
		if kube.Terminal(pod) {
			terminated++
		}
		if !rejected(pod) { // evictions: see collectEvictions
			continue
		}
		o, hasOwner := own.Top(pod)
		var key string
		if hasOwner {
			key = fmt.Sprintf("%s|%s/%s", o.Ref.Kind, pod.Namespace, o.Ref.Name)
		} else {
			o = nil
			key = fmt.Sprintf("node|%s/%s", pod.Namespace, pod.Spec.NodeName)
		}
		g := groups[key]
		if g == nil {
			g = &stormGroup{owner: o, node: pod.Spec.NodeName, reasons: map[string]int{}, nodes: map[string]int{}}
			groups[key] = g
		}
		g.count++
		reason := pod.Status.Reason
		if reason == "" {
			reason = "Rejected"
		}
		g.reasons[reason]++
		if pod.Spec.NodeName != "" {
			g.nodes[pod.Spec.NodeName]++
		}
		t := pod.CreationTimestamp.Time
		if g.first.IsZero() || t.Before(g.first) {
			g.first = t
		}
		if t.After(g.newest) {
			g.newest = t
		}
		if len(g.names) < 50 {
			g.names = append(g.names, pod.Namespace+"/"+pod.Name)
		}
	}
	reported := map[string]bool{}
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		g := groups[k]
		reportStorm(p, g, bareNamespace(k))
		if g.owner != nil && g.count >= stormWarning {
			reported[kube.OwnerKey(g.owner)] = true
		}
	}
	reportStatefulSetStorms(p, reported)
	reportEvictions(p, collectEvictions(p, own))
	if float64(terminated) >= podGCWarnFraction*podGCThreshold {
		p.Report(doctor.Finding{
			Severity: doctor.Warning,
			Object:   doctor.ObjectRef{Kind: "Component", Name: "kube-controller-manager"},
			Message: fmt.Sprintf("%s terminated (Failed or Succeeded) pods in the cluster: kube-controller-manager garbage-collects them only above --terminated-pod-gc-threshold (default %s), so they stay in etcd and in every pod LIST",
				doctor.Thousands(terminated), doctor.Thousands(podGCThreshold)),
			Count: terminated,
			Remediation: []doctor.Remediation{
				{Text: "delete failed pods (after fixing whatever makes them)", Command: "kubectl delete pods -A --field-selector=status.phase=Failed"},
				{Text: "or lower kube-controller-manager's threshold (e.g. --terminated-pod-gc-threshold=1000)"},
			},
		})
	}
	return nil
}

// bareNamespace returns the namespace of a bare-pod group key.
func bareNamespace(key string) string {
	_, rest, _ := strings.Cut(key, "|")
	ns, _, _ := strings.Cut(rest, "/")
	return ns
}

// counts formats {"OutOfcpu": 240, "NodeAffinity": 3} as "OutOfcpu ×240, NodeAffinity ×3".
func counts(m map[string]int) string {
	type kv struct {
		k string
		v int
	}
	var list []kv
	for k, v := range m {
		list = append(list, kv{k, v})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].v != list[j].v {
			return list[i].v > list[j].v
		}
		return list[i].k < list[j].k
	})
	var parts []string
	for i, x := range list {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("%d more", len(list)-3))
			break
		}
		parts = append(parts, fmt.Sprintf("%s ×%s", x.k, doctor.Thousands(x.v)))
	}
	return strings.Join(parts, ", ")
}

func keysOf(m map[string]int) []string { return slices.Sorted(maps.Keys(m)) }

// ref is the group's root cause: its owner, or the node of bare pods.
func (g *stormGroup) ref() doctor.ObjectRef {
	if g.owner == nil {
		return kube.NodeRef(g.node)
	}
	return g.owner.Ref
}

// pinnedNode is the spec.nodeName the owner's pod template pins, or "".
func (g *stormGroup) pinnedNode() string {
	if g.owner == nil || g.owner.Spec == nil {
		return ""
	}
	return g.owner.Spec.NodeName
}

func (g *stormGroup) selector() *metav1.LabelSelector {
	if g.owner == nil {
		return nil
	}
	return g.owner.Selector
}

func (g *stormGroup) rate() float64 {
	span := g.newest.Sub(g.first)
	if span < 10*time.Second {
		return float64(g.count)
	}
	return float64(g.count) / span.Minutes()
}

func (g *stormGroup) where() string {
	nodes := keysOf(g.nodes)
	switch len(nodes) {
	case 0:
		return ""
	case 1:
		return " on node " + nodes[0]
	}
	return fmt.Sprintf(" on %d nodes (%s)", len(nodes), strings.Join(doctor.Examples(nodes), ", "))
}

func reportStorm(p *doctor.Pass, g *stormGroup, bareNS string) {
	if g.count < stormWarning {
		return
	}
	ongoing := p.Now.Sub(g.newest) < stormOngoing
	sev := doctor.Warning
	if g.count >= stormCritical || (ongoing && g.rate() >= stormRatePerMin) {
		sev = doctor.Critical
	}
	// Within seconds (or pods stamped the same second, as a capture may
	// hold them) a rate per minute would be made up: the count says it.
	when := fmt.Sprintf("in %s (~%.0f pods/min)", human(g.newest.Sub(g.first)), g.rate())
	if g.newest.Sub(g.first) < 10*time.Second {
		when = "within 10s"
	}
	msg := fmt.Sprintf("%s rejected by the kubelet (%s)%s %s, newest %s ago",
		doctor.Plural(g.count, "pod", "pods"), counts(g.reasons), g.where(), when, human(p.Now.Sub(g.newest)))
	var rem []doctor.Remediation
	ns := bareNS
	if g.owner != nil {
		ns = g.owner.Ref.Namespace
	} else {
		msg = fmt.Sprintf("%s (bare pods in namespace %s)", msg, ns)
	}
	if pinned := g.pinnedNode(); pinned != "" {
		msg += fmt.Sprintf(": the pod template of %s pins spec.nodeName: %s, so the scheduler never checks the node's capacity and each rejected pod is recreated at once, with no backoff",
			g.owner.KindName(), pinned)
		rem = append(rem,
			doctor.Remediation{Text: "let the scheduler place it: a nodeSelector on kubernetes.io/hostname makes the pod wait Pending instead of failing in a loop",
				Command: fmt.Sprintf(`kubectl patch %s -n %s --type=merge -p '{"spec":{"template":{"spec":{"nodeName":null,"nodeSelector":{"kubernetes.io/hostname":"%s"}}}}}'`,
					g.owner.KindName(), ns, pinned)},
			doctor.Remediation{Text: "or, as Pinniped did, request no CPU or memory so the kubelet always admits it",
				Command: fmt.Sprintf("kubectl set resources %s -n %s --requests=cpu=0,memory=0", g.owner.KindName(), ns)})
	} else {
		nodes := keysOf(g.nodes)
		if len(nodes) > 0 {
			rem = append(rem, doctor.Remediation{Text: "see what the node has to give and what holds it",
				Command: "kubectl describe node " + strings.Join(doctor.Examples(nodes), " ")})
		}
	}
	rem = append(rem, doctor.Remediation{Text: "then delete the debris: nothing garbage-collects it below --terminated-pod-gc-threshold",
		Command: cleanupCommand(ns, g.selector())})
	p.Report(doctor.Finding{Severity: sev, Object: g.ref(), Message: msg, Count: g.count, Examples: doctor.Examples(g.names), Remediation: rem})
}

func cleanupCommand(ns string, sel *metav1.LabelSelector) string {
	cmd := fmt.Sprintf("kubectl delete pods -n %s --field-selector=status.phase=Failed", ns)
	if sel != nil {
		if s := metav1.FormatLabelSelector(sel); s != "" && s != "<none>" {
			cmd += fmt.Sprintf(" -l '%s'", s)
		}
	}
	return cmd
}
