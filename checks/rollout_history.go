package checks

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// RolloutHistory makes rollout history useful: it reports workloads that
// cannot be rolled back and changes nobody explained (stuck rollouts are
// workload-pods', which knows why the new pods fail).
var RolloutHistory = &doctor.Check{
	Name:     "rollout-history",
	Severity: doctor.Warning,
	Origin:   "Snowball effect",
	Reads:    []snapshot.Resource{snapshot.Deployments, snapshot.ReplicaSets},
	// DaemonSet and StatefulSet histories are ControllerRevisions: judged
	// only when those were read.
	Optional: []snapshot.Resource{snapshot.DaemonSets,
		snapshot.StatefulSets, snapshot.ControllerRevisions, snapshot.Pods},
	Run: runRolloutHistory,
	Doc: `Rollouts that cannot be rolled back or have no change-cause

## Why it matters
When an incident starts right after a deploy, the first questions are "what
changed?" and "can we go back?". Kubernetes keeps the answer in old
revisions: ReplicaSets for Deployments, ControllerRevisions for DaemonSets
and StatefulSets. The ` + "`kubernetes.io/change-cause`" + ` annotation turns them into a
changelog ("The Snowball effect", uses it exactly so). With
` + "`revisionHistoryLimit: 0`" + ` no old revision survives and ` + "`kubectl rollout undo`" + `
has nothing to go back to.

## How it is detected
From one LIST each of Deployments, ReplicaSets, DaemonSets, StatefulSets and
ControllerRevisions, revisions are rebuilt the way ` + "`kubectl rollout history`" + `
does: ReplicaSets controlled by the Deployment with their
` + "`deployment.kubernetes.io/revision`" + ` annotation, ControllerRevisions controlled by
the DaemonSet or StatefulSet with their revision number. Findings:
- ` + "`revisionHistoryLimit: 0`" + ` (warning): rollback impossible; an info note
  instead when something re-applies the workload from its own source (a
  k3s packaged component, by its ` + "`objectset.rio.cattle.io`" + ` annotations naming
  the Addon; the addon manager's ` + "`addonmanager.kubernetes.io/mode: Reconcile`" + `):
  the value is that source's choice and a kubectl patch would be reverted;
- workloads whose newest revision (after the first: a first revision has
  nothing to roll back to) has no change-cause (info), one finding per
  namespace; workloads applied from a history of their own (Helm, Argo CD,
  Flux, an operator that owns them, OpenShift's release payload, an addon
  manager) are left out: their changes are recorded there;
- a Deployment paused (` + "`spec.paused`" + `) with its template not rolled out to
  every replica (info): what was applied since the pause waits for
  ` + "`kubectl rollout resume`" + `; a pause with nothing pending is not reported.

A Deployment whose rollout is stuck (` + "`Progressing=False`, `ProgressDeadlineExceeded`" + `)
is reported by workload-pods, which names why its new pods fail and the
revision to roll back to.
` + "`kubectl doctor history`" + ` prints every revision with its change-cause, age and
images, across all namespaces by default.

A StatefulSet with ` + "`updateStrategy: OnDelete`" + ` whose update revision (dated by
its ControllerRevision) has reached fewer than all its pods for more than a
day is noted (info): its pods take the new template only when deleted, so an
upgrade applied a week ago may run nowhere.

## How to fix
Keep some history (` + "`revisionHistoryLimit`" + `, default 10), so a bad change can be
undone with ` + "`kubectl rollout undo`" + `.
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
	missingRefs := map[string][]doctor.ObjectRef{}
	owners := kube.OwnersOf(p.Snapshot)
	for _, w := range kube.Histories(p.Snapshot) {
		ref := doctor.ObjectRef{APIVersion: "apps/v1", Kind: w.Kind, Namespace: w.Namespace, Name: w.Name}
		var reconciled kube.Reconciled
		if wl := owners.Find(ref); wl != nil && wl.Meta != nil {
			reconciled = kube.ReconcilerOf(wl.Meta)
		}
		if w.RevisionHistoryLimit != nil && *w.RevisionHistoryLimit == 0 && reconciled.Who != "" {
			// Set so by what re-applies it: a patch does not last, and its
			// rollbacks are that source's, not kubectl's.
			rem := doctor.Remediation{Text: "change it where " + reconciled.Who + " takes it from, if rollbacks of it matter; a kubectl patch is reverted",
				Command: reconciled.Inspect}
			p.Report(doctor.Finding{Severity: doctor.Info, Object: ref, Cause: "reconciled",
				Message:     "revisionHistoryLimit is 0 (set by " + reconciled.Who + ", which re-applies it): no old revision is kept, so kubectl rollout undo has nothing to roll back to",
				Remediation: []doctor.Remediation{rem}})
		} else if w.RevisionHistoryLimit != nil && *w.RevisionHistoryLimit == 0 {
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
		managed := ""
		if wl := owners.Find(ref); wl != nil && wl.Meta != nil {
			managed = kube.ManagedBy(wl.Meta)
		}
		// A first revision has nothing to roll back to and nothing that
		// changed: its history starts with the next rollout.
		if newest := w.Newest(); newest != nil && newest.Revision > 1 && strings.TrimSpace(newest.ChangeCause) == "" && managed == "" {
			missing[w.Namespace] = append(missing[w.Namespace], w.Ref())
			missingRefs[w.Namespace] = append(missingRefs[w.Namespace], ref)
		}
	}
	reportPausedRollouts(p)
	reportOnDeletePending(p)
	namespaces := make([]string, 0, len(missing))
	for ns := range missing {
		namespaces = append(namespaces, ns)
	}
	sort.Strings(namespaces)
	for _, ns := range namespaces {
		refs := missing[ns]
		p.Report(doctor.Finding{
			Severity: doctor.Info,
			Object:   kube.NamespaceRef(ns),
			Message: fmt.Sprintf("%s in namespace %s %s no %s annotation on the newest revision: the rollout history cannot say what changed",
				doctor.Plural(len(refs), "workload", "workloads"), ns, map[bool]string{true: "has", false: "have"}[len(refs) == 1], kube.ChangeCauseAnnotation),
			Count:    len(refs),
			Examples: doctor.Examples(refs),
			Members:  missingRefs[ns],
			Remediation: []doctor.Remediation{{
				Text:    "record why each rollout happens, in the same change that makes it",
				Command: fmt.Sprintf(`kubectl annotate %s -n %s %s="<why this rollout>"`, doctor.Examples(refs)[0], ns, kube.ChangeCauseAnnotation),
			}},
		})
	}
	return nil
}
