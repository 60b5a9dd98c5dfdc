package checks_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// TestWorkloadPodsWithoutPods: Deployments pasted without their pods still
// tell a stuck rollout and lost availability by their own status; the
// finding says that pods were not read. A rollout within its deadline,
// availability lost two minutes ago, a paused or scaled-to-zero Deployment,
// a manifest without status and a healthy one stay quiet.
func TestWorkloadPodsWithoutPods(t *testing.T) {
	set, err := fixture.Load(filepath.Join("..", "testdata", "offline", "deployments-only"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.FromObjects(set.Objects...)
	if err != nil {
		t.Fatal(err)
	}
	snap = snapshot.WithError(snap, snapshot.Pods, &snapshot.ListError{Resource: snapshot.Pods, Reason: "not in the dump", Skip: true, Cause: snapshot.CauseAbsent})
	r := doctor.Run(context.Background(), snap, []*doctor.Check{checks.WorkloadPods}, fixture.Now())
	if len(r.Checks) != 1 || r.Checks[0].Status == doctor.StatusSkipped || r.Checks[0].Coverage != doctor.CoveragePartial {
		t.Fatalf("without pods the check should run with partial coverage: %+v", r.Checks)
	}
	want := map[string]string{
		"default/deployment/profiles": "rollout of revision 2 is stuck (ProgressDeadlineExceeded 109m ago): 1 of 1 replicas updated, 0 available",
		"shop/deployment/checkout":    "deployment/checkout: 0 of 3 replicas available for 60m (Available=False, MinimumReplicasUnavailable",
	}
	for _, f := range r.Findings {
		w, ok := want[f.Object.String()]
		if !ok {
			t.Errorf("finding on a look-alike: %s: %s", f.Object, f.Message)
			continue
		}
		delete(want, f.Object.String())
		if !strings.HasPrefix(f.Message, w) || f.Severity != doctor.Critical || !strings.Contains(f.Partial, "pods were not read") {
			t.Errorf("%s: %s %q (partial %q), want critical %q…", f.Object, f.Severity, f.Message, f.Partial, w)
		}
		if !hasCommandPrefix(f, "kubectl get pods -n ") {
			t.Errorf("%s: no command listing its pods: %+v", f.Object, f.Remediation)
		}
	}
	for obj := range want {
		t.Errorf("%s: no finding", obj)
	}

	// Pods forbidden and Deployments too: nothing to judge from.
	bare := snapshot.WithError(snap, snapshot.Deployments, &snapshot.ListError{Resource: snapshot.Deployments, Reason: "forbidden", Skip: true})
	r = doctor.Run(context.Background(), bare, []*doctor.Check{checks.WorkloadPods}, fixture.Now())
	if r.Checks[0].Status != doctor.StatusSkipped {
		t.Errorf("without pods and Deployments: %+v", r.Checks[0])
	}
}
