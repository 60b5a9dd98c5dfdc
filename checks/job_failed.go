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
` + "`Failed=True`" + ` (or ` + "`FailureTarget=True`" + ` while their pods terminate). A CronJob's
runs are ordered by the time they were due — the CronJob controller's
` + "`batch.kubernetes.io/cronjob-scheduled-timestamp`" + ` annotation, else the Job's
` + "`status.startTime`" + `, never its creation alone (a run recreated or started by
hand is not the newest for being the newest object). A CronJob is reported
when its latest finished run failed — an older failed run kept by
` + "`failedJobsHistoryLimit`" + ` behind a later success is history, not a problem —
with the outcomes of its last five finished runs and their reasons from the
Jobs' conditions (` + "`BackoffLimitExceeded`, `DeadlineExceeded`, `PodFailurePolicy`,\n`MaxFailedIndexesExceeded`" + `), the count of failures in a row, and the last
success: the newest successful run kept, else the CronJob's
` + "`status.lastSuccessfulTime`" + `. A suspended CronJob is quiet: someone stopped it. Completed and running Jobs are left to job-backlog. The pods are
the Job's (by controller reference); the newest failed pod's first container
that terminated with a non-zero exit code gives the exit code, its reason
(` + "`Error`, `OOMKilled`" + `) and what the code usually means (1 application error,
137 SIGKILL — an OOM kill only when the reason says OOMKilled, 143 SIGTERM,
126/127 command not executable / not found); a pod that failed before any
container ran (rejected by the kubelet, evicted) gives its own reason. Standalone failed Jobs are grouped by namespace and
reason. A failure older than a day is info.

## How to fix
Read the failed pod's logs (` + "`kubectl logs job/NAME`" + ` picks one of its pods; when
none is left, as after ` + "`DeadlineExceeded`" + `, whose pods the Job controller deletes,
the finding says so and points at the Job's events instead, and names the
` + "`activeDeadlineSeconds`" + ` to raise),
or, when the runtime never started the container's command (` + "`StartError`" + `: not
in the image or not executable; there are no logs then), fix the command or
the image. Fix the cause, then rerun: a Job's pod template cannot be changed, so delete
and recreate the Job, or for a CronJob start a run by hand with
` + "`kubectl create job --from=cronjob/NAME`" + `. Raise ` + "`activeDeadlineSeconds`" + ` when the
work needs longer, and ` + "`backoffLimit`" + ` only for failures that are transient.

## Example
On the ` + "`" + `everyday-causes` + "`" + ` scenario (` + "`" + `testdata/scenarios` + "`" + `), in the table output: the run due an hour ago was created before the run due two hours ago, and is still the latest.

` + "```" + `
WARNING
  ec-batch/CronJob/export  ×2  [job-failed]
    the latest run of cronjob/export, job export-29410260 (scheduled 68m ago), failed 8m47s ago (BackoffLimitExceeded: Job has reached the specified backoff limit); the last 2 finished runs all failed, newest first: failed (BackoffLimitExceeded), failed (DeadlineExceeded); last success 26h ago (the CronJob's lastSuccessfulTime; that Job is no longer kept); its pod export-29410260-flhbf failed before any container ran: OutOfmemory: Pod was rejected: Node didn't have enough resource: memory, requested: 268435456, used: 8053063680, capacity: 8192000000
    e.g. export-29410260
    → read the failed run's logs
      $ kubectl logs -n ec-batch job/export-29410260 --all-containers
    → once fixed, start a run by hand instead of waiting for the schedule
      $ kubectl create job -n ec-batch --from=cronjob/export export-manual
    → see why its pods failed
      $ kubectl describe job export-29410260 -n ec-batch
` + "```" + `

## References
- https://kubernetes.io/docs/concepts/workloads/controllers/job/#handling-pod-and-container-failures
- https://kubernetes.io/docs/concepts/workloads/controllers/job/#job-termination-and-cleanup
- https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#jobs-history-limits
- https://kubernetes.io/docs/tasks/debug/debug-application/determine-reason-pod-failure/`,
}

