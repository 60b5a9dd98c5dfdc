package checks

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// podsUnread is the note of a finding judged without pods.
const podsUnread = "pods were not read (not in the input, or not allowed): this is what the Deployment's own status says; why its replicas are not available is not known"

// runWorkloadStatus judges Deployments by their own status when pods were
// not read: a pasted `kubectl get deployment -o yaml`, a capture without
// pods, a user who may not list them. Two conditions say something is wrong
// without any pod: a rollout past its progress deadline, and availability
// lost after a completed rollout (Available=False for minutes while
// Progressing says the new ReplicaSet is available). A rollout still in
// progress within its deadline is not judged: the deadline will tell.
func runWorkloadStatus(p *doctor.Pass) error {
	histories := map[string]kube.WorkloadHistory{}
	for _, h := range kube.Histories(p.Snapshot) {
		histories[kube.RefKey(doctor.ObjectRef{Namespace: h.Namespace, Kind: h.Kind, Name: h.Name})] = h
	}
	deps := p.Snapshot.Deployments()
	for i := range deps {
		d := &deps[i]
		if replicasOf(d.Spec.Replicas) == 0 || d.Spec.Paused {
			continue // scaled to zero, or paused (rollout-paused's)
		}
		if c := stuckRollout(d); c != nil {
			reportStuck(p, d, c, nil, histories[d.Namespace+"/Deployment/"+d.Name], nil)
			continue
		}
		if pr := progressing(d); pr != nil && pr.Status == corev1.ConditionTrue && pr.Reason != "NewReplicaSetAvailable" {
			continue
		}
		a := deploymentCondition(d, appsv1.DeploymentAvailable)
		if a == nil || a.Status != corev1.ConditionFalse || a.LastTransitionTime.IsZero() || p.Now.Sub(a.LastTransitionTime.Time) < problemMinAge {
			continue
		}
		reportUnavailableStatus(p, d, a)
	}
	return nil
}

func deploymentCondition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// reportUnavailableStatus reports a Deployment whose status says it lost
// its minimum availability, quoting the condition and the events.
func reportUnavailableStatus(p *doctor.Pass, d *appsv1.Deployment, a *appsv1.DeploymentCondition) {
	want, avail := replicasOf(d.Spec.Replicas), d.Status.AvailableReplicas
	ref := kube.Ref("apps/v1", "Deployment", d)
	msg := fmt.Sprintf("deployment/%s: %d of %d replicas available%s (Available=False, %s", d.Name, avail, want, forDuration(p.Now, a.LastTransitionTime), orUnknown(a.Reason))
	if a.Message != "" {
		msg += ": " + clipLine(a.Message, maxQuote)
	}
	msg += ")"
	sev := doctor.Warning
	if avail == 0 {
		sev = doctor.Critical
	}
	rem := []doctor.Remediation{{Text: "read the Deployment's conditions and events", Command: fmt.Sprintf("kubectl describe deployment %s -n %s", d.Name, d.Namespace)}}
	rem = append(rem, podsOfDeployment(d)...)
	p.Report(doctor.Finding{Severity: sev, Object: ref, Message: msg, Cause: "unavailable", Partial: podsUnread,
		Remediation: rem, Evidence: evidence(p, []doctor.ObjectRef{ref}, nil, failingConditions(d))})
}

// podsWereRead says whether the scan listed pods (otherwise findings are
// judged from the workloads' status alone).
func podsWereRead(s *snapshot.Snapshot) bool { return s.Err(snapshot.Pods) == nil }

// podsOfDeployment is the command that lists a Deployment's pods, for a
// finding judged without them; none for a selector kubectl cannot take.
func podsOfDeployment(d *appsv1.Deployment) []doctor.Remediation {
	if d.Spec.Selector == nil {
		return nil
	}
	s := metav1.FormatLabelSelector(d.Spec.Selector)
	if s == "" || s == "<none>" || s == "<error>" {
		return nil
	}
	return []doctor.Remediation{{Text: "see its pods' state, restarts and events", Command: fmt.Sprintf("kubectl get pods -n %s -l '%s'", d.Namespace, s)}}
}
