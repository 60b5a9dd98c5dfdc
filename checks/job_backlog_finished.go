package checks

import (
	"fmt"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

// finishedPile is how many finished Jobs of one CronJob, or of one
// namespace without an owner, make a pile worth a note: each is kept with
// its pods, and every client that lists Jobs or pods reads them all.
const finishedPile = 50

// reportFinishedPiles notes (info) finished Jobs that nothing deletes: a
// CronJob whose history limits keep them by the dozen, and Jobs without a
// controller and without ttlSecondsAfterFinished.
func reportFinishedPiles(p *doctor.Pass, jobs []batchv1.Job, crons *kube.CronJobIndex) {
	perCron := map[string]int{}
	type bareGroup struct {
		names  []string
		oldest time.Time
	}
	bare := map[string]*bareGroup{}
	for i := range jobs {
		j := &jobs[i]
		if !kube.JobFinished(j) {
			continue
		}
		if cj := crons.RunOf(j); cj != nil {
			perCron[cj.Namespace+"/"+cj.Name]++
			continue
		}
		if metav1.GetControllerOfNoCopy(j) != nil || j.Spec.TTLSecondsAfterFinished != nil {
			continue // its controller or the TTL controller deletes it
		}
		g := bare[j.Namespace]
		if g == nil {
			g = &bareGroup{}
			bare[j.Namespace] = g
		}
		g.names = append(g.names, j.Name)
		if at := finishedAt(j); !at.IsZero() && (g.oldest.IsZero() || at.Before(g.oldest)) {
			g.oldest = at
		}
	}
	cjs := p.Snapshot.CronJobs()
	for i := range cjs {
		cj := &cjs[i]
		n := perCron[cj.Namespace+"/"+cj.Name]
		// With limits at the defaults or below, the controller keeps no
		// such pile: one it failed to delete is another story.
		if n < finishedPile || limitOf(cj.Spec.SuccessfulJobsHistoryLimit, 3)+limitOf(cj.Spec.FailedJobsHistoryLimit, 1) < finishedPile {
			continue
		}
		p.Report(doctor.Finding{Severity: doctor.Info, Object: kube.Ref("batch/v1", "CronJob", cj), Cause: "finished-jobs", Count: n,
			Message: fmt.Sprintf("cronjob/%s keeps %d finished Jobs (successfulJobsHistoryLimit %s, failedJobsHistoryLimit %s) and their pods: every client that lists Jobs or pods reads them; the defaults keep 3 and 1",
				cj.Name, n, limitWords(cj.Spec.SuccessfulJobsHistoryLimit, 3), limitWords(cj.Spec.FailedJobsHistoryLimit, 1)),
			Remediation: []doctor.Remediation{{Text: "keep the history you read (the CronJob controller deletes the rest, and their pods, at its next run)",
				Command: fmt.Sprintf(`kubectl patch cronjob %s -n %s --type=merge -p '{"spec":{"successfulJobsHistoryLimit":3,"failedJobsHistoryLimit":1}}'`, cj.Name, cj.Namespace)}}})
	}
	namespaces := make([]string, 0, len(bare))
	for ns, g := range bare {
		if len(g.names) >= finishedPile {
			namespaces = append(namespaces, ns)
		}
	}
	sort.Strings(namespaces)
	for _, ns := range namespaces {
		g := bare[ns]
		sort.Strings(g.names)
		oldest := ""
		if !g.oldest.IsZero() {
			oldest = fmt.Sprintf(", the oldest finished %s ago", human(p.Now.Sub(g.oldest)))
		}
		p.Report(doctor.Finding{Severity: doctor.Info, Object: kube.NamespaceRef(ns), Cause: "finished-jobs", Count: len(g.names), Examples: doctor.Examples(g.names),
			Message: fmt.Sprintf("%d finished Jobs in namespace %s have no controller and no ttlSecondsAfterFinished%s: they and their pods stay until someone deletes them, and every client that lists Jobs or pods reads them",
				len(g.names), ns, oldest),
			Remediation: []doctor.Remediation{
				{Text: "set spec.ttlSecondsAfterFinished in what creates them (a CI template, a script, an operator), so the TTL controller deletes each when it is done",
					Command: fmt.Sprintf("kubectl get jobs -n %s --sort-by=.status.completionTime", ns)},
				{Text: "delete the finished ones the list shows (their pods go with them); these are the first",
					Command: fmt.Sprintf("kubectl delete job -n %s %s", ns, strings.Join(clip(g.names, 10), " "))}}})
	}
}

// finishedAt is when the Job ended: its completion time, else the time its
// Complete or Failed condition turned True.
func finishedAt(j *batchv1.Job) time.Time {
	if j.Status.CompletionTime != nil {
		return j.Status.CompletionTime.Time
	}
	for _, t := range []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobFailed} {
		if c := kube.JobCondition(j, t); c != nil {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

func limitOf(v *int32, def int32) int {
	if v == nil {
		return int(def)
	}
	return int(*v)
}

func limitWords(v *int32, def int32) string {
	if v == nil {
		return fmt.Sprintf("%d (default)", def)
	}
	return fmt.Sprint(*v)
}
