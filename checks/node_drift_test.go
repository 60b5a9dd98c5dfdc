package checks_test

import (
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
)

// TestDriftEvenSplit: nodes split evenly between two versions have no odd
// side: neither is drained or replaced, the operator decides which is meant.
func TestDriftEvenSplit(t *testing.T) {
	f := fixtureFinding(t, checks.NodeDrift, "node-drift", "node/vm-1")
	for _, rem := range f.Remediation {
		if strings.Contains(rem.Command, "drain") || strings.Contains(rem.Text, "replace") {
			t.Errorf("even split: %q %q", rem.Text, rem.Command)
		}
	}
	if f.Count != 4 {
		t.Errorf("even split: count %d, want the 4 nodes", f.Count)
	}
}
