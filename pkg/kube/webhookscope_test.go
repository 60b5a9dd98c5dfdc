package kube

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestExcludeKubeSystemPatchNeverReplaces: the remediation adds to an
// existing namespaceSelector; replacing it would widen the webhook.
func TestExcludeKubeSystemPatchNeverReplaces(t *testing.T) {
	expr := metav1.LabelSelectorRequirement{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"openshift-etcd"}}
	for _, tc := range []struct {
		sel  *metav1.LabelSelector
		want string
	}{
		{nil, `[{"op":"add","path":"/webhooks/2/namespaceSelector","value":{"matchExpressions":[{"key":"kubernetes.io/metadata.name","operator":"NotIn","values":["kube-system"]}]}}]`},
		{&metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}, `[{"op":"add","path":"/webhooks/2/namespaceSelector/matchExpressions","value":[{"key":"kubernetes.io/metadata.name","operator":"NotIn","values":["kube-system"]}]}]`},
		{&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{expr}}, `[{"op":"add","path":"/webhooks/2/namespaceSelector/matchExpressions/-","value":{"key":"kubernetes.io/metadata.name","operator":"NotIn","values":["kube-system"]}}]`},
	} {
		if got := (Webhook{Index: 2, NamespaceSelector: tc.sel}).ExcludeKubeSystemPatch(); got != tc.want {
			t.Errorf("selector %v:\n got %s\nwant %s", tc.sel, got, tc.want)
		}
	}
	if got := (Webhook{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{expr}}}).NamespaceScope(); got != "its namespaceSelector excludes openshift-etcd but not kube-system" {
		t.Errorf("scope = %q", got)
	}
}

// TestFailedWebhook pins how an API error names the webhook that failed.
func TestFailedWebhook(t *testing.T) {
	for _, c := range []struct {
		msg, name, detail string
		ok                bool
	}{
		{`Error creating: Internal error occurred: failed calling webhook "validate.kyverno.svc": failed to call webhook: context deadline exceeded`,
			"validate.kyverno.svc", "failed to call webhook: context deadline exceeded", true},
		{`failed calling webhook "a.example.io"`, "a.example.io", "", true},
		{`admission webhook "deny.example.io" denied the request: no`, "", "", false},
		{`pods "x" is forbidden: exceeded quota: compute`, "", "", false},
	} {
		name, detail, ok := FailedWebhook(c.msg)
		if name != c.name || detail != c.detail || ok != c.ok {
			t.Errorf("FailedWebhook(%q) = %q, %q, %t; want %q, %q, %t", c.msg, name, detail, ok, c.name, c.detail, c.ok)
		}
	}
}
