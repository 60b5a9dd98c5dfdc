package checks_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// FixtureServerVersion is the API server version fixture tests run against.
const FixtureServerVersion = "v1.37.2"

func TestRegistryIsValid(t *testing.T) {
	if err := doctor.Validate(withProfiles()); err != nil {
		t.Fatal(err)
	}
}

// withProfiles is the registry and every opt-in profile's checks: each
// needs fixtures and a doc page like the default ones.
func withProfiles() []*doctor.Check { return checks.WithProfiles() }

// TestFixtures runs every check over testdata/checks/NAME and compares its
// findings with the expectations written on the fixture objects.
func TestFixtures(t *testing.T) {
	for _, c := range withProfiles() {
		t.Run(c.Name, func(t *testing.T) {
			dir := filepath.Join("..", "testdata", "checks", c.Name)
			set, err := fixture.Load(dir)
			if err != nil {
				t.Fatalf("every check needs fixtures: %v", err)
			}
			for kind, n := range fixture.Negatives(set.Objects) {
				if n == 0 {
					t.Errorf("fixtures have %s objects with expectations but none without: add a negative case", kind)
				}
			}
			wants, err := set.Wants()
			if err != nil {
				t.Fatal(err)
			}
			if len(wants) == 0 {
				t.Fatalf("fixtures in %s expect no finding at all: add a positive case", dir)
			}
			// Only what the check declares: a check that silently reads
			// more finds nothing there and misses its expectations.
			snap, err := set.SnapshotWith(append(append([]snapshot.Resource{}, c.Reads...), c.Optional...))
			if err != nil {
				t.Fatal(err)
			}
			snap.ServerVersion = FixtureServerVersion
			r := doctor.Run(context.Background(), snap, []*doctor.Check{c}, fixture.Now())
			if got := r.Checks[0]; got.Status == doctor.StatusError || got.Status == doctor.StatusSkipped {
				t.Fatalf("check %s: %s", got.Status, got.Reason)
			}
			if got := r.Checks[0]; got.Coverage != doctor.CoverageFull {
				t.Errorf("coverage %q with every declared read, missing %v", got.Coverage, got.Missing)
			}
			problems, err := set.Compare(r.Findings)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				t.Error(p)
			}
			for _, f := range r.Findings {
				if len(f.Remediation) == 0 {
					t.Errorf("%s: finding without remediation: %s", f.Object, f.Message)
				}
			}
		})
	}
}

// TestFixturesWithoutOptionalReads runs every check over its fixtures with
// only its required reads: it must still run (an optional read only
// enriches), say which reads it missed, and give every finding a
// remediation; findings it makes must be on objects of the fixtures.
func TestFixturesWithoutOptionalReads(t *testing.T) {
	for _, c := range checks.All() {
		if len(c.Optional) == 0 {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			set, err := fixture.Load(filepath.Join("..", "testdata", "checks", c.Name))
			if err != nil {
				t.Fatal(err)
			}
			snap, err := set.SnapshotWith(c.Reads)
			if err != nil {
				t.Fatal(err)
			}
			snap.ServerVersion = FixtureServerVersion
			r := doctor.Run(context.Background(), snap, []*doctor.Check{c}, fixture.Now())
			got := r.Checks[0]
			if got.Status != doctor.StatusPassed && got.Status != doctor.StatusFailed {
				t.Fatalf("check %s without its optional reads: %s", got.Status, got.Reason)
			}
			if got.Coverage != doctor.CoveragePartial || len(got.Missing) == 0 {
				t.Errorf("coverage %q, missing %v: want partial, naming the optional reads", got.Coverage, got.Missing)
			}
			for _, g := range got.Missing {
				if !g.Optional || g.Cause != snapshot.CauseAbsent {
					t.Errorf("gap %+v: want an optional, absent read", g)
				}
			}
			for _, f := range r.Findings {
				if len(f.Remediation) == 0 {
					t.Errorf("%s: finding without remediation: %s", f.Object, f.Message)
				}
			}
			t.Logf("%d findings without %d optional reads", len(r.Findings), len(got.Missing))
		})
	}
}

// TestOrigins: every check says where its class of problem comes from, the
// "from" column of the generated tables.
func TestOrigins(t *testing.T) {
	for _, c := range withProfiles() {
		if strings.TrimSpace(c.Origin) == "" {
			t.Errorf("check %q has no Origin", c.Name)
		}
	}
}

// TestDocsAreGenerated fails when docs/checks is stale: run `make docs`.
func TestDocsAreGenerated(t *testing.T) {
	all := withProfiles()
	for _, c := range all {
		assertFile(t, filepath.Join("..", "docs", "checks", c.Name+".md"), c.Markdown())
	}
	assertFile(t, filepath.Join("..", "docs", "checks", "README.md"), doctor.Index(all))
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := checks.Readme(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	assertFile(t, filepath.Join("..", "README.md"), want)
}

func assertFile(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%v (run make docs)", err)
		return
	}
	if string(got) != want {
		t.Errorf("%s is stale (run make docs)", path)
	}
}
