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
	// Evidence quotes what the cluster itself wrote about the problem:
	// the newest distinct Warning events of the object and its pods
	// ("FailedMount (x12 over 40m, 2m ago): MountVolume.SetUp failed ...")
	// and its False/Unknown conditions. A finding whose cause no rule
	// decided carries it instead of a bare symptom. Newest first; the
	// table prints MaxEvidence lines unless -o wide.
	Evidence []string `json:"evidence,omitempty"`
	// Explains lists the findings of other checks folded into this one
	// because this one is their cause (see Via): "workload-pods
	// shop/deployment/web: 0 of 3 replicas available: ...".
	Explains []string `json:"explains,omitempty"`
	// Via names the objects whose own finding, from another check, is the
	// cause of this one: a Deployment's outage is explained by a finding
	// on its pods' unschedulable owner or on the PersistentVolumeClaim
	// they wait for. After every check has run, the engine folds this
	// finding into such a finding (its Explains) instead of reporting it
	// twice; when that check did not run or found nothing, this finding
	// stands. Checks never drop a finding because another might report it.
	Via []ObjectRef `json:"-"`
	// ViaChecks, when set, narrows Via to the findings of these checks:
	// a refusal reported on a Deployment folds into the finding another
	// check made of the same refusal on that Deployment, never into an
	// unrelated finding that happens to name the same object.
	ViaChecks []string `json:"-"`
	// ViaCause, when set, narrows Via further to findings of that Cause:
	// a pull refused for want of a secret folds into the missing secret's
	// finding, not into a missing ServiceAccount's on the same owner.
	ViaCause string `json:"-"`
	// ViaKeepsSeverity says that folding this finding does not raise the
	// cause's severity: the cause's check has already weighed this
	// consequence (a webhook whose failurePolicy is Ignore stays a warning
	// even when nothing of its backend runs).
	ViaKeepsSeverity bool `json:"-"`
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
	// Members are the objects a grouped finding stands for when each is a
	// problem of its own (three unreachable nodes, the failed bare Jobs of
	// a namespace); Object is one of them. Empty: the finding is about
	// Object alone (pods grouped under their owner are not members: the
	// owner is the problem).
	Members []ObjectRef `json:"members,omitempty"`
	// MemberFingerprints are the fingerprints of Members, sorted: check,
	// member and Cause, as Fingerprint is of Object. Baselines and ignore
	// rules judge members one by one, so a new member is a new problem.
	// Set by the engine.
	MemberFingerprints []string `json:"memberFingerprints,omitempty"`
	// Baseline is "new" or "known" when the scan ran with --baseline.
	Baseline string `json:"baseline,omitempty"`
	// NewMembers names the members a baseline does not know, when the
	// finding is new because of them.
	NewMembers []string `json:"newMembers,omitempty"`
	// Partial says what the finding could not say because a read that
	// enriches it was missing: "owner chain stops at ReplicaSet shop/web-1:
	// not in the dump: deployments.apps". Set by the engine when the
	// check leaves it empty.
	Partial string `json:"partial,omitempty"`
	// Suppression says why a suppressed finding is not reported (only in
	// Report.Suppressed).
	Suppression *Suppression `json:"suppression,omitempty"`
	// Cluster is the kubeconfig context (or --from file) the finding was
	// found in, set only in a fleet run (several clusters in one report);
	// empty, and absent from the JSON, in a single-cluster scan.
	Cluster string `json:"cluster,omitempty"`
}

// MemberFingerprint is the fingerprint member m of f would have as a
// finding of its own.
func (f *Finding) MemberFingerprint(m ObjectRef) string {
	g := Finding{Check: f.Check, Object: m, Cause: f.Cause}
	return g.ComputeFingerprint()
}

// ComputeMemberFingerprints sets MemberFingerprints from Members.
func (f *Finding) ComputeMemberFingerprints() {
	f.MemberFingerprints = nil
	if len(f.Members) == 0 {
		return
	}
	seen := map[string]bool{}
	for _, m := range f.Members {
		p := f.MemberFingerprint(m)
		if !seen[p] {
			seen[p] = true
			f.MemberFingerprints = append(f.MemberFingerprints, p)
		}
	}
	sort.Strings(f.MemberFingerprints)
}

// MaxEvidence is how many evidence lines the table prints (all with -o wide).
const MaxEvidence = 3

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

// HumanBytes formats a byte count as "812 B", "4.2 KiB" or "65.9 MiB".
func HumanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
