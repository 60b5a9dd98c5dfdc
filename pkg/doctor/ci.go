package doctor

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Baseline states of a finding (Finding.Baseline) when a scan is compared
// with an earlier report.
const (
	BaselineNew   = "new"
	BaselineKnown = "known"
)

// Suppression says who silenced a finding and why.
type Suppression struct {
	// Source is "config" (an ignore entry of the config file) or
	// "annotation" (doctor.kubectl.io/ignore on the object).
	Source string `json:"source"`
	Reason string `json:"reason"`
	// Expires is the ignore entry's expiry date, when it has one.
	Expires string `json:"expires,omitempty"`
	// Line is the line of the ignore entry in the config file.
	Line int `json:"line,omitempty"`
}

// ExpiredIgnore is an ignore entry of the config file whose expiry date has
// passed: it no longer applies, and the report says so, so that a forgotten
// exception surfaces instead of silently lasting for ever.
type ExpiredIgnore struct {
	Check     string `json:"check"`
	Namespace string `json:"namespace,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Name      string `json:"name,omitempty"`
	Reason    string `json:"reason"`
	Expires   string `json:"expires"`
	Line      int    `json:"line"`
	// Matches counts the findings of this scan it would have suppressed.
	Matches int `json:"matches"`
}

// FingerprintVersion prefixes what is hashed, so that a future change of
// the recipe cannot collide with fingerprints in old baselines.
const FingerprintVersion = "v1"

// ComputeFingerprint is the stable identity of the problem f reports: the
// check, the object's API group, kind, namespace and name, and the Cause.
// It leaves out the message, counts, examples and API version, which change
// between scans of the same problem.
func (f *Finding) ComputeFingerprint() string {
	group, _, ok := strings.Cut(f.Object.APIVersion, "/")
	if !ok {
		group = "" // "v1": the core group
	}
	h := sha256.Sum256([]byte(strings.Join([]string{FingerprintVersion, f.Check, group, f.Object.Kind,
		f.Object.Namespace, f.Object.Name, f.Cause}, "\x00")))
	return hex.EncodeToString(h[:16])
}

// disambiguateFingerprints gives the second and later findings that share
// a fingerprint (one check reporting two problems on one object without
// setting Cause) distinct fingerprints, numbered in report order. Checks
// that can report several problems per object should set Cause instead:
// the numbering follows the order of their messages.
func (r *Report) disambiguateFingerprints() {
	AssignFingerprints(r.Findings)
}

// AssignFingerprints sets the fingerprint of findings that have none and
// numbers duplicates, in order. Run does it for a scan; baselines written
// before fingerprints existed get theirs the same way.
func AssignFingerprints(findings []Finding) {
	seen := map[string]int{}
	for i := range findings {
		f := &findings[i]
		if f.Fingerprint == "" {
			f.Fingerprint = f.ComputeFingerprint()
		}
		n := seen[f.Fingerprint]
		seen[f.Fingerprint] = n + 1
		if n > 0 {
			h := sha256.Sum256(fmt.Appendf(nil, "%s#%d", f.Fingerprint, n+1))
			f.Fingerprint = hex.EncodeToString(h[:16])
		}
	}
}

// Finalize re-sorts the report and recounts its summary after findings were
// changed after Run (severity overrides, suppressions, a baseline).
func (r *Report) Finalize() {
	r.sort()
	r.tally()
	r.assess()
	r.Summary.Suppressed = len(r.Suppressed)
	r.Summary.New, r.Summary.Known = 0, 0
	for _, f := range r.Findings {
		switch f.Baseline {
		case BaselineNew:
			r.Summary.New++
		case BaselineKnown:
			r.Summary.Known++
		}
	}
	r.Summary.Resolved = len(r.Resolved)
}
