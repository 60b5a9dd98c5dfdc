package checks

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
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
		if got := excludeKubeSystemPatch(kube.Webhook{Index: 2, NamespaceSelector: tc.sel}); got != tc.want {
			t.Errorf("selector %v:\n got %s\nwant %s", tc.sel, got, tc.want)
		}
	}
}

// TestReachesNamespace: under -n, a webhook is left out only when its
// namespaceSelector provably cannot match the namespace; without the
// namespace's labels, only a selector on its name can prove that.
func TestReachesNamespace(t *testing.T) {
	shop := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"team": "shop"}}}
	withNS, err := snapshot.FromObjects(shop)
	if err != nil {
		t.Fatal(err)
	}
	withoutNS := snapshot.WithError(withNS, snapshot.Namespaces, &snapshot.ListError{Resource: snapshot.Namespaces, Reason: "forbidden", Skip: true})
	byName := func(op metav1.LabelSelectorOperator, v string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "kubernetes.io/metadata.name", Operator: op, Values: []string{v}}}}
	}
	for _, tc := range []struct {
		name            string
		sel             *metav1.LabelSelector
		with, withoutNS bool
	}{
		{"no selector", nil, true, true},
		{"empty selector", &metav1.LabelSelector{}, true, true},
		{"team=shop", &metav1.LabelSelector{MatchLabels: map[string]string{"team": "shop"}}, true, true},
		{"enforce=true", &metav1.LabelSelector{MatchLabels: map[string]string{"enforce": "true"}}, false, true},
		{"name in payments", byName(metav1.LabelSelectorOpIn, "payments"), false, false},
		{"name not in kube-system", byName(metav1.LabelSelectorOpNotIn, "kube-system"), true, true},
		{"name not in shop", byName(metav1.LabelSelectorOpNotIn, "shop"), false, false},
	} {
		if got := reachesNamespace(withNS, tc.sel, "shop"); got != tc.with {
			t.Errorf("%s, namespaces read: %v, want %v", tc.name, got, tc.with)
		}
		if got := reachesNamespace(withoutNS, tc.sel, "shop"); got != tc.withoutNS {
			t.Errorf("%s, namespaces not read: %v, want %v", tc.name, got, tc.withoutNS)
		}
	}
}
