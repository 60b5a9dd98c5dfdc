package kube

import "testing"

func TestSimilarLabelValue(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"checkout", "chekout", true},        // a letter dropped
		{"checkout", "checkuot", true},       // two letters swapped
		{"checkout", "checkout-svc", true},   // a suffix
		{"checkout", "checkout_v2", true},    // a suffix with another separator
		{"checkout", "eu.checkout", true},    // a prefix
		{"checkout", "Checkout", true},       // letter case
		{"payments", "paymnets-x", false},    // a typo and a suffix
		{"payments", "pymnets", false},       // two edits on a short value
		{"frontend-web", "frontnd-wb", true}, // two edits on a long value
		{"api", "app", false},                // short values: different names
		{"api", "api-gateway", true},         // a separated suffix
		{"search", "research", false},        // a suffix without a separator
		{"checkout", "checkout", false},      // the same value is a match, not a miss
		{"checkout", "", false},              // a missing label
		{"cart", "card", true},
		{"cart", "payments", false},
	} {
		if got := SimilarLabelValue(c.a, c.b); got != c.want {
			t.Errorf("SimilarLabelValue(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := SimilarLabelValue(c.b, c.a); got != c.want {
			t.Errorf("SimilarLabelValue(%q, %q) = %v, want %v", c.b, c.a, got, c.want)
		}
	}
}
