package checks

import (
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

func progressing(d *appsv1.Deployment) *appsv1.DeploymentCondition {
	return deploymentCondition(d, appsv1.DeploymentProgressing)
}

func stuckRollout(d *appsv1.Deployment) *appsv1.DeploymentCondition {
	if c := progressing(d); c != nil && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
		return c
	}
	return nil
}

// deadlineLine is the evidence that a rollout passed its progress deadline,
// for a finding that names its cause: "Progressing=False
// (ProgressDeadlineExceeded, 30m ago): ReplicaSet "web-5f6" has timed out
// progressing.".
func deadlineLine(now time.Time, c *appsv1.DeploymentCondition) string {
	s := string(c.Type) + "=" + string(c.Status) + " (" + c.Reason
	if ago := since(now, c.LastTransitionTime); ago != "" {
		s += ", " + ago + " ago"
	}
	s += ")"
	if c.Message != "" {
		s += ": " + clipLine(c.Message, maxQuote)
	}
	return s
}

// rollingWithinDeadline: a rollout still making progress is not judged yet.
func rollingWithinDeadline(d *appsv1.Deployment, now, since time.Time) bool {
	c := progressing(d)
	if c == nil || c.Status != corev1.ConditionTrue || c.Reason == "NewReplicaSetAvailable" {
		return false
	}
	deadline := 600 * time.Second
	if d.Spec.ProgressDeadlineSeconds != nil {
		deadline = time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second
	}
	return now.Sub(since) < deadline
}

// reportStuck reports a rollout past its progress deadline, with the new
// ReplicaSet's pods' cause when there is one.
func reportStuck(p *doctor.Pass, d *appsv1.Deployment, c *appsv1.DeploymentCondition, g *kube.OwnerProblem, h kube.WorkloadHistory, chained []doctor.ObjectRef) {
	rev := d.Annotations[kube.RevisionAnnotation]
	ref := "deployment/" + d.Name
	// The condition's time is when the deadline passed, not when the
	// rollout broke: say so, never "stuck for 17s" of a rollout broken
	// for an hour.
	passed := ""
	if s := since(p.Now, c.LastTransitionTime); s != "" {
		passed = " " + s + " ago"
	}
	msg := fmt.Sprintf("rollout of revision %s is stuck (ProgressDeadlineExceeded%s): %d of %d replicas updated, %d available",
		orUnknown(rev), passed, d.Status.UpdatedReplicas, replicasOf(d.Spec.Replicas), d.Status.AvailableReplicas)
	count := 1
	var rem []doctor.Remediation
	if g != nil {
		a := availabilityOf(g.Owner)
		verb, details := causeDetails(p, g)
		msg += fmt.Sprintf("; its new pods are %s: %s", verb, details)
		count = len(g.Pods)
		rem = append(rem, remediationFor(p, g, a)...)
	} else if c.Message != "" {
		msg += "; " + c.Message
	}
	sev := doctor.Warning
	if d.Status.AvailableReplicas == 0 && replicasOf(d.Spec.Replicas) > 0 && (g != nil || !podsWereRead(p.Snapshot)) {
		// Without a cause of its own the finding folds into the cause's,
		// which weighs it; without pods there is no cause to fold into.
		sev = doctor.Critical
	}
	if prev := previousRevision(p, h, rev); prev > 0 {
		rem = append([]doctor.Remediation{{Text: fmt.Sprintf("roll back to revision %d if the change is bad", prev),
			Command: fmt.Sprintf("kubectl rollout undo %s -n %s --to-revision=%d", ref, d.Namespace, prev)}}, rem...)
		rem = append(rem, doctor.Remediation{Text: "compare the revisions", Command: fmt.Sprintf("kubectl doctor history %s -n %s", ref, d.Namespace)})
	}
	var ev []string
	if g == nil {
		rem = append(rem, doctor.Remediation{Text: "see why the new pods do not become ready", Command: fmt.Sprintf("kubectl describe %s -n %s", ref, d.Namespace)})
		if !podsWereRead(p.Snapshot) {
			rem = append(rem, podsOfDeployment(d)...)
		}
		// No container problem: quote what the new ReplicaSet and its
		// pods were told (quota, scheduling, volumes), not the symptom.
		refs := []doctor.ObjectRef{kube.Ref("apps/v1", "Deployment", d)}
		var conds []string
		var pods []*corev1.Pod
		if rs := newReplicaSet(h, d); rs != "" {
			refs = append(refs, doctor.ObjectRef{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: d.Namespace, Name: rs})
			for _, pod := range p.Snapshot.Pods() {
				if pod.Namespace == d.Namespace && kube.PodController(pod) == rs && !kube.Ready(pod) {
					pods = append(pods, pod)
					conds = append(conds, failingConditions(pod)...)
				}
			}
		}
		slices.Sort(conds)
		ev = evidence(p, refs, pods, slices.Compact(conds))
		if len(pods) > 0 {
			// describe deployment shows no pod event: the new pod's do.
			rem = append(rem, doctor.Remediation{Text: "see the events and probes of a new pod that is not ready",
				Command: fmt.Sprintf("kubectl describe pod %s -n %s", pods[0].Name, d.Namespace)})
		}
	}
	f := doctor.Finding{Severity: sev, Object: kube.Ref("apps/v1", "Deployment", d), Message: msg, Count: count, Cause: "stuck-rollout", Remediation: rem, Evidence: ev}
	if g == nil {
		// No pod problem of ours explains it: pods the scheduler cannot
		// place or the API server refuses are the usual cause, and those
		// checks report them on this Deployment. Fold into their finding;
		// stand alone otherwise.
		f.Via, f.ViaChecks = []doctor.ObjectRef{f.Object}, stuckRolloutCauses
		if !podsWereRead(p.Snapshot) {
			f.Partial = podsUnread
		}
	}
	chain(&f, chained)
	p.Report(f)
}

