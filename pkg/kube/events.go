package kube

import (
	"regexp"
	"strings"
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

// aggregated matches the mark client-go's event aggregator puts on a
// message when it folds similar events into one, "(combined from similar
// events): " before it (and, as some recorders and exporters write it,
// after it), so that the count, not the text, says it repeated.
var aggregated = regexp.MustCompile(`(?i)^(?:\s*\(combined from similar events\)\s*:?\s*)+|(?:\s*\(combined from similar events\)\s*\.?)+\s*$`)

// EventMessage is an event's message without the aggregator's mark. The
// message of very old recorders, "(events with common reason combined)",
// is the whole of what they kept and stays as it is.
func EventMessage(msg string) string {
	if out := strings.TrimSpace(aggregated.ReplaceAllString(msg, "")); out != "" {
		return out
	}
	return msg
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
