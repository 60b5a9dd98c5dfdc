package checks_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
)

// TestFailedJobWithoutPods: a failed Job whose pods are gone (deleted at
// its deadline, or cleaned up) is not remediated with logs that no longer
// exist, and one stopped at its deadline names the deadline to raise.
func TestFailedJobWithoutPods(t *testing.T) {
	snap := fixtureSnapshot(t, "job-failed")
	r := doctor.Run(context.Background(), snap, []*doctor.Check{checks.JobFailed}, fixture.Now())
	found := false
	for _, f := range r.Findings {
		if f.Object.Name != "reindex-nightly" {
			continue
		}
		found = true
		var cmds, texts []string
		for _, rem := range f.Remediation {
			cmds, texts = append(cmds, rem.Command), append(texts, rem.Text)
		}
		all := strings.Join(cmds, "\n")
		if strings.Contains(all, "kubectl logs") || !strings.Contains(all, "kubectl describe job reindex-nightly -n lab") ||
			!strings.Contains(strings.Join(texts, "\n"), "longer activeDeadlineSeconds (now 120s; e.g. 240)") {
			t.Errorf("remediation:\n%s\n%s", all, strings.Join(texts, "\n"))
		}
	}
	if !found {
		t.Fatal("no finding on reindex-nightly")
	}
}
