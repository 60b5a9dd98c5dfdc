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

// PodsStuck reports pods stuck Terminating long past their grace period,
// with what holds them (a finalizer, a node that cannot confirm), and pods
// whose scheduling gates are never lifted.
var PodsStuck = &doctor.Check{
	Name:     "pods-stuck",
	Severity: doctor.Warning,
	Origin:   "peer coverage map",
	Reads:    []snapshot.Resource{snapshot.Pods},
	// Nodes are cluster-scoped: a user limited to a namespace may not list
	// them. They only tell a node that is down from a kubelet that is slow;
	// finalizers and scheduling gates are judged without them.
	Optional: append([]snapshot.Resource{snapshot.Nodes}, kube.WorkloadReads...),
	Run:      runPodsStuck,
	Doc: `Pods stuck Terminating (and what holds them) or held by scheduling gates

## Why it matters
A pod being deleted disappears only when its kubelet confirms the
containers are gone and every finalizer is removed. On a node that is down
or unreachable, nothing confirms: the pod stays Terminating forever, a
StatefulSet does not create its replacement (two pods with one identity
must never run), and its volumes stay attached. A finalizer whose
controller is gone holds the pod the same way. Pods with
` + "`schedulingGates`" + ` wait until the controller that set the gate (a queue such as
Kueue) lifts it; a gate nobody lifts keeps them Pending with no scheduler
verdict at all.

## How it is detected
A pod whose ` + "`deletionTimestamp`" + ` (the deletion time plus its grace period) is
more than five minutes past is stuck; the cause, most definitive first:
finalizers still on it (named); its node missing from the cluster or not
Ready (the kubelet cannot confirm); else the kubelet of a Ready node has
not finished (volumes, a runtime that cannot stop the container). Nodes are
an optional read (cluster-scoped; a user limited to one namespace may not
list them): without them, finalizers and gates are judged as usual, and a
pod held by its kubelet is reported as not confirmed by the kubelet on its
node, saying that the nodes could not be read to tell why. Pods are
grouped by owner and cause: critical for StatefulSet pods (their
replacement waits), a warning otherwise. A pod with scheduling gates whose
` + "`PodScheduled`" + ` condition says ` + "`SchedulingGated`" + ` for more than fifteen minutes
(from the older of its creation and the condition's transition)
is info, grouped by owner and gates: a queue may hold it on purpose.

## How to fix
For an unreachable node, confirm it is down, then taint it
` + "`node.kubernetes.io/out-of-service=nodeshutdown:NoExecute`" + ` (the pods and volume
attachments are then cleaned up), or force-delete the pods
(` + "`kubectl delete pod --grace-period=0 --force`" + `). For a finalizer, restore
the controller that owns it, or remove it once its work is known to be
done. For gates, check the controller that owns them.

## References
- https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination
- https://kubernetes.io/docs/tasks/run-application/force-delete-stateful-set-pod/
- https://kubernetes.io/docs/concepts/cluster-administration/node-shutdown/#non-graceful-node-shutdown
- https://kubernetes.io/docs/concepts/scheduling-eviction/pod-scheduling-readiness/`,
}

const (
	podTerminatingGrace = 5 * time.Minute
	gatedGrace          = 15 * time.Minute
)

