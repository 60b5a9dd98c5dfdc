package checks_test

import (
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
)

// TestMixedServiceNarrowed: a Service whose selector spans two workloads,
// one of which does not serve its port, is remediated by a selector that
// keeps the other (the label that tells them apart), not by a new targetPort.
func TestMixedServiceNarrowed(t *testing.T) {
	f := fixtureFinding(t, checks.ServiceTargetPort, "service-target-port", "cachens/service/cache")
	if !hasRemediation(f, "kubectl set selector service cache -n cachens 'app=redis,tier=cache'") {
		t.Errorf("remediation %+v", f.Remediation)
	}
}
