package offline

import (
	"encoding/json"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Older dumps and bundles hold objects in API versions that servers no
// longer serve (batch/v1beta1 CronJobs, policy/v1beta1 PDBs,
// extensions/v1beta1 Ingresses ...). Checks read the current versions, so
// each is converted here, kind by kind: where the fields are the same
// (the version went GA unchanged) only apiVersion changes; where they moved,
// they are moved as the API server's own conversion does; where the old
// shape cannot be mapped faithfully, the object is skipped with a reason.

// conversion maps "apiVersion kind" to the version checks read, and the
// function that rewrites the object (nil: the fields decode as they are).
type conversion struct {
	target string
	fn     func(map[string]any) error
}

var conversions = map[string]conversion{
	"batch/v1beta1 CronJob":  {target: "batch/v1"},
	"batch/v2alpha1 CronJob": {target: "batch/v1"},
	// policy/v1beta1: an empty selector matched no pod; in v1 it matches
	// every pod of the namespace.
	"policy/v1beta1 PodDisruptionBudget":                                  {target: "policy/v1", fn: pdbV1beta1},
	"extensions/v1beta1 Ingress":                                          {target: "networking.k8s.io/v1", fn: nil}, // see convertIngress
	"networking.k8s.io/v1beta1 Ingress":                                   {target: "networking.k8s.io/v1", fn: nil},
	"networking.k8s.io/v1beta1 IngressClass":                              {target: "networking.k8s.io/v1"},
	"autoscaling/v2beta2 HorizontalPodAutoscaler":                         {target: "autoscaling/v2"},
	"autoscaling/v1 HorizontalPodAutoscaler":                              {target: "autoscaling/v2", fn: nil}, // see convertHPAv1
	"extensions/v1beta1 Deployment":                                       {target: "apps/v1", fn: appsBeta},
	"extensions/v1beta1 DaemonSet":                                        {target: "apps/v1", fn: appsBeta},
	"extensions/v1beta1 ReplicaSet":                                       {target: "apps/v1", fn: appsBeta},
	"apps/v1beta1 Deployment":                                             {target: "apps/v1", fn: appsBeta},
	"apps/v1beta1 StatefulSet":                                            {target: "apps/v1", fn: appsBeta},
	"apps/v1beta1 ControllerRevision":                                     {target: "apps/v1"},
	"apps/v1beta2 Deployment":                                             {target: "apps/v1", fn: appsBeta},
	"apps/v1beta2 DaemonSet":                                              {target: "apps/v1", fn: appsBeta},
	"apps/v1beta2 ReplicaSet":                                             {target: "apps/v1", fn: appsBeta},
	"apps/v1beta2 StatefulSet":                                            {target: "apps/v1", fn: appsBeta},
	"apps/v1beta2 ControllerRevision":                                     {target: "apps/v1"},
	"discovery.k8s.io/v1beta1 EndpointSlice":                              {target: "discovery.k8s.io/v1", fn: endpointSliceV1beta1},
	"admissionregistration.k8s.io/v1beta1 MutatingWebhookConfiguration":   {target: "admissionregistration.k8s.io/v1"},
	"admissionregistration.k8s.io/v1beta1 ValidatingWebhookConfiguration": {target: "admissionregistration.k8s.io/v1"},
	"apiregistration.k8s.io/v1beta1 APIService":                           {target: "apiregistration.k8s.io/v1"},
	// Flux before 2.3 (HelmRelease) and 2.0 (Kustomization): the fields
	// read (suspend, conditions, revisions) are the same.
	"helm.toolkit.fluxcd.io/v2beta1 HelmRelease":        {target: "helm.toolkit.fluxcd.io/v2"},
	"helm.toolkit.fluxcd.io/v2beta2 HelmRelease":        {target: "helm.toolkit.fluxcd.io/v2"},
	"kustomize.toolkit.fluxcd.io/v1beta2 Kustomization": {target: "kustomize.toolkit.fluxcd.io/v1"},
	// ESO before 0.16.2 served v1beta1 with the same fields read.
	"external-secrets.io/v1beta1 ExternalSecret":                      {target: "external-secrets.io/v1"},
	"external-secrets.io/v1beta1 SecretStore":                         {target: "external-secrets.io/v1"},
	"external-secrets.io/v1beta1 ClusterSecretStore":                  {target: "external-secrets.io/v1"},
	"storage.k8s.io/v1beta1 StorageClass":                             {target: "storage.k8s.io/v1"},
	"flowcontrol.apiserver.k8s.io/v1beta1 PriorityLevelConfiguration": {target: "flowcontrol.apiserver.k8s.io/v1", fn: plcAssured},
	"flowcontrol.apiserver.k8s.io/v1beta2 PriorityLevelConfiguration": {target: "flowcontrol.apiserver.k8s.io/v1", fn: plcAssured},
	"flowcontrol.apiserver.k8s.io/v1beta3 PriorityLevelConfiguration": {target: "flowcontrol.apiserver.k8s.io/v1"},
	"events.k8s.io/v1 Event":                                          {target: "v1", fn: eventsAPI},
	"events.k8s.io/v1beta1 Event":                                     {target: "v1", fn: eventsAPI},
}

// unconvertible names old versions whose shape cannot be mapped faithfully.
var unconvertible = map[string]string{
	"autoscaling/v2beta1 HorizontalPodAutoscaler": "autoscaling/v2beta1 HorizontalPodAutoscalers: metric targets in a removed format, not converted",
}

// convertTarget says which version an object of apiVersion and kind is read
// as, and whether it must be converted or skipped (skip is the reason).
func convertTarget(apiVersion, kind string) (target string, c *conversion, skip string) {
	key := apiVersion + " " + kind
	if reason, ok := unconvertible[key]; ok {
		return "", nil, reason
	}
	if conv, ok := conversions[key]; ok {
		return conv.target, &conv, ""
	}
	return apiVersion, nil, ""
}

// convert returns the version the object is read as and its JSON in that
// version, or a reason to skip it.
func convert(apiVersion, kind string, raw []byte) (string, []byte, string, error) {
	target, c, skip := convertTarget(apiVersion, kind)
	if skip != "" || c == nil {
		return target, raw, skip, nil
	}
	switch {
	case kind == "Ingress":
		out, err := convertIngress(raw)
		return target, out, "", err
	case kind == "HorizontalPodAutoscaler" && apiVersion == "autoscaling/v1":
		out, err := convertHPAv1(raw)
		return target, out, "", err
	case c.fn == nil:
		return target, raw, "", nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", nil, "", err
	}
	if err := c.fn(m); err != nil {
		return "", nil, "", err
	}
	m["apiVersion"] = target
	out, err := json.Marshal(m)
	return target, out, "", err
}

func obj(m map[string]any, key string) map[string]any {
	v, _ := m[key].(map[string]any)
	return v
}

// pdbV1beta1 does what the API server does when it serves a v1beta1 PDB
// with an empty selector as v1: a selector that matches nothing.
func pdbV1beta1(m map[string]any) error {
	spec := obj(m, "spec")
	if spec == nil {
		return nil
	}
	if sel, ok := spec["selector"].(map[string]any); ok && len(obj(sel, "matchLabels")) == 0 && sel["matchExpressions"] == nil {
		spec["selector"] = map[string]any{"matchExpressions": []any{map[string]any{
			"key": "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match", "operator": "Exists"}}}
	}
	return nil
}

// appsBeta: extensions/v1beta1 and apps/v1beta1 workloads could omit the
// selector (it defaulted to the template's labels); apps/v1 requires it.
func appsBeta(m map[string]any) error {
	spec := obj(m, "spec")
	if spec == nil {
		return nil
	}
	if _, ok := spec["selector"]; !ok {
		if labels := obj(obj(obj(spec, "template"), "metadata"), "labels"); labels != nil {
			spec["selector"] = map[string]any{"matchLabels": labels}
		}
	}
	delete(spec, "rollbackTo")
	delete(spec, "templateGeneration")
	return nil
}

// endpointSliceV1beta1: topology became deprecatedTopology, its zone key the
// zone field.
func endpointSliceV1beta1(m map[string]any) error {
	eps, _ := m["endpoints"].([]any)
	for _, e := range eps {
		ep, _ := e.(map[string]any)
		if ep == nil {
			continue
		}
		if topo := obj(ep, "topology"); topo != nil {
			if z, ok := topo["topology.kubernetes.io/zone"].(string); ok {
				ep["zone"] = z
				delete(topo, "topology.kubernetes.io/zone")
			}
			if n, ok := topo["kubernetes.io/hostname"].(string); ok && ep["nodeName"] == nil {
				ep["nodeName"] = n
				delete(topo, "kubernetes.io/hostname")
			}
			ep["deprecatedTopology"] = topo
			delete(ep, "topology")
		}
	}
	return nil
}

// plcAssured: assuredConcurrencyShares was renamed nominalConcurrencyShares
// in v1beta3.
func plcAssured(m map[string]any) error {
	if lim := obj(obj(m, "spec"), "limited"); lim != nil {
		if v, ok := lim["assuredConcurrencyShares"]; ok {
			lim["nominalConcurrencyShares"] = v
			delete(lim, "assuredConcurrencyShares")
		}
	}
	return nil
}

// eventsAPI maps an events.k8s.io Event to the core/v1 Event it is stored
// as (the same object, served by two APIs).
func eventsAPI(m map[string]any) error {
	for from, to := range map[string]string{
		"note": "message", "regarding": "involvedObject", "deprecatedFirstTimestamp": "firstTimestamp",
		"deprecatedLastTimestamp": "lastTimestamp", "deprecatedCount": "count", "deprecatedSource": "source",
		"reportingController": "reportingComponent",
	} {
		if v, ok := m[from]; ok {
			delete(m, from)
			m[to] = v
		}
	}
	return nil
}

// convertIngress converts an extensions/v1beta1 or networking.k8s.io/v1beta1
// Ingress: spec.backend became defaultBackend, serviceName/servicePort became
// service{name, port{number|name}}, and pathType became required.
func convertIngress(raw []byte) ([]byte, error) {
	type backend struct {
		ServiceName string                            `json:"serviceName,omitempty"`
		ServicePort intstr.IntOrString                `json:"servicePort,omitempty"`
		Resource    *corev1.TypedLocalObjectReference `json:"resource,omitempty"`
	}
	var old struct {
		metav1.ObjectMeta `json:"metadata"`
		Spec              struct {
			IngressClassName *string                   `json:"ingressClassName,omitempty"`
			Backend          *backend                  `json:"backend,omitempty"`
			TLS              []networkingv1.IngressTLS `json:"tls,omitempty"`
			Rules            []struct {
				Host string `json:"host,omitempty"`
				HTTP *struct {
					Paths []struct {
						Path     string                 `json:"path,omitempty"`
						PathType *networkingv1.PathType `json:"pathType,omitempty"`
						Backend  backend                `json:"backend"`
					} `json:"paths"`
				} `json:"http,omitempty"`
			} `json:"rules,omitempty"`
		} `json:"spec"`
		Status json.RawMessage `json:"status"`
	}
	if err := json.Unmarshal(raw, &old); err != nil {
		return nil, err
	}
	conv := func(b backend) networkingv1.IngressBackend {
		if b.Resource != nil {
			return networkingv1.IngressBackend{Resource: b.Resource}
		}
		svc := &networkingv1.IngressServiceBackend{Name: b.ServiceName}
		if b.ServicePort.Type == intstr.String {
			svc.Port.Name = b.ServicePort.StrVal
		} else {
			svc.Port.Number = b.ServicePort.IntVal
		}
		return networkingv1.IngressBackend{Service: svc}
	}
	ing := networkingv1.Ingress{ObjectMeta: old.ObjectMeta}
	ing.APIVersion, ing.Kind = "networking.k8s.io/v1", "Ingress"
	ing.Spec.IngressClassName, ing.Spec.TLS = old.Spec.IngressClassName, old.Spec.TLS
	if old.Spec.Backend != nil {
		b := conv(*old.Spec.Backend)
		ing.Spec.DefaultBackend = &b
	}
	for _, r := range old.Spec.Rules {
		rule := networkingv1.IngressRule{Host: r.Host}
		if r.HTTP != nil {
			rule.HTTP = &networkingv1.HTTPIngressRuleValue{}
			for _, p := range r.HTTP.Paths {
				pt := networkingv1.PathTypeImplementationSpecific
				if p.PathType != nil {
					pt = *p.PathType
				}
				rule.HTTP.Paths = append(rule.HTTP.Paths, networkingv1.HTTPIngressPath{Path: p.Path, PathType: &pt, Backend: conv(p.Backend)})
			}
		}
		ing.Spec.Rules = append(ing.Spec.Rules, rule)
	}
	if len(old.Status) > 0 {
		if err := json.Unmarshal(old.Status, &ing.Status); err != nil {
			return nil, fmt.Errorf("status: %w", err)
		}
	}
	return json.Marshal(&ing)
}

// convertHPAv1 converts an autoscaling/v1 HPA (still served, and what older
// kubectl prints) to v2: its one CPU utilisation target becomes a Resource
// metric. Its conditions, which v1 keeps as JSON in an annotation (the
// same fields as v2's), become v2's conditions; an annotation that does not
// parse is dropped.
func convertHPAv1(raw []byte) ([]byte, error) {
	var old autoscalingv1.HorizontalPodAutoscaler
	if err := json.Unmarshal(raw, &old); err != nil {
		return nil, err
	}
	h := autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: old.ObjectMeta}
	h.APIVersion, h.Kind = "autoscaling/v2", "HorizontalPodAutoscaler"
	h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference(old.Spec.ScaleTargetRef)
	h.Spec.MinReplicas, h.Spec.MaxReplicas = old.Spec.MinReplicas, old.Spec.MaxReplicas
	if t := old.Spec.TargetCPUUtilizationPercentage; t != nil {
		h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: "cpu", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: t}}}}
	}
	h.Status.ObservedGeneration, h.Status.LastScaleTime = old.Status.ObservedGeneration, old.Status.LastScaleTime
	h.Status.CurrentReplicas, h.Status.DesiredReplicas = old.Status.CurrentReplicas, old.Status.DesiredReplicas
	if c := old.Status.CurrentCPUUtilizationPercentage; c != nil {
		h.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
			Name: "cpu", Current: autoscalingv2.MetricValueStatus{AverageUtilization: c}}}}
	}
	if a := h.Annotations["autoscaling.alpha.kubernetes.io/conditions"]; a != "" {
		var conds []autoscalingv2.HorizontalPodAutoscalerCondition
		if json.Unmarshal([]byte(a), &conds) == nil {
			h.Status.Conditions = conds
		}
	}
	delete(h.Annotations, "autoscaling.alpha.kubernetes.io/conditions")
	delete(h.Annotations, "autoscaling.alpha.kubernetes.io/current-metrics")
	return json.Marshal(&h)
}
