package connect

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// PrintStats writes, with --stats, what the reads cost the API server, one
// line a read: its last request, and the statuses of the attempts retried
// before it.
func (o *Options) PrintStats(w io.Writer) {
	if !o.Stats || o.stats == nil {
		return
	}
	reads := o.stats.Reads()
	var bytes int64
	var retried, retries int
	for _, r := range reads {
		for _, q := range r.Requests {
			bytes += q.Bytes
		}
		if r.Retries() > 0 {
			retried++
			retries += r.Retries()
		}
	}
	fmt.Fprintf(w, "%s, %s received:\n", doctor.Plural(len(reads), "API request", "API requests"), doctor.HumanBytes(bytes))
	for _, r := range reads {
		last := r.Last()
		var took time.Duration
		var before []string
		for i, q := range r.Requests {
			took += q.Duration
			if i < len(r.Requests)-1 {
				before = append(before, attemptLabel(q))
			}
		}
		status := strconv.Itoa(last.Status)
		if last.Status == 0 {
			status = attemptLabel(last)
		}
		line := fmt.Sprintf("  %-6s %3s %9s %8s  %s", last.Method, status, doctor.HumanBytes(last.Bytes), took.Round(time.Millisecond), report.Esc(last.Path))
		if len(before) > 0 {
			line += "  (after " + strings.Join(before, ", ") + ")"
		}
		fmt.Fprintln(w, line)
	}
	if retries > 0 {
		fmt.Fprintf(w, "  %s retried: %s\n", doctor.Plural(retried, "request", "requests"), doctor.Plural(retries, "more attempt", "more attempts"))
	}
}

// attemptLabel is an attempt's outcome in a word: its status code, or
// what went wrong on the wire.
func attemptLabel(q snapshot.Request) string {
	switch {
	case q.Status != 0:
		return strconv.Itoa(q.Status)
	case strings.Contains(q.Err, "reset"), strings.Contains(q.Err, "EOF"), strings.Contains(q.Err, "broken pipe"):
		return "reset"
	case strings.Contains(q.Err, "deadline") || strings.Contains(q.Err, "timeout") || strings.Contains(q.Err, "Timeout"):
		return "timeout"
	case strings.Contains(q.Err, "canceled"):
		return "cancelled"
	}
	return "error"
}

// Requests is what the report counts: reads, and the retries they took.
func (o *Options) Requests() (reads, retries int) {
	if o.stats == nil {
		return 0, 0
	}
	for _, r := range o.stats.Reads() {
		reads++
		retries += r.Retries()
	}
	return reads, retries
}

// Cost is what the reads cost the API server: HTTP requests (retries
// included), those that failed (status 400 or more, or no answer), and the
// response bytes received.
type Cost struct {
	Requests, Errors int
	Bytes            int64
}

// Cost adds up every request made since the reads began (Open or Load);
// zero before.
func (o *Options) Cost() Cost {
	var c Cost
	if o.stats == nil {
		return c
	}
	for _, q := range o.stats.Requests() {
		c.Requests++
		c.Bytes += q.Bytes
		// A 404 is an answer, not a failure: the LIST of an add-on's kind
		// (cert-manager, Argo CD, ...) the cluster does not serve. Counted
		// as an error, it would fire an alert on every healthy cluster
		// without that add-on.
		if q.Status >= 400 && q.Status != http.StatusNotFound || q.Status == 0 {
			c.Errors++
		}
	}
	return c
}
