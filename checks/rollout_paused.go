package checks

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
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
			since = " for " + duration.HumanDuration(p.Now.Sub(c.LastTransitionTime.Time))
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
