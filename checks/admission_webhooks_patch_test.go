package checks

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
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
