package checks_test

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// TestWebhooksScopedToNamespace: a scan of one namespace (-n shop) lists
// Services and EndpointSlices of shop only. A webhook whose backend lives
// elsewhere (cert-manager's) is not called broken for it, and a webhook
// whose namespaceSelector provably cannot match shop is not shown; the
// cluster-wide scan reports the broken one as before.
func TestWebhooksScopedToNamespace(t *testing.T) {
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	hook := func(name, svcNS, svc string, resources []string, sel *metav1.LabelSelector) *admissionregistrationv1.ValidatingWebhookConfiguration {
		port := int32(443)
		return &admissionregistrationv1.ValidatingWebhookConfiguration{
			TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"cert-manager.io/inject-ca-from": "x/y"}},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{
				Name: name + ".example.com", FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
				NamespaceSelector: sel,
				ClientConfig:      admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: svcNS, Name: svc, Port: &port}},
				Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"CREATE"},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: resources}}},
			}},
		}
	}
	ns := func(name string, l map[string]string) *corev1.Namespace {
		return &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
	}
	svc := func(namespace, name string) *corev1.Service {
		return &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}
	}
	ready := true
	certSlice := &discoveryv1.EndpointSlice{TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "cert-manager", Name: "cert-manager-webhook-x", Labels: map[string]string{"kubernetes.io/service-name": "cert-manager-webhook"}},
		Ports:      []discoveryv1.EndpointPort{{Name: ptr.To("https")}},
		Endpoints:  []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}}}
	cluster := []runtime.Object{ns("shop", map[string]string{"kubernetes.io/metadata.name": "shop"}), ns("payments", map[string]string{"kubernetes.io/metadata.name": "payments", "enforce": "true"}),
		// Healthy, backend in another namespace: quiet everywhere.
		hook("cert-check", "cert-manager", "cert-manager-webhook", []string{"certificates"}, nil),
		// Broken (no endpoints), selects namespaces labelled enforce=true.
		hook("guard", "policy", "guard", []string{"deployments"}, &metav1.LabelSelector{MatchLabels: map[string]string{"enforce": "true"}}),
		// Broken, selects payments by name.
		hook("named", "policy", "guard", []string{"deployments"}, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: []string{"payments"}}}}),
		svc("cert-manager", "cert-manager-webhook"), certSlice, svc("policy", "guard"),
		// The replicaset controller's refusal in payments, naming guard.
		&corev1.Event{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"}, ObjectMeta: metav1.ObjectMeta{Namespace: "payments", Name: "api-7d9.1"},
			InvolvedObject: corev1.ObjectReference{Kind: "ReplicaSet", Namespace: "payments", Name: "api-7d9", APIVersion: "apps/v1"},
			Type:           corev1.EventTypeWarning, Reason: "FailedCreate", Count: 12, Source: corev1.EventSource{Component: "replicaset-controller"},
			FirstTimestamp: metav1.NewTime(fixture.Now().Add(-time.Hour)), LastTimestamp: metav1.NewTime(fixture.Now().Add(-time.Minute)),
			Message: `Error creating: Internal error occurred: failed calling webhook "guard.example.com": failed to call webhook: Post "https://guard.policy.svc:443/validate?timeout=10s": no endpoints available for service "guard"`},
	}
	run := func(scope string, objs []runtime.Object, drop ...snapshot.Resource) map[string]string {
		t.Helper()
		var kept []runtime.Object
		for _, o := range objs {
			m, _ := o.(metav1.Object)
			if scope == "" || m.GetNamespace() == "" || m.GetNamespace() == scope {
				kept = append(kept, o)
			}
		}
		snap, err := snapshot.FromObjects(kept...)
		if err != nil {
			t.Fatal(err)
		}
		snap.Namespace = scope
		for _, r := range drop {
			snap = snapshot.WithError(snap, r, &snapshot.ListError{Resource: r, Reason: "forbidden", Skip: true})
		}
		r := doctor.Run(context.Background(), snap, []*doctor.Check{checks.AdmissionWebhooks}, fixture.Now())
		got := map[string]string{}
		for _, f := range r.Findings {
			got[f.Object.Name] = f.Message
			if f.Object.Name == "cert-check" {
				t.Errorf("-n %q: healthy webhook reported: %s", scope, f.Message)
			}
		}
		return got
	}
	for _, tc := range []struct {
		scope string
		drop  []snapshot.Resource
		want  map[string]string // webhook -> words its finding holds
	}{
		{"", nil, map[string]string{"guard": "service policy/guard has no ready endpoint", "named": "service policy/guard has no ready endpoint"}},
		// shop: guard's labels and named's name exclude it; cert-manager's
		// backend was not listed, and is not called missing.
		{"shop", nil, map[string]string{}},
		{"shop", []snapshot.Resource{snapshot.Namespaces}, map[string]string{}},
		// payments: guard's backend was not listed, but the refusals in
		// payments say that calling it fails; named has no such evidence.
		{"payments", nil, map[string]string{"guard": `calling it fails ("failed to call webhook: Post \"https://guard.policy.svc:443/validate?timeout=10s\": no endpoints available for service \"guard\""; its backend, service policy/guard, is in a namespace this scan did not read): every matching CREATE of deployments is rejected`}},
	} {
		got := run(tc.scope, cluster, tc.drop...)
		if len(got) != len(tc.want) {
			t.Errorf("-n %q (without %v): findings %v, want on %v", tc.scope, tc.drop, got, tc.want)
		}
		for name, words := range tc.want {
			if !strings.Contains(got[name], words) {
				t.Errorf("-n %q (without %v): %s: %q, want it to hold %q", tc.scope, tc.drop, name, got[name], words)
			}
		}
	}
}
