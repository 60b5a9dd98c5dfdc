package checks_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
)

// TestDriftEvenSplit: nodes split evenly between two versions have no odd
// side: neither is drained or replaced, the operator decides which is meant.
func TestDriftEvenSplit(t *testing.T) {
	snap := fixtureSnapshot(t, "node-drift")
	r := doctor.Run(context.Background(), snap, []*doctor.Check{checks.NodeDrift}, fixture.Now())
	found := false
	for _, f := range r.Findings {
		if f.Object.Name != "vm-1" {
			continue
		}
		found = true
		for _, rem := range f.Remediation {
			if strings.Contains(rem.Command, "drain") || strings.Contains(rem.Text, "replace") {
				t.Errorf("even split: %q %q", rem.Text, rem.Command)
			}
		}
		if f.Count != 4 {
			t.Errorf("even split: count %d, want the 4 nodes", f.Count)
		}
	}
	if !found {
		t.Error("no finding on the evenly split instance type")
	}
}
