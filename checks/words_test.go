package checks

import (
	"testing"

	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// TestAPIServiceWhy pins how every check quotes the aggregator's verdict.
func TestAPIServiceWhy(t *testing.T) {
	with := func(c ...apiregistrationv1.APIServiceCondition) *apiregistrationv1.APIService {
		return &apiregistrationv1.APIService{Status: apiregistrationv1.APIServiceStatus{Conditions: c}}
	}
	for _, c := range []struct {
		name string
		a    *apiregistrationv1.APIService
		want string
	}{
		{"no condition", with(), "no Available condition"},
		{"reason only", with(apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Reason: "ServiceNotFound"}), "ServiceNotFound"},
		{"reason and message", with(apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Reason: "MissingEndpoints", Message: `endpoints for service/m in "kube-system" have no addresses`}),
			`MissingEndpoints: endpoints for service/m in "kube-system" have no addresses`},
		{"trailing period dropped", with(apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Reason: "FailedDiscoveryCheck", Message: "no response."}),
			"FailedDiscoveryCheck: no response"},
	} {
		if got := apiServiceWhy(c.a); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
