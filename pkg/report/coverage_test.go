package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// TestTextStatesCoverage: an incomplete scan says so on its first line, and
// the last line is never a bare all-clear.
func TestTextStatesCoverage(t *testing.T) {
	r := &doctor.Report{APIVersion: doctor.APIVersion, Kind: "Report", Checks: []doctor.CheckResult{
		{Name: "a", Status: doctor.StatusPassed, Coverage: doctor.CoverageFull},
		{Name: "b", Status: doctor.StatusPassed, Coverage: doctor.CoveragePartial,
			Missing: []doctor.Gap{{Read: "deployments.apps", Cause: "denied", Reason: "forbidden: needs list on deployments.apps", Optional: true}}},
		{Name: "c", Status: doctor.StatusSkipped, Coverage: doctor.CoverageNone, Reason: "not in the dump: nodes",
			Missing: []doctor.Gap{{Read: "nodes", Cause: "absent", Reason: "not in the dump: nodes"}}},
		{Name: "d", Status: doctor.StatusError, Coverage: doctor.CoverageNone, Reason: "timed out reading pods after 9s",
			Missing: []doctor.Gap{{Read: "pods", Cause: "failed", Reason: "timed out reading pods after 9s"}}},
	}}
	r.Finalize()
	r.Disable([]string{"e"}, "disabled by --skip")
	var b bytes.Buffer
	if err := Print(&b, r, Options{Format: "table"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if !strings.HasPrefix(lines[0], "INCOMPLETE: 1 check of 4 could not run (d: timed out reading pods after 9s)") {
		t.Errorf("first line %q", lines[0])
	}
	want := "No problems found by 2 checks; 1 not run, the input lacks their data: c; 1 not run, reads failed or the check errored: d; " +
		"1 ran without some data, reads denied: b; 1 disabled."
	if last := lines[len(lines)-1]; last != want {
		t.Errorf("last line\n%q, want\n%q", last, want)
	}
	if strings.Contains(b.String(), "No problems found.") {
		t.Errorf("a bare all-clear:\n%s", b.String())
	}
}
