package cmd

import (
	"bytes"
	"errors"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// TestDecide pins every row of the exit-code policy (--help, docs/ci.md):
// the code, the warning on stderr and the error line, for single scans,
// fleet runs and audits alike.
func TestDecide(t *testing.T) {
	const (
		partial  = "incomplete scan: 1 check errored (rollout-history: etcd is sad)"
		coverage = "1 problem found by 2 checks; 1 not run, reads denied: node-health."
	)
	gaps := func(causes ...string) map[string]bool {
		m := map[string]bool{}
		for _, c := range causes {
			m[c] = true
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		in      outcome
		code    int
		warning string
		err     string
	}{
		// --fail-on and completeness.
		{"complete, nothing at --fail-on", outcome{}, ExitOK, "", ""},
		{"complete, a finding at --fail-on", outcome{Fails: true}, ExitFindings, "", ""},
		{"incomplete, a finding at --fail-on: 1 wins, incompleteness is a warning", outcome{Fails: true, Incomplete: partial}, ExitFindings, partial, ""},
		{"incomplete with --allow-incomplete, a finding at --fail-on", outcome{Fails: true, Incomplete: partial, AllowIncomplete: true}, ExitFindings, partial, ""},
		{"incomplete, nothing at --fail-on", outcome{Incomplete: partial}, ExitError, "", partial + "; --allow-incomplete accepts partial scans"},
		{"out of time: raise --timeout", outcome{Incomplete: "1 check of 34 could not run (pods-stuck: scan cancelled: context deadline exceeded)"}, ExitError, "",
			"1 check of 34 could not run (pods-stuck: scan cancelled: context deadline exceeded); the scan hit its --timeout: raise it (--timeout 10m), or --allow-incomplete accepts partial scans"},
		{"incomplete with --allow-incomplete, nothing at --fail-on", outcome{Incomplete: partial, AllowIncomplete: true}, ExitOK, partial, ""},
		// An interrupted run neither passed nor failed its gate.
		{"interrupted with a finding at --fail-on", outcome{Fails: true, Incomplete: partial, Interrupted: true}, ExitError, "", "interrupted; " + partial},
		{"interrupted, nothing found, --allow-incomplete", outcome{Interrupted: true, AllowIncomplete: true}, ExitError, "",
			"interrupted: the report above holds only what was read and checked before the signal"},
		// Gaps count only with --require-complete.
		{"gaps without --require-complete", outcome{Gaps: gaps(snapshot.CauseFailed, snapshot.CauseDenied, snapshot.CauseAbsent), Coverage: coverage}, ExitOK, "", ""},
		{"--require-complete, no gap", outcome{Gaps: gaps(), RequireComplete: true}, ExitOK, "", ""},
		{"--require-complete, an API the cluster does not serve", outcome{Gaps: gaps(snapshot.CauseUnserved), Coverage: coverage, RequireComplete: true}, ExitOK, "", ""},
		{"--require-complete, the input lacks data", outcome{Gaps: gaps(snapshot.CauseAbsent), Coverage: coverage, RequireComplete: true}, ExitInputLacksData, "", "--require-complete: the input lacks data: " + coverage},
		{"--require-complete, reads denied", outcome{Gaps: gaps(snapshot.CauseDenied), Coverage: coverage, RequireComplete: true}, ExitReadsDenied, "", "--require-complete: reads denied: " + coverage},
		{"--require-complete, denied wins over absent", outcome{Gaps: gaps(snapshot.CauseDenied, snapshot.CauseAbsent), Coverage: coverage, RequireComplete: true}, ExitReadsDenied, "", "--require-complete: reads denied: " + coverage},
		{"--require-complete, reads failed", outcome{Gaps: gaps(snapshot.CauseFailed, snapshot.CauseDenied), Coverage: coverage, RequireComplete: true}, ExitError, "", "--require-complete: reads failed: " + coverage},
		{"--require-complete --allow-incomplete, reads failed and denied", outcome{Gaps: gaps(snapshot.CauseFailed, snapshot.CauseDenied), Coverage: coverage, RequireComplete: true, AllowIncomplete: true}, ExitReadsDenied, "", "--require-complete: reads denied: " + coverage},
		{"--require-complete --allow-incomplete, only reads failed", outcome{Gaps: gaps(snapshot.CauseFailed), Coverage: coverage, RequireComplete: true, AllowIncomplete: true}, ExitOK, "", ""},
		{"--require-complete, a finding at --fail-on: 1 wins", outcome{Fails: true, Gaps: gaps(snapshot.CauseDenied), Coverage: coverage, RequireComplete: true}, ExitFindings, "", ""},
		{"--require-complete, incomplete: 2 for the incompleteness", outcome{Incomplete: partial, Gaps: gaps(snapshot.CauseFailed), Coverage: coverage, RequireComplete: true}, ExitError, "", partial + "; --allow-incomplete accepts partial scans"},
		{"--require-complete --allow-incomplete, incomplete, reads denied: warning and 4", outcome{Incomplete: partial, Gaps: gaps(snapshot.CauseFailed, snapshot.CauseDenied), Coverage: coverage, RequireComplete: true, AllowIncomplete: true}, ExitReadsDenied, partial, "--require-complete: reads denied: " + coverage},
		// A fleet run passes its merged summary; a cluster that could not be scanned makes it incomplete.
		{"fleet, a cluster failed", outcome{Incomplete: "1 cluster of 3 incomplete (gone: scan failed: --from gone.yaml: no such file)"}, ExitError, "",
			"1 cluster of 3 incomplete (gone: scan failed: --from gone.yaml: no such file); --allow-incomplete accepts partial scans"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := decide(tc.in)
			errLine := ""
			if v.Err != nil {
				errLine = v.Err.Error()
			}
			if v.Code != tc.code || v.Warning != tc.warning || errLine != tc.err {
				t.Errorf("decide = code %d, warning %q, error %q; want %d, %q, %q", v.Code, v.Warning, errLine, tc.code, tc.warning, tc.err)
			}

			// exit prints the warning and carries the code and the error.
			var stderr bytes.Buffer
			err := v.exit(&stderr)
			wantStderr := ""
			if tc.warning != "" {
				wantStderr = "warning: " + tc.warning + "\n"
			}
			if stderr.String() != wantStderr {
				t.Errorf("exit wrote %q, want %q", stderr.String(), wantStderr)
			}
			var ee *exitError
			switch {
			case tc.code == ExitOK && err != nil:
				t.Errorf("exit = %v, want nil", err)
			case tc.code != ExitOK && (!errors.As(err, &ee) || ee.Code != tc.code || (ee.Err == nil) != (tc.err == "")):
				t.Errorf("exit = %#v, want exit %d with error %q", err, tc.code, tc.err)
			}
		})
	}
}