// jobFailedStale is how old a failure may be and still be a warning.
const jobFailedStale = 24 * time.Hour

// maxRuns is how many of a CronJob's latest runs a finding lists.
const maxRuns = 5

// runOutcomes is "last 3 runs, newest first: failed (DeadlineExceeded),
// failed (BackoffLimitExceeded), succeeded".
func runOutcomes(runs []*batchv1.Job) string {
	n := min(len(runs), maxRuns)
	out := make([]string, 0, n)
	failed := 0
	for _, j := range runs[:n] {
		if c := kube.JobFailure(j); c != nil {
			failed++
			reason := c.Reason
			if reason == "" {
				reason = "no reason given"
			}
			out = append(out, "failed ("+reason+")")
		} else {
			out = append(out, "succeeded")
		}
	}
	if n == 1 {
		return "it is the only finished run kept"
	}
	head := fmt.Sprintf("last %d finished runs, newest first", n)
	if failed == n {
		head = fmt.Sprintf("the last %d finished runs all failed, newest first", n)
	}
	return head + ": " + strings.Join(out, ", ")
}

// lastSuccess is "last success 3h ago (job backup-29000000)", from the
// runs kept or, when none kept succeeded, the CronJob's
// status.lastSuccessfulTime.
func lastSuccess(now time.Time, cj *batchv1.CronJob, runs []*batchv1.Job) string {
	for _, j := range runs {
		if c := kube.JobSucceeded(j); c != nil {
			t := c.LastTransitionTime
			if j.Status.CompletionTime != nil {
				t = *j.Status.CompletionTime
			}
			return fmt.Sprintf("last success %s ago (job %s)", since(now, t), j.Name)
		}
	}
	if t := cj.Status.LastSuccessfulTime; t != nil {
		return fmt.Sprintf("last success %s ago (the CronJob's lastSuccessfulTime; that Job is no longer kept)", since(now, *t))
	}
	return "no successful run on record"
}

