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

// TestServiceFoldsItsReferrers: an Ingress whose only problem is a backend
// Service without endpoints is folded into the Service's finding when both
// checks run, and stands when service-endpoints does not run; the Service
// behind a broken webhook or APIService folds into their findings the
// same way (never a silent drop).
func TestServiceFoldsItsReferrers(t *testing.T) {
	run := func(dir string, cs ...*doctor.Check) map[string]doctor.Finding {
		t.Helper()
		set, err := fixture.Load(filepath.Join("..", "testdata", "checks", dir))
		if err != nil {
			t.Fatal(err)
		}
		snap, err := set.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		snap.ServerVersion = FixtureServerVersion
		out := map[string]doctor.Finding{}
		for _, f := range doctor.Run(context.Background(), snap, cs, fixture.Now()).Findings {
			out[f.Object.String()] = f
		}
		return out
	}
	both := run("service-endpoints", checks.ServiceEndpoints, checks.IngressBackends)
	if _, ok := both["site/ingress/site"]; ok {
		t.Error("ingress site is reported beside the Service it only depends on")
	}
	svc := both["site/service/search"]
	if svc.Severity != doctor.Critical || len(svc.Explains) != 1 || !strings.HasPrefix(svc.Explains[0], "ingress-backends site/ingress/site: ") {
		t.Errorf("service search: %s, explains %q; want critical, explaining the Ingress", svc.Severity, svc.Explains)
	}
	alone := run("service-endpoints", checks.IngressBackends)
	if f, ok := alone["site/ingress/site"]; !ok || f.Severity != doctor.Critical {
		t.Errorf("without service-endpoints the Ingress's finding must stand: %+v", f)
	}

	chained := run("service-endpoints", checks.ServiceEndpoints, checks.AdmissionWebhooks, checks.APIServiceUnavailable)
	for _, obj := range []string{"guard/service/guard", "kube-system/service/metrics-server"} {
		if _, ok := chained[obj]; ok {
			t.Errorf("%s is reported beside the webhook or APIService finding that names it", obj)
		}
	}
	for obj, want := range map[string]string{
		"validatingwebhookconfiguration/guard": "service-endpoints guard/service/guard: ",
		"apiservice/v1beta1.metrics.k8s.io":    "service-endpoints kube-system/service/metrics-server: ",
	} {
		f := chained[obj]
		if len(f.Explains) == 0 || !strings.HasPrefix(f.Explains[0], want) {
			t.Errorf("%s explains %q, want %q…", obj, f.Explains, want)
		}
	}
}
