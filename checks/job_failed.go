package checks

import (
	"fmt"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// JobFailed finds Jobs that ended Failed and whose failure is still the
// latest word: standalone Jobs, and a CronJob's most recent finished run.
var JobFailed = &doctor.Check{
	Name:     "job-failed",
	Severity: doctor.Warning,
	Origin:   "everyday",
	Reads:    []snapshot.Resource{snapshot.Jobs},
	Optional: []snapshot.Resource{snapshot.CronJobs, snapshot.Pods},
	Run:      runJobFailed,
	Doc: `Failed Jobs, and CronJobs whose latest run failed, with the pods' exit codes

## Why it matters
A Job that exhausts its ` + "`backoffLimit`" + ` or runs past its ` + "`activeDeadlineSeconds`" + `
stops with a ` + "`Failed`" + ` condition and nothing retries it: the backup, migration or
report it ran did not happen. ` + "`kubectl get jobs`" + ` shows ` + "`0/1`" + ` completions and no
reason; the reason (` + "`BackoffLimitExceeded`" + `, ` + "`DeadlineExceeded`" + `,
` + "`PodFailurePolicy`" + `) is in the condition and the cause in the pods' last
termination.

## How it is detected
From one LIST each of Jobs, CronJobs and pods: Jobs with the condition
` + "`Failed=True`" + `. A Job controlled by a CronJob is reported only when it is the
CronJob's most recent finished run (by creation time) — an older failed run
kept by ` + "`failedJobsHistoryLimit`" + ` behind a later successful run is history, not a
problem — and the finding counts how many of the latest finished runs failed
in a row. Completed and running Jobs are left to job-backlog. The pods are
the Job's (by controller reference); the newest failed pod's first container
that terminated with a non-zero exit code gives the exit code, its reason
(` + "`Error`, `OOMKilled`" + `) and what the code usually means (1 application error,
137 killed by SIGKILL, often out of memory, 143 SIGTERM, 126/127 command not
executable / not found). Standalone failed Jobs are grouped by namespace and
reason. A failure older than a day is info.

## How to fix
Read the failed pod's logs (` + "`kubectl logs job/NAME`" + ` picks one of its pods),
fix the cause, then rerun: a Job's pod template cannot be changed, so delete
and recreate the Job, or for a CronJob start a run by hand with
` + "`kubectl create job --from=cronjob/NAME`" + `. Raise ` + "`activeDeadlineSeconds`" + ` when the
work needs longer, and ` + "`backoffLimit`" + ` only for failures that are transient.

## References
- https://kubernetes.io/docs/concepts/workloads/controllers/job/#handling-pod-and-container-failures
- https://kubernetes.io/docs/concepts/workloads/controllers/job/#job-termination-and-cleanup
- https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#jobs-history-limits
- https://kubernetes.io/docs/tasks/debug/debug-application/determine-reason-pod-failure/`,
}

// jobFailedStale is how old a failure may be and still be a warning.
const jobFailedStale = 24 * time.Hour

func failedCondition(j *batchv1.Job) *batchv1.JobCondition {
	return kube.JobCondition(j, batchv1.JobFailed)
}

type failedJob struct {
	job  *batchv1.Job
	cond *batchv1.JobCondition
}

func runJobFailed(p *doctor.Pass) error {
	podsByJob := map[string][]*corev1.Pod{}
	for _, pod := range p.Snapshot.Pods() {
		if c := metav1.GetControllerOfNoCopy(pod); c != nil && c.Kind == "Job" {
			podsByJob[pod.Namespace+"/"+c.Name] = append(podsByJob[pod.Namespace+"/"+c.Name], pod)
		}
	}
	byCron := map[string][]*batchv1.Job{}
	bare := map[string][]failedJob{} // ns|reason
	jobs := p.Snapshot.Jobs()
	for i := range jobs {
		j := &jobs[i]
		// Without CronJobs in the input, a CronJob's runs are judged as Jobs.
		if c := metav1.GetControllerOfNoCopy(j); c != nil && c.Kind == "CronJob" && p.Snapshot.Err(snapshot.CronJobs) == nil {
			byCron[j.Namespace+"/"+c.Name] = append(byCron[j.Namespace+"/"+c.Name], j)
			continue
		}
		if cond := failedCondition(j); cond != nil {
			k := j.Namespace + "|" + cond.Reason
			bare[k] = append(bare[k], failedJob{j, cond})
		}
	}
	cjs := p.Snapshot.CronJobs()
	for i := range cjs {
		cj := &cjs[i]
		runs := byCron[cj.Namespace+"/"+cj.Name]
		var finished []*batchv1.Job
		for _, j := range runs {
			if kube.JobFinished(j) {
				finished = append(finished, j)
			}
		}
		sort.Slice(finished, func(a, b int) bool {
			return finished[a].CreationTimestamp.After(finished[b].CreationTimestamp.Time)
		})
		if len(finished) == 0 || failedCondition(finished[0]) == nil {
			continue
		}
		streak := 0
		for _, j := range finished {
			if failedCondition(j) == nil {
				break
			}
			streak++
		}
		last := finished[0]
		cond := failedCondition(last)
		msg := fmt.Sprintf("the latest finished run of cronjob/%s, job %s, failed %s ago (%s)", cj.Name, last.Name, since(p.Now, cond.LastTransitionTime), conditionText(cond))
		if streak > 1 {
			msg += fmt.Sprintf("; the last %d finished runs all failed", streak)
		}
		msg += podCause(podsByJob[last.Namespace+"/"+last.Name])
		rem := []doctor.Remediation{
			{Text: "read the failed run's logs", Command: fmt.Sprintf("kubectl logs -n %s job/%s --all-containers", last.Namespace, last.Name)},
			{Text: "once fixed, start a run by hand instead of waiting for the schedule",
				Command: fmt.Sprintf("kubectl create job -n %s --from=cronjob/%s %s-manual", cj.Namespace, cj.Name, truncateName(cj.Name, 56))},
		}
		p.Report(doctor.Finding{Severity: staleSeverity(p.Now, cond), Object: doctor.ObjectRef{APIVersion: "batch/v1", Kind: "CronJob", Namespace: cj.Namespace, Name: cj.Name},
			Message: msg, Count: streak, Examples: []string{last.Name}, Remediation: rem})
	}
	keys := make([]string, 0, len(bare))
	for k := range bare {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fs := bare[k]
		sort.Slice(fs, func(a, b int) bool { return fs[a].job.Name < fs[b].job.Name })
		newest := fs[0]
		var names []string
		for _, f := range fs {
			names = append(names, f.job.Name)
			if f.cond.LastTransitionTime.After(newest.cond.LastTransitionTime.Time) {
				newest = f
			}
		}
		j := newest.job
		var msg string
		if len(fs) == 1 {
			msg = fmt.Sprintf("job %s failed %s ago (%s)", j.Name, since(p.Now, newest.cond.LastTransitionTime), conditionText(newest.cond))
		} else {
			msg = fmt.Sprintf("%d Jobs in namespace %s failed (%s): %s; the newest, %s, %s ago (%s)", len(fs), j.Namespace, newest.cond.Reason,
				strings.Join(doctor.Examples(names), ", "), j.Name, since(p.Now, newest.cond.LastTransitionTime), conditionText(newest.cond))
		}
		msg += podCause(podsByJob[j.Namespace+"/"+j.Name])
		rem := []doctor.Remediation{
			{Text: "read the failed pods' logs", Command: fmt.Sprintf("kubectl logs -n %s job/%s --all-containers", j.Namespace, j.Name)},
			{Text: "a Job's pod template cannot be changed: once the cause is fixed, delete the Job and create it again",
				Command: fmt.Sprintf("kubectl get job %s -n %s -o yaml", j.Name, j.Namespace)},
		}
		// The object is the newest failed Job, the one the message and the
		// commands are about.
		p.Report(doctor.Finding{Severity: staleSeverity(p.Now, newest.cond), Object: doctor.ObjectRef{APIVersion: "batch/v1", Kind: "Job", Namespace: j.Namespace, Name: j.Name},
			Message: msg, Count: len(fs), Cause: newest.cond.Reason, Examples: doctor.Examples(names), Remediation: rem,
			Members: members("batch/v1", "Job", j.Namespace, names)})
	}
	return nil
}

func staleSeverity(now time.Time, c *batchv1.JobCondition) doctor.Severity {
	if !c.LastTransitionTime.IsZero() && now.Sub(c.LastTransitionTime.Time) > jobFailedStale {
		return doctor.Info
	}
	return doctor.Warning
}

func conditionText(c *batchv1.JobCondition) string {
	if c.Message == "" {
		return c.Reason
	}
	return c.Reason + ": " + c.Message
}

func truncateName(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// exitMeanings are what common exit codes usually mean.
var exitMeanings = map[int32]string{
	1:   "an application error",
	2:   "a shell misuse or bad arguments",
	126: "the command is not executable",
	127: "the command was not found",
	137: "killed by SIGKILL, often for running out of memory",
	139: "a segmentation fault",
	143: "terminated by SIGTERM",
}

// podCause reads the newest failed pod's first non-zero container exit.
func podCause(pods []*corev1.Pod) string {
	sort.Slice(pods, func(a, b int) bool { return pods[a].CreationTimestamp.After(pods[b].CreationTimestamp.Time) })
	for _, pod := range pods {
		for _, lists := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
			for _, cs := range lists {
				t := cs.State.Terminated
				if t == nil {
					t = cs.LastTerminationState.Terminated
				}
				if t == nil || t.ExitCode == 0 {
					continue
				}
				out := fmt.Sprintf("; its pod %s: container %s exited with code %d", pod.Name, cs.Name, t.ExitCode)
				if m := exitMeanings[t.ExitCode]; m != "" {
					out += " (" + m + ")"
				}
				if t.Reason != "" {
					out += ", reason " + t.Reason
				}
				if msg := strings.TrimSpace(t.Message); msg != "" {
					if len(msg) > 200 {
						msg = msg[:200] + "..."
					}
					out += ": " + msg
				}
				return out
			}
		}
	}
	return ""
}
