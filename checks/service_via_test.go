package checks_test

import (
	"context"
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
		snap := fixtureSnapshot(t, dir)
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

	// A Service whose pods fail their readiness probe folds into
	// workload-pods' finding on the pods; one whose pods wait for a
	// readiness gate no check explains stands.
	pods := run("service-endpoints", checks.ServiceEndpoints, checks.WorkloadPods)
	if _, ok := pods["ev/service/orders"]; ok {
		t.Error("service orders is reported beside the readiness-probe finding on its pod")
	}
	if f := pods["ev/pod/orders-0"]; len(f.Explains) != 1 || !strings.HasPrefix(f.Explains[0], "service-endpoints ev/service/orders: ") {
		t.Errorf("pod orders-0 explains %q, want service orders", f.Explains)
	}
	if _, ok := pods["ev/service/quotes"]; !ok {
		t.Error("service quotes, whose cause no other check names, must stand")
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

// TestServiceNotReadyQuotesWhy: a Service whose pods are not ready quotes
// the kubelet's Warning events about them, or their Ready condition when
// there is none.
func TestServiceNotReadyQuotesWhy(t *testing.T) {
	snap := fixtureSnapshot(t, "service-endpoints")
	got := map[string][]string{}
	for _, f := range doctor.Run(context.Background(), snap, []*doctor.Check{checks.ServiceEndpoints}, fixture.Now()).Findings {
		got[f.Object.String()] = f.Evidence
	}
	for obj, want := range map[string]string{
		"ev/service/orders": "Unhealthy (x240 over 39m, 30s ago): Readiness probe failed: HTTP probe failed with statuscode: 503",
		"ev/service/quotes": `pod/quotes-0 Ready=False (ReadinessGatesNotReady): corresponding condition of pod readiness gate "target-health.elbv2.k8s.aws/k8s-ev-quotes" does not exist.`,
	} {
		if ev := got[obj]; len(ev) == 0 || ev[0] != want {
			t.Errorf("%s evidence %q, want %q", obj, ev, want)
		}
	}
}
