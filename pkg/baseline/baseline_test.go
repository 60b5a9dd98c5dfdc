package baseline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
)

func f(check, ns, name, msg string, count int, sev doctor.Severity) doctor.Finding {
	x := doctor.Finding{Check: check, Severity: sev, Object: doctor.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name},
		Message: msg, Count: count}
	x.Fingerprint = x.ComputeFingerprint()
	return x
}

func scan(findings ...doctor.Finding) *doctor.Report {
	r := &doctor.Report{APIVersion: doctor.APIVersion, Kind: "Report", Findings: findings,
		Checks: []doctor.CheckResult{{Name: "a", Status: doctor.StatusFailed}, {Name: "b", Status: doctor.StatusPassed}, {Name: "c", Status: doctor.StatusSkipped}}}
	r.Finalize()
	return r
}

// TestRoundTrip: a report written with -o json is a baseline; the same scan
// against it is all known, and a later scan is new / known / resolved by
// fingerprint, whatever its messages and counts say.
func TestRoundTrip(t *testing.T) {
	first := scan(
		f("a", "shop", "web", "60 pods rejected", 60, doctor.Critical),
		f("a", "shop", "api", "3 pods rejected", 3, doctor.Warning),
		f("b", "ops", "x", "gone later", 1, doctor.Warning),
		f("c", "ops", "y", "its check is skipped later", 1, doctor.Warning),
	)
	for _, format := range []string{"json", "yaml"} {
		var out bytes.Buffer
		if err := report.Print(&out, first, report.Options{Format: format}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "baseline."+format)
		if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Findings) != 4 {
			t.Fatalf("%s: %d findings", format, len(b.Findings))
		}

		same := scan(first.Findings...)
		b.Apply(same)
		same.Finalize()
		if same.Summary.Known != 4 || same.Summary.New != 0 || len(same.Resolved) != 0 || same.Fails(doctor.Info) {
			t.Errorf("%s: the same scan against its own baseline: %+v", format, same.Summary)
		}

		later := scan(
			f("a", "shop", "web", "1,200 pods rejected", 1200, doctor.Critical), // same problem, new numbers
			f("a", "shop", "cart", "5 pods rejected", 5, doctor.Warning),        // new
		)
		b.Apply(later)
		later.Finalize()
		if later.Findings[0].Baseline != doctor.BaselineKnown || later.Findings[1].Baseline != doctor.BaselineNew {
			t.Errorf("%s: states %q %q", format, later.Findings[0].Baseline, later.Findings[1].Baseline)
		}
		var resolved []string
		for _, r := range later.Resolved {
			resolved = append(resolved, r.Object.Name)
		}
		// api and x are gone; y's check was skipped, so it proves nothing.
		if strings.Join(resolved, ",") != "api,x" || later.Summary.Resolved != 2 || later.Summary.New != 1 || later.Summary.Known != 1 {
			t.Errorf("%s: resolved %v, summary %+v", format, resolved, later.Summary)
		}
		if !later.Fails(doctor.Warning) || later.Fails(doctor.Critical) {
			t.Errorf("%s: only the new warning may fail the gate", format)
		}
	}
}

func TestOldReportsWithoutFingerprints(t *testing.T) {
	b, err := Parse([]byte(`{"apiVersion":"doctor.kubectl.io/v1alpha1","kind":"Report","findings":[
	  {"check":"a","severity":"warning","object":{"apiVersion":"apps/v1","kind":"Deployment","namespace":"shop","name":"web"},"message":"m","count":1}]}`), "old.json")
	if err != nil {
		t.Fatal(err)
	}
	if want := f("a", "shop", "web", "other", 9, doctor.Info).Fingerprint; !b.Has(want) {
		t.Errorf("fingerprint not computed for an old report: %+v", b.Findings)
	}
}

func TestBadBaselines(t *testing.T) {
	for name, c := range map[string]struct{ data, want string }{
		"not json":     {"{oops", "baseline x: not a kubectl-doctor JSON report: "},
		"other object": {`{"apiVersion":"v1","kind":"ConfigMap"}`, "baseline x: not a kubectl-doctor report or baseline (want apiVersion doctor.kubectl.io/v1alpha1 and kind Report"},
		"sarif":        {`{"version":"2.1.0","runs":[]}`, "not a kubectl-doctor report"},
	} {
		_, err := Parse([]byte(c.data), "x")
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "reading baseline") {
		t.Errorf("missing file: %v", err)
	}
}

// nodes is a grouped finding of check a: the nodes named are unreachable.
func nodes(names ...string) doctor.Finding {
	x := doctor.Finding{Check: "a", Severity: doctor.Critical, Object: doctor.ObjectRef{APIVersion: "v1", Kind: "Node", Name: names[0]},
		Message: fmt.Sprintf("%d nodes unreachable", len(names)), Count: len(names)}
	for _, n := range names {
		x.Members = append(x.Members, doctor.ObjectRef{APIVersion: "v1", Kind: "Node", Name: n})
	}
	x.Fingerprint = x.ComputeFingerprint()
	x.ComputeMemberFingerprints()
	return x
}

// TestNewMemberIsNew: after a baseline of one unreachable node, a second
// one is a new problem, though the finding (one line, fingerprinted on its
// first node) looks the same; the gate fails. Both as a JSON report and as
// a compact baseline.
func TestNewMemberIsNew(t *testing.T) {
	old := scan(nodes("node-1"))
	var report bytes.Buffer
	if err := json.NewEncoder(&report).Encode(old); err != nil {
		t.Fatal(err)
	}
	compact := filepath.Join(t.TempDir(), "baseline.yaml")
	if err := Write(compact, old); err != nil {
		t.Fatal(err)
	}
	fromCompact, err := Load(compact)
	if err != nil {
		t.Fatal(err)
	}
	fromReport, err := Parse(report.Bytes(), "old.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*Baseline{"report": fromReport, "compact": fromCompact} {
		same := scan(nodes("node-1"))
		b.Apply(same)
		same.Finalize()
		if same.Findings[0].Baseline != doctor.BaselineKnown || same.Fails(doctor.Warning) {
			t.Errorf("%s: the same node: %+v", name, same.Findings[0])
		}
		spread := scan(nodes("node-1", "node-2"))
		b.Apply(spread)
		spread.Finalize()
		got := spread.Findings[0]
		if got.Fingerprint != same.Findings[0].Fingerprint {
			t.Fatalf("%s: the finding's own fingerprint changed: the test does not test the hole", name)
		}
		if got.Baseline != doctor.BaselineNew || strings.Join(got.NewMembers, ",") != "node/node-2" || !spread.Fails(doctor.Critical) || spread.Summary.New != 1 {
			t.Errorf("%s: a second unreachable node: %+v", name, got)
		}
		healed := scan()
		b.Apply(healed)
		if len(healed.Resolved) != 1 {
			t.Errorf("%s: resolved %+v", name, healed.Resolved)
		}
	}
	data, _ := os.ReadFile(compact)
	if !strings.Contains(string(data), "kind: Baseline") || !strings.Contains(string(data), "name: node-1") {
		t.Errorf("compact baseline:\n%s", data)
	}
}
