package checks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden from the current reports")

// TestGoldenReports runs every check (profiles included) over each fixture
// directory and compares the whole JSON report, byte for byte, with
// testdata/golden/NAME.json: a refactoring that changes a word, a count, an
// order or a remediation anywhere shows here. After an intended change, run
// `go test ./checks -run TestGoldenReports -update` and review the diff.
func TestGoldenReports(t *testing.T) {
	all := checks.WithProfiles()
	var reads []snapshot.Resource
	for _, c := range all {
		reads = append(append(reads, c.Reads...), c.Optional...)
	}
	dirs, err := filepath.Glob(filepath.Join("..", "testdata", "checks", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no fixture directories: %v", err)
	}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			set, err := fixture.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := set.SnapshotWith(reads)
			if err != nil {
				t.Fatal(err)
			}
			snap.ServerVersion = FixtureServerVersion
			r := doctor.Run(context.Background(), snap, all, fixture.Now())
			r.Finalize()
			r.Duration = 0
			got, err := json.MarshalIndent(r, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("..", "testdata", "golden", name+".json")
			if *updateGolden {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v: run go test ./checks -run TestGoldenReports -update", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("report differs from %s (go test ./checks -run TestGoldenReports -update, then review git diff):\n%s", path, firstDiff(want, got, "golden", "now"))
			}
		})
	}
}
