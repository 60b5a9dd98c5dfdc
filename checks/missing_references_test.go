package checks_test

import (
	"context"
	"slices"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// TestGoverningServiceExplainsNoRefusal: a StatefulSet whose pods Pod
// Security refuses and whose governing Service is missing has two
// findings; the refusal is never folded under the missing Service (only a
// refusal for a missing ServiceAccount is missing-references'). Without
// Services read, no Service is called missing.
func TestGoverningServiceExplainsNoRefusal(t *testing.T) {
	snap := fixtureSnapshot(t, "missing-references")
	var causes []string
	for _, f := range doctor.Run(context.Background(), snap, []*doctor.Check{checks.WorkloadPods, checks.MissingReferences}, fixture.Now()).Findings {
		if f.Object.String() == "data/statefulset/ledger" {
			causes = append(causes, f.Check+"/"+f.Cause)
			if len(f.Explains) > 0 {
				t.Errorf("%s explains %q", f.Check, f.Explains)
			}
		}
	}
	slices.Sort(causes)
	if want := []string{"missing-references/governing-service", "workload-pods/create-failed"}; !slices.Equal(causes, want) {
		t.Errorf("ledger's findings %v, want %v", causes, want)
	}

	r := runWithout(t, checks.MissingReferences, snapshot.Services)
	for _, f := range r.Findings {
		if f.Cause == "governing-service" {
			t.Errorf("without Services read: %s", f.Message)
		}
	}
}

// TestGoverningServiceSelector: the headless Service offered for a
// StatefulSet selects what the StatefulSet selects, not every label of its
// template (a chart's version label would lose the pods at the next
// upgrade).
func TestGoverningServiceSelector(t *testing.T) {
	f := fixtureFinding(t, checks.MissingReferences, "missing-references", "shop/statefulset/kafka")
	want := "kubectl create service clusterip kafka-headless -n shop --clusterip=None && kubectl set selector service kafka-headless -n shop 'app=kafka'"
	if !hasRemediation(f, want) {
		t.Errorf("remediation %+v, want %q", f.Remediation, want)
	}
}
