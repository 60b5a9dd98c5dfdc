package checks

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

// The words of classified Warning events (kube.EventCause) and evictions.

// eventDetail is the cause a Warning event gives, in words, from the
// facts its message holds; "" when only the quoted message can say it.
func eventDetail(c kube.EventCause) string {
	switch c.Class {
	case kube.EventMultiAttach:
		s := fmt.Sprintf("volume %s is attached to another node (ReadWriteOnce)", c.Subject)
		if len(c.Holders) > 0 {
			s += ", used by pod " + strings.Join(c.Holders, ", ")
		}
		return s
	case kube.EventVolumeMissing:
		if c.Volume != "" {
			return fmt.Sprintf("volume %s cannot be mounted: %s does not exist", c.Volume, c.Subject)
		}
		return c.Subject + " does not exist"
	case kube.EventEvicted:
		if c.Eviction != nil {
			return evictionShort(*c.Eviction)
		}
	case kube.EventQuota:
		if q := c.Quota; q != nil {
			return fmt.Sprintf("ResourceQuota %s is exhausted: requested %s, used %s, limited %s", c.Subject, q.Requested, q.Used, q.Limited)
		}
		return fmt.Sprintf("ResourceQuota %s requires every container to declare %s", c.Subject, c.MustDeclare)
	case kube.EventLimitRange:
		var out []string
		for _, l := range c.Limits {
			out = append(out, limitBreachWords(l))
		}
		return strings.Join(out, "; ")
	case kube.EventPodSecurity:
		return fmt.Sprintf("the namespace enforces Pod Security %q: %s", c.Subject, c.Violations)
	case kube.EventServiceAccount:
		return fmt.Sprintf("service account %s does not exist", c.Subject)
	}
	return ""
}

// limitBreachWords is one LimitRange bound a pod breaks: "a LimitRange
// allows a maximum memory of 512Mi per Container, the limit is 1Gi".
func limitBreachWords(l kube.LimitBreach) string {
	switch {
	case l.Ratio && l.Missing:
		return fmt.Sprintf("a LimitRange allows a %s limit/request ratio of %s per %s, which needs a %s: none is set (or it is 0)", l.Resource, l.Allowed, l.Per, l.Field)
	case l.Ratio:
		return fmt.Sprintf("a LimitRange allows a %s limit/request ratio of %s per %s, the pod has %s", l.Resource, l.Allowed, l.Per, l.Actual)
	case l.Missing:
		return fmt.Sprintf("a LimitRange allows a %s %s of %s per %s and sets no default %s %s: none is set", l.Bound, l.Resource, l.Allowed, l.Per, l.Resource, l.Field)
	}
	return fmt.Sprintf("a LimitRange allows a %s %s of %s per %s, the %s is %s", l.Bound, l.Resource, l.Allowed, l.Per, l.Field, l.Actual)
}

// limitRangeFit is the command that sets every container's requests and
// limits to the LimitRange bounds they break (per Container bounds only; a
// ratio or a bound per Pod has no single value to set), nil when there is
// none: "kubectl set resources deployment/api -n shop --limits=cpu=1".
func limitRangeFit(kindName, ns string, ls []kube.LimitBreach) *doctor.Remediation {
	var limits, requests []string
	for _, l := range ls {
		if l.Ratio || !strings.EqualFold(l.Per, "Container") {
			continue
		}
		v := l.Resource + "=" + l.Allowed
		if l.Field == "limit" && !slices.Contains(limits, v) {
			limits = append(limits, v)
		} else if l.Field == "request" && !slices.Contains(requests, v) {
			requests = append(requests, v)
		}
	}
	if len(limits) == 0 && len(requests) == 0 {
		return nil
	}
	cmd := fmt.Sprintf("kubectl set resources %s -n %s", kindName, ns)
	if len(limits) > 0 {
		cmd += " --limits=" + strings.Join(limits, ",")
	}
	if len(requests) > 0 {
		cmd += " --requests=" + strings.Join(requests, ",")
	}
	return &doctor.Remediation{Text: "fit its containers into the LimitRange's bounds (this sets them on every container; add -c NAME for one), or change the LimitRange", Command: cmd}
}

// evictionShort is an eviction in a few words: "node short of memory",
// "container logger over its ephemeral-storage limit 500Mi".
func evictionShort(e kube.Eviction) string {
	switch e.Kind {
	case kube.EvictNodePressure:
		return "node short of " + e.Resource
	case kube.EvictNodeCondition:
		return "refused at admission: node had " + e.Resource
	case kube.EvictContainerLimit:
		c := ""
		if len(e.Containers) > 0 {
			c = " " + e.Containers[0].Name
		}
		return fmt.Sprintf("container%s over its ephemeral-storage limit %s", c, e.Limit)
	case kube.EvictPodLimit:
		return "pod over its ephemeral-storage limit " + e.Limit
	case kube.EvictEmptyDirLimit:
		return fmt.Sprintf("emptyDir %s over its sizeLimit %s", e.Volume, e.Limit)
	case kube.EvictCriticalPod:
		return "preempted by the kubelet for a critical pod"
	case kube.EvictTaint:
		return "deleted for a NoExecute taint of its node"
	case kube.EvictPreempted:
		return "preempted by the scheduler for a higher-priority pod"
	}
	return "evicted"
}

// declares says what the pod's containers declare for a resource: "no
// container declares a memory request or limit", "every container
// requests memory (512Mi), app limits it to 1Gi"... For pids and
// inodes, which no pod can request, it says so.
func declares(spec *corev1.PodSpec, resource string) string {
	if spec == nil {
		return ""
	}
	switch resource {
	case "pids", "inodes":
		return resource + " cannot be requested or limited per container: the kubelet's podPidsLimit and the node's disk bound them"
	case "memory", "ephemeral-storage":
	default:
		return ""
	}
	name := corev1.ResourceName(resource)
	var req, lim, none []string
	for _, c := range spec.Containers {
		r, hasR := c.Resources.Requests[name]
		l, hasL := c.Resources.Limits[name]
		switch {
		case hasR && hasL:
			req = append(req, fmt.Sprintf("%s requests %s", c.Name, r.String()))
			lim = append(lim, fmt.Sprintf("%s limit %s", c.Name, l.String()))
		case hasR:
			req = append(req, fmt.Sprintf("%s requests %s", c.Name, r.String()))
		case hasL:
			// A limit alone defaults the request to the limit.
			lim = append(lim, fmt.Sprintf("%s limit %s (request defaults to it)", c.Name, l.String()))
		default:
			none = append(none, c.Name)
		}
	}
	if len(none) == len(spec.Containers) {
		return fmt.Sprintf("no container requests or limits %s, so the kubelet evicts these pods first when the node runs short", resource)
	}
	parts := append(req, lim...)
	s := resource + ": " + strings.Join(parts, ", ")
	if len(none) > 0 {
		s += fmt.Sprintf("; %s declares none", strings.Join(none, ", "))
	}
	return s
}

// sandboxShort names a sandbox failure's cause in a workload's finding.
var sandboxShort = map[kube.SandboxCause]string{
	kube.SandboxIPExhausted:    "pod IPs exhausted",
	kube.SandboxCNINotReady:    "CNI not ready",
	kube.SandboxRuntimeTimeout: "runtime timeout",
	kube.SandboxOther:          "runtime error",
}
