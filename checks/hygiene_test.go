package checks_test

import (
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
)

// TestHygieneKeepsRequests: a workload that only lacks a memory limit is
// told to set that limit, at its memory request, with its requests kept.
func TestHygieneKeepsRequests(t *testing.T) {
	f := fixtureFinding(t, checks.Hygiene, "hygiene", "quiet/deployment/ml-batch")
	if !hasCommandPrefix(f, "kubectl set resources deployment/ml-batch -n quiet -c batch --limits=memory=512Mi") {
		t.Errorf("remediation %+v", f.Remediation)
	}
	for _, r := range f.Remediation {
		if strings.Contains(r.Command, "--requests") {
			t.Errorf("requests changed: %s", r.Command)
		}
	}
}
