package kube

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

func TestWarningEventsOf(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	ev := func(name, typ, reason, pod, uid string, last time.Time, count int32) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"}, Type: typ, Reason: reason, Message: reason + " of " + pod,
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: pod, UID: types.UID(uid)},
			FirstTimestamp: metav1.NewTime(last.Add(-time.Hour)), LastTimestamp: metav1.NewTime(last), Count: count}
	}
	series := ev("s", "Warning", "BackOff", "web-1", "u1", time.Time{}, 0)
	series.LastTimestamp, series.FirstTimestamp = metav1.Time{}, metav1.Time{}
	series.EventTime = metav1.NewMicroTime(t0.Add(-time.Hour)) // events.k8s.io/v1: eventTime is the first
	series.Series = &corev1.EventSeries{Count: 41, LastObservedTime: metav1.NewMicroTime(t0.Add(-time.Minute))}
	s, err := snapshot.FromObjects(
		ev("a", "Warning", "FailedMount", "web-1", "u1", t0.Add(-10*time.Minute), 3),
		ev("b", "Normal", "Pulled", "web-1", "u1", t0, 1),                            // Normal: a capture holds it, the index does not
		ev("c", "Warning", "FailedMount", "web-1", "old", t0.Add(-2*time.Minute), 1), // an earlier pod of that name
		ev("d", "Warning", "Unhealthy", "web-1", "", t0.Add(-5*time.Minute), 2),      // no uid: kept
		series,
	)
	if err != nil {
		t.Fatal(err)
	}
	x := WarningEventsOf(s)
	if n := len(x.All()); n != 4 {
		t.Fatalf("%d warnings, want 4 (Normal events are not indexed)", n)
	}
	got := x.About("Pod", "shop", "web-1", "u1")
	var reasons []string
	for _, w := range got {
		reasons = append(reasons, w.Reason)
	}
	if len(got) != 3 || got[0].Reason != "BackOff" || got[0].Count != 41 || got[1].Reason != "Unhealthy" || got[2].Reason != "FailedMount" {
		t.Errorf("About = %v, want BackOff (series of 41), Unhealthy, FailedMount newest first", reasons)
	}
	if n := len(x.Reason("FailedMount")); n != 2 {
		t.Errorf("Reason(FailedMount) = %d events, want 2", n)
	}
	if newest := NewestDistinct(2, got, got); len(newest) != 2 || newest[0].Reason != "BackOff" || newest[1].Reason != "Unhealthy" {
		t.Errorf("NewestDistinct = %v, want BackOff, Unhealthy (each once)", newest)
	}
}

// TestEventMessage: the aggregator's mark goes, before or after the
// message, in any case and repeated; a message that is nothing but an old
// recorder's mark stays.
func TestEventMessage(t *testing.T) {
	for in, want := range map[string]string{
		"(combined from similar events): Liveness probe failed: HTTP probe failed with statuscode: 500": "Liveness probe failed: HTTP probe failed with statuscode: 500",
		"(Combined from similar events):(combined from similar events): Back-off pulling image":         "Back-off pulling image",
		"Readiness probe failed: connection refused (combined from similar events)":                     "Readiness probe failed: connection refused",
		"Readiness probe failed: connection refused (combined from similar events).":                    "Readiness probe failed: connection refused",
		"  (combined from similar events) MountVolume.SetUp failed ":                                    "MountVolume.SetUp failed",
		"MountVolume.SetUp failed for volume \"a\" : (combined from similar events) is not a mark here": "MountVolume.SetUp failed for volume \"a\" : (combined from similar events) is not a mark here",
		"(events with common reason combined)":                                                          "(events with common reason combined)",
		"(combined from similar events): ":                                                              "(combined from similar events): ",
		"Created pod: web-1":                                                                            "Created pod: web-1",
	} {
		if got := EventMessage(in); got != want {
			t.Errorf("EventMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWarningsDropTheAggregatorMark: the index holds messages without the
// mark, so a combined event and a plain one of the same text are one
// distinct message.
func TestWarningsDropTheAggregatorMark(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	ev := func(name, msg string, last time.Time) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"}, Type: "Warning", Reason: "Unhealthy", Message: msg,
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web-1", UID: "u1"}, LastTimestamp: metav1.NewTime(last), Count: 3}
	}
	s, err := snapshot.FromObjects(
		ev("a", "Readiness probe failed: connection refused", t0.Add(-time.Hour)),
		ev("b", "(combined from similar events): Readiness probe failed: connection refused", t0),
	)
	if err != nil {
		t.Fatal(err)
	}
	got := NewestDistinct(5, WarningEventsOf(s).About("Pod", "shop", "web-1", "u1"))
	if len(got) != 1 || got[0].Message != "Readiness probe failed: connection refused" || !got[0].Last.Equal(t0) {
		t.Errorf("got %+v, want the newest, unmarked", got)
	}
}
