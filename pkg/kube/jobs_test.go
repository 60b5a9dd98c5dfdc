package kube

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSortRuns: runs are ordered by the time they were due, then by
// start, never by creation alone; a run failing (FailureTarget) or
// succeeding (SuccessCriteriaMet) while its pods terminate is finished.
func TestSortRuns(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2026, 6, 1, h, 0, 0, 0, time.UTC) }
	job := func(name string, created int, scheduled, started int) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(at(created))}}
		if scheduled > 0 {
			j.Annotations = map[string]string{ScheduledTimestampAnnotation: at(scheduled).Format(time.RFC3339)}
		}
		if started > 0 {
			s := metav1.NewTime(at(started))
			j.Status.StartTime = &s
		}
		return j
	}
	runs := []*batchv1.Job{
		job("recreated", 11, 8, 11),    // due at 8, recreated at 11
		job("due-10", 10, 10, 10),      // due at 10
		job("old-controller", 9, 0, 9), // no annotation: started at 9
		job("not-started", 12, 0, 0),   // neither: created at 12
		job("bad-annotation", 7, 0, 7), // replaced below by an unparsable value
	}
	runs[4].Annotations = map[string]string{ScheduledTimestampAnnotation: "yesterday"}
	SortRuns(runs)
	var got []string
	for _, j := range runs {
		got = append(got, j.Name)
	}
	want := []string{"not-started", "due-10", "old-controller", "recreated", "bad-annotation"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
	ending := &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "PodFailurePolicy"}}}}
	if !JobFinished(ending) || JobFailure(ending).Reason != "PodFailurePolicy" || JobSucceeded(ending) != nil {
		t.Error("a Job with FailureTarget=True is a finished failure")
	}
}
