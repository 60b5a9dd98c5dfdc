package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// outcome is what the exit code of a run depends on, once its report is
// printed: a single scan, a fleet run (over all its clusters) or an audit.
type outcome struct {
	// Fails says a finding is at or above --fail-on (a new one, with
	// --baseline).
	Fails bool
	// Incomplete says what the run missed, in one line: a read failed or
	// timed out, a check errored, no check could run, an input file was
	// passed over, a cluster of a fleet could not be scanned. "" when the
	// run is complete.
	Incomplete string
	// Gaps are the causes (snapshot.Cause*) of the checks that did not run,
	// or ran without some of their data, and Coverage is the report's line
	// saying which: what --require-complete judges.
	Gaps     map[string]bool
	Coverage string
	// AllowIncomplete and RequireComplete are the flags of the same name.
	AllowIncomplete, RequireComplete bool
	// Interrupted says Ctrl-C (or SIGTERM) cut the run short: whatever the
	// partial report holds, the run did not finish.
	Interrupted bool
}

// verdict is a run's exit code with what stderr says about it.
type verdict struct {
	Code int
	// Warning, unless "", is printed as "warning: ..." whatever the code.
	Warning string
	// Err is the error line of a failing code other than 1; with 1 the
	// report has said everything.
	Err error
}

// decide is the exit-code policy, the same for every command that gates on
// findings (--help and docs/ci.md state it), in this precedence:
//
//   - 2 when the run was interrupted (Ctrl-C, SIGTERM), whatever its
//     partial report holds: a CI job stopped by a signal did not pass or
//     fail its gate.
//   - 1 when a finding is at or above --fail-on, complete scan or not: what
//     was not read can only add findings. An incomplete scan is a warning.
//   - 2 when the scan is incomplete, unless --allow-incomplete, which
//     makes it a warning.
//   - with --require-complete, for the checks that did not run or ran
//     without some data: 2 for failed reads (unless --allow-incomplete),
//     else 4 for denied reads, else 3 for data the input lacks. An API the
//     cluster does not serve is no gap.
//   - else 0.
func decide(o outcome) verdict {
	switch {
	case o.Interrupted:
		msg := "interrupted: the report above holds only what was read and checked before the signal"
		if o.Incomplete != "" {
			msg = "interrupted; " + o.Incomplete
		}
		return verdict{Code: ExitError, Err: errors.New(msg)}
	case o.Fails:
		return verdict{Code: ExitFindings, Warning: o.Incomplete}
	case o.Incomplete != "" && !o.AllowIncomplete:
		hint := "; --allow-incomplete accepts partial scans"
		if strings.Contains(o.Incomplete, context.DeadlineExceeded.Error()) {
			// The scan ran out of time, not of data: a longer --timeout is
			// the fix (a large capture or cluster takes longer than 60s).
			hint = "; the scan hit its --timeout: raise it (--timeout 10m), or --allow-incomplete accepts partial scans"
		}
		return verdict{Code: ExitError, Err: errors.New(o.Incomplete + hint)}
	}
	v := verdict{Code: ExitOK, Warning: o.Incomplete}
	if !o.RequireComplete {
		return v
	}
	switch {
	case o.Gaps[snapshot.CauseFailed] && !o.AllowIncomplete:
		v.Code, v.Err = ExitError, errors.New("--require-complete: reads failed: "+o.Coverage)
	case o.Gaps[snapshot.CauseDenied]:
		v.Code, v.Err = ExitReadsDenied, errors.New("--require-complete: reads denied: "+o.Coverage)
	case o.Gaps[snapshot.CauseAbsent]:
		v.Code, v.Err = ExitInputLacksData, errors.New("--require-complete: the input lacks data: "+o.Coverage)
	}
	return v
}

// exit prints the verdict's warning on errOut and returns the error that
// makes Execute exit with its code (nil for 0).
func (v verdict) exit(errOut io.Writer) error {
	if v.Warning != "" {
		fmt.Fprintln(errOut, "warning: "+v.Warning)
	}
	if v.Code == ExitOK {
		return nil
	}
	return &exitError{Code: v.Code, Err: v.Err}
}
