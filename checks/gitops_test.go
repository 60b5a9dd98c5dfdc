package checks_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// TestDegradedApplicationFoldsIntoItsWorkload: an Argo CD Application that
// is Degraded and nothing else is a symptom of the resource Argo CD finds
// degraded; when another check reported that resource, the Application is
// listed in that finding's Explains instead of standing as a second
// finding. Without that check's finding, the Application stands.
func TestDegradedApplicationFoldsIntoItsWorkload(t *testing.T) {
	set, err := fixture.Load(filepath.Join("..", "testdata", "checks", "workload-pods"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := set.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var dep *doctor.ObjectRef
	for _, f := range doctor.Run(context.Background(), snap, []*doctor.Check{checks.WorkloadPods}, fixture.Now()).Findings {
		if f.Object.Kind == "Deployment" {
			dep = &f.Object
			break
		}
	}
	if dep == nil {
		t.Fatal("no Deployment finding in the workload-pods fixtures")
	}
	app := &snapshot.Application{TypeMeta: metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "Application"},
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "argocd"}}
	app.Status.Sync.Status = "Synced"
	app.Status.Health = snapshot.ApplicationHealth{Status: "Degraded"}
	app.Status.Resources = []snapshot.ApplicationResource{{Group: "apps", Kind: "Deployment", Namespace: dep.Namespace, Name: dep.Name,
		Health: &snapshot.ApplicationHealth{Status: "Degraded", Message: "Deployment exceeded its progress deadline"}}}
	set.Objects = append(set.Objects, app)
	snap, err = set.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	// Every check runs: the Application must fold into the workload's
	// health finding, never into another check's finding that merely names
	// the Deployment (rollout-history's missing change-cause, hygiene).
	r := doctor.Run(context.Background(), snap, checks.All(), fixture.Now())
	explainedBy := ""
	for _, f := range r.Findings {
		if f.Object.Kind == "Application" {
			t.Errorf("the Application stands beside its workload's finding: %s", f.Message)
		}
		for _, e := range f.Explains {
			if strings.HasPrefix(e, "gitops-sync ") && strings.Contains(e, "is Degraded") {
				explainedBy = f.Check + " " + f.Object.String()
				if f.Check != checks.WorkloadPods.Name || f.Object != *dep {
					t.Errorf("the Application folded into %s's finding on %s: %s", f.Check, f.Object, f.Message)
				}
			}
		}
	}
	if explainedBy == "" {
		t.Errorf("%s's finding does not explain the Application", dep)
	}
	alone := doctor.Run(context.Background(), snap, []*doctor.Check{checks.GitOpsSync}, fixture.Now())
	if len(alone.Findings) != 1 || alone.Findings[0].Object.Kind != "Application" {
		t.Errorf("without workload-pods the Application should stand: %+v", alone.Findings)
	}
}
