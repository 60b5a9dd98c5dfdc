package checks

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// RolloutHistory makes rollout history useful: it reports workloads that
// cannot be rolled back, rollouts that stopped progressing, and changes
// nobody explained.
var RolloutHistory = &doctor.Check{
	Name:     "rollout-history",
	Severity: doctor.Warning,
	Reads: []snapshot.Resource{snapshot.Deployments, snapshot.ReplicaSets, snapshot.DaemonSets,
		snapshot.StatefulSets, snapshot.ControllerRevisions},
	Run: runRolloutHistory,
	Doc: `Rollouts that are stuck, cannot be rolled back, or have no change-cause

## Why it matters
When an incident starts right after a deploy, the first questions are "what
changed?" and "can we go back?". Kubernetes keeps the answer in old
revisions: ReplicaSets for Deployments, ControllerRevisions for DaemonSets
and StatefulSets. The ` + "`kubernetes.io/change-cause`" + ` annotation turns them into a
changelog ("The Snowball effect", uses it exactly so). With
` + "`revisionHistoryLimit: 0`" + ` no old revision survives and ` + "`kubectl rollout undo`" + `
has nothing to go back to. A Deployment whose rollout exceeded
` + "`progressDeadlineSeconds`" + ` is half-rolled: old and new pods serve together and
nothing retries.

## How it is detected
From one LIST each of Deployments, ReplicaSets, DaemonSets, StatefulSets and
ControllerRevisions, revisions are rebuilt the way ` + "`kubectl rollout history`" + `
does: ReplicaSets controlled by the Deployment with their
` + "`deployment.kubernetes.io/revision`" + ` annotation, ControllerRevisions controlled by
the DaemonSet or StatefulSet with their revision number. Findings:
- ` + "`revisionHistoryLimit: 0`" + ` (warning): rollback impossible;
- a Deployment whose ` + "`Progressing`" + ` condition is False with reason
  ` + "`ProgressDeadlineExceeded`" + ` (warning): the rollout is stuck;
- workloads whose newest revision has no change-cause (info), one finding per
  namespace.
` + "`kubectl doctor history`" + ` prints every revision with its change-cause, age and
images, across all namespaces by default.

## How to fix
Keep some history (` + "`revisionHistoryLimit`" + `, default 10). For a stuck rollout,
read why the new pods do not become ready (` + "`kubectl rollout status`" + `,
` + "`kubectl describe`" + `) and roll back with ` + "`kubectl rollout undo`" + ` if the change is bad.
Record why each rollout happens by annotating the workload with
` + "`kubernetes.io/change-cause`" + ` in the same apply that changes it.

## References
- https://blenderfox.com/2020/08/07/the-snowball-effect-in-kubernetes/
- https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#checking-rollout-history-of-a-deployment
- https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#failed-deployment
- https://kubernetes.io/docs/reference/labels-annotations-taints/#change-cause`,
}

func runRolloutHistory(p *doctor.Pass) error {
	missing := map[string][]string{} // namespace -> workloads whose newest revision has no change-cause
	for _, w := range kube.Histories(p.Snapshot) {
		ref := doctor.ObjectRef{APIVersion: "apps/v1", Kind: w.Kind, Namespace: w.Namespace, Name: w.Name}
		if w.RevisionHistoryLimit != nil && *w.RevisionHistoryLimit == 0 {
			p.Report(doctor.Finding{
				Severity: doctor.Warning,
				Object:   ref,
				Message:  "revisionHistoryLimit is 0: no old revision is kept, so kubectl rollout undo has nothing to roll back to",
				Remediation: []doctor.Remediation{{
					Text:    "keep the default 10 revisions",
					Command: fmt.Sprintf(`kubectl patch %s -n %s --type=merge -p '{"spec":{"revisionHistoryLimit":10}}'`, w.Ref(), w.Namespace),
				}},
			})
		}
		if newest := w.Newest(); newest != nil && strings.TrimSpace(newest.ChangeCause) == "" {
			missing[w.Namespace] = append(missing[w.Namespace], w.Ref())
		}
	}
	deps := p.Snapshot.Deployments()
	for i := range deps {
		reportStuckRollout(p, &deps[i])
	}
	namespaces := make([]string, 0, len(missing))
	for ns := range missing {
		namespaces = append(namespaces, ns)
	}
	sort.Strings(namespaces)
	for _, ns := range namespaces {
		refs := missing[ns]
		p.Report(doctor.Finding{
			Severity: doctor.Info,
			Object:   doctor.ObjectRef{APIVersion: "v1", Kind: "Namespace", Name: ns},
			Message: fmt.Sprintf("%s in namespace %s %s no %s annotation on the newest revision: the rollout history cannot say what changed",
				doctor.Plural(len(refs), "workload", "workloads"), ns, map[bool]string{true: "has", false: "have"}[len(refs) == 1], kube.ChangeCauseAnnotation),
			Count:    len(refs),
			Examples: doctor.Examples(refs),
			Remediation: []doctor.Remediation{{
				Text:    "record why each rollout happens, in the same change that makes it",
				Command: fmt.Sprintf(`kubectl annotate %s -n %s %s="<why this rollout>"`, doctor.Examples(refs)[0], ns, kube.ChangeCauseAnnotation),
			}},
		})
	}
	return nil
}

func reportStuckRollout(p *doctor.Pass, d *appsv1.Deployment) {
	for _, c := range d.Status.Conditions {
		if c.Type != appsv1.DeploymentProgressing || c.Status != corev1.ConditionFalse || c.Reason != "ProgressDeadlineExceeded" {
			continue
		}
		rev := d.Annotations[kube.RevisionAnnotation]
		ref := "deployment/" + d.Name
		since := ""
		if !c.LastTransitionTime.IsZero() {
			since = " for " + duration.HumanDuration(p.Now.Sub(c.LastTransitionTime.Time))
		}
		msg := fmt.Sprintf("rollout of revision %s is stuck%s (ProgressDeadlineExceeded): %d of %d replicas updated, %d available",
			orUnknown(rev), since, d.Status.UpdatedReplicas, replicas(d), d.Status.AvailableReplicas)
		if c.Message != "" {
			msg += "; " + c.Message
		}
		rem := []doctor.Remediation{
			{Text: "see why the new pods do not become ready", Command: fmt.Sprintf("kubectl describe %s -n %s", ref, d.Namespace)},
		}
		if n, err := strconv.Atoi(rev); err == nil && n > 1 {
			rem = append(rem, doctor.Remediation{Text: "roll back if the change is bad",
				Command: fmt.Sprintf("kubectl rollout undo %s -n %s", ref, d.Namespace)})
		}
		rem = append(rem, doctor.Remediation{Text: "compare the revisions", Command: fmt.Sprintf("kubectl doctor history %s -n %s", ref, d.Namespace)})
		p.Report(doctor.Finding{
			Severity:    doctor.Warning,
			Object:      doctor.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: d.Namespace, Name: d.Name},
			Message:     msg,
			Remediation: rem,
		})
	}
}

func replicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}
