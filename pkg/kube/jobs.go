package kube

import (
	"sort"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// JobFinished says the Job has ended or is ending: its Complete or Failed
// condition is True, or SuccessCriteriaMet / FailureTarget while its last
// pods terminate (the outcome is decided; nothing new starts).
func JobFinished(j *batchv1.Job) bool {
	return JobSucceeded(j) != nil || JobFailure(j) != nil
}

// JobCondition returns the Job's condition of that type when it is True, else nil.
func JobCondition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if c := &j.Status.Conditions[i]; c.Type == t && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

// ScheduledTimestampAnnotation is set by the CronJob controller on each
// Job it creates: the time the run was scheduled for (RFC 3339).
const ScheduledTimestampAnnotation = "batch.kubernetes.io/cronjob-scheduled-timestamp"

// RunTime is when a CronJob's run was due: its scheduled-timestamp
// annotation, else the time the job controller started it, else (a Job
// not started yet) its creation. Runs are ordered by it, never by
// creation alone: a Job recreated or created by hand
// (kubectl create job --from) is not the newest run for being the newest
// object.
func RunTime(j *batchv1.Job) time.Time {
	if v := j.Annotations[ScheduledTimestampAnnotation]; v != "" {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return t
		}
	}
	if j.Status.StartTime != nil {
		return j.Status.StartTime.Time
	}
	return j.CreationTimestamp.Time
}

// SortRuns orders a CronJob's Jobs newest run first (RunTime, then name).
func SortRuns(jobs []*batchv1.Job) {
	sort.SliceStable(jobs, func(a, b int) bool {
		ta, tb := RunTime(jobs[a]), RunTime(jobs[b])
		if !ta.Equal(tb) {
			return ta.After(tb)
		}
		return jobs[a].Name > jobs[b].Name
	})
}

// JobFailure is the condition that says the Job failed: Failed=True, or
// FailureTarget=True while its pods are still terminating; nil otherwise.
// Its reason is the job controller's: BackoffLimitExceeded,
// DeadlineExceeded, PodFailurePolicy, MaxFailedIndexesExceeded,
// FailedIndexes.
func JobFailure(j *batchv1.Job) *batchv1.JobCondition {
	if c := JobCondition(j, batchv1.JobFailed); c != nil {
		return c
	}
	return JobCondition(j, batchv1.JobFailureTarget)
}

// JobSucceeded is the condition that says the Job succeeded (Complete, or
// SuccessCriteriaMet while its pods terminate), or nil.
func JobSucceeded(j *batchv1.Job) *batchv1.JobCondition {
	if c := JobCondition(j, batchv1.JobComplete); c != nil {
		return c
	}
	return JobCondition(j, batchv1.JobSuccessCriteriaMet)
}
