package kube

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
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

// TestRunOf pins how a Job is linked to its CronJob: by the controller's
// UID, by the controller's name when no listed CronJob has that UID, by
// NAME-<digits> when the Job has no controller; never across namespaces.
func TestRunOf(t *testing.T) {
	cjs := []batchv1.CronJob{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "backup", UID: "cj-backup"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "report", UID: "cj-report"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "backup"}}, // no UID
	}
	x := newCronJobIndex(cjs)
	ctl := true
	job := func(ns, name, kind, owner string, uid types.UID) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if kind != "" {
			j.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: kind, Name: owner, UID: uid, Controller: &ctl}}
		}
		return j
	}
	for _, c := range []struct {
		name string
		job  *batchv1.Job
		want string // namespace/name, "" for none
	}{
		{"by UID", job("ops", "x-1", "CronJob", "backup", "cj-backup"), "ops/backup"},
		{"UID wins over name", job("ops", "x-1", "CronJob", "backup", "cj-report"), "ops/report"},
		{"unknown UID: by name", job("ops", "x-1", "CronJob", "backup", "old-uid"), "ops/backup"},
		{"no UID: by name", job("web", "x-1", "CronJob", "backup", ""), "web/backup"},
		{"UID of another namespace: by name", job("web", "x-1", "CronJob", "backup", "cj-backup"), "web/backup"},
		{"CronJob not listed", job("ops", "gone-1", "CronJob", "gone", "cj-gone"), ""},
		{"another controller", job("ops", "backup-29410260", "Workflow", "backup", "wf"), ""},
		{"no controller: name pattern", job("ops", "backup-29410260", "", "", ""), "ops/backup"},
		{"no controller: suffix not numeric", job("ops", "backup-manual", "", "", ""), ""},
		{"no controller: no suffix", job("ops", "backup-", "", "", ""), ""},
		{"no controller: a short number is a hand-made Job", job("ops", "backup-1", "", "", ""), ""},
		{"no controller: other namespace", job("dev", "backup-29410260", "", "", ""), ""},
	} {
		got := ""
		if cj := x.RunOf(c.job); cj != nil {
			got = cj.Namespace + "/" + cj.Name
		}
		if got != c.want {
			t.Errorf("%s: RunOf = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestOwnersClimbToCronJob: a pod's top owner is the CronJob whose run its
// Job is, by UID or, when the Job lost its owner reference, by name.
func TestOwnersClimbToCronJob(t *testing.T) {
	ctl := true
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "backup", UID: "cj"}}
	owned := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "backup-1", UID: "j1",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: "backup", UID: "cj", Controller: &ctl}}}}
	orphan := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "backup-29410260", UID: "j2"}}
	pod := func(name string, job *batchv1.Job) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: name,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: &ctl}}}}
	}
	// A hand-made Job whose name only looks like a run is its own workload.
	manual := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "backup-2", UID: "j3"}}
	s, err := snapshot.FromObjects(cj, owned, orphan, manual, pod("a", owned), pod("b", orphan))
	if err != nil {
		t.Fatal(err)
	}
	o := OwnersOf(s)
	for _, p := range s.Pods() {
		if w, ok := o.Top(p); !ok || w.Ref.Kind != "CronJob" || w.Ref.Name != "backup" {
			t.Errorf("pod %s: top %v", p.Name, w.Ref)
		}
	}
	var jobs []string
	for w := range TopWorkloads(s) {
		if w.Ref.Kind == "Job" {
			jobs = append(jobs, w.Ref.Name)
		}
	}
	if len(jobs) != 1 || jobs[0] != "backup-2" {
		t.Errorf("top-level Jobs %v, want only the hand-made backup-2 (the others are runs of the CronJob)", jobs)
	}
}
