package checks_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// fixtureSnapshot is the snapshot of a fixture directory with every
// resource it holds, at the fixtures' server version.
func fixtureSnapshot(t *testing.T, dir string) *snapshot.Snapshot {
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
	return snap
}

// runWithout runs one check over its own fixture directory with every read
// it declares except drop, as for a user who may not read those (none
// dropped: all of them).
func runWithout(t *testing.T, c *doctor.Check, drop ...snapshot.Resource) *doctor.Report {
	t.Helper()
	set, err := fixture.Load(filepath.Join("..", "testdata", "checks", c.Name))
	if err != nil {
		t.Fatal(err)
	}
	var reads []snapshot.Resource
	for _, r := range append(slices.Clone(c.Reads), c.Optional...) {
		if !slices.Contains(drop, r) {
			reads = append(reads, r)
		}
	}
	snap, err := set.SnapshotWith(reads)
	if err != nil {
		t.Fatal(err)
	}
	snap.ServerVersion = FixtureServerVersion
	return doctor.Run(context.Background(), snap, []*doctor.Check{c}, fixture.Now())
}

// fixtureFinding runs one check on a fixture directory and returns its
// finding on the object ("ns/kind/name", lower-case kind, as
// ObjectRef.String prints it); the test fails when there is none.
func fixtureFinding(t *testing.T, c *doctor.Check, dir, object string) doctor.Finding {
	t.Helper()
	r := doctor.Run(context.Background(), fixtureSnapshot(t, dir), []*doctor.Check{c}, fixture.Now())
	for _, f := range r.Findings {
		if f.Object.String() == object {
			return f
		}
	}
	t.Fatalf("%s: no finding on %s", c.Name, object)
	return doctor.Finding{}
}

func hasCommand(f doctor.Finding, cmd string) bool {
	for _, r := range f.Remediation {
		if r.Command == cmd {
			return true
		}
	}
	return false
}

func hasCommandPrefix(f doctor.Finding, prefix string) bool {
	for _, r := range f.Remediation {
		if strings.HasPrefix(r.Command, prefix) {
			return true
		}
	}
	return false
}
