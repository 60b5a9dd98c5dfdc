package snapshot

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// Events returns the events matching the field selector a check declared
// with Events(selector); in-memory snapshots are filtered here the way the
// API server would filter them.
func (s *Snapshot) Events(fieldSelector string) []corev1.Event {
	r := Events(fieldSelector)
	l, _ := s.list(r).(*corev1.EventList)
	if l == nil {
		return nil
	}
	if _, exact := s.lists[r]; exact {
		return l.Items
	}
	sel, err := fields.ParseSelector(fieldSelector)
	if err != nil {
		return nil
	}
	var out []corev1.Event
	for _, e := range l.Items {
		if sel.Matches(eventFields(&e)) {
			out = append(out, e)
		}
	}
	return out
}

func eventFields(e *corev1.Event) fields.Set {
	return fields.Set{
		"metadata.name":                  e.Name,
		"metadata.namespace":             e.Namespace,
		"reason":                         e.Reason,
		"type":                           e.Type,
		"source":                         e.Source.Component,
		"involvedObject.kind":            e.InvolvedObject.Kind,
		"involvedObject.name":            e.InvolvedObject.Name,
		"involvedObject.namespace":       e.InvolvedObject.Namespace,
		"involvedObject.uid":             string(e.InvolvedObject.UID),
		"involvedObject.apiVersion":      e.InvolvedObject.APIVersion,
		"involvedObject.fieldPath":       e.InvolvedObject.FieldPath,
		"involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
		"reportingComponent":             e.ReportingController,
	}
}
