package doctor

import (
	"fmt"
	"sort"
	"strings"
)

// ObjectRef names the root-cause object of a finding: the Deployment that
// owns a storm of pods, not each pod.
type ObjectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
}

// String is the kubectl-style "kind/name" (with "ns/" in front when namespaced).
func (o ObjectRef) String() string {
	s := strings.ToLower(o.Kind) + "/" + o.Name
	if o.Namespace != "" {
		return o.Namespace + "/" + s
	}
	return s
}

// Remediation is one thing the operator can do: a verb phrase, and where one
// exists the exact command with real names filled in. It is printed, never run.
type Remediation struct {
	Text    string `json:"text"`
	Command string `json:"command,omitempty"`
}

// Finding is one root cause. Count says how many objects it stands for and
// Examples names up to three of them, so 5,000 failed pods stay one line.
type Finding struct {
	Check       string        `json:"check"`
	Severity    Severity      `json:"severity"`
	Object      ObjectRef     `json:"object"`
	Message     string        `json:"message"`
	Count       int           `json:"count"`
	Examples    []string      `json:"examples,omitempty"`
	Remediation []Remediation `json:"remediation,omitempty"`
	// Cause is an optional short, stable token naming the kind of problem
	// ("revision-history-limit", "oom-kill"), for checks that can report
	// more than one problem on the same object. It is part of the
	// fingerprint, so it must not carry counts, times or names.
	Cause string `json:"cause,omitempty"`
	// Fingerprint identifies the same problem across scans: a hash of the
	// check, the object (group, kind, namespace, name) and Cause — never the
	// message or counts, which change from one scan to the next. Baselines
	// and SARIF's partialFingerprints use it. Set by the engine.
	Fingerprint string `json:"fingerprint"`
	// Baseline is "new" or "known" when the scan ran with --baseline.
	Baseline string `json:"baseline,omitempty"`
	// Suppression says why a suppressed finding is not reported (only in
	// Report.Suppressed).
	Suppression *Suppression `json:"suppression,omitempty"`
	// Cluster is the kubeconfig context (or --from file) the finding was
	// found in, set only in a fleet run (several clusters in one report);
	// empty, and absent from the JSON, in a single-cluster scan.
	Cluster string `json:"cluster,omitempty"`
}

// MaxExamples is how many example names a grouped finding carries.
const MaxExamples = 3

// Examples returns the first MaxExamples of names after sorting a copy, so a
// grouped finding always shows the same examples for the same cluster.
func Examples(names []string) []string {
	s := append([]string(nil), names...)
	sort.Strings(s)
	if len(s) > MaxExamples {
		s = s[:MaxExamples]
	}
	return s
}

// Plural formats "1 pod" / "3 pods" with thousands separators.
func Plural(n int, singular, plural string) string {
	if n == 1 {
		return "1 " + singular
	}
	return Thousands(n) + " " + plural
}

// Thousands formats n as 12,500.
func Thousands(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// KindName is the object as kubectl takes it on the command line:
// "deployment/web" (no namespace).
func (o ObjectRef) KindName() string { return strings.ToLower(o.Kind) + "/" + o.Name }
