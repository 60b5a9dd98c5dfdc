package checks_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
)

// TestMissingPullSecretIsCreated: a 401 with a pull secret the kubelet
// cannot find is fixed by creating that secret (never "renew the
// credentials the pods already use"), and folds into missing-references'
// finding on the same owner: one cause, one finding.
func TestMissingPullSecretIsCreated(t *testing.T) {
	f := fixtureFinding(t, checks.WorkloadPods, "workload-pods", "pulls/deployment/vendor-api")
	if !hasCommandPrefix(f, "kubectl create secret docker-registry regcred -n pulls --docker-server=registry.vendor.example") {
		t.Errorf("no command creating regcred: %+v", f.Remediation)
	}
	for _, r := range f.Remediation {
		if strings.Contains(r.Text, "renew") {
			t.Errorf("remediation says renew: %s", r.Text)
		}
	}
	snap := fixtureSnapshot(t, "workload-pods")
	r := doctor.Run(context.Background(), snap, []*doctor.Check{checks.WorkloadPods, checks.MissingReferences}, fixture.Now())
	n := 0
	for _, f := range r.Findings {
		if f.Object.String() == "pulls/deployment/vendor-api" {
			n++
			if f.Check != "missing-references" || f.Severity != doctor.Critical || len(f.Explains) != 1 {
				t.Errorf("vendor-api: %s %s %q explains %v", f.Check, f.Severity, f.Message, f.Explains)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d findings on vendor-api, want 1", n)
	}
}

// TestGeneratedSecretNotCreatedByHand: a Secret OpenShift's service-ca
// writes for a Service is never "kubectl create secret"-ed.
func TestGeneratedSecretNotCreatedByHand(t *testing.T) {
	f := fixtureFinding(t, checks.WorkloadPods, "workload-pods", "ocp/pod/metrics-0")
	if hasCommandPrefix(f, "kubectl create secret") || !hasCommandPrefix(f, "oc get pods -n openshift-service-ca") {
		t.Errorf("remediation %+v", f.Remediation)
	}
}
