package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

func sample() *doctor.Report {
	return &doctor.Report{
		APIVersion: doctor.APIVersion, Kind: "Report",
		Summary:  doctor.Summary{Critical: 1, Info: 1, Failed: 1, Skipped: 1},
		Checks:   []doctor.CheckResult{{Name: "a", Status: doctor.StatusFailed}, {Name: "b", Status: doctor.StatusSkipped, Reason: "forbidden: cannot list nodes at cluster scope"}},
		Requests: 7, Duration: doctor.Duration(420 * time.Millisecond),
		Findings: []doctor.Finding{
			{Check: "a", Severity: doctor.Critical, Object: doctor.ObjectRef{Kind: "Node", Name: "evil\x1b[31mnode"}, Message: "bad \x1b]0;title\x07 thing", Count: 3,
				Examples: []string{"x", "y"}, Remediation: []doctor.Remediation{{Text: "fix it", Command: "kubectl describe node x"}}},
			{Check: "a", Severity: doctor.Info, Object: doctor.ObjectRef{Kind: "Node", Name: "n"}, Message: "fyi", Count: 1},
		},
	}
}

func TestTableEscapesAndGroups(t *testing.T) {
	var b bytes.Buffer
	if err := Print(&b, sample(), Options{Format: "table"}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsRune(out, '\x1b') || strings.ContainsRune(out, '\x07') {
		t.Errorf("terminal control characters leaked:\n%q", out)
	}
	for _, want := range []string{"CRITICAL (1)", "INFO (1)", "×3", "e.g. x, y", "→ fix it", "$ kubectl describe node x",
		"skipped b: forbidden: cannot list nodes at cluster scope",
		"1 critical, 0 warning, 1 info · 0 checks passed, 1 failed, 1 skipped · 7 API requests in 0.42s"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Index(out, "CRITICAL") > strings.Index(out, "INFO") {
		t.Error("critical must come first")
	}
}

func TestColourOnlyWhenAsked(t *testing.T) {
	var plain, coloured bytes.Buffer
	_ = Print(&plain, sample(), Options{Format: "table"})
	_ = Print(&coloured, sample(), Options{Format: "table", Color: true})
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("colour without Color")
	}
	if !strings.Contains(coloured.String(), "\x1b[") {
		t.Error("no colour with Color")
	}
}

func TestTableCells(t *testing.T) {
	var b bytes.Buffer
	if err := Table(&b, []string{"NODE", "KEY"}, [][]string{{"a", "k\x1b[2J"}, {"long-name", ""}}); err != nil {
		t.Fatal(err)
	}
	want := "NODE        KEY\na           k^[[2J\nlong-name\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

func TestTableWithBaselineAndSuppressions(t *testing.T) {
	r := ciSample()
	r.ExpiredIgnores = []doctor.ExpiredIgnore{{Check: "a", Namespace: "legacy", Reason: "INC-4711", Expires: "2020-01-01", Line: 12, Matches: 2}}
	var b bytes.Buffer
	if err := Print(&b, r, Options{Format: "table"}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	order := []string{"NEW (1)", "CRITICAL (1)", "shop/Deployment/web:odd name", "KNOWN (1) in the baseline: listed, not failing the gate",
		"  info Node/n  [a]  fyi", "RESOLVED (1)", "Node/gone  [a]  was", "SUPPRESSED (1)", "warning Node/legacy  [a]  old",
		"suppressed by config line 9: INC-1",
		`expired ignore entry (config line 12: a namespace=legacy, "INC-4711") expired on 2020-01-01: 2 findings it matched reported again`,
		"1 critical, 0 warning, 1 info · 0 checks passed, 1 failed, 1 skipped, 1 errors · 1 new, 1 known, 1 resolved · 1 suppressed · 7 API requests"}
	at := 0
	for _, want := range order {
		i := strings.Index(out[at:], want)
		if i < 0 {
			t.Fatalf("missing %q after offset %d in:\n%s", want, at, out)
		}
		at += i
	}
}
