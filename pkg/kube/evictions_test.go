package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestParseEvictionFacts(t *testing.T) {
	e, ok := ParseEviction("The node was low on resource: memory. Threshold quantity: 100Mi, available: 91396Ki. Container app was using 1532812Ki, request is 512Mi, has larger consumption of memory. Container side was using 300Mi, request is 0, has larger consumption of memory. ")
	if !ok || e.Kind != EvictNodePressure || e.Resource != "memory" || e.Threshold != "100Mi" || e.Available != "91396Ki" {
		t.Fatalf("got %+v", e)
	}
	if len(e.Containers) != 2 || e.Containers[0] != (ContainerUsage{"app", "1532812Ki", "512Mi"}) || e.Containers[1].Request != "0" {
		t.Errorf("containers %+v", e.Containers)
	}
	e, _ = ParseEviction("The node was low on resource: memory. Threshold quantity: 750Mi, available: 612384Ki. Pod web-0 was using 2Gi, request is 1Gi, has larger consumption of memory. ")
	if e.PodUsage == nil || *e.PodUsage != (ContainerUsage{"web-0", "2Gi", "1Gi"}) || len(e.Containers) != 0 {
		t.Errorf("pod-level usage: %+v", e)
	}
	if _, ok := ParseEviction("Stopping container app"); ok {
		t.Error("a kill that is no eviction parsed as one")
	}
	// The status message may be empty: the DisruptionTarget condition holds it.
	p := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Conditions: []corev1.PodCondition{{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "TerminationByKubelet",
		Message: "The node was low on resource: pids. Threshold quantity: 1024, available: 312. "}}}}
	if !PodEvicted(p) || EvictionOf(p).Resource != "pids" {
		t.Errorf("from the condition: %+v", EvictionOf(p))
	}
}
