package kube

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// WebhookConfigReads are what WebhookEntries reads.
var WebhookConfigReads = []snapshot.Resource{snapshot.MutatingWebhooks, snapshot.ValidatingWebhooks}

// WebhookReads are what Webhooks reads: the configurations and the
// Services and endpoints of their backends.
var WebhookReads = append(slices.Clone(WebhookConfigReads), ServiceReads...)

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
	// NamespaceSelector and ObjectSelector are the webhook's own, nil when unset.
	NamespaceSelector, ObjectSelector *metav1.LabelSelector
	Resources                         []string
	Operations                        []string
}

// WebhookEntry is one webhook of a mutating or validating configuration,
// the fields both kinds share.
type WebhookEntry struct {
	Config            doctor.ObjectRef
	Index             int // position in the configuration's webhooks list
	Annotations       map[string]string
	Name              string
	FailurePolicy     *admissionregistrationv1.FailurePolicyType
	TimeoutSeconds    *int32
	ClientConfig      admissionregistrationv1.WebhookClientConfig
	Rules             []admissionregistrationv1.RuleWithOperations
	NamespaceSelector *metav1.LabelSelector
	ObjectSelector    *metav1.LabelSelector
}

// WebhookEntries flattens every admission webhook configuration, mutating
// first, in list order.
func WebhookEntries(s *snapshot.Snapshot) []WebhookEntry {
	var out []WebhookEntry
	for _, c := range s.MutatingWebhookConfigurations() {
		ref := Ref("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", &c)
		for i, w := range c.Webhooks {
			out = append(out, WebhookEntry{Config: ref, Index: i, Annotations: c.Annotations, Name: w.Name, FailurePolicy: w.FailurePolicy,
				TimeoutSeconds: w.TimeoutSeconds, ClientConfig: w.ClientConfig, Rules: w.Rules, NamespaceSelector: w.NamespaceSelector, ObjectSelector: w.ObjectSelector})
		}
	}
	for _, c := range s.ValidatingWebhookConfigurations() {
		ref := Ref("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", &c)
		for i, w := range c.Webhooks {
			out = append(out, WebhookEntry{Config: ref, Index: i, Annotations: c.Annotations, Name: w.Name, FailurePolicy: w.FailurePolicy,
				TimeoutSeconds: w.TimeoutSeconds, ClientConfig: w.ClientConfig, Rules: w.Rules, NamespaceSelector: w.NamespaceSelector, ObjectSelector: w.ObjectSelector})
		}
	}
	return out
}

// Webhooks evaluates every admission webhook in the snapshot.
func Webhooks(s *snapshot.Snapshot) []Webhook {
	svcs := ServicesOf(s)
	var out []Webhook
	for _, e := range WebhookEntries(s) {
		out = append(out, evaluate(svcs, e))
	}
	return out
}

func evaluate(svcs *Services, e WebhookEntry) Webhook {
	policy, timeout, cc, rules, nsSel, objSel := e.FailurePolicy, e.TimeoutSeconds, e.ClientConfig, e.Rules, e.NamespaceSelector, e.ObjectSelector
	w := Webhook{Config: e.Config, Index: e.Index, Name: e.Name, FailurePolicy: admissionregistrationv1.Fail, Timeout: 10, Service: cc.Service,
		NamespaceSelector: nsSel, ObjectSelector: objSel}
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
		w.Broken = serviceProblem(svcs, cc.Service)
	}
	if w.Broken == "" && cc.Service != nil {
		w.Broken = caBundleProblem(cc.CABundle, e.Annotations)
	}
	return w
}

func serviceProblem(svcs *Services, ref *admissionregistrationv1.ServiceReference) string {
	key := ref.Namespace + "/" + ref.Name
	svc := svcs.Get(ref.Namespace, ref.Name)
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
	if svcs.Ready(ref.Namespace, ref.Name, portName) == 0 {
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

// Describe is "webhook NAME (failurePolicy Fail, timeout 30s)".
func (w Webhook) Describe() string {
	return fmt.Sprintf("webhook %s (failurePolicy %s, timeout %ds)", w.Name, w.FailurePolicy, w.Timeout)
}

// KubectlKind is the configuration's kind as kubectl takes it.
func (w Webhook) KubectlKind() string { return strings.ToLower(w.Config.Kind) }
