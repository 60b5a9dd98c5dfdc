package checks

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// reportPausedRollouts notes Deployments paused with a template change not
// rolled out: a `kubectl rollout pause` forgotten after a canary leaves
// every later apply waiting, and nothing else says so. A pause with nothing
// pending changes nothing and is not reported.
func reportPausedRollouts(p *doctor.Pass) {
	deps := p.Snapshot.Deployments()
	for i := range deps {
		d := &deps[i]
		want := replicasOf(d.Spec.Replicas)
		if !d.Spec.Paused || want == 0 || d.Status.UpdatedReplicas >= want || d.Status.ObservedGeneration < d.Generation {
			continue
		}
		since := ""
		if c := progressing(d); c != nil && c.Reason == "DeploymentPaused" && !c.LastTransitionTime.IsZero() {
			since = " for " + human(p.Now.Sub(c.LastTransitionTime.Time))
		}
		p.Report(doctor.Finding{Severity: doctor.Info, Cause: "paused",
			Object: doctor.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: d.Namespace, Name: d.Name},
			Message: fmt.Sprintf("deployment/%s is paused%s with its template not rolled out: %d of %d replicas run it; what was applied since the pause waits for a resume",
				d.Name, since, d.Status.UpdatedReplicas, want),
			Remediation: []doctor.Remediation{
				{Text: "resume the rollout if the pause is over", Command: fmt.Sprintf("kubectl rollout resume deployment/%s -n %s", d.Name, d.Namespace)},
				{Text: "then follow it", Command: fmt.Sprintf("kubectl rollout status deployment/%s -n %s", d.Name, d.Namespace)},
			}})
	}
}

// onDeletePendingAfter is how long a StatefulSet's template change may wait
// for its pods to be deleted before it is noted: an operator rolling the
// pods by hand takes hours, not days.
const onDeletePendingAfter = 24 * time.Hour

// reportOnDeletePending notes StatefulSets with updateStrategy OnDelete whose
// update revision reached fewer than all their pods for more than a day: a
// pod takes the new template only when deleted, so an image upgrade applied
// a week ago may run nowhere, and nothing else says so. Dated by the update
// ControllerRevision's creation; without ControllerRevisions it is not
// judged.
func reportOnDeletePending(p *doctor.Pass) {
	if p.Snapshot.Err(snapshot.StatefulSets) != nil || p.Snapshot.Err(snapshot.ControllerRevisions) != nil {
		return
	}
	created := map[string]time.Time{}
	for _, cr := range p.Snapshot.ControllerRevisions() {
		created[cr.Namespace+"/"+cr.Name] = cr.CreationTimestamp.Time
	}
	sets := p.Snapshot.StatefulSets()
	for i := range sets {
		s := &sets[i]
		st := s.Status
		want := replicasOf(s.Spec.Replicas)
		if s.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType || want == 0 || st.UpdateRevision == "" ||
			st.UpdateRevision == st.CurrentRevision || st.UpdatedReplicas >= want || st.ObservedGeneration < s.Generation {
			continue
		}
		at, ok := created[s.Namespace+"/"+st.UpdateRevision]
		if !ok || p.Now.Sub(at) < onDeletePendingAfter {
			continue
		}
		// The next pod to roll: the highest ordinal that does not run the
		// update revision yet (as RollingUpdate would take them).
		next := int(want) - 1
		if p.Snapshot.Err(snapshot.Pods) == nil {
			next = -1
			for _, pod := range kube.PodsIn(p.Snapshot, s.Namespace) {
				n, ok := ordinalOf(s.Name, pod.Name)
				if ok && n < int(want) && n > next && pod.Labels[appsv1.ControllerRevisionHashLabelKey] != st.UpdateRevision && metav1.IsControlledBy(pod, s) {
					next = n
				}
			}
			if next < 0 {
				continue // every pod runs it already: the status lags
			}
		}
		p.Report(doctor.Finding{Severity: doctor.Info, Cause: "ondelete-pending",
			Object: doctor.ObjectRef{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: s.Namespace, Name: s.Name},
			Message: fmt.Sprintf("statefulset/%s has a template change (revision %s) from %s ago that %d of %d pods run: with updateStrategy OnDelete a pod takes it only when it is deleted",
				s.Name, st.UpdateRevision, human(p.Now.Sub(at)), st.UpdatedReplicas, want),
			Remediation: []doctor.Remediation{
				{Text: "roll it by hand: delete one pod at a time, highest ordinal first, waiting for each to be Ready",
					Command: fmt.Sprintf("kubectl delete pod %s-%d -n %s", s.Name, next, s.Namespace)},
				{Text: "or let the controller roll it", Command: fmt.Sprintf(`kubectl patch statefulset %s -n %s -p '{"spec":{"updateStrategy":{"type":"RollingUpdate"}}}'`, s.Name, s.Namespace)},
			}})
	}
}
