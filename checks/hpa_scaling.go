package checks

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// HPAScaling reports HorizontalPodAutoscalers that cannot scale (target
// missing, metrics unavailable, a utilization target over containers without
// requests) or have been pinned at maxReplicas for long. An HPA that cannot
// compute its metric silently freezes its workload at the current size.
var HPAScaling = &doctor.Check{
	Name:     "hpa-scaling",
	Severity: doctor.Warning,
	Origin:   "everyday",
	Reads:    []snapshot.Resource{snapshot.HorizontalPodAutoscalers},
	// The metrics APIServices, to name why metrics are unavailable.
	Optional: append([]snapshot.Resource{snapshot.APIServices}, kube.WorkloadReads...),
	Run:      runHPAScaling,
	Doc: `HorizontalPodAutoscalers that cannot scale, or are stuck at maxReplicas

## Why it matters
An HPA that cannot read its target or its metrics stops scaling and says so
only in its conditions: the workload stays at whatever size it had when the
metrics went away, and the next traffic peak finds it too small. The classic
causes are a renamed Deployment, metrics-server down (the
` + "`v1beta1.metrics.k8s.io`" + ` APIService unavailable), and a CPU utilization target
over containers that declare no CPU request (` + "`missing request for cpu`" + `). An HPA
that has sat at ` + "`maxReplicas`" + ` for a long time is no longer autoscaling either.

## How it is detected
From the HPAs (autoscaling/v2) and the workloads they target:
- the ` + "`scaleTargetRef`" + ` (Deployment, StatefulSet, ReplicaSet) is not in the
  snapshot, or ` + "`AbleToScale=False`" + ` with reason ` + "`FailedGetScale`" + ` (any kind);
- a Resource or ContainerResource metric with a ` + "`Utilization`" + ` target whose
  containers lack that resource's request, read from the target's pod template;
- ` + "`ScalingActive=False`" + ` with ` + "`FailedGet*Metric`" + ` (resource, pods, object, external,
  container-resource): the metric is unavailable; when the serving
  APIService (` + "`metrics.k8s.io`, `custom.metrics.k8s.io`, `external.metrics.k8s.io`" + `)
  is unavailable it is named as the cause;
- ` + "`ScalingLimited=True`" + ` with reason ` + "`TooManyReplicas`" + ` for more than 30 minutes
  at ` + "`maxReplicas`" + `.
` + "`TooFewReplicas`" + ` at ` + "`minReplicas`" + ` is the normal state of an idle workload and is
never reported.

Several HPAs on one target, once the controller says so (` + "`ScalingActive=False`" + `,
` + "`AmbiguousSelector`" + ` on one of them), are one finding on the target naming them
all: none of them scales it, and the fix keeps one HPA with all the metrics.

## How to fix
Point ` + "`scaleTargetRef`" + ` at the workload that exists, restore the metrics API
(see apiservice-unavailable), add the missing requests to the target's
containers (` + "`kubectl set resources`" + `), or raise ` + "`maxReplicas`" + ` once the
cluster can take it.

## References
- https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/#appendix-horizontal-pod-autoscaler-status-conditions
- https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/#support-for-resource-metrics
- https://github.com/kubernetes-sigs/metrics-server#requirements`,
}

// atMaxGrace: pinned at maxReplicas for longer than this is a finding.
const atMaxGrace = 30 * time.Minute

// metricAPIGroup is the aggregated API that serves each metric source type.
var metricAPIGroup = map[autoscalingv2.MetricSourceType]string{
	autoscalingv2.ResourceMetricSourceType:          "metrics.k8s.io",
	autoscalingv2.ContainerResourceMetricSourceType: "metrics.k8s.io",
	autoscalingv2.PodsMetricSourceType:              "custom.metrics.k8s.io",
	autoscalingv2.ObjectMetricSourceType:            "custom.metrics.k8s.io",
	autoscalingv2.ExternalMetricSourceType:          "external.metrics.k8s.io",
}

// metricReasons maps ScalingActive=False reasons to the metric type that failed.
var metricReasons = map[string]autoscalingv2.MetricSourceType{
	"FailedGetResourceMetric":          autoscalingv2.ResourceMetricSourceType,
	"FailedGetContainerResourceMetric": autoscalingv2.ContainerResourceMetricSourceType,
	"FailedGetPodsMetric":              autoscalingv2.PodsMetricSourceType,
	"FailedGetObjectMetric":            autoscalingv2.ObjectMetricSourceType,
	"FailedGetExternalMetric":          autoscalingv2.ExternalMetricSourceType,
}

