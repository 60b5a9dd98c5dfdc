package checks

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// AdmissionWebhooks judges every admission webhook by what happens to the
// requests it intercepts when its backend is unhealthy: rejected (Fail), or
// delayed by the timeout and then let through unchecked (Ignore).
var AdmissionWebhooks = &doctor.Check{
	Name:     "admission-webhooks",
	Severity: doctor.Warning,
	Reads:    webhookReads,
	Run:      runAdmissionWebhooks,
	Doc: `Admission webhooks with no healthy backend, long timeouts or cluster-wide scope

## Why it matters
Every matching API request waits for an admission webhook. With
` + "`failurePolicy: Fail`" + ` and no healthy backend, every matching request is rejected:
no pod can be created. With ` + "`failurePolicy: Ignore`" + ` each request first waits up to
` + "`timeoutSeconds`" + ` (default 10, maximum 30) and then silently skips the policy — in
"The Snowball effect" (seed 002) a 30-second timeout failing open delayed pod
creation by up to 80 minutes and let a CronJob pile up 3,000 Jobs. A webhook
that intercepts pods in every namespace, kube-system included, can take the
cluster's own components down with it.

## How it is detected
From one LIST each of Mutating- and ValidatingWebhookConfigurations, Services
and EndpointSlices, every webhook is checked for: a Service that does not
exist; no ready endpoint (EndpointSlices labelled
` + "`kubernetes.io/service-name`" + `, on the port the webhook calls); a ` + "`caBundle`" + ` that is
empty (with no cert-manager or OpenShift CA-injection annotation) or not PEM
certificates; URL webhooks, whose health cannot be seen from the API (info).
An unhealthy backend is critical with ` + "`failurePolicy: Fail`" + `, a warning with
` + "`Ignore`" + ` (the timeout is named when it exceeds 5s). Rules that intercept pods
(or everything) in every namespace including kube-system, with no
` + "`namespaceSelector`/`objectSelector`" + ` that excludes it, are a warning.

## How to fix
Restore the webhook's backend, or delete the configuration if its controller
is gone. Keep ` + "`timeoutSeconds`" + ` short (1–5s) for fail-open webhooks, and exclude
kube-system (and the webhook's own namespace) with a ` + "`namespaceSelector`" + ` on
` + "`kubernetes.io/metadata.name`" + `.

## References
- https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#failure-policy
- https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#timeouts
- https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#avoiding-operating-on-the-kube-system-namespace`,
}

var webhookReads = []snapshot.Resource{snapshot.MutatingWebhooks, snapshot.ValidatingWebhooks, snapshot.Services, snapshot.EndpointSlices}

// caInjectionAnnotations mark configurations whose caBundle a controller fills in.
var caInjectionAnnotations = []string{
	"cert-manager.io/inject-ca-from", "cert-manager.io/inject-ca-from-secret", "cert-manager.io/inject-apiserver-ca",
	"service.beta.openshift.io/inject-cabundle",
}

// Webhook is one admission webhook with what the cluster says about its health.
type Webhook struct {
	Config        doctor.ObjectRef
	Index         int // position in the configuration's webhooks list, for JSON patches
	Name          string
	FailurePolicy admissionregistrationv1.FailurePolicyType
	Timeout       int32
	// Broken says why requests to the backend fail; empty when they may work.
	Broken string
	// URL is set for webhooks called by URL, whose health cannot be seen.
	URL                  string
	Service              *admissionregistrationv1.ServiceReference
	InterceptsKubeSystem bool // intercepts pods or everything in kube-system
	Resources            []string
	Operations           []string
}

