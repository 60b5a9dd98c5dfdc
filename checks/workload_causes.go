package checks

import (
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

// This file and workload_causes_*.go hold what workload-pods reads from
// the cluster's Warning events and conditions: the cause of pods that never
// start, probe kills, controllers that create no pods, and the evidence
// quoted for an unavailable workload no rule explains.

// evidence is the newest distinct Warning events of the objects (the
// owner, its ReplicaSets, the pods) and their failing conditions, at most
// three of each kind; a line saying the events could not be read when the
// scan could not list them.
func evidence(p *doctor.Pass, refs []doctor.ObjectRef, pods []*corev1.Pod, conds []string) []string {
	const most = 3
	if err := p.Snapshot.Err(kube.WarningEventReads); err != nil {
		return append([]string{"(Warning events could not be read: " + err.Error() + ")"}, clip(conds, most)...)
	}
	x := kube.WarningEventsOf(p.Snapshot)
	var lists [][]*kube.Warning
	for _, r := range refs {
		lists = append(lists, x.About(r.Kind, r.Namespace, r.Name, ""))
	}
	for _, pod := range pods {
		lists = append(lists, x.AboutPod(pod))
	}
	out := eventEvidence(p.Now, most, lists...)
	return append(out, clip(conds, most-min(len(out), most-1))...)
}

func clip(lines []string, n int) []string {
	if len(lines) > n {
		return lines[:n]
	}
	return lines
}

// failingConditions are the conditions that say something is wrong, as
// "Progressing=False (ProgressDeadlineExceeded): message".
func failingConditions(obj any) []string {
	var out []string
	add := func(typ string, status corev1.ConditionStatus, reason, msg string, bad bool) {
		if !bad {
			return
		}
		s := fmt.Sprintf("%s=%s", typ, status)
		if reason != "" {
			s += " (" + reason + ")"
		}
		if msg != "" {
			s += ": " + clipLine(msg, maxQuote)
		}
		out = append(out, s)
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		for _, c := range o.Status.Conditions {
			add(string(c.Type), c.Status, c.Reason, c.Message, c.Status != corev1.ConditionTrue || c.Type == appsv1.DeploymentReplicaFailure)
		}
	case *appsv1.ReplicaSet:
		for _, c := range o.Status.Conditions {
			add(string(c.Type), c.Status, c.Reason, c.Message, c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue)
		}
	case *appsv1.StatefulSet:
		for _, c := range o.Status.Conditions {
			add(string(c.Type), c.Status, c.Reason, c.Message, c.Status != corev1.ConditionFalse)
		}
	case *appsv1.DaemonSet:
		for _, c := range o.Status.Conditions {
			add(string(c.Type), c.Status, c.Reason, c.Message, c.Status != corev1.ConditionFalse)
		}
	case *corev1.Pod:
		for _, c := range o.Status.Conditions {
			// Ready/ContainersReady False only repeat the container states.
			skip := c.Type == corev1.PodReady || c.Type == corev1.ContainersReady
			add(string(c.Type), c.Status, c.Reason, c.Message, !skip && c.Status != corev1.ConditionTrue)
		}
	}
	return out
}

// pullFromEvents refines an image pull failure the waiting message does not
// decide ("Back-off pulling image ...") with the newest Failed event.
func pullFromEvents(p *doctor.Pass, g *kube.OwnerProblem, ex kube.ContainerProblem) (kube.PullFailure, string) {
	if ex.Pull != kube.PullUnknown || p.Snapshot.Err(kube.WarningEventReads) != nil {
		return ex.Pull, ""
	}
	x := kube.WarningEventsOf(p.Snapshot)
	for _, pod := range g.Pods {
		for _, w := range x.AboutPod(pod) {
			if w.Reason != "Failed" || !strings.Contains(w.Message, "pull") {
				continue
			}
			if f := kube.ClassifyPull("", w.Message); f != kube.PullUnknown {
				return f, w.Message
			}
		}
	}
	return ex.Pull, ""
}

// pullSecretsPhrase names the pull secrets the pod declares (names only),
// and those of them the kubelet could not find.
func pullSecretsPhrase(p *doctor.Pass, pod *corev1.Pod) string {
	var names []string
	for _, r := range pod.Spec.ImagePullSecrets {
		names = append(names, r.Name)
	}
	if len(names) == 0 {
		return "the pod declares no imagePullSecrets"
	}
	out := "imagePullSecrets " + strings.Join(names, ", ")
	if missing := missingPullSecrets(p, pod); len(missing) > 0 {
		out += fmt.Sprintf(", of which the kubelet could not find %s (FailedToRetrieveImagePullSecret): the pull went without %s",
			strings.Join(missing, ", "), map[bool]string{true: "it", false: "them"}[len(missing) == 1])
	}
	return out
}

// missingPullSecrets are the pull secrets the kubelet said it could not
// retrieve for the pod (FailedToRetrieveImagePullSecret: "Unable to
// retrieve some image pull secrets (regcred)"), sorted; nil without events.
func missingPullSecrets(p *doctor.Pass, pod *corev1.Pod) []string {
	if p.Snapshot.Err(kube.WarningEventReads) != nil {
		return nil
	}
	seen := map[string]bool{}
	for _, w := range kube.WarningEventsOf(p.Snapshot).AboutPod(pod) {
		if w.Reason != "FailedToRetrieveImagePullSecret" {
			continue
		}
		for _, n := range pullSecretNames(w.Message) {
			seen[n] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
