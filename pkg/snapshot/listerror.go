package snapshot

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ListError says why a resource could not be listed. Skip errors (forbidden,
// not served, unavailable) make the checks that need the resource skipped;
// other errors make them errored. Neither aborts the scan.
type ListError struct {
	Resource Resource
	Reason   string
	Skip     bool
	Err      error
	// Cause classifies the failure for coverage reports and exit codes:
	// one of the Cause* constants; "" is derived from Skip and Reason.
	Cause string
}

// Why a read is missing from a snapshot (ListError.Cause, CauseOf).
const (
	// CauseAbsent: the input (a dump, a capture, kubectl output) does not
	// hold the resource, or the scan did not plan it.
	CauseAbsent = "absent"
	// CauseDenied: the user may not read it (RBAC: forbidden, unauthorized).
	CauseDenied = "denied"
	// CauseUnserved: the cluster does not serve the API (not installed) or
	// it is unavailable (an aggregated API answering 503).
	CauseUnserved = "unserved"
	// CauseFailed: the read failed or timed out; a retry may succeed.
	CauseFailed = "failed"
)

// CauseOf classifies why err kept a resource from being read: CauseFailed
// for an error that is not a skippable ListError.
func CauseOf(err error) string {
	var le *ListError
	if !errors.As(err, &le) {
		return CauseFailed
	}
	switch {
	case le.Cause != "":
		return le.Cause
	case !le.Skip:
		return CauseFailed
	case strings.HasPrefix(le.Reason, "forbidden") || strings.HasPrefix(le.Reason, "unauthorized") ||
		strings.Contains(le.Reason, "forbidden"):
		return CauseDenied
	case strings.HasPrefix(le.Reason, "not served") || strings.HasPrefix(le.Reason, "unavailable"):
		return CauseUnserved
	}
	return CauseAbsent
}

func (e *ListError) Error() string { return e.Reason }

func (e *ListError) Unwrap() error { return e.Err }

// IsSkippable says whether err means "this resource is not for us" rather
// than "something broke".
func IsSkippable(err error) bool {
	var le *ListError
	return errors.As(err, &le) && le.Skip
}

// needs says what a user lacks for a read, as skip reasons put it: "needs
// list on nodes", "needs list on pods in all namespaces", "needs get on
// /metrics".
func needs(verb string, r Resource, ns string) string {
	what := r.GVR().GroupResource().String()
	switch {
	case r.Path != "":
		return fmt.Sprintf("needs %s on %s", verb, r.Path)
	case !r.Namespaced:
		return fmt.Sprintf("needs %s on %s", verb, what)
	case ns != "":
		return fmt.Sprintf("needs %s on %s in namespace %s", verb, what, ns)
	}
	return fmt.Sprintf("needs %s on %s in all namespaces", verb, what)
}

// classifyAPIError turns the error the API server (or the way to it) gave a
// read of r into a ListError, by its status: forbidden, unauthorized, not
// served and unavailable skip the checks that need r, with a reason saying
// what the user lacks or what the cluster does not serve; anything else
// errs them.
func classifyAPIError(r Resource, ns string, err error) error {
	if le, ok := err.(*ListError); ok {
		return le // already classified (an offline input's absent read)
	}
	verb := r.Verb()
	le := &ListError{Resource: r, Err: err, Skip: true}
	switch {
	case apierrors.IsForbidden(err):
		le.Reason = "forbidden: " + needs(verb, r, ns)
	case apierrors.IsUnauthorized(err):
		le.Reason = "unauthorized: " + needs(verb, r, ns)
	case apierrors.IsNotFound(err), apierrors.IsMethodNotSupported(err):
		le.Reason = fmt.Sprintf("not served by this cluster: %s", r)
	case apierrors.IsServiceUnavailable(err):
		le.Reason = fmt.Sprintf("unavailable: listing %s: %v", r, err)
	default:
		le.Skip = false
		le.Reason = fmt.Sprintf("listing %s: %v", r, err)
	}
	return le
}