// previousRevision is the revision to roll back to: the newest older one
// whose ReplicaSet still has available pods (what serves now: after 1 good,
// 2 crash-looping, 3 unpullable, that is 1, not 2), else the newest older
// one; 0 when there is none.
func previousRevision(p *doctor.Pass, h kube.WorkloadHistory, current string) int64 {
	var cur int64
	if _, err := fmt.Sscan(current, &cur); err != nil {
		return 0
	}
	serving := map[string]bool{}
	rss := p.Snapshot.ReplicaSets()
	for i := range rss {
		if rss[i].Namespace == h.Namespace && rss[i].Status.AvailableReplicas > 0 {
			serving["replicaset/"+rss[i].Name] = true
		}
	}
	var prev, prevServing int64
	for _, r := range h.Revisions {
		if r.Revision < cur && r.Revision > prev {
			prev = r.Revision
		}
		if r.Revision < cur && r.Revision > prevServing && serving[r.Source] {
			prevServing = r.Revision
		}
	}
	if prevServing > 0 {
		return prevServing
	}
	return prev
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// newReplicaSet is the name of the ReplicaSet of the Deployment's current revision.
func newReplicaSet(h kube.WorkloadHistory, d *appsv1.Deployment) string {
	for _, r := range h.Revisions {
		if fmt.Sprint(r.Revision) == d.Annotations[kube.RevisionAnnotation] {
			if name, ok := strings.CutPrefix(r.Source, "replicaset/"); ok {
				return name
			}
		}
	}
	return ""
}

// splitByReplicaSet splits a group into the pods of ReplicaSet rs and the others.
func splitByReplicaSet(g *kube.OwnerProblem, rs string) (in, out *kube.OwnerProblem) {
	for i, pod := range g.Pods {
		dst := &out
		if rs != "" && kube.PodController(pod) == rs {
			dst = &in
		}
		if *dst == nil {
			*dst = &kube.OwnerProblem{Owner: g.Owner, Bare: g.Bare, Cause: g.Cause}
		}
		(*dst).Pods = append((*dst).Pods, pod)
		(*dst).Problems = append((*dst).Problems, g.Problems[i])
	}
	return in, out
}