func hpaCondition(h *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType) *autoscalingv2.HorizontalPodAutoscalerCondition {
	for i := range h.Status.Conditions {
		if h.Status.Conditions[i].Type == t {
			return &h.Status.Conditions[i]
		}
	}
	return nil
}

// metricsGrace is how long an HPA's metrics may be unavailable before it
// is reported.
const metricsGrace = 5 * time.Minute

func runHPAScaling(p *doctor.Pass) error {
	owners := kube.OwnersOf(p.Snapshot)
	hpas := p.Snapshot.HorizontalPodAutoscalers()
	shared := reportSharedTargets(p, hpas)
	for i := range hpas {
		h := &hpas[i]
		if shared[h.Namespace+"/"+h.Name] {
			continue // one finding on the target they share
		}
		ref := kube.Ref("autoscaling/v2", "HorizontalPodAutoscaler", h)
		t := h.Spec.ScaleTargetRef
		target := strings.ToLower(t.Kind) + "/" + t.Name
		active := hpaCondition(h, autoscalingv2.ScalingActive)
		var problems []string
		var rem []doctor.Remediation

		var w *kube.Workload
		listed := false
		switch t.Kind {
		case "Deployment", "StatefulSet", "ReplicaSet":
			r, _ := snapshot.ForKind(t.Kind)
			listed = p.Snapshot.Err(r) == nil // a target whose kind was not read may exist
			w = owners.Find(doctor.ObjectRef{Kind: t.Kind, Namespace: h.Namespace, Name: t.Name})
		}
		// The controller writes FailedGetScale on AbleToScale (older releases on ScalingActive).
		scale := hpaCondition(h, autoscalingv2.AbleToScale)
		if scale == nil || scale.Reason != "FailedGetScale" {
			scale = active
		}
		failedScale := scale != nil && scale.Status == corev1.ConditionFalse && scale.Reason == "FailedGetScale"
		if (listed && w == nil) || failedScale {
			why := fmt.Sprintf("its target %s does not exist in namespace %s", target, h.Namespace)
			if !listed || w != nil {
				why = fmt.Sprintf("it cannot read the scale of its target %s%s (FailedGetScale: %s)", target, forDuration(p.Now, scale.LastTransitionTime), scale.Message)
			}
			// The target's kind is not served at all: the CRD of a custom
			// workload (Argo Rollouts, OpenKruise) is not installed, or
			// was removed with its operator.
			msg := ""
			if scale != nil {
				msg = scale.Message
			}
			if m := unservedKind.FindStringSubmatch(msg); m != nil {
				why += fmt.Sprintf("; the API server serves no kind %s in group %s: its CustomResourceDefinition (and the controller behind it) is not installed, or was removed", m[1], m[2])
				rem = append(rem, doctor.Remediation{Text: "see what the API group serves; reinstall the controller that provides " + m[1] + ", or point the HPA at a workload that exists",
					Command: "kubectl api-resources --api-group=" + m[2]})
			}
			problems = append(problems, why+": it scales nothing")
			rem = append(rem, doctor.Remediation{Text: "find the workload it should target",
				Command: fmt.Sprintf("kubectl get deployments,statefulsets -n %s", h.Namespace)},
				doctor.Remediation{Text: "point it at that workload, or delete it if the workload is gone",
					Command: fmt.Sprintf("kubectl edit hpa %s -n %s", h.Name, h.Namespace)})
			p.Report(doctor.Finding{Object: ref, Message: "hpa " + h.Name + ": " + strings.Join(problems, "; "), Remediation: rem})
			continue
		}

		// Utilization targets over containers without requests: from the spec.
		missingRequest := false
		if w != nil && w.Spec != nil {
			for _, m := range h.Spec.Metrics {
				res, container := corev1.ResourceName(""), ""
				switch {
				case m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Target.Type == autoscalingv2.UtilizationMetricType:
					res = m.Resource.Name
				case m.Type == autoscalingv2.ContainerResourceMetricSourceType && m.ContainerResource != nil && m.ContainerResource.Target.Type == autoscalingv2.UtilizationMetricType:
					res, container = m.ContainerResource.Name, m.ContainerResource.Container
				default:
					continue
				}
				var without []string
				for _, c := range w.Spec.Containers {
					if container != "" && c.Name != container {
						continue
					}
					if _, ok := c.Resources.Requests[res]; !ok {
						without = append(without, c.Name)
					}
				}
				if len(without) == 0 {
					continue
				}
				missingRequest = true
				problems = append(problems, fmt.Sprintf("it scales on %s utilization, but container %s of %s declares no %s request, so utilization cannot be computed (missing request for %s)",
					res, strings.Join(without, ", "), w.KindName(), res, res))
				rem = append(rem, doctor.Remediation{Text: fmt.Sprintf("give the containers a %s request (size it from kubectl top or your metrics)", res),
					Command: fmt.Sprintf("kubectl set resources %s -n %s -c %s --requests=%s=%s", w.KindName(), h.Namespace, without[0], res, defaultRequest(res))})
			}
		}

		// Metrics are routinely missing for a minute while a rollout's new
		// pods start: only a condition older than metricsGrace is a problem,
		// unless an unavailable metrics APIService already explains it.
		if active != nil && active.Status == corev1.ConditionFalse && !missingRequest &&
			(p.Now.Sub(active.LastTransitionTime.Time) >= metricsGrace || kube.UnavailableAPIService(p.Snapshot, metricAPIGroup[metricReasons[active.Reason]]) != nil) {
			if mt, ok := metricReasons[active.Reason]; ok {
				msg := fmt.Sprintf("its %s metric is unavailable%s (%s: %s)", strings.ToLower(string(mt)), forDuration(p.Now, active.LastTransitionTime), active.Reason, active.Message)
				group := metricAPIGroup[mt]
				if a := kube.UnavailableAPIService(p.Snapshot, group); a != nil {
					msg += fmt.Sprintf("; apiservice %s, which serves it, is unavailable (%s)", a.Name, apiServiceWhy(a))
					rem = append(rem, doctor.Remediation{Text: "restore the metrics API first", Command: "kubectl describe apiservice " + a.Name})
				} else {
					rem = append(rem, doctor.Remediation{Text: "check that the " + group + " API serves the metric", Command: "kubectl get apiservices | grep metrics"})
				}
				problems = append(problems, msg+": it cannot scale, the workload stays at "+fmt.Sprint(h.Status.CurrentReplicas)+" replicas")
			} else if active.Reason != "ScalingDisabled" {
				problems = append(problems, fmt.Sprintf("it is not scaling%s (%s: %s)", forDuration(p.Now, active.LastTransitionTime), active.Reason, active.Message))
			}
		}

		if lim := hpaCondition(h, autoscalingv2.ScalingLimited); lim != nil && lim.Status == corev1.ConditionTrue && lim.Reason == "TooManyReplicas" &&
			h.Status.CurrentReplicas >= h.Spec.MaxReplicas && !lim.LastTransitionTime.IsZero() && p.Now.Sub(lim.LastTransitionTime.Time) > atMaxGrace {
			problems = append(problems, fmt.Sprintf("it has been pinned at maxReplicas %d%s: its metrics ask for more replicas than it may scale to",
				h.Spec.MaxReplicas, forDuration(p.Now, lim.LastTransitionTime)))
			rem = append(rem, doctor.Remediation{Text: "raise maxReplicas if the cluster has room, or find why the load grew",
				Command: fmt.Sprintf(`kubectl patch hpa %s -n %s --type=merge -p '{"spec":{"maxReplicas":%d}}'`, h.Name, h.Namespace, h.Spec.MaxReplicas*3/2+1)})
		}
		if len(problems) == 0 {
			continue
		}
		rem = append(rem, doctor.Remediation{Text: "read the HPA's conditions and events", Command: fmt.Sprintf("kubectl describe hpa %s -n %s", h.Name, h.Namespace)})
		p.Report(doctor.Finding{Object: ref, Message: "hpa " + h.Name + " (" + target + "): " + strings.Join(problems, "; "), Remediation: rem})
	}
	return nil
}