// Webhooks evaluates every admission webhook in the snapshot.
func Webhooks(s *snapshot.Snapshot) []Webhook {
	e := newEndpointIndex(s)
	var out []Webhook
	for _, c := range s.MutatingWebhookConfigurations() {
		ref := doctor.ObjectRef{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration", Name: c.Name}
		for i, w := range c.Webhooks {
			out = append(out, e.evaluate(ref, i, c.Annotations, w.Name, w.FailurePolicy, w.TimeoutSeconds, w.ClientConfig, w.Rules, w.NamespaceSelector, w.ObjectSelector))
		}
	}
	for _, c := range s.ValidatingWebhookConfigurations() {
		ref := doctor.ObjectRef{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration", Name: c.Name}
		for i, w := range c.Webhooks {
			out = append(out, e.evaluate(ref, i, c.Annotations, w.Name, w.FailurePolicy, w.TimeoutSeconds, w.ClientConfig, w.Rules, w.NamespaceSelector, w.ObjectSelector))
		}
	}
	return out
}

type endpointIndex struct {
	services map[string]*corev1.Service
	ready    map[string]map[string]int // "ns/service" -> endpoint port name -> ready endpoints
}

func newEndpointIndex(s *snapshot.Snapshot) *endpointIndex {
	e := &endpointIndex{services: map[string]*corev1.Service{}, ready: map[string]map[string]int{}}
	svcs := s.Services()
	for i := range svcs {
		e.services[svcs[i].Namespace+"/"+svcs[i].Name] = &svcs[i]
	}
	for _, sl := range s.EndpointSlices() {
		svc := sl.Labels["kubernetes.io/service-name"]
		if svc == "" {
			continue
		}
		n := 0
		for _, ep := range sl.Endpoints {
			if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
				n += len(ep.Addresses)
			}
		}
		key := sl.Namespace + "/" + svc
		if e.ready[key] == nil {
			e.ready[key] = map[string]int{}
		}
		for _, p := range sl.Ports {
			name := ""
			if p.Name != nil {
				name = *p.Name
			}
			e.ready[key][name] += n
		}
	}
	return e
}

func (e *endpointIndex) evaluate(config doctor.ObjectRef, index int, annotations map[string]string, name string, policy *admissionregistrationv1.FailurePolicyType,
	timeout *int32, cc admissionregistrationv1.WebhookClientConfig, rules []admissionregistrationv1.RuleWithOperations,
	nsSel, objSel *metav1.LabelSelector) Webhook {
	w := Webhook{Config: config, Index: index, Name: name, FailurePolicy: admissionregistrationv1.Fail, Timeout: 10, Service: cc.Service}
	if policy != nil {
		w.FailurePolicy = *policy
	}
	if timeout != nil {
		w.Timeout = *timeout
	}
	for _, r := range rules {
		w.Resources = append(w.Resources, r.Resources...)
		for _, op := range r.Operations {
			w.Operations = append(w.Operations, string(op))
		}
	}
	w.InterceptsKubeSystem = interceptsPods(rules) && selectsKubeSystem(nsSel) && (objSel == nil || len(objSel.MatchLabels)+len(objSel.MatchExpressions) == 0)
	switch {
	case cc.URL != nil:
		w.URL = *cc.URL
	case cc.Service != nil:
		w.Broken = e.serviceProblem(cc.Service)
	}
	if w.Broken == "" && cc.Service != nil {
		w.Broken = caBundleProblem(cc.CABundle, annotations)
	}
	return w
}

func (e *endpointIndex) serviceProblem(ref *admissionregistrationv1.ServiceReference) string {
	key := ref.Namespace + "/" + ref.Name
	svc := e.services[key]
	if svc == nil {
		return fmt.Sprintf("service %s does not exist", key)
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return ""
	}
	port := int32(443)
	if ref.Port != nil {
		port = *ref.Port
	}
	portName, found := "", false
	for _, p := range svc.Spec.Ports {
		if p.Port == port {
			portName, found = p.Name, true
		}
	}
	if !found {
		return fmt.Sprintf("service %s has no port %d", key, port)
	}
	if e.ready[key][portName] == 0 {
		return fmt.Sprintf("service %s has no ready endpoint", key)
	}
	return ""
}

func caBundleProblem(ca []byte, annotations map[string]string) string {
	for _, a := range caInjectionAnnotations {
		if annotations[a] != "" {
			return ""
		}
	}
	if len(ca) == 0 {
		return "its caBundle is empty and nothing injects one, so the API server cannot verify the service's certificate"
	}
	rest := ca
	for n := 0; ; n++ {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			if n == 0 {
				return "its caBundle is not PEM"
			}
			return ""
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return "its caBundle does not parse: " + err.Error()
		}
	}
}

func interceptsPods(rules []admissionregistrationv1.RuleWithOperations) bool {
	for _, r := range rules {
		coreGroup := false
		for _, g := range r.APIGroups {
			coreGroup = coreGroup || g == "" || g == "*"
		}
		if !coreGroup {
			continue
		}
		for _, res := range r.Resources {
			if res == "*" || res == "*/*" || res == "pods" || strings.HasPrefix(res, "pods/") {
				return true
			}
		}
	}
	return false
}

