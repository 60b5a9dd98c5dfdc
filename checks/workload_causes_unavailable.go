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

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

// reportUnavailable is the fallback: a Deployment, StatefulSet or
// DaemonSet with fewer available replicas than desired for five minutes,
// that no other rule of this check explained, is reported with the
// evidence the cluster holds (newest Warning events of it, its
// ReplicaSets and pods; its failing conditions) instead of a bare symptom.
// Via names the objects another check may report as its cause (itself,
// its pods' claims and nodes), so that finding takes it in.
func reportUnavailable(p *doctor.Pass, reported map[string]bool, chained map[string][]doctor.ObjectRef) {
	own := kube.OwnersOf(p.Snapshot)
	var warnings *kube.WarningIndex
	if p.Snapshot.Err(kube.WarningEventReads) == nil {
		warnings = kube.WarningEventsOf(p.Snapshot)
	}
	podsOf := map[string][]*corev1.Pod{}
	for _, pod := range p.Snapshot.Pods() {
		if w, ok := own.Top(pod); ok && !kube.Terminal(pod) {
			podsOf[kube.OwnerKey(w)] = append(podsOf[kube.OwnerKey(w)], pod)
		}
	}
	for w := range kube.TopWorkloads(p.Snapshot) {
		key := kube.OwnerKey(w)
		a := availabilityOf(w)
		if !a.known || a.desired == 0 || a.available >= a.desired || reported[key] {
			continue
		}
		pods := podsOf[key]
		since := unavailableSince(w, pods)
		if since.IsZero() || p.Now.Sub(since) < problemMinAge {
			continue
		}
		if d, ok := w.Object.(*appsv1.Deployment); ok && (stuckRollout(d) != nil || rollingWithinDeadline(d, p.Now, since)) {
			continue // reported as a stuck rollout, or still within its deadline
		}
		refs := []doctor.ObjectRef{w.Ref}
		via := []doctor.ObjectRef{w.Ref}
		conds := failingConditions(w.Object)
		for _, rs := range p.Snapshot.ReplicaSets() {
			if c := metav1.GetControllerOfNoCopy(&rs); c != nil && c.UID == w.Meta.UID && replicasOf(rs.Spec.Replicas) > 0 {
				refs = append(refs, kube.Ref("apps/v1", "ReplicaSet", &rs))
				conds = append(conds, failingConditions(&rs)...)
			}
		}
		var notReady []*corev1.Pod
		var unscheduled []*corev1.Pod
		var never []kube.NeverScheduled
		for _, pod := range pods {
			if !kube.Ready(pod) {
				notReady = append(notReady, pod)
				if n, ok := kube.Unscheduled(pod, warnings); ok {
					unscheduled = append(unscheduled, pod)
					never = append(never, n)
				}
				conds = append(conds, failingConditions(pod)...)
				via = append(via, kube.Ref("v1", "Pod", pod))
				if pod.Spec.NodeName != "" {
					via = append(via, kube.NodeRef(pod.Spec.NodeName))
				}
				for _, c := range kube.ClaimNames(&pod.Spec) {
					via = append(via, doctor.ObjectRef{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: pod.Namespace, Name: c})
				}
			}
		}
		slices.Sort(conds)
		conds = slices.Compact(conds)
		ev := evidence(p, refs, notReady, conds)
		msg := fmt.Sprintf("%s for %s", a, human(p.Now.Sub(since)))
		switch {
		case len(pods) == 0:
			msg += ": it has no pod"
		case len(notReady) > 0:
			var parts []string
			if len(unscheduled) > 0 {
				parts = append(parts, neverScheduledWords(p.Now, unscheduled, never, warnings != nil))
			}
			if n := len(notReady) - len(unscheduled); n > 0 {
				parts = append(parts, fmt.Sprintf("%s not ready and no container problem explains it", doctor.Plural(n, "pod is", "pods are")))
			}
			msg += ": " + strings.Join(parts, "; ")
		}
		// Pods that were never scheduled already say what is recorded.
		if len(ev) == 0 && (len(unscheduled) == 0 || len(unscheduled) < len(notReady)) {
			msg += "; no Warning event or failing condition says why"
		}
		var names []string
		for _, pod := range notReady {
			names = append(names, pod.Name)
		}
		rem := []doctor.Remediation{{Text: "read the workload's and its pods' events", Command: fmt.Sprintf("kubectl describe %s -n %s", w.KindName(), w.Ref.Namespace)}}
		if len(notReady) > 0 {
			rem = append(rem, doctor.Remediation{Text: "see one pod's state", Command: fmt.Sprintf("kubectl describe pod -n %s %s", w.Ref.Namespace, notReady[0].Name)})
		}
		if i := slices.IndexFunc(never, silentScheduler); i >= 0 {
			s := never[i].Scheduler
			rem = append(rem, doctor.Remediation{Text: fmt.Sprintf("list the pods waiting for scheduler %s; start that scheduler, or set spec.schedulerName to default-scheduler in the template", s),
				Command: fmt.Sprintf("kubectl get pods -A --field-selector spec.schedulerName=%s,spec.nodeName=", s)})
		} else if slices.ContainsFunc(never, func(n kube.NeverScheduled) bool { return n.Scheduler == "" && nothingRecorded(n) }) {
			if down := unreadyComponent(p, "kube-scheduler"); len(down) > 0 {
				// The default scheduler's own pod says why nothing binds.
				msg += fmt.Sprintf("; the default scheduler's pod %s is not ready", strings.Join(doctor.Examples(down), ", "))
				rem = append(rem, doctor.Remediation{Text: "no scheduler has acted on its pods and the scheduler's pod is not ready: read why it fails (a static pod: fix its manifest on the control-plane node)",
					Command: fmt.Sprintf("kubectl logs -n kube-system %s --previous", down[0])})
			} else {
				rem = append(rem, doctor.Remediation{Text: "no scheduler has acted on its pods: see whether the default scheduler runs (a managed control plane does not list it)",
					Command: "kubectl get pods -n kube-system -l component=kube-scheduler"})
			}
		}
		f := doctor.Finding{Severity: severityFor(a), Object: w.Ref, Message: msg, Count: max(len(notReady), 1), Cause: "unavailable",
			Examples: doctor.Examples(names), Evidence: ev, Via: via, ViaChecks: unavailableCauses, Remediation: rem}
		if len(pods) == 0 {
			// No pod at all: when the controllers are stalled, that
			// finding lists this workload and is the cause.
			f.Via, f.ViaChecks = append(f.Via, w.Ref), append(slices.Clone(f.ViaChecks), ControllersStalled.Name)
		}
		chain(&f, chained[key])
		p.Report(f)
	}
}

