package doctor

import (
	"strings"
	"testing"
)

func TestFingerprintIsStableAcrossScans(t *testing.T) {
	base := Finding{Check: "pod-storm", Severity: Warning, Object: ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"},
		Message: "60 pods rejected in 22s", Count: 60, Examples: []string{"a"}}
	fp := base.ComputeFingerprint()
	if len(fp) != 32 {
		t.Fatalf("fingerprint %q", fp)
	}
	same := base
	same.Message, same.Count, same.Examples, same.Severity = "1,200 pods rejected in 7m", 1200, []string{"b", "c"}, Critical
	same.Object.APIVersion = "apps/v2"
	if same.ComputeFingerprint() != fp {
		t.Error("message, count, examples, severity or API version changed the fingerprint")
	}
	for name, mutate := range map[string]func(*Finding){
		"check":     func(f *Finding) { f.Check = "job-backlog" },
		"group":     func(f *Finding) { f.Object.APIVersion = "v1" },
		"kind":      func(f *Finding) { f.Object.Kind = "StatefulSet" },
		"namespace": func(f *Finding) { f.Object.Namespace = "shop2" },
		"name":      func(f *Finding) { f.Object.Name = "api" },
		"cause":     func(f *Finding) { f.Cause = "oom" },
	} {
		other := base
		mutate(&other)
		if other.ComputeFingerprint() == fp {
			t.Errorf("changing the %s kept the fingerprint", name)
		}
	}
}

func TestDuplicateFingerprintsAreNumbered(t *testing.T) {
	a := Finding{Check: "c", Object: ObjectRef{Kind: "Node", Name: "n"}, Message: "a"}
	fs := []Finding{a, a, a}
	AssignFingerprints(fs)
	if fs[0].Fingerprint != a.ComputeFingerprint() || fs[1].Fingerprint == fs[0].Fingerprint || fs[2].Fingerprint == fs[1].Fingerprint {
		t.Errorf("fingerprints %s %s %s", fs[0].Fingerprint, fs[1].Fingerprint, fs[2].Fingerprint)
	}
	again := append([]Finding(nil), fs...)
	AssignFingerprints(again)
	for i := range fs {
		if again[i].Fingerprint != fs[i].Fingerprint {
			t.Error("AssignFingerprints is not idempotent")
		}
	}
}

func TestKnownFindingsDoNotFail(t *testing.T) {
	r := &Report{Findings: []Finding{{Severity: Critical, Baseline: BaselineKnown}, {Severity: Info, Baseline: BaselineNew}}}
	if r.Fails(Warning) || !r.Fails(Info) || r.Worst() != Info {
		t.Errorf("worst %s", r.Worst())
	}
}

// TestCoverageLineNeverAllClearWhenNothingRan: a report whose checks were
// all skipped does not begin "No problems found".
func TestCoverageLineNeverAllClearWhenNothingRan(t *testing.T) {
	r := &Report{Checks: []CheckResult{{Name: "node-health", Status: StatusSkipped}, {Name: "pod-storm", Status: StatusSkipped}}}
	if got := r.CoverageLine(); !strings.HasPrefix(got, "Nothing checked; 2 not run") || strings.Contains(got, "No problems") {
		t.Errorf("coverage line %q", got)
	}
	r.Checks[0].Status = StatusPassed
	if got := r.CoverageLine(); !strings.HasPrefix(got, "No problems found by 1 check; 1 not run") {
		t.Errorf("coverage line %q", got)
	}
}
