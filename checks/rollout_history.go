package checks

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// The annotations kubectl and the deployment controller keep revisions in.
const (
	ChangeCauseAnnotation = "kubernetes.io/change-cause"
	RevisionAnnotation    = "deployment.kubernetes.io/revision"
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
changelog ("The Snowball effect", seed 002, uses it exactly so). With
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
- https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#checking-rollout-history-of-a-deployment
- https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#failed-deployment
- https://kubernetes.io/docs/reference/labels-annotations-taints/#change-cause`,
}

// Revision is one entry of a workload's rollout history.
type Revision struct {
	Revision    int64     `json:"revision"`
	ChangeCause string    `json:"changeCause"`
	Created     time.Time `json:"created"`
	Images      []string  `json:"images"`
	// Source is the object the revision lives in: replicaset/NAME or controllerrevision/NAME.
	Source string `json:"source"`
}

// WorkloadHistory is the rollout history of one Deployment, DaemonSet or StatefulSet.
type WorkloadHistory struct {
	Kind                 string     `json:"kind"`
	Namespace            string     `json:"namespace"`
	Name                 string     `json:"name"`
	RevisionHistoryLimit *int32     `json:"revisionHistoryLimit,omitempty"`
	Revisions            []Revision `json:"revisions"`
}

// Ref is the workload as kubectl names it: deployment/NAME.
func (w WorkloadHistory) Ref() string { return strings.ToLower(w.Kind) + "/" + w.Name }

// Newest is the highest revision, nil when there is none.
func (w WorkloadHistory) Newest() *Revision {
	if len(w.Revisions) == 0 {
		return nil
	}
	return &w.Revisions[len(w.Revisions)-1]
}

// Histories rebuilds the rollout history of every workload in the snapshot,
// sorted by namespace, kind and name, revisions ascending (as kubectl prints them).
func Histories(s *snapshot.Snapshot) []WorkloadHistory {
	byOwner := map[types.UID][]Revision{}
	rss := s.ReplicaSets()
	for i := range rss {
		rs := &rss[i]
		owner := metav1.GetControllerOf(rs)
		n, err := strconv.ParseInt(rs.Annotations[RevisionAnnotation], 10, 64)
		if owner == nil || err != nil {
			continue
		}
		byOwner[owner.UID] = append(byOwner[owner.UID], Revision{Revision: n, ChangeCause: rs.Annotations[ChangeCauseAnnotation],
			Created: rs.CreationTimestamp.Time, Images: images(&rs.Spec.Template.Spec), Source: "replicaset/" + rs.Name})
	}
	crs := s.ControllerRevisions()
	for i := range crs {
		cr := &crs[i]
		owner := metav1.GetControllerOf(cr)
		if owner == nil {
			continue
		}
		byOwner[owner.UID] = append(byOwner[owner.UID], Revision{Revision: cr.Revision, ChangeCause: cr.Annotations[ChangeCauseAnnotation],
			Created: cr.CreationTimestamp.Time, Images: revisionImages(cr), Source: "controllerrevision/" + cr.Name})
	}

	var out []WorkloadHistory
	add := func(kind string, m *metav1.ObjectMeta, limit *int32) {
		revs := byOwner[m.UID]
		sort.Slice(revs, func(i, j int) bool { return revs[i].Revision < revs[j].Revision })
		out = append(out, WorkloadHistory{Kind: kind, Namespace: m.Namespace, Name: m.Name, RevisionHistoryLimit: limit, Revisions: revs})
	}
	deps := s.Deployments()
	for i := range deps {
		add("Deployment", &deps[i].ObjectMeta, deps[i].Spec.RevisionHistoryLimit)
	}
	dss := s.DaemonSets()
	for i := range dss {
		add("DaemonSet", &dss[i].ObjectMeta, dss[i].Spec.RevisionHistoryLimit)
	}
	sts := s.StatefulSets()
	for i := range sts {
		add("StatefulSet", &sts[i].ObjectMeta, sts[i].Spec.RevisionHistoryLimit)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Name < b.Name
	})
	return out
}

func images(spec *corev1.PodSpec) []string {
	var out []string
	for _, c := range spec.Containers {
		out = append(out, c.Image)
	}
	return out
}

// revisionImages reads the pod template a DaemonSet or StatefulSet revision
// stores as a patch of the workload ({"spec":{"template":...}}).
func revisionImages(cr *appsv1.ControllerRevision) []string {
	raw := cr.Data.Raw
	if raw == nil && cr.Data.Object != nil {
		raw, _ = json.Marshal(cr.Data.Object)
	}
	var patch struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &patch) != nil {
		return nil
	}
	return images(&patch.Spec.Template.Spec)
}

func runRolloutHistory(p *doctor.Pass) error {
	missing := map[string][]string{} // namespace -> workloads whose newest revision has no change-cause
	for _, w := range Histories(p.Snapshot) {
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
				doctor.Plural(len(refs), "workload", "workloads"), ns, map[bool]string{true: "has", false: "have"}[len(refs) == 1], ChangeCauseAnnotation),
			Count:    len(refs),
			Examples: doctor.Examples(refs),
			Remediation: []doctor.Remediation{{
				Text:    "record why each rollout happens, in the same change that makes it",
				Command: fmt.Sprintf(`kubectl annotate %s -n %s %s="<why this rollout>"`, doctor.Examples(refs)[0], ns, ChangeCauseAnnotation),
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
		rev := d.Annotations[RevisionAnnotation]
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