// defaultRequest is a placeholder request to start from.
func defaultRequest(r corev1.ResourceName) string {
	if r == corev1.ResourceMemory {
		return "256Mi"
	}
	return "100m"
}

// unservedKind reads the HPA controller's "no matches for kind "Rollout" in
// group "argoproj.io"": the target's kind is not served.
var unservedKind = regexp.MustCompile(`no matches for kind "([^"]+)" in group "([^"]+)"`)

// reportSharedTargets reports targets that several HPAs scale, once the
// HPA controller says it refuses to act on pods more than one HPA selects
// (AmbiguousSelector on one of them), so none of them scales. One finding on the target;
// the HPAs it names are left out of their own findings.
func reportSharedTargets(p *doctor.Pass, hpas []autoscalingv2.HorizontalPodAutoscaler) map[string]bool {
	byTarget := map[string][]*autoscalingv2.HorizontalPodAutoscaler{}
	var keys []string
	for i := range hpas {
		h := &hpas[i]
		t := h.Spec.ScaleTargetRef
		k := h.Namespace + "/" + t.Kind + "/" + t.Name
		if byTarget[k] == nil {
			keys = append(keys, k)
		}
		byTarget[k] = append(byTarget[k], h)
	}
	sort.Strings(keys)
	out := map[string]bool{}
	for _, k := range keys {
		hs := byTarget[k]
		if len(hs) < 2 {
			continue
		}
		var names []string
		var members []doctor.ObjectRef
		var ambiguous *autoscalingv2.HorizontalPodAutoscalerCondition
		for _, h := range hs {
			if c := hpaCondition(h, autoscalingv2.ScalingActive); c != nil && c.Reason == "AmbiguousSelector" && ambiguous == nil {
				ambiguous = c
			}
		}
		if ambiguous == nil {
			continue // the controller has not said so (yet): each HPA is judged on its own
		}
		for _, h := range hs {
			names = append(names, h.Name)
			members = append(members, kube.Ref("autoscaling/v2", "HorizontalPodAutoscaler", h))
			out[h.Namespace+"/"+h.Name] = true
		}
		sort.Strings(names)
		t, ns := hs[0].Spec.ScaleTargetRef, hs[0].Namespace
		target := strings.ToLower(t.Kind) + "/" + t.Name
		msg := fmt.Sprintf("%s is scaled by %d HPAs (%s): the HPA controller acts on no pods that several HPAs select, so none of them scales it", target, len(hs), strings.Join(names, ", "))
		msg += fmt.Sprintf(" (AmbiguousSelector%s)", forDuration(p.Now, ambiguous.LastTransitionTime))
		ref := doctor.ObjectRef{APIVersion: t.APIVersion, Kind: t.Kind, Namespace: ns, Name: t.Name}
		rem := []doctor.Remediation{{Text: "compare their metrics and bounds", Command: fmt.Sprintf("kubectl get hpa %s -n %s -o yaml", strings.Join(names, " "), ns)}}
		// An HPA a controller owns (KEDA's keda-hpa-* for a ScaledObject)
		// comes back when deleted: keep it, and delete the hand-made ones
		// after moving their metrics into it.
		var owned, free []string
		for _, h := range hs {
			if c := metav1.GetControllerOfNoCopy(h); c != nil {
				owned = append(owned, h.Name+" ("+c.Kind+" "+c.Name+")")
			} else {
				free = append(free, h.Name)
			}
		}
		sort.Strings(free)
		switch {
		case len(owned) == 0:
			rem = append(rem, doctor.Remediation{Text: "keep one HPA with all the metrics (an HPA takes several and scales on the highest), then delete the others",
				Command: fmt.Sprintf("kubectl delete hpa %s -n %s", strings.Join(free[1:], " "), ns)})
		case len(free) > 0:
			rem = append(rem, doctor.Remediation{Text: fmt.Sprintf("move the metrics of the hand-made ones into what owns %s, then delete them", strings.Join(owned, ", ")),
				Command: fmt.Sprintf("kubectl delete hpa %s -n %s", strings.Join(free, " "), ns)})
		default:
			rem = append(rem, doctor.Remediation{Text: fmt.Sprintf("each is owned by a controller (%s): remove the target from all but one of them", strings.Join(owned, ", "))})
		}
		p.Report(doctor.Finding{Object: ref, Message: msg, Count: len(hs), Examples: doctor.Examples(names), Members: members, Remediation: rem})
	}
	return out
}
