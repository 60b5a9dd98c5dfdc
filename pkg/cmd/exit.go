package cmd

import (
	"fmt"
	"io"
	"os"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/connect"
)

// Exit codes, documented in --help and the README.
const (
	ExitOK       = 0 // a complete scan, no finding at or above --fail-on
	ExitFindings = 1 // findings at or above --fail-on, complete scan or not
	ExitError    = 2 // the scan could not run, or is incomplete
	// With --require-complete, a scan without findings at --fail-on and
	// without failed reads exits 3 or 4 when a check did not run, or ran
	// without some of its data:
	ExitInputLacksData = 3 // because the input (a capture, kubectl output) does not hold it
	ExitReadsDenied    = 4 // because the user may not read it (RBAC), on a live scan
)

// exitError carries an exit code through cobra; a nil Err exits quietly
// (the report already said everything).
type exitError struct {
	Code int
	Err  error
}

func (e *exitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *exitError) Unwrap() error { return e.Err }

const exitCodesHelp = `Exit codes:
  0  the scan is complete and no finding is at or above --fail-on
  1  findings at or above --fail-on, even if the scan is incomplete: what
     was not read can only add findings, so the gate fails either way
  2  the scan could not run (bad flag, unreadable kubeconfig, cluster
     unreachable, broken --from input), or it is incomplete: a check errored because a read
     failed or timed out, or no check could run at all (e.g. every read
     forbidden). The report is still printed; one line on stderr says
     what is missing and why, and the JSON has "complete": false.
     --allow-incomplete exits 0 instead when nothing is at --fail-on.
     An interrupted run (Ctrl-C, SIGTERM) exits 2 whatever its partial
     report holds.
  3  with --require-complete: nothing at --fail-on and no read failed, but
     a check did not run or ran without some of its data because the input
     (--from) does not hold it
  4  with --require-complete: the same because reads were denied (RBAC),
     including cluster-scoped reads in a namespaced (-n) scan; 4 wins over 3
A check skipped because you may not read what it needs (RBAC) or because the
input lacks its data does not make the scan incomplete, as long as another
check ran: the report's last line says which checks did not run, or ran
without some data, and why. Disabled checks (--skip, --check, the config)
are listed as disabled and never count as gaps. See docs/ci.md.`

// usageError is an exit-2 error whose message names the flag at fault.
func usageError(format string, args ...any) error {
	return &exitError{Code: ExitError, Err: fmt.Errorf(format, args...)}
}

// couldNotRun is err, when not nil, as the exit-2 error of a command that
// could not do its work (pkg/connect's errors, an unwritable file).
func couldNotRun(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{Code: ExitError, Err: err}
}

// useColor follows the NO_COLOR convention (no-color.org), leaves TERM=dumb
// terminals plain and only colours terminals.
func useColor(w io.Writer) bool {
	_, noColor := os.LookupEnv("NO_COLOR")
	return !noColor && os.Getenv("TERM") != "dumb" && connect.IsTerminal(w)
}
