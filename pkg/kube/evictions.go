package kube

import (
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// EvictionKind says which part of the kubelet ended a pod and why.
type EvictionKind string

const (
	// EvictNodePressure: the node ran short of a resource (memory, disk,
	// inodes, PIDs) and the kubelet's eviction manager picked this pod.
	EvictNodePressure EvictionKind = "node-pressure"
	// EvictNodeCondition: the kubelet refused the pod at admission because
	// the node had a pressure condition ("The node had condition: [DiskPressure]").
	EvictNodeCondition EvictionKind = "node-condition"
	// EvictContainerLimit: a container wrote more than its own
	// ephemeral-storage limit (logs and writable layer).
	EvictContainerLimit EvictionKind = "container-ephemeral-limit"
	// EvictPodLimit: the pod's containers, emptyDirs and logs together
	// passed the sum of its containers' ephemeral-storage limits.
	EvictPodLimit EvictionKind = "pod-ephemeral-limit"
	// EvictEmptyDirLimit: an emptyDir volume passed its sizeLimit.
	EvictEmptyDirLimit EvictionKind = "emptydir-limit"
	// EvictCriticalPod: the kubelet preempted the pod to admit a critical one.
	EvictCriticalPod EvictionKind = "critical-pod-preemption"
	// EvictTaint: the taint manager deletes the pod for a NoExecute taint
	// on its node it does not tolerate (DisruptionTarget DeletionByTaintManager).
	EvictTaint EvictionKind = "taint-manager"
	// EvictPreempted: the scheduler preempts the pod for a higher-priority
	// one (DisruptionTarget PreemptionByScheduler).
	EvictPreempted EvictionKind = "scheduler-preemption"
	// EvictUnknown: an eviction whose message has no shape we know: quoted.
	EvictUnknown EvictionKind = "unknown"
)

// Eviction is what the kubelet wrote when it evicted a pod, parsed from the
// message of the pod's status (or its DisruptionTarget condition, or its
// Evicted event), in the forms of pkg/kubelet/eviction (helpers.go:
// nodeLowMessageFmt, thresholdMetMessageFmt, containerMessageFmt,
// containerEphemeralStorageMessageFmt, podEphemeralStorageMessageFmt,
// emptyDirMessageFmt, nodeConditionMessageFmt) and pkg/kubelet/preemption.
type Eviction struct {
	Kind EvictionKind
	// Resource is the resource the pod was evicted for, as a pod spec
	// names it where it can: memory, ephemeral-storage, pids, inodes;
	// for EvictNodeCondition the condition ("DiskPressure").
	Resource string
	// Threshold and Available are the eviction threshold and what was
	// left when it was crossed ("100Mi", "91396Ki").
	Threshold, Available string
	// Containers are the containers the kubelet said used more than they
	// request (node pressure), or the one over its limit.
	Containers []ContainerUsage
	// Volume is the emptyDir over its sizeLimit; Limit the limit passed
	// (container, pod or emptyDir).
	Volume, Limit string
	// PodUsage is the pod-level usage the kubelet names when pod-level
	// resources are set ("Pod web-0 was using 2Gi, request is 1Gi").
	PodUsage *ContainerUsage
}

// ContainerUsage is one "Container app was using 1532812Ki, request is 512Mi".
type ContainerUsage struct{ Name, Usage, Request string }

var (
	evictLowOn      = regexp.MustCompile(`The node was low on resource: \[?([A-Za-z.-]+)\]?\.`)
	evictThreshold  = regexp.MustCompile(`Threshold quantity: ([^,]+), available: (\S+?)\.(?:\s|$)`)
	evictContainer  = regexp.MustCompile(`Container (\S+) was using (\S+), request is (\S+), has larger consumption of`)
	evictPodUsage   = regexp.MustCompile(`Pod (\S+) was using (\S+), request is (\S+), has larger consumption of`)
	evictContLimit  = regexp.MustCompile(`Container (\S+) exceeded its local ephemeral storage limit "([^"]*)"`)
	evictPodLimit   = regexp.MustCompile(`Pod ephemeral local storage usage exceeds the total limit of containers (\S+?)\.?\s*$`)
	evictEmptyDir   = regexp.MustCompile(`Usage of EmptyDir volume "([^"]+)" exceeds the limit "([^"]*)"`)
	evictCondition  = regexp.MustCompile(`The node had condition: \[([^\]]*)\]`)
	evictPreempting = "Preempted in order to admit critical pod"
)

// ParseEviction reads the message of an eviction. ok is false when the
// message says nothing of an eviction.
func ParseEviction(msg string) (Eviction, bool) {
	m := strings.TrimSpace(msg)
	switch {
	case evictContLimit.MatchString(m):
		g := evictContLimit.FindStringSubmatch(m)
		return Eviction{Kind: EvictContainerLimit, Resource: "ephemeral-storage", Limit: g[2], Containers: []ContainerUsage{{Name: g[1]}}}, true
	case evictPodLimit.MatchString(m):
		g := evictPodLimit.FindStringSubmatch(m)
		return Eviction{Kind: EvictPodLimit, Resource: "ephemeral-storage", Limit: g[1]}, true
	case evictEmptyDir.MatchString(m):
		g := evictEmptyDir.FindStringSubmatch(m)
		return Eviction{Kind: EvictEmptyDirLimit, Resource: "ephemeral-storage", Volume: g[1], Limit: g[2]}, true
	case evictCondition.MatchString(m):
		g := evictCondition.FindStringSubmatch(m)
		return Eviction{Kind: EvictNodeCondition, Resource: strings.Join(strings.Fields(g[1]), ", ")}, true
	case strings.HasPrefix(m, evictPreempting):
		return Eviction{Kind: EvictCriticalPod}, true
	case evictLowOn.MatchString(m):
		g := evictLowOn.FindStringSubmatch(m)
		e := Eviction{Kind: EvictNodePressure, Resource: evictionResource(g[1])}
		if t := evictThreshold.FindStringSubmatch(m); t != nil {
			e.Threshold, e.Available = strings.TrimSpace(t[1]), t[2]
		}
		for _, c := range evictContainer.FindAllStringSubmatch(m, -1) {
			e.Containers = append(e.Containers, ContainerUsage{Name: c[1], Usage: c[2], Request: c[3]})
		}
		if p := evictPodUsage.FindStringSubmatch(m); p != nil {
			e.PodUsage = &ContainerUsage{Name: p[1], Usage: p[2], Request: p[3]}
		}
		return e, true
	}
	return Eviction{Kind: EvictUnknown}, false
}

// evictionResource names what older kubelets called by their signal
// (nodefsInodes, imagefs.available...) as current ones do.
func evictionResource(s string) string {
	l := strings.ToLower(s)
	switch {
	case strings.Contains(l, "inode"):
		return "inodes"
	case strings.HasPrefix(l, "memory") || strings.HasPrefix(l, "allocatablememory"):
		return "memory"
	case strings.HasPrefix(l, "nodefs") || strings.HasPrefix(l, "imagefs") || strings.HasPrefix(l, "containerfs"):
		return "ephemeral-storage"
	case strings.HasPrefix(l, "pid"):
		return "pids"
	}
	return s
}

// PodEvicted says whether the kubelet ended the pod by eviction: Failed
// with reason Evicted (node pressure, local storage limits, refusal under
// a pressure condition) or Preempting (critical pod admission).
func PodEvicted(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed && (p.Status.Reason == "Evicted" || p.Status.Reason == "Preempting")
}

// EvictionOf parses the pod's eviction from its status message, else from
// its DisruptionTarget condition's message.
func EvictionOf(p *corev1.Pod) Eviction {
	if e, ok := ParseEviction(p.Status.Message); ok {
		return e
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			if e, ok := ParseEviction(c.Message); ok {
				return e
			}
		}
	}
	if p.Status.Reason == "Preempting" {
		return Eviction{Kind: EvictCriticalPod}
	}
	return Eviction{Kind: EvictUnknown}
}

