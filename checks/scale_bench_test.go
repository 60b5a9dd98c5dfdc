package checks_test

import (
	"context"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot/synth"
)

// benchmarkScale runs the checks over the benchmark cluster of hack/bench
// (synth: Running, storm and Pending pods, ReplicaSets, Jobs, Services,
// EndpointSlices, events), each on a snapshot without derived indexes so
// that building them is measured too: every check alone, then all together
// as a scan runs them.
func benchmarkScale(b *testing.B, pods, nodes int, names ...string) {
	if testing.Short() && pods > 50000 {
		b.Skip("150k pods: not in -short runs")
	}
	s, err := snapshot.FromObjects(synth.For(pods, nodes).Objects()...)
	if err != nil {
		b.Fatal(err)
	}
	s.ServerVersion = FixtureServerVersion
	run := func(b *testing.B, cs []*doctor.Check) {
		b.ReportAllocs()
		for b.Loop() {
			r := doctor.Run(context.Background(), snapshot.WithoutMemo(s), cs, synth.Now)
			for _, c := range r.Checks {
				if c.Status == doctor.StatusError {
					b.Fatalf("%s: %s", c.Name, c.Reason)
				}
			}
		}
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	for _, c := range checks.All() {
		if len(want) == 0 || want[c.Name] {
			b.Run(c.Name, func(b *testing.B) { run(b, []*doctor.Check{c}) })
		}
	}
	b.Run("all", func(b *testing.B) { run(b, checks.All()) })
}

// BenchmarkChecks30k: every check at 30,600 pods / 1,000 nodes.
func BenchmarkChecks30k(b *testing.B) { benchmarkScale(b, 30600, 1000) }

// BenchmarkChecks150k: the heaviest checks at 30k (see docs/performance.md)
// and a whole scan at 150,000 pods / 5,000 nodes; benchmarks only, skipped
// with -short.
func BenchmarkChecks150k(b *testing.B) {
	benchmarkScale(b, 150000, 5000, heaviest...)
}

// heaviest are the checks that cost most at 30k pods (BenchmarkChecks30k).
var heaviest = []string{"pod-storm", "workload-pods", "missing-references", "node-pod-capacity", "sandbox-failures", "rbac-missing-role"}
