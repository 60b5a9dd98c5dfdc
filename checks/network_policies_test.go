package checks_test

import (
	"slices"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// TestNetworkPoliciesWithoutNamespaces: a user who may not list namespaces
// (a Role on one namespace) still gets the policies that block DNS; a
// namespaceSelector on labels other than the name is given the benefit of
// the doubt, and no finding appears that the full read does not give.
func TestNetworkPoliciesWithoutNamespaces(t *testing.T) {
	full := runWithout(t, checks.NetworkPolicies)
	bare := runWithout(t, checks.NetworkPolicies, snapshot.Namespaces)
	if bare.Checks[0].Status == doctor.StatusSkipped {
		t.Fatalf("skipped without namespaces: %s", bare.Checks[0].Reason)
	}
	key := func(f doctor.Finding) string { return f.Object.String() + "|" + f.Message }
	var fullKeys []string
	for _, f := range full.Findings {
		fullKeys = append(fullKeys, key(f))
	}
	dns := false
	for _, f := range bare.Findings {
		if !slices.Contains(fullKeys, key(f)) {
			t.Errorf("without namespaces, a finding the full read does not give: %s: %s", f.Object, f.Message)
		}
		dns = dns || f.Object.Name == "default-deny"
	}
	if !dns {
		t.Errorf("without namespaces, the policy that blocks DNS is not reported: %+v", bare.Findings)
	}
}