// doubled is twice the deadline, or an hour when there is none.
func doubled(d *int64) int64 {
	if d == nil || *d <= 0 {
		return 3600
	}
	return 2 * *d
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
	crons := kube.CronJobsOf(p.Snapshot)
	for i := range jobs {
		j := &jobs[i]
		// Without CronJobs in the input, a CronJob's runs are judged as Jobs;
		// with them, a run of a CronJob no longer listed is left alone.
		if p.Snapshot.Err(snapshot.CronJobs) == nil {
			if cj := crons.RunOf(j); cj != nil {
				byCron[cj.Namespace+"/"+cj.Name] = append(byCron[cj.Namespace+"/"+cj.Name], j)
				continue
			}
			if c := metav1.GetControllerOfNoCopy(j); c != nil && c.Kind == "CronJob" {
				continue
			}
		}
		if cond := kube.JobFailure(j); cond != nil {
			k := j.Namespace + "|" + cond.Reason
			bare[k] = append(bare[k], failedJob{j, cond})
		}
	}
	cjs := p.Snapshot.CronJobs()
	for i := range cjs {
		cj := &cjs[i]
		if cj.Spec.Suspend != nil && *cj.Spec.Suspend {
			continue // suspended on purpose: its last failure is known
		}
		var finished []*batchv1.Job
		for _, j := range byCron[cj.Namespace+"/"+cj.Name] {
			if kube.JobFailure(j) != nil || kube.JobSucceeded(j) != nil {
				finished = append(finished, j)
			}
		}
		kube.SortRuns(finished)
		if len(finished) == 0 || kube.JobFailure(finished[0]) == nil {
			continue
		}
		streak := 0
		for _, j := range finished {
			if kube.JobFailure(j) == nil {
				break
			}
			streak++
		}
		last := finished[0]
		cond := kube.JobFailure(last)
		msg := fmt.Sprintf("the latest run of cronjob/%s, job %s (scheduled %s ago), failed %s ago (%s)",
			cj.Name, last.Name, since(p.Now, metav1.Time{Time: kube.RunTime(last)}), since(p.Now, cond.LastTransitionTime), conditionText(cond))
		msg += "; " + runOutcomes(finished) + "; " + lastSuccess(p.Now, cj, finished)
		cause, gone, logs := failedPodsEvidence(p, last, podsByJob[last.Namespace+"/"+last.Name],
			"read the failed run's logs", "the run's pods are gone, and their logs with them: read its events")
		msg += cause + gone
		rem := []doctor.Remediation{
			logs,
			{Text: "once fixed, start a run by hand instead of waiting for the schedule",
				Command: fmt.Sprintf("kubectl create job -n %s --from=cronjob/%s %s-manual", cj.Namespace, cj.Name, truncateName(cj.Name, 56))},
		}
		switch cond.Reason {
		case batchv1.JobReasonDeadlineExceeded:
			rem = append(rem, doctor.Remediation{Text: "if the work needs longer, raise the runs' deadline",
				Command: fmt.Sprintf(`kubectl patch cronjob %s -n %s --type=merge -p '{"spec":{"jobTemplate":{"spec":{"activeDeadlineSeconds":%d}}}}'`, cj.Name, cj.Namespace, doubled(cj.Spec.JobTemplate.Spec.ActiveDeadlineSeconds))})
		case batchv1.JobReasonBackoffLimitExceeded, batchv1.JobReasonPodFailurePolicy, batchv1.JobReasonMaxFailedIndexesExceeded:
			rem = append(rem, doctor.Remediation{Text: "see why its pods failed", Command: fmt.Sprintf("kubectl describe job %s -n %s", last.Name, last.Namespace)})
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
		deadline := ""
		if d := j.Spec.ActiveDeadlineSeconds; newest.cond.Reason == batchv1.JobReasonDeadlineExceeded && d != nil {
			deadline = fmt.Sprintf("; its activeDeadlineSeconds is %ds", *d)
		}
		cause, gone, logs := failedPodsEvidence(p, j, podsByJob[j.Namespace+"/"+j.Name],
			"read the failed pods' logs", "its pods are gone, and their logs with them: read the Job's events")
		msg += cause + deadline + gone
		rem := []doctor.Remediation{
			logs,
			{Text: "a Job's pod template cannot be changed: once the cause is fixed, delete the Job and create it again",
				Command: fmt.Sprintf("kubectl get job %s -n %s -o yaml", j.Name, j.Namespace)},
		}
		if d := j.Spec.ActiveDeadlineSeconds; newest.cond.Reason == batchv1.JobReasonDeadlineExceeded && d != nil {
			rem[1].Text = fmt.Sprintf("the work took longer than its deadline: delete the Job and create it again with a longer activeDeadlineSeconds (now %ds; e.g. %d), or make the work faster", *d, doubled(d))
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
	137: "killed by SIGKILL",
	139: "a segmentation fault",
	143: "terminated by SIGTERM",
}

// podCause reads the newest failed pod's first non-zero container exit;
// fix is the remediation when the runtime could not even start the
// container's command (there are no logs to read then).
func podCause(pods []*corev1.Pod) (cause string, fix *doctor.Remediation) {
	sort.Slice(pods, func(a, b int) bool { return pods[a].CreationTimestamp.After(pods[b].CreationTimestamp.Time) })
	for _, pod := range pods {
		for li, lists := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
			for _, cs := range lists {
				t := cs.State.Terminated
				if t == nil {
					t = cs.LastTerminationState.Terminated
				}
				if t == nil || t.ExitCode == 0 {
					continue
				}
				prog, denied := kube.ExecFailure(t.Message)
				format := false
				if prog == "" {
					prog, format = kube.WrongArch(t.Message)
				}
				if prog != "" {
					ex := kube.ContainerProblem{Container: cs.Name, Image: cs.Image, Exec: prog, ExecDenied: denied, ExecFormat: format, Init: li == 0}
					if c := containerSpecNamed(pod, cs.Name); c != "" {
						ex.Image = c
					}
					fix := "fix the Job's command (or its image), then create the Job again"
					if format {
						fix = "use an image built for the node's architecture (or a nodeSelector on kubernetes.io/arch for the one it is built for), then create the Job again; the command shows what runs"
					}
					return fmt.Sprintf("; its pod %s: container %s never started: %s (%s)", pod.Name, cs.Name, execWords(ex), orUnknown(t.Reason)),
						&doctor.Remediation{Text: fix,
							Command: fmt.Sprintf(`kubectl get job %s -n %s -o jsonpath='{.spec.template.spec.%s[?(@.name=="%s")].command}'`, jobOf(pod), pod.Namespace, containerList(ex.Init), cs.Name)}
				}
				out := fmt.Sprintf("; its pod %s: container %s exited with code %d", pod.Name, cs.Name, t.ExitCode)
				m := exitMeanings[t.ExitCode]
				switch {
				case t.Reason == "OOMKilled":
					m = "OOM-killed: it exceeded its memory limit"
				case t.ExitCode == 137:
					m = "killed by SIGKILL, not an OOM kill: from outside, e.g. a probe or a deadline"
				}
				if m != "" {
					out += " (" + m + ")"
				}
				if t.Reason != "" {
					out += ", reason " + t.Reason
				}
				if msg := strings.TrimSpace(t.Message); msg != "" {
					out += ": " + clipLine(msg, maxQuote)
				}
				return out, nil
			}
		}
	}
	// No container ran to an exit: the pod itself failed (rejected by
	// the kubelet at admission, evicted, a deleted node).
	for _, pod := range pods {
		if pod.Status.Phase == corev1.PodFailed && pod.Status.Reason != "" {
			out := fmt.Sprintf("; its pod %s failed before any container ran: %s", pod.Name, pod.Status.Reason)
			if msg := strings.TrimSpace(pod.Status.Message); msg != "" {
				out += ": " + clipLine(msg, maxQuote)
			}
			return out, nil
		}
	}
	return "", nil
}

// containerSpecNamed is the image the pod's spec gives the container, "" when
// it has none by that name.
func containerSpecNamed(pod *corev1.Pod, name string) string {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if c.Name == name {
				return c.Image
			}
		}
	}
	return ""
}