func runPodsStuck(p *doctor.Pass) error {
	nodes := kube.NodesByName(p.Snapshot)
	nodesRead := p.Snapshot.Err(snapshot.Nodes) == nil
	owners := kube.OwnersOf(p.Snapshot)
	type group struct {
		ref     doctor.ObjectRef
		kind    string
		cause   string
		why     string
		gated   bool
		sts     bool
		pods    []string
		oldest  metav1.Time
		nodes   []string
		example *corev1.Pod
	}
	groups := map[string]*group{}
	var keys []string
	add := func(pod *corev1.Pod, cause, why string, gated bool, since metav1.Time) {
		ref, kind := kube.Ref("v1", "Pod", pod), "pod/"+pod.Name
		sts := false
		if w, ok := owners.Top(pod); ok {
			ref, kind = w.Ref, w.KindName()
			sts = w.Ref.Kind == "StatefulSet"
		} else if c := metav1.GetControllerOfNoCopy(pod); c != nil {
			sts = c.Kind == "StatefulSet"
		}
		key := ref.String() + "|" + cause + "|" + why
		g := groups[key]
		if g == nil {
			g = &group{ref: ref, kind: kind, cause: cause, why: why, gated: gated, sts: sts, oldest: since, example: pod}
			groups[key] = g
			keys = append(keys, key)
		}
		g.pods = append(g.pods, pod.Name)
		if since.Before(&g.oldest) {
			g.oldest = since
		}
		if pod.Spec.NodeName != "" && !containsString(g.nodes, pod.Spec.NodeName) {
			g.nodes = append(g.nodes, pod.Spec.NodeName)
		}
	}
	for _, pod := range p.Snapshot.Pods() {
		if dt := pod.DeletionTimestamp; dt != nil {
			if p.Now.Sub(dt.Time) <= podTerminatingGrace {
				continue
			}
			switch node := nodes[pod.Spec.NodeName]; {
			case len(pod.Finalizers) > 0:
				fs := append([]string(nil), pod.Finalizers...)
				sort.Strings(fs)
				add(pod, "finalizer", "finalizer "+strings.Join(fs, ", ")+" is still on it: the controller that owns it has not removed it", false, *dt)
			case pod.Spec.NodeName == "":
				continue // never scheduled: deleted at once by the API server
			case !nodesRead:
				add(pod, "node-unknown", "its kubelet has not confirmed the deletion (the nodes could not be read to tell a node that is down from a kubelet that has not finished)", false, *dt)
			case node == nil:
				add(pod, "node-gone", fmt.Sprintf("its node %s no longer exists, so no kubelet will confirm the deletion", pod.Spec.NodeName), false, *dt)
			case !nodeReady(node):
				add(pod, "node-not-ready", "its node is not Ready: the kubelet cannot confirm the deletion", false, *dt)
			default:
				add(pod, "kubelet", "the kubelet of its Ready node has not finished stopping it (volumes that will not unmount, a container the runtime cannot stop)", false, *dt)
			}
			continue
		}
		if len(pod.Spec.SchedulingGates) == 0 || pod.Spec.NodeName != "" {
			continue
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonSchedulingGated {
				// Gated since the earliest evidence: creation, or the
				// condition's transition when older (a restored pod).
				since := pod.CreationTimestamp
				if !c.LastTransitionTime.IsZero() && c.LastTransitionTime.Before(&since) {
					since = c.LastTransitionTime
				}
				if p.Now.Sub(since.Time) <= gatedGrace {
					break
				}
				var gates []string
				for _, g := range pod.Spec.SchedulingGates {
					gates = append(gates, g.Name)
				}
				sort.Strings(gates)
				add(pod, "gated", strings.Join(gates, ", "), true, since)
			}
		}
	}
	sort.Strings(keys)
	for _, key := range keys {
		g := groups[key]
		ns := g.ref.Namespace
		n := len(g.pods)
		first := doctor.Examples(g.pods)[0]
		subject := doctor.Plural(n, "pod", "pods") + " of " + g.kind
		if g.ref.Kind == "Pod" {
			subject = g.kind
		}
		if g.gated {
			p.Report(doctor.Finding{Severity: doctor.Info, Object: g.ref, Cause: "gated", Count: n, Examples: doctor.Examples(g.pods),
				Message: fmt.Sprintf("%s %s been held by scheduling gate %s for %s: the scheduler does not consider %s until the controller that set the gate lifts it",
					subject, map[bool]string{true: "has", false: "have"}[n == 1], g.why, since(p.Now, g.oldest), map[bool]string{true: "it", false: "them"}[n == 1]),
				Remediation: []doctor.Remediation{
					{Text: "find the controller (a queue such as Kueue) that owns the gate, and why it holds the pods", Command: fmt.Sprintf("kubectl get pod %s -n %s -o jsonpath='{.spec.schedulingGates}'", first, ns)}}})
			continue
		}
		sev := doctor.Warning
		harm := ""
		if g.sts {
			sev = doctor.Critical
			harm = "; the StatefulSet does not create a replacement while it exists"
		}
		where := ""
		if len(g.nodes) > 0 {
			where = " on " + strings.Join(doctor.Examples(g.nodes), ", ") + more(len(g.nodes))
		}
		rem := []doctor.Remediation{}
		switch g.cause {
		case "finalizer":
			rem = append(rem, doctor.Remediation{Text: "restore the controller that owns the finalizer, or remove it once its work is known to be done",
				Command: fmt.Sprintf(`kubectl patch pod %s -n %s --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]'`, first, ns)})
		case "node-gone", "node-not-ready":
			if g.cause == "node-not-ready" && len(g.nodes) > 0 {
				rem = append(rem, doctor.Remediation{Text: "once the node is confirmed down, mark it out of service so its pods and volume attachments are cleaned up",
					Command: fmt.Sprintf("kubectl taint node %s node.kubernetes.io/out-of-service=nodeshutdown:NoExecute", g.nodes[0])})
			}
			rem = append(rem, doctor.Remediation{Text: "or force the deletion (only when the node is really down: the containers may still run)",
				Command: fmt.Sprintf("kubectl delete pod %s -n %s --grace-period=0 --force", first, ns)})
		case "node-unknown":
			rem = append(rem, doctor.Remediation{Text: "read the pod's events, and ask someone who may read nodes whether its node is Ready",
				Command: fmt.Sprintf("kubectl describe pod %s -n %s", first, ns)})
			if len(g.nodes) > 0 {
				rem = append(rem, doctor.Remediation{Text: "whether the node is up (needs read access to nodes)", Command: "kubectl get node " + g.nodes[0]})
			}
			rem = append(rem, doctor.Remediation{Text: "force the deletion only once the node is known to be down (else the containers may still run)",
				Command: fmt.Sprintf("kubectl delete pod %s -n %s --grace-period=0 --force", first, ns)})
		default:
			rem = append(rem, doctor.Remediation{Text: "read the kubelet's events for the pod", Command: fmt.Sprintf("kubectl describe pod %s -n %s", first, ns)})
		}
		p.Report(doctor.Finding{Severity: sev, Object: g.ref, Cause: "terminating-" + g.cause, Count: n, Examples: doctor.Examples(g.pods),
			Message: fmt.Sprintf("%s %s stuck Terminating%s for %s past the grace period: %s%s",
				subject, map[bool]string{true: "is", false: "are"}[n == 1], where, since(p.Now, g.oldest), g.why, harm),
			Remediation: rem})
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
