package kube

import (
	"testing"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestExcludedNamespaces reads the namespaces a NotIn on the namespace's
// name label keeps out of the webhook.
func TestExcludedNamespaces(t *testing.T) {
	expr := metav1.LabelSelectorRequirement{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"openshift-etcd"}}
	if got := (Webhook{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{expr}}}).ExcludedNamespaces(); len(got) != 1 || got[0] != "openshift-etcd" {
		t.Errorf("excluded = %q", got)
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

// TestSumBy: values add up per label value, over the samples kept; a
// histogram sample counts 0, a missing family is empty.
func TestSumBy(t *testing.T) {
	str := func(s string) *string { return &s }
	num := func(v float64) *float64 { return &v }
	sample := func(name, kind string, c *dto.Counter, g *dto.Gauge) *dto.Metric {
		return &dto.Metric{Label: []*dto.LabelPair{{Name: str("name"), Value: str(name)}, {Name: str("error_type"), Value: str(kind)}}, Counter: c, Gauge: g}
	}
	fam := &dto.MetricFamily{Metric: []*dto.Metric{
		sample("a", "calling_webhook_error", &dto.Counter{Value: num(2)}, nil),
		sample("a", "no_error", &dto.Counter{Value: num(5)}, nil),
		sample("b", "calling_webhook_error", nil, &dto.Gauge{Value: num(1)}),
		{Label: []*dto.LabelPair{{Name: str("name"), Value: str("c")}}, Histogram: &dto.Histogram{}},
	}}
	all := SumBy(fam, "name", nil)
	if all["a"] != 7 || all["b"] != 1 || all["c"] != 0 {
		t.Errorf("all: %v", all)
	}
	errs := SumBy(fam, "name", func(l map[string]string) bool { return l["error_type"] == "calling_webhook_error" })
	if errs["a"] != 2 || errs["b"] != 1 || len(errs) != 2 {
		t.Errorf("kept: %v", errs)
	}
	if got := SumBy(nil, "name", nil); len(got) != 0 {
		t.Errorf("nil family: %v", got)
	}
}
