package checks

import (
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

// How findings quote Warning events and cluster messages.

// maxQuote caps a quoted event message: enough for a kubelet's or an
// admission plugin's sentence and the wrapped error at its end.
const maxQuote = 480

// clipLine shortens s to about n runes, on one line. A long message keeps
// its beginning and its end, cut in the middle: wrapped errors put the
// operation first and the cause last ("MountVolume.SetUp failed ...:
// mount.nfs: Connection timed out"; the scheduler's "0/9 nodes are
// available: ..., 3 node(s) didn't match pod topology spread
// constraints").
func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	head := n * 3 / 5
	tail := n - head - 3
	return strings.TrimSpace(string(r[:head])) + " … " + strings.TrimSpace(string(r[len(r)-tail:]))
}

// warningLine is the evidence line a finding quotes for a Warning event:
// `FailedMount (x12 over 40m, 2m ago): MountVolume.SetUp failed ...`.
func warningLine(now time.Time, w *kube.Warning) string {
	s := w.Reason
	var when []string
	if w.Count > 1 {
		span := ""
		if !w.First.IsZero() && w.Last.Sub(w.First) > time.Second {
			span = " over " + human(w.Last.Sub(w.First))
		}
		when = append(when, fmt.Sprintf("x%d%s", w.Count, span))
	}
	if !w.Last.IsZero() && now.After(w.Last) {
		when = append(when, human(now.Sub(w.Last))+" ago")
	}
	if len(when) > 0 {
		s += " (" + strings.Join(when, ", ") + ")"
	}
	if w.Kind != "" && w.Kind != "Pod" {
		s = strings.ToLower(w.Kind) + "/" + w.Name + " " + s
	}
	return s + ": " + clipLine(w.Message, maxQuote)
}

// eventEvidence is the newest Warning events of the objects (distinct by
// reason and message, newest first) as evidence lines, at most max.
func eventEvidence(now time.Time, max int, lists ...[]*kube.Warning) []string {
	var out []string
	for _, w := range kube.NewestDistinct(max, lists...) {
		out = append(out, warningLine(now, w))
	}
	return out
}