// DisruptionOf reads a DisruptionTarget condition written by the control
// plane rather than the kubelet: the taint manager deleting the pod for a
// NoExecute taint, the scheduler preempting it. Such pods exist only while
// they terminate (longer when their node is gone). Voluntary evictions
// (the Eviction API: drains) are no problem and not returned.
func DisruptionOf(p *corev1.Pod) (Eviction, time.Time, string, bool) {
	for _, c := range p.Status.Conditions {
		if c.Type != corev1.DisruptionTarget || c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Reason {
		case "DeletionByTaintManager":
			return Eviction{Kind: EvictTaint}, c.LastTransitionTime.Time, c.Message, true
		case "PreemptionByScheduler":
			return Eviction{Kind: EvictPreempted}, c.LastTransitionTime.Time, c.Message, true
		}
	}
	return Eviction{}, time.Time{}, "", false
}

// EvictedAt is when the pod was evicted, from what its status recorded:
// the DisruptionTarget condition, the containers' termination, the Ready
// condition turning False; else its start or creation (an upper bound on
// how long ago it was).
func EvictedAt(p *corev1.Pod) time.Time {
	var t time.Time
	later := func(x time.Time) {
		if x.After(t) {
			t = x
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Terminated != nil {
			later(cs.State.Terminated.FinishedAt.Time)
		}
	}
	if !t.IsZero() {
		return t
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status != corev1.ConditionTrue {
			later(c.LastTransitionTime.Time)
		}
	}
	if !t.IsZero() {
		return t
	}
	if p.Status.StartTime != nil {
		return p.Status.StartTime.Time
	}
	return p.CreationTimestamp.Time
}
