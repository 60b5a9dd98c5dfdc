package kube

import (
	"crypto/x509"
	"encoding/pem"
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
	// Broken says why requests to the backend fail; nil when they may work.
	Broken *BackendFault
	// URL is set for webhooks called by URL, whose health cannot be seen.
	URL                  string
	Service              *admissionregistrationv1.ServiceReference
	InterceptsKubeSystem bool // intercepts pods or everything in kube-system
	// NamespaceSelector and ObjectSelector are the webhook's own, nil when unset.
	NamespaceSelector, ObjectSelector *metav1.LabelSelector
	Resources                         []string
	Operations                        []string
}

// BackendFault is why requests to a webhook's Service backend fail.
type BackendFault struct {
	Kind FaultKind
	// Service is the backend, "namespace/name"; Port the port the webhook
	// calls (for FaultNoPort).
	Service string
	Port    int32
	// Err is why the caBundle does not parse (FaultCABundleInvalid), or
	// what the API server said of the newest failed call (FaultCallFails).
	Err string
}

// FaultKind is what is wrong with a webhook's backend.
type FaultKind int

const (
	FaultNoService       FaultKind = iota + 1 // the Service does not exist
	FaultNoPort                               // the Service has no such port
	FaultNoEndpoint                           // the Service has no ready endpoint
	FaultNoCABundle                           // empty caBundle and nothing injects one
	FaultCABundleNotPEM                       // the caBundle is not PEM
	FaultCABundleInvalid                      // a certificate of the caBundle does not parse
	FaultCallFails                            // calls fail (FailedCreate events), the backend was not read
)

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
		out = append(out, evaluate(s, svcs, e))
	}
	return out
}

func evaluate(s *snapshot.Snapshot, svcs *Services, e WebhookEntry) Webhook {
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
	case cc.Service != nil && s.Covers(cc.Service.Namespace):
		// A backend in a namespace the scan did not list (-n) is not
		// judged: its absence from the snapshot says nothing.
		w.Broken = serviceProblem(svcs, cc.Service)
	}
	if w.Broken == nil && cc.Service != nil {
		w.Broken = caBundleProblem(cc.CABundle, e.Annotations)
	}
	return w
}

func serviceProblem(svcs *Services, ref *admissionregistrationv1.ServiceReference) *BackendFault {
	key := ref.Namespace + "/" + ref.Name
	svc := svcs.Get(ref.Namespace, ref.Name)
	if svc == nil {
		return &BackendFault{Kind: FaultNoService, Service: key}
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
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
		return &BackendFault{Kind: FaultNoPort, Service: key, Port: port}
	}
	if svcs.Ready(ref.Namespace, ref.Name, portName) == 0 {
		return &BackendFault{Kind: FaultNoEndpoint, Service: key}
	}
	return nil
}

func caBundleProblem(ca []byte, annotations map[string]string) *BackendFault {
	for _, a := range caInjectionAnnotations {
		if annotations[a] != "" {
			return nil
		}
	}
	if len(ca) == 0 {
		return &BackendFault{Kind: FaultNoCABundle}
	}
	rest := ca
	for n := 0; ; n++ {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			if n == 0 {
				return &BackendFault{Kind: FaultCABundleNotPEM}
			}
			return nil
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return &BackendFault{Kind: FaultCABundleInvalid, Err: err.Error()}
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

// KubectlKind is the configuration's kind as kubectl takes it.
func (w Webhook) KubectlKind() string { return strings.ToLower(w.Config.Kind) }
