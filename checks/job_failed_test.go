package checks_test

import (
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
)

// TestFailedJobWithoutPods: a failed Job whose pods are gone (deleted at
// its deadline, or cleaned up) is not remediated with logs that no longer
// exist, and one stopped at its deadline names the deadline to raise.
func TestFailedJobWithoutPods(t *testing.T) {
	f := fixtureFinding(t, checks.JobFailed, "job-failed", "lab/job/reindex-nightly")
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