// unavailableSince is when the workload lost availability: its Available
// condition's transition (Deployments), else when its oldest unready pod
// stopped being ready (or was created), else zero (unknown).
func unavailableSince(w *kube.Workload, pods []*corev1.Pod) time.Time {
	if d, ok := w.Object.(*appsv1.Deployment); ok {
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status != corev1.ConditionTrue {
				return c.LastTransitionTime.Time
			}
		}
	}
	var t time.Time
	for _, pod := range pods {
		since := kube.NotReadySince(pod)
		if since.IsZero() {
			continue // ready
		}
		if t.IsZero() || since.Before(t) {
			t = since
		}
	}
	if t.IsZero() && len(pods) == 0 && w.Meta != nil {
		t = w.Meta.CreationTimestamp.Time // no pod at all
	}
	return t
}

// nothingRecorded: no gate holds the pod and no scheduler has acted on it
// (no PodScheduled condition, no Warning event).
func nothingRecorded(n kube.NeverScheduled) bool {
	return len(n.Gates) == 0 && n.Condition == nil && n.Event == nil
}

// silentScheduler: nothing recorded, and the pod asks for a scheduler that
// is not the default one (which may not run at all).
func silentScheduler(n kube.NeverScheduled) bool {
	return n.Scheduler != "" && nothingRecorded(n)
}

// neverScheduledWords says what is known about pods that never got a node,
// from the most telling of them (gates, then a PodScheduled condition, then
// a Warning event, then nothing recorded): "1 pod was never scheduled:
// PodScheduled=False (Unschedulable): "0/3 nodes are available: ..."".
func neverScheduledWords(now time.Time, pods []*corev1.Pod, never []kube.NeverScheduled, eventsRead bool) string {
	rank := func(n kube.NeverScheduled) int {
		switch {
		case len(n.Gates) > 0:
			return 0
		case n.Condition != nil:
			return 1
		case n.Event != nil:
			return 2
		case n.Scheduler != "":
			return 3
		}
		return 4
	}
	best := 0
	for i := range never {
		if rank(never[i]) < rank(never[best]) {
			best = i
		}
	}
	n := never[best]
	var why string
	switch {
	case len(n.Gates) > 0:
		gate, it := "gate", "it"
		if len(n.Gates) > 1 {
			gate, it = "gates", "them"
		}
		why = fmt.Sprintf("held by scheduling %s %s: no scheduler considers it until the controller that set %s removes %s", gate, strings.Join(n.Gates, ", "), it, it)
	case n.Condition != nil:
		why = "PodScheduled=False"
		if n.Condition.Reason != "" {
			why += " (" + n.Condition.Reason + ")"
		}
		if n.Condition.Message != "" {
			why += ": " + quote(n.Condition.Message)
		}
	case n.Event != nil:
		why = "no PodScheduled condition; its newest Warning event: " + warningLine(now, n.Event)
	default:
		recorded := "no PodScheduled condition, no Warning event"
		if !eventsRead {
			recorded = "no PodScheduled condition; Warning events could not be read"
		}
		why = "no scheduler has acted on it (" + recorded + ")"
		if n.Scheduler != "" {
			why += fmt.Sprintf(": it asks for scheduler %s (spec.schedulerName), and a scheduler that does not run never binds it", n.Scheduler)
		}
	}
	if len(pods) == 1 {
		return "1 pod was never scheduled: " + why
	}
	return fmt.Sprintf("%d pods were never scheduled; pod %s: %s", len(pods), pods[best].Name, why)
}

// unreadyComponent are the pods of a control-plane component (kube-system,
// component=NAME, as kubeadm and most installers label its static pod)
// that are not ready, when none of them is: nil when one runs, or when the
// component is not in the snapshot (a managed control plane).
func unreadyComponent(p *doctor.Pass, component string) []string {
	var down []string
	for _, pod := range p.Snapshot.Pods() {
		if pod.Namespace != metav1.NamespaceSystem || pod.Labels["component"] != component || kube.Terminal(pod) {
			continue
		}
		if kube.Ready(pod) {
			return nil
		}
		down = append(down, pod.Name)
	}
	sort.Strings(down)
	return down
}
