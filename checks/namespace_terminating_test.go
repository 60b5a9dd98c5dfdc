package checks_test

import (
	"context"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
)

// TestStuckNamespaceScoped: a scan of one namespace (-n) reports that
// namespace stuck, and not the other stuck namespaces a cluster-wide read
// of namespaces shows.
func TestStuckNamespaceScoped(t *testing.T) {
	for scope, want := range map[string]int{"": 2, "team-a": 1, "shop": 0} {
		snap := fixtureSnapshot(t, "namespace-stuck-terminating")
		snap.Namespace = scope
		r := doctor.Run(context.Background(), snap, []*doctor.Check{checks.NamespaceStuckTerminating}, fixture.Now())
		if len(r.Findings) != want {
			t.Errorf("-n %q: %d findings, want %d", scope, len(r.Findings), want)
		}
		for _, f := range r.Findings {
			if scope != "" && f.Object.Name != scope {
				t.Errorf("-n %q: finding on %s", scope, f.Object)
			}
		}
	}
}