func containerList(init bool) string {
	if init {
		return "initContainers"
	}
	return "containers"
}

// jobOf is the name of the Job that controls the pod.
func jobOf(pod *corev1.Pod) string {
	if c := metav1.GetControllerOfNoCopy(pod); c != nil {
		return c.Name
	}
	return pod.Labels["job-name"]
}

// failedPodsEvidence is what a failed Job's pods say (podCause) and where
// to read more: their logs; the fix when nothing ran; or, when none of its
// pods is left (the Job controller deletes those it stops at a deadline; a
// TTL or a cleanup takes the rest), the Job's events instead of logs that
// no longer exist.
// gone is "; none of its pods is left" in that last case.
func failedPodsEvidence(p *doctor.Pass, j *batchv1.Job, pods []*corev1.Pod, logsText, goneText string) (cause, gone string, logs doctor.Remediation) {
	cause, fix := podCause(pods)
	switch {
	case fix != nil:
		return cause, "", *fix // nothing ran: there are no logs
	case len(pods) == 0 && p.Snapshot.Err(snapshot.Pods) == nil:
		return cause, "; none of its pods is left", doctor.Remediation{Text: goneText, Command: fmt.Sprintf("kubectl describe job %s -n %s", j.Name, j.Namespace)}
	}
	return cause, "", doctor.Remediation{Text: logsText, Command: fmt.Sprintf("kubectl logs -n %s job/%s --all-containers", j.Namespace, j.Name)}
}
