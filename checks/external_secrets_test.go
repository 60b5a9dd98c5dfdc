package checks_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
)

// TestWorkloadFoldsIntoExternalSecret: pods that wait for a Secret an
// ExternalSecret writes are told not to create it by hand; with
// external-secrets run, their finding folds into the one that says why the
// Secret is missing (here the ClusterSecretStore that holds the
// ExternalSecret back), one finding for one cause.
func TestWorkloadFoldsIntoExternalSecret(t *testing.T) {
	set, err := fixture.Load(filepath.Join("..", "testdata", "checks", "external-secrets"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := set.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	alone := doctor.Run(context.Background(), snap, []*doctor.Check{checks.WorkloadPods}, fixture.Now())
	var web *doctor.Finding
	for i, f := range alone.Findings {
		if f.Object.Kind == "Deployment" && f.Object.Name == "web" {
			web = &alone.Findings[i]
		}
	}
	if web == nil {
		t.Fatalf("no finding on deployment shop/web: %+v", alone.Findings)
	}
	var advice []string
	for _, r := range web.Remediation {
		advice = append(advice, r.Text+" $ "+r.Command)
		if strings.Contains(r.Command, "kubectl create secret") {
			t.Errorf("advises creating the Secret an ExternalSecret writes: %s", r.Command)
		}
	}
	if !strings.Contains(strings.Join(advice, "\n"), "do not create it by hand: externalsecret api-keys writes it") {
		t.Errorf("remediation does not name the ExternalSecret:\n%s", strings.Join(advice, "\n"))
	}
	both := doctor.Run(context.Background(), snap, []*doctor.Check{checks.WorkloadPods, checks.ExternalSecretsSync}, fixture.Now())
	folded := false
	for _, f := range both.Findings {
		if f.Object.Kind == "Deployment" && f.Object.Name == "web" {
			t.Errorf("deployment web stands beside the store's finding: %s", f.Message)
		}
		if f.Object.Kind == "ClusterSecretStore" && f.Object.Name == "aws-sm" {
			for _, e := range f.Explains {
				folded = folded || strings.HasPrefix(e, "workload-pods shop/deployment/web")
			}
		}
	}
	if !folded {
		t.Errorf("the store's finding does not explain deployment web: %+v", both.Findings)
	}
}
