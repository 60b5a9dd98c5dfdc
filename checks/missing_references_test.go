package checks_test

import (
	"context"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
)

// TestGoverningServiceSelector: the headless Service offered for a
// StatefulSet selects what the StatefulSet selects, not every label of its
// template (a chart's version label would lose the pods at the next
// upgrade).
func TestGoverningServiceSelector(t *testing.T) {
	snap := fixtureSnapshot(t, "missing-references")
	r := doctor.Run(context.Background(), snap, []*doctor.Check{checks.MissingReferences}, fixture.Now())
	want := "kubectl create service clusterip kafka-headless -n shop --clusterip=None && kubectl set selector service kafka-headless -n shop 'app=kafka'"
	for _, f := range r.Findings {
		if f.Object.Name == "kafka" && f.Object.Kind == "StatefulSet" {
			if !hasRemediation(f, want) {
				t.Errorf("remediation %+v, want %q", f.Remediation, want)
			}
			return
		}
	}
	t.Fatal("no finding on statefulset/kafka")
}
