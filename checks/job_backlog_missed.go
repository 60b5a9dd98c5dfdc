package checks

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/robfig/cron/v3"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

// missedSlack is how late a scheduled run may be before it counts as
// missed: the cronjob controller checks every 10 seconds, but a busy
// controller manager or a restart delays it.
const missedSlack = 5 * time.Minute

// missedRuns counts the runs a CronJob's schedule asked for after its last
// scheduled run (or its creation) that are missedSlack overdue, and when
// the first of them was due; 1000 at the most.
func missedRuns(cj *batchv1.CronJob, now time.Time) (n int, first time.Time, ok bool) {
	spec := cj.Spec.Schedule
	if tz := cj.Spec.TimeZone; tz != nil && *tz != "" {
		spec = "CRON_TZ=" + *tz + " " + spec
	}
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return 0, time.Time{}, false
	}
	last := cj.CreationTimestamp.Time
	if t := cj.Status.LastScheduleTime; t != nil && t.After(last) {
		last = t.Time
	}
	if last.IsZero() {
		return 0, time.Time{}, false
	}
	for next := sched.Next(last); !next.IsZero() && now.Sub(next) > missedSlack && n < 1000; next = sched.Next(next) {
		if n == 0 {
			first = next
		}
		n++
	}
	return n, first, true
}

// reportMissedSchedule reports a CronJob that has not started a run its
// schedule asked for, with the newest Warning event about it (the
// controller's "too many missed start times") or, when there is none, that
// no controller seems to act on it. A CronJob whose Jobs the API server
// refuses is workload-pods' finding; one that waits for its active run
// (concurrencyPolicy Forbid) is a backlog.
func reportMissedSchedule(p *doctor.Pass, cj *batchv1.CronJob) {
	if (cj.Spec.Suspend != nil && *cj.Spec.Suspend) || cj.DeletionTimestamp != nil {
		return
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent && len(cj.Status.Active) > 0 {
		return
	}
	n, first, ok := missedRuns(cj, p.Now)
	if !ok || n == 0 {
		return
	}
	var newest *kube.Warning
	eventsRead := p.Snapshot.Err(kube.WarningEventReads) == nil
	if eventsRead {
		for _, w := range kube.WarningEventsOf(p.Snapshot).About("CronJob", cj.Namespace, cj.Name, cj.UID) {
			if w.Reason == "FailedCreate" {
				return // refused at admission: workload-pods reports it at the CronJob
			}
			if newest == nil {
				newest = w
			}
		}
	}
	runs := doctor.Plural(n, "scheduled run", "scheduled runs")
	if n == 1000 {
		runs = "1,000 or more scheduled runs"
	}
	since := "its last run"
	if cj.Status.LastScheduleTime == nil {
		since = "it was created"
	}
	msg := fmt.Sprintf("cronjob %s (schedule %q) has started no Job for %s (since %s): %s missed, the first %s ago",
		cj.Name, cj.Spec.Schedule, human(p.Now.Sub(lastOf(cj))), since, runs, human(p.Now.Sub(first)))
	var ev []string
	switch {
	case newest != nil:
		msg += "; the cronjob controller reports " + newest.Reason
		ev = []string{warningLine(p.Now, newest)}
	case eventsRead:
		msg += "; no Warning event about it: the cronjob controller (kube-controller-manager) may not be running, or its clock is off"
	default:
		msg += " (Warning events could not be read to say why)"
	}
	rem := []doctor.Remediation{{Text: "see the CronJob's events and last schedule",
		Command: fmt.Sprintf("kubectl describe cronjob %s -n %s", cj.Name, cj.Namespace)}}
	if cj.Spec.StartingDeadlineSeconds == nil {
		rem = append(rem, doctor.Remediation{Text: "let the controller skip runs it missed instead of giving up after 100 (startingDeadlineSeconds)",
			Command: fmt.Sprintf(`kubectl patch cronjob %s -n %s --type=merge -p '{"spec":{"startingDeadlineSeconds":300}}'`, cj.Name, cj.Namespace)})
	}
	rem = append(rem, doctor.Remediation{Text: "run it once now, by hand",
		Command: fmt.Sprintf("kubectl create job %s-manual -n %s --from=cronjob/%s", cj.Name, cj.Namespace, cj.Name)})
	p.Report(doctor.Finding{Severity: doctor.Warning, Object: doctor.ObjectRef{APIVersion: "batch/v1", Kind: "CronJob", Namespace: cj.Namespace, Name: cj.Name},
		Cause: "missed-schedule", Message: msg, Evidence: ev, Count: n, Remediation: rem})
}

// lastOf is when the CronJob last started a Job, else when it was created.
func lastOf(cj *batchv1.CronJob) time.Time {
	if t := cj.Status.LastScheduleTime; t != nil {
		return t.Time
	}
	return cj.CreationTimestamp.Time
}
