package checks

import (
	"fmt"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/robfig/cron/v3"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// JobBacklog finds CronJobs and Jobs that pile up instead of running, and
// names what blocks their pods (usually an admission webhook).
var JobBacklog = &doctor.Check{
	Name:     "job-backlog",
	Severity: doctor.Warning,
	Origin:   "Snowball effect",
	Reads:    []snapshot.Resource{snapshot.CronJobs, snapshot.Jobs},
	Optional: append([]snapshot.Resource{kube.WarningEventReads}, kube.WebhookReads...),
	Run:      runJobBacklog,
	Doc: `CronJob and Job backlogs: Jobs that never get pods or never finish

## Why it matters
A CronJob starts a Job every period whether or not the previous one ran. When
pods cannot be created — most often because an admission webhook times out or
rejects them — Jobs pile up without pods, each one waiting forever: without
` + "`activeDeadlineSeconds`" + ` a Job never fails, so ` + "`successfulJobsHistoryLimit`" + ` and
` + "`failedJobsHistoryLimit`" + ` never prune it (the limits only "seem ignored"), and
with ` + "`concurrencyPolicy: Forbid`" + ` one stuck Job stops every future run. In "The
Snowball effect" an every-minute CronJob behind a slow webhook piled
up 3,000 Jobs and 900 pods.

## How it is detected
From one LIST each of CronJobs and Jobs: per CronJob, its unfinished Jobs
(controlled by it, not suspended, no Complete/Failed condition); a backlog is
three or more of them, or one older than twice the schedule interval (at least
an hour), or Jobs without any pod (` + "`active+succeeded+failed == 0`" + `) for which
the job controller reported ` + "`FailedCreate`" + `. Jobs outside CronJobs are reported
when they have no pod ten minutes after creation or a FailedCreate event.
Evidence comes from the scan's one list of Warning events (` + "`FailedCreate`" + `): a message
` + "`failed calling webhook \"NAME\"`" + ` names the webhook, which is then described with
its failure policy, timeout and backend health (see admission-webhooks).
A CronJob that has started no Job for a run its schedule asked for (more
than 5 minutes overdue, counted from ` + "`status.lastScheduleTime`" + ` or its
creation, in ` + "`spec.timeZone`" + `) is reported with how many runs it missed and
the newest Warning event about it (the controller's "too many missed start
times (> 100)"), or, with none, that the cronjob controller may not be
running; suspended CronJobs, a Forbid CronJob waiting for its active run
(a backlog) and one whose Jobs the API server refuses (workload-pods) are
not.
A CronJob's finding ends with its last success: the newest successful run
kept (runs ordered by their scheduled time), else the CronJob's
` + "`status.lastSuccessfulTime`" + `, else "no successful run on record".

Finished Jobs that nothing deletes are a pile of their own (info): a CronJob
whose history limits keep 50 or more finished Jobs (each with its pods), and
50 or more finished Jobs of one namespace with no controller and no
` + "`ttlSecondsAfterFinished`" + ` (CI pipelines, scripts). Every client that lists Jobs
or pods reads them all, and the garbage collector of terminated pods only
starts at 12,500 of them.

## How to fix
Fix or scope the blocking webhook; bound Jobs with ` + "`activeDeadlineSeconds`" + ` and
CronJobs with ` + "`startingDeadlineSeconds`" + `; delete the stuck Jobs; consider
` + "`concurrencyPolicy: Forbid`" + ` for CronJobs whose runs must not overlap. Keep
the history you read (` + "`successfulJobsHistoryLimit: 3`, `failedJobsHistoryLimit: 1`" + `, the
defaults) and give Jobs that no controller owns a ` + "`ttlSecondsAfterFinished`" + `.

## References
- https://blenderfox.com/2020/08/07/the-snowball-effect-in-kubernetes/
- https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#cron-job-limitations
- https://kubernetes.io/docs/concepts/workloads/controllers/job/#job-termination-and-cleanup
- https://kubernetes.io/docs/concepts/workloads/controllers/ttlafterfinished/
- https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#jobs-history-limits
- https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#timeouts`,
}

const podlessGrace = 10 * time.Minute

type jobState struct {
	job      *batchv1.Job
	finished bool
	podless  bool
	event    *corev1.Event // the newest FailedCreate event, if any
}

// scheduleInterval is the time between two runs of a cron schedule.
func scheduleInterval(schedule string, now time.Time) (time.Duration, bool) {
	s, err := cron.ParseStandard(schedule)
	if err != nil {
		return 0, false
	}
	next := s.Next(now)
	return s.Next(next).Sub(next), true
}

func runJobBacklog(p *doctor.Pass) error {
	events := kube.NewestEvents(kube.WarningEventsOf(p.Snapshot).Reason("FailedCreate"), "Job")
	hooks := map[string]kube.Webhook{}
	for _, w := range kube.Webhooks(p.Snapshot) {
		hooks[w.Name] = w
	}

	byCronJob := map[string][]jobState{}
	var bare []jobState
	jobs := p.Snapshot.Jobs()
	crons := kube.CronJobsOf(p.Snapshot)
	for i := range jobs {
		j := &jobs[i]
		if j.Spec.Suspend != nil && *j.Spec.Suspend {
			continue
		}
		st := jobState{job: j, finished: kube.JobFinished(j), event: events[j.Namespace+"/"+j.Name]}
		st.podless = !st.finished && j.Status.Active+j.Status.Succeeded+j.Status.Failed == 0
		if cj := crons.RunOf(j); cj != nil {
			byCronJob[cj.Namespace+"/"+cj.Name] = append(byCronJob[cj.Namespace+"/"+cj.Name], st)
		} else if owner := metav1.GetControllerOfNoCopy(j); owner != nil && owner.Kind == "CronJob" {
			continue // a run of a CronJob no longer listed
		} else if st.podless && (st.event != nil || p.Now.Sub(j.CreationTimestamp.Time) > podlessGrace) {
			bare = append(bare, st)
		}
	}

	cjs := p.Snapshot.CronJobs()
	for i := range cjs {
		reportCronJobBacklog(p, &cjs[i], byCronJob[cjs[i].Namespace+"/"+cjs[i].Name], hooks)
		reportMissedSchedule(p, &cjs[i])
	}
	reportBareJobs(p, bare, hooks)
	reportFinishedPiles(p, jobs, crons)
	return nil
}

// blockingCause explains, from FailedCreate events, why Jobs have no pods:
// "admission webhook X fails (failurePolicy Fail, timeout 30s): ...".
func blockingCause(states []jobState, hooks map[string]kube.Webhook) (string, []doctor.Remediation) {
	var newest *corev1.Event
	for _, st := range states {
		if st.podless && st.event != nil && (newest == nil || kube.EventLast(st.event).After(kube.EventLast(newest))) {
			newest = st.event
		}
	}
	if newest == nil {
		return "", nil
	}
	name, detail, ok := kube.FailedWebhook(newest.Message)
	if !ok {
		return "the job controller reports: " + newest.Message, nil
	}
	w, known := hooks[name]
	if !known {
		return fmt.Sprintf("admission webhook %s fails: %s", name, newest.Message), nil
	}
	cause := fmt.Sprintf("admission webhook %s fails (failurePolicy %s, timeout %ds", w.Name, w.FailurePolicy, w.Timeout)
	if w.Broken != nil {
		cause += "; " + faultWords(w.Broken)
	}
	// Keep what the API server said after the webhook's name.
	cause += "): " + detail
	rem := []doctor.Remediation{{Text: fmt.Sprintf("fix or scope webhook %s (see the admission-webhooks finding)", w.Name),
		Command: fmt.Sprintf("kubectl get %s %s -o yaml", w.KubectlKind(), w.Config.Name)}}
	if s := w.Service; s != nil && w.Broken != nil {
		rem = append(rem, doctor.Remediation{Text: "check the webhook's backend",
			Command: fmt.Sprintf("kubectl get endpointslices -n %s -l kubernetes.io/service-name=%s", s.Namespace, s.Name)})
	}
	return cause, rem
}

func reportCronJobBacklog(p *doctor.Pass, cj *batchv1.CronJob, states []jobState, hooks map[string]kube.Webhook) {
	var unfinished, podless, withEvents []jobState
	var oldest time.Time
	for _, st := range states {
		if st.finished {
			continue
		}
		unfinished = append(unfinished, st)
		if oldest.IsZero() || st.job.CreationTimestamp.Time.Before(oldest) {
			oldest = st.job.CreationTimestamp.Time
		}
		if st.podless {
			podless = append(podless, st)
			if st.event != nil {
				withEvents = append(withEvents, st)
			}
		}
	}
	if len(unfinished) == 0 {
		return
	}
	limit := time.Hour
	if iv, ok := scheduleInterval(cj.Spec.Schedule, p.Now); ok && 2*iv > limit {
		limit = 2 * iv
	}
	tooOld := p.Now.Sub(oldest) > limit
	if len(unfinished) < 3 && !tooOld && len(withEvents) == 0 {
		return
	}
	ref := "cronjob/" + cj.Name
	age := "the oldest created " + since(p.Now, metav1.Time{Time: oldest}) + " ago"
	if len(unfinished) == 1 {
		age = "created " + since(p.Now, metav1.Time{Time: oldest}) + " ago"
	}
	backlog := doctor.Plural(len(unfinished), "unfinished Job", "unfinished Jobs")
	cause, rem := blockingCause(unfinished, hooks)
	var msg string
	switch {
	case len(podless) > 0 && cause != "":
		msg = fmt.Sprintf("pods for %s of %s are not being created: %s; %s, %s", doctor.Plural(len(podless), "Job", "Jobs"), ref, cause, backlog, age)
	case len(podless) > 0:
		msg = fmt.Sprintf("%s of %s, %s; %d without any pod", backlog, ref, age, len(podless))
	default:
		msg = fmt.Sprintf("%s of %s, %s", backlog, ref, age)
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent {
		msg += "; concurrencyPolicy Forbid: no new run starts while they are active"
	}
	if cj.Spec.JobTemplate.Spec.ActiveDeadlineSeconds == nil {
		msg += "; its Jobs have no activeDeadlineSeconds, so they never fail and the history limits never prune them"
	}
	var done []*batchv1.Job
	for _, st := range states {
		if st.finished {
			done = append(done, st.job)
		}
	}
	kube.SortRuns(done)
	msg += "; " + lastSuccess(p.Now, cj, done)
	sev := doctor.Warning
	if len(unfinished) >= 20 {
		sev = doctor.Critical
	}
	var names []string
	for _, st := range unfinished {
		names = append(names, st.job.Name)
	}
	sort.Strings(names)
	rem = append(rem,
		doctor.Remediation{Text: "bound every run so a stuck Job fails and is pruned, and skip runs that start too late",
			Command: fmt.Sprintf(`kubectl patch cronjob %s -n %s --type=merge -p '{"spec":{"startingDeadlineSeconds":300,"jobTemplate":{"spec":{"activeDeadlineSeconds":3600}}}}'`, cj.Name, cj.Namespace)},
		doctor.Remediation{Text: "delete the stuck Jobs once their cause is fixed", Command: deleteJobsCommand(cj.Namespace, names)})
	if cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent && len(unfinished) >= 3 {
		rem = append(rem, doctor.Remediation{Text: "if runs must not overlap, forbid concurrent runs",
			Command: fmt.Sprintf(`kubectl patch cronjob %s -n %s --type=merge -p '{"spec":{"concurrencyPolicy":"Forbid"}}'`, cj.Name, cj.Namespace)})
	}
	p.Report(doctor.Finding{
		Severity:    sev,
		Object:      doctor.ObjectRef{APIVersion: "batch/v1", Kind: "CronJob", Namespace: cj.Namespace, Name: cj.Name},
		Message:     msg,
		Count:       len(unfinished),
		Examples:    doctor.Examples(names),
		Remediation: rem,
	})
}

func deleteJobsCommand(ns string, names []string) string {
	if len(names) <= 5 {
		return fmt.Sprintf("kubectl delete jobs -n %s %s", ns, strings.Join(names, " "))
	}
	prefix := commonPrefix(names)
	return fmt.Sprintf("kubectl get jobs -n %s -o name | grep '^job.batch/%s' | xargs kubectl delete -n %s", ns, prefix, ns)
}

func commonPrefix(names []string) string {
	p := names[0]
	for _, n := range names[1:] {
		for !strings.HasPrefix(n, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

func reportBareJobs(p *doctor.Pass, states []jobState, hooks map[string]kube.Webhook) {
	byNS := map[string][]jobState{}
	for _, st := range states {
		byNS[st.job.Namespace] = append(byNS[st.job.Namespace], st)
	}
	nss := make([]string, 0, len(byNS))
	for ns := range byNS {
		nss = append(nss, ns)
	}
	sort.Strings(nss) // findings in a stable order: the fold lists them so
	for _, ns := range nss {
		sts := byNS[ns]
		var names []string
		for _, st := range sts {
			names = append(names, st.job.Name)
		}
		sort.Strings(names)
		msg := fmt.Sprintf("%s in namespace %s %s created no pod", doctor.Plural(len(names), "Job", "Jobs"), ns,
			map[bool]string{true: "has", false: "have"}[len(names) == 1])
		cause, rem := blockingCause(sts, hooks)
		if cause != "" {
			msg += ": " + cause
		}
		rem = append(rem, doctor.Remediation{Text: "read the job controller's events", Command: fmt.Sprintf("kubectl describe job -n %s %s", ns, names[0])},
			doctor.Remediation{Text: "delete the stuck Jobs once their cause is fixed", Command: deleteJobsCommand(ns, names)})
		obj := doctor.ObjectRef{APIVersion: "batch/v1", Kind: "Job", Namespace: ns, Name: names[0]}
		f := doctor.Finding{Object: obj, Message: msg, Count: len(names), Examples: doctor.Examples(names), Remediation: rem,
			Members: members("batch/v1", "Job", ns, names)}
		if cause == "" {
			// Jobs the job controller never started: when the controllers
			// are stalled, that finding is the cause and lists them.
			f.Via, f.ViaChecks = members("batch/v1", "Job", ns, names), []string{ControllersStalled.Name}
		}
		p.Report(f)
	}
}
