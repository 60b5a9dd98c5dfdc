package checks_test

import (
	"context"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
)

// TestMixedServiceNarrowed: a Service whose selector spans two workloads,
// one of which does not serve its port, is remediated by a selector that
// keeps the other (the label that tells them apart), not by a new targetPort.
func TestMixedServiceNarrowed(t *testing.T) {
	snap := fixtureSnapshot(t, "service-target-port")
	r := doctor.Run(context.Background(), snap, []*doctor.Check{checks.ServiceTargetPort}, fixture.Now())
	for _, f := range r.Findings {
		if f.Object.Name == "cache" {
			if !hasRemediation(f, "kubectl set selector service cache -n cachens 'app=redis,tier=cache'") {
				t.Errorf("remediation %+v", f.Remediation)
			}
			return
		}
	}
	t.Fatal("no finding on service cache")
}
