package kube

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// EventTimes returns when an event was first and last seen and how often,
// reading the series of events.k8s.io-style events (series.lastObservedTime,
// series.count) as kubectl's own event printer does.
func EventTimes(e *corev1.Event) (first, last time.Time, count int) {
	switch {
	case !e.FirstTimestamp.IsZero():
		first = e.FirstTimestamp.Time
	case !e.EventTime.IsZero():
		first = e.EventTime.Time
	default:
		first = e.CreationTimestamp.Time
	}
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		last = e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		last = e.LastTimestamp.Time
	default:
		last = first
	}
	count = int(e.Count)
	if e.Series != nil && int(e.Series.Count) > count {
		count = int(e.Series.Count)
	}
	if count < 1 {
		count = 1
	}
	return first, last, count
}

// EventLast is when the event was last seen.
func EventLast(e *corev1.Event) time.Time {
	_, last, _ := EventTimes(e)
	return last
}

// NewestEvents returns, for each object of the kind the Warning events
// involve, its newest event, keyed "namespace/name".
func NewestEvents(ws []*Warning, kind string) map[string]*corev1.Event {
	out := map[string]*corev1.Event{}
	for _, w := range ws { // newest first
		if w.Kind != kind {
			continue
		}
		key := w.Namespace + "/" + w.Name
		if out[key] == nil {
			out[key] = w.Event
		}
	}
	return out
}
