package checks

import (
	"strings"

	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

// Wording that several checks share. The facts come from pkg/kube; how a
// finding says them is decided here, once, so two checks never phrase the
// same fact two ways.

// apiServiceWhy is the aggregator's verdict on an APIService, as its
// Available condition gives it: "EndpointsNotFound: cannot find
// endpointslices for ..." (a trailing period dropped, the sentence goes on).
func apiServiceWhy(a *apiregistrationv1.APIService) string {
	c := kube.APIServiceAvailable(a)
	if c == nil {
		return "no Available condition"
	}
	if c.Message == "" {
		return c.Reason
	}
	return c.Reason + ": " + strings.TrimSuffix(c.Message, ".")
}
