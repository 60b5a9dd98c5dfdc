package snapshot

import (
	"context"
	"errors"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
)

// DefaultRetry retries a read that failed transiently up to four times,
// after 200ms, 400ms, 800ms and 1.6s, each plus up to 50% of jitter (so
// that clients failed by one blip do not return in step), never past the
// read's deadline: about 4s at most, so an API server failing every read
// costs a scan seconds, not its whole --timeout.
var DefaultRetry = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 4, Cap: 1600 * time.Millisecond}

// Retry calls attempt until it succeeds, fails for good, or backoff.Steps
// retries are spent, waiting backoff's jittered steps (or longer, when the
// server asked for it) in between; it gives up at once, with the last
// error, when the next attempt could not end before ctx's deadline.
// transient says which errors are worth another attempt; nil means
// Transient.
func Retry(ctx context.Context, backoff wait.Backoff, transient func(error) bool, attempt func() error) error {
	if transient == nil {
		transient = Transient
	}
	retries := backoff.Steps
	for n := 0; ; n++ {
		err := attempt()
		if err == nil || ctx.Err() != nil || n >= retries || !transient(err) {
			return err
		}
		wait := backoff.Step()
		if s, ok := apierrors.SuggestsClientDelay(err); ok && time.Duration(s)*time.Second > wait {
			wait = time.Duration(s) * time.Second
		}
		if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
			return err // the next attempt could not finish in time: say what failed
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// Transient says whether a failed read is worth another attempt within
// its deadline: a 5xx or a timeout. 429s and 5xx with Retry-After are
// not: client-go's own retry loop has already retried those, honouring
// Retry-After, before the error reached us (as it has dropped connections
// of a GET; one that still surfaces is retried here).
func Transient(err error) bool {
	if _, ok := apierrors.SuggestsClientDelay(err); ok {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		return code >= 500 || code == http.StatusRequestTimeout
	}
	return utilnet.IsTimeout(err) || errors.Is(err, context.DeadlineExceeded) ||
		utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) || utilnet.IsHTTP2ConnectionLost(err)
}