// selectsKubeSystem evaluates a namespaceSelector against kube-system's
// automatic name label; nil selects every namespace.
func selectsKubeSystem(sel *metav1.LabelSelector) bool {
	if sel == nil {
		return true
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false
	}
	return s.Matches(labels.Set{"kubernetes.io/metadata.name": "kube-system"})
}

// describe is "webhook NAME (failurePolicy Fail, timeout 30s)".
func (w Webhook) describe() string {
	return fmt.Sprintf("webhook %s (failurePolicy %s, timeout %ds)", w.Name, w.FailurePolicy, w.Timeout)
}

func (w Webhook) kubectlKind() string { return strings.ToLower(w.Config.Kind) }

func runAdmissionWebhooks(p *doctor.Pass) error {
	hooks := Webhooks(p.Snapshot)
	sort.SliceStable(hooks, func(i, j int) bool { return hooks[i].Config.Name < hooks[j].Config.Name })
	for _, w := range hooks {
		var problems []string
		var rem []doctor.Remediation
		sev := doctor.Severity(0)
		raise := func(s doctor.Severity) {
			if s > sev {
				sev = s
			}
		}
		what := "requests"
		if len(w.Resources) > 0 {
			what = strings.Join(uniq(w.Operations), "/") + " of " + strings.Join(uniq(w.Resources), ", ")
		}
		if w.Broken != "" {
			if w.FailurePolicy == admissionregistrationv1.Fail {
				raise(doctor.Critical)
				problems = append(problems, fmt.Sprintf("%s: every matching %s is rejected", w.Broken, what))
			} else {
				raise(doctor.Warning)
				wait := ""
				if w.Timeout > 5 {
					wait = fmt.Sprintf(" may wait up to %ds, then", w.Timeout)
				}
				problems = append(problems, fmt.Sprintf("%s: every matching %s%s silently skips the policy", w.Broken, what, wait))
			}
			if s := w.Service; s != nil {
				rem = append(rem, doctor.Remediation{Text: "restore the webhook's backend: its pods and ready endpoints",
					Command: fmt.Sprintf("kubectl get endpointslices -n %s -l kubernetes.io/service-name=%s", s.Namespace, s.Name)})
			}
			rem = append(rem, doctor.Remediation{Text: "if the webhook's controller is gone for good, remove its configuration",
				Command: fmt.Sprintf("kubectl delete %s %s", w.kubectlKind(), w.Config.Name)})
			if w.FailurePolicy == admissionregistrationv1.Ignore && w.Timeout > 5 {
				rem = append(rem, doctor.Remediation{Text: "fail open fast: a short timeout bounds the delay of every request",
					Command: fmt.Sprintf(`kubectl patch %s %s --type=json -p '[{"op":"replace","path":"/webhooks/%d/timeoutSeconds","value":3}]'`, w.kubectlKind(), w.Config.Name, w.Index)})
			}
		}
		if w.InterceptsKubeSystem {
			raise(doctor.Warning)
			problems = append(problems, "it intercepts pods in every namespace, kube-system included, with no namespaceSelector or objectSelector excluding it")
			rem = append(rem, doctor.Remediation{Text: "exclude kube-system (and the webhook's own namespace)",
				Command: fmt.Sprintf(`kubectl patch %s %s --type=json -p '[{"op":"add","path":"/webhooks/%d/namespaceSelector","value":{"matchExpressions":[{"key":"kubernetes.io/metadata.name","operator":"NotIn","values":["kube-system"]}]}}]'`,
					w.kubectlKind(), w.Config.Name, w.Index)})
		}
		if w.URL != "" && sev == 0 {
			raise(doctor.Info)
			problems = append(problems, fmt.Sprintf("it calls %s, whose health kubectl-doctor cannot see from the API", w.URL))
			rem = append(rem, doctor.Remediation{Text: "watch the API server's webhook metrics for it (apiserver_admission_webhook_*)",
				Command: fmt.Sprintf("kubectl get --raw /metrics | grep 'name=\"%s\"'", w.Name)})
		}
		if sev == 0 {
			continue
		}
		p.Report(doctor.Finding{Severity: sev, Object: w.Config, Message: w.describe() + ": " + strings.Join(problems, "; "), Remediation: rem})
	}
	return nil
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
