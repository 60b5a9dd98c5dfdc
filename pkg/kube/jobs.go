package kube

import (
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
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

// CronJobIndex finds the CronJob that started a Job.
type CronJobIndex struct {
	byUID  map[types.UID]*batchv1.CronJob
	byName map[string]*batchv1.CronJob // namespace/name
}

type cronJobsKey struct{}

// CronJobsOf returns the snapshot's CronJob index, built once per snapshot.
func CronJobsOf(s *snapshot.Snapshot) *CronJobIndex {
	return snapshot.Memo(s, cronJobsKey{}, func() *CronJobIndex { return newCronJobIndex(s.CronJobs()) })
}

// newCronJobIndex indexes the CronJobs by UID and by namespace and name.
func newCronJobIndex(cjs []batchv1.CronJob) *CronJobIndex {
	x := &CronJobIndex{byUID: map[types.UID]*batchv1.CronJob{}, byName: map[string]*batchv1.CronJob{}}
	for i := range cjs {
		if cjs[i].UID != "" {
			x.byUID[cjs[i].UID] = &cjs[i]
		}
		x.byName[cjs[i].Namespace+"/"+cjs[i].Name] = &cjs[i]
	}
	return x
}

// RunOf returns the listed CronJob whose run the Job is, nil when none.
// The Job's controller reference decides, by UID; when no listed CronJob
// has that UID (a reference written without one, or a CronJob recreated
// under the same name) by the name it gives. A Job without a controller is
// a run of the CronJob whose name it extends with a numeric suffix
// (NAME-29410260: the CronJob controller names each run after its
// scheduled minute), so a run whose owner reference was removed still
// counts.
func (x *CronJobIndex) RunOf(j *batchv1.Job) *batchv1.CronJob {
	// minRunSuffix: the scheduled minute since the epoch has 8 digits
	// (until the year 2160); "backup-1" is not a run of backup.
	const minRunSuffix = 8
	if c := metav1.GetControllerOfNoCopy(j); c != nil {
		if c.Kind != "CronJob" {
			return nil
		}
		if cj := x.byUID[c.UID]; cj != nil && c.UID != "" && cj.Namespace == j.Namespace {
			return cj
		}
		return x.byName[j.Namespace+"/"+c.Name]
	}
	i := strings.LastIndexByte(j.Name, '-')
	if i <= 0 || len(j.Name)-i-1 < minRunSuffix || strings.Trim(j.Name[i+1:], "0123456789") != "" {
		return nil
	}
	return x.byName[j.Namespace+"/"+j.Name[:i]]
}
