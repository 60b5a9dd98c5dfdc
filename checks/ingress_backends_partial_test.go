package checks_test

import (
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// A user limited to one namespace cannot list IngressClasses (cluster
// scoped): ingress-backends still runs, reports the broken backends and the
// load balancer's port errors as with every read, judges no class, and its
// coverage says which read it missed.
func TestIngressBackendsWithoutIngressClasses(t *testing.T) {
	full := runWithout(t, checks.IngressBackends)
	partial := runWithout(t, checks.IngressBackends, snapshot.IngressClasses)
	if got := partial.Checks[0]; got.Status != doctor.StatusFailed || got.Coverage != doctor.CoveragePartial ||
		len(got.Missing) != 1 || got.Missing[0].Read != snapshot.IngressClasses.String() || !got.Missing[0].Optional {
		t.Fatalf("without IngressClasses: status %s, coverage %s, missing %+v; want failed, partial, missing ingressclasses", got.Status, got.Coverage, got.Missing)
	}
	byObject := map[string]string{}
	for _, f := range partial.Findings {
		byObject[f.Object.Name] = f.Message
		if strings.Contains(f.Message, "IngressClass") {
			t.Errorf("%s: judges the class without having read the classes: %s", f.Object.Name, f.Message)
		}
	}
	kept := 0
	for _, f := range full.Findings {
		if strings.Contains(f.Message, "IngressClass") {
			// Its broken backends stay a finding without the class.
			if strings.Contains(f.Message, "backend is broken") || strings.Contains(f.Message, "backends are broken") {
				kept++
				if byObject[f.Object.Name] == "" {
					t.Errorf("%s: its broken backends are not reported without IngressClasses", f.Object.Name)
				}
			}
			continue
		}
		kept++
		if byObject[f.Object.Name] != f.Message {
			t.Errorf("%s: without IngressClasses %q, with them %q", f.Object.Name, byObject[f.Object.Name], f.Message)
		}
	}
	if kept == 0 || len(partial.Findings) != kept {
		t.Errorf("without IngressClasses: %d findings, want the %d that do not judge the class", len(partial.Findings), kept)
	}
}
