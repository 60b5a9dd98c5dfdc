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

// TestWorkloadPodsFromPodsAndReplicaSets is `kubectl get pods,replicasets -o
// yaml`: the crash loop of deployment shop/web is still found, on its
// ReplicaSet, and the finding says where the owner chain stops and why.
func TestWorkloadPodsFromPodsAndReplicaSets(t *testing.T) {
	set, err := fixture.Load(filepath.Join("..", "testdata", "checks", "workload-pods"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := set.SnapshotWith([]snapshot.Resource{snapshot.Pods, snapshot.ReplicaSets})
	if err != nil {
		t.Fatal(err)
	}
	r := doctor.Run(context.Background(), snap, []*doctor.Check{checks.WorkloadPods}, fixture.Now())
	if c := r.Checks[0]; c.Status != doctor.StatusFailed || c.Coverage != doctor.CoveragePartial {
		t.Fatalf("check %s, coverage %s: %s", c.Status, c.Coverage, c.Reason)
	}
	var web *doctor.Finding
	for i, f := range r.Findings {
		if f.Object.Namespace == "shop" && f.Object.Kind == "ReplicaSet" && strings.HasPrefix(f.Object.Name, "web-") {
			web = &r.Findings[i]
		}
	}
	if web == nil {
		t.Fatalf("no finding on web's ReplicaSet in %+v", r.Findings)
	}
	if !strings.Contains(web.Message, "crash-looping") {
		t.Errorf("message %q: want the crash loop", web.Message)
	}
	want := "owner chain stops at ReplicaSet shop/" + web.Object.Name + " (controlled by Deployment web): " + fixture.NotDeclared + ": deployments.apps"
	if web.Partial != want {
		t.Errorf("partial = %q, want %q", web.Partial, want)
	}
	if line := r.CoverageLine(); !strings.HasSuffix(line, " by 1 check; 1 ran without some data, the input lacks it: workload-pods.") {
		t.Errorf("coverage line %q", line)
	}
}

// TestWorkloadPodsFromPodsAlone: with pods only, the finding is on the
// ReplicaSet the pods name, which was not read either.
func TestWorkloadPodsFromPodsAlone(t *testing.T) {
	set, err := fixture.Load(filepath.Join("..", "testdata", "checks", "workload-pods"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := set.SnapshotWith([]snapshot.Resource{snapshot.Pods})
	if err != nil {
		t.Fatal(err)
	}
	r := doctor.Run(context.Background(), snap, []*doctor.Check{checks.WorkloadPods}, fixture.Now())
	found := false
	for _, f := range r.Findings {
		if f.Object.Kind == "ReplicaSet" && strings.HasPrefix(f.Object.Name, "web-") && strings.Contains(f.Message, "crash-looping") {
			found = true
			if want := "owner chain stops at ReplicaSet shop/" + f.Object.Name + ": " + fixture.NotDeclared + ": replicasets.apps"; f.Partial != want {
				t.Errorf("partial = %q, want %q", f.Partial, want)
			}
		}
	}
	if !found {
		t.Fatalf("crash loop of web not found from pods alone: %+v", r.Findings)
	}
}
