package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// The default config lookup must not find the config of whoever runs the
// tests.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "doctor-xdg-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const teamConfig = `apiVersion: doctor.kubectl.io/v1alpha1
kind: Config
checks:
  node-pod-capacity: {enabled: false}
  replicas-at-least-2: {severity: critical}
ignore:
- check: replicas-at-least-2
  namespace: legacy
  reason: "INC-4711: being replaced in Q1"
custom:
- name: replicas-at-least-2
  title: Deployments run at least two replicas
  resource: deployments.apps
  rule: "object.spec.replicas >= 2"
  message: "'has ' + string(object.spec.replicas) + ' replica(s); run at least 2'"
  remediation: "kubectl scale deployment {{name}} -n {{namespace}} --replicas=2"
`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func deployment(ns, name string, replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas)}}
}

// scanWith runs the selected checks over objects and applies the CI options,
// as Run does after loading the snapshot.
func scanWith(t *testing.T, o *ScanOptions, objs ...*appsv1.Deployment) *doctor.Report {
	t.Helper()
	if err := o.Complete(nil); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	var in []runtime.Object
	for _, d := range objs {
		in = append(in, d)
	}
	snap, err := snapshot.FromObjects(in...)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := doctor.Run(context.Background(), snap, o.checks, now)
	o.ci.apply(r, snap, now)
	return r
}

func TestScanWithConfigAndBaseline(t *testing.T) {
	cfg := writeFile(t, "team.yaml", teamConfig)
	o := NewScanOptions(genericiooptions.NewTestIOStreamsDiscard())
	o.ci.Path = cfg
	o.Only = []string{"replicas-at-least-2", "node-pod-capacity", "rollout-history"}
	r := scanWith(t, o, deployment("shop", "web", 1), deployment("legacy", "old", 1), deployment("shop", "api", 3))
	var ran []string
	for _, c := range r.Checks {
		if c.Status == doctor.StatusDisabled {
			if c.Reason != "not named by --check" {
				t.Errorf("disabled check %s: reason %q", c.Name, c.Reason)
			}
			continue // listed, not run
		}
		ran = append(ran, c.Name)
	}
	// --check names node-pod-capacity, so the config's enabled: false yields.
	if strings.Join(ran, ",") != "node-pod-capacity,replicas-at-least-2,rollout-history" {
		t.Errorf("checks run: %v", ran)
	}
	var custom []doctor.Finding
	for _, f := range r.Findings {
		if f.Check == "replicas-at-least-2" {
			custom = append(custom, f)
		}
	}
	if len(custom) != 1 || custom[0].Object.String() != "shop/deployment/web" || custom[0].Severity != doctor.Critical ||
		custom[0].Message != "deployment shop/web has 1 replica(s); run at least 2" || r.Summary.Suppressed != 1 || r.Config != cfg {
		t.Fatalf("custom findings %+v, summary %+v", custom, r.Summary)
	}
	if r.Suppressed != nil {
		t.Error("suppressed findings are only listed with --show-suppressed")
	}

	// This report is the baseline of the next scan: nothing new, nothing fails.
	var js bytes.Buffer
	if err := report.JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	base := writeFile(t, "baseline.json", js.String())
	o2 := NewScanOptions(genericiooptions.NewTestIOStreamsDiscard())
	o2.ci.Path, o2.ci.Baseline, o2.ci.ShowSuppressed = cfg, base, true
	o2.Only = o.Only
	r2 := scanWith(t, o2, deployment("shop", "web", 1), deployment("legacy", "old", 1), deployment("shop", "cart", 1))
	if r2.Summary.New != 1 || r2.Summary.Known != len(r.Findings) || r2.Summary.Resolved != 0 || len(r2.Suppressed) != 1 ||
		r2.Suppressed[0].Suppression.Reason != "INC-4711: being replaced in Q1" {
		t.Errorf("second scan: summary %+v, suppressed %+v", r2.Summary, r2.Suppressed)
	}
	if !r2.Fails(doctor.Critical) {
		t.Error("the new critical finding (shop/cart) must fail the gate")
	}
	o3 := NewScanOptions(genericiooptions.NewTestIOStreamsDiscard())
	o3.ci.Path, o3.ci.Baseline = cfg, base
	o3.Only = o.Only
	if r3 := scanWith(t, o3, deployment("shop", "web", 1)); r3.Fails(doctor.Info) || r3.Summary.Known != 1 {
		t.Errorf("a scan with only known findings must pass: %+v", r3.Summary)
	}
}

func TestDisabledChecksAreNotRun(t *testing.T) {
	o := NewScanOptions(genericiooptions.NewTestIOStreamsDiscard())
	o.ci.Path = writeFile(t, "c.yaml", teamConfig)
	if err := o.Complete(nil); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range o.checks {
		if c.Name == "node-pod-capacity" {
			t.Error("a check the config disables ran")
		}
	}
	if o.checks[len(o.checks)-1].Name != "replicas-at-least-2" {
		t.Error("the custom check is not selected")
	}
}

func TestBadConfigAndBaselineExit2(t *testing.T) {
	bad := writeFile(t, "bad.yaml", "apiVersion: doctor.kubectl.io/v1alpha1\nkind: Config\nignore:\n- check: pod-storm\n")
	cel := writeFile(t, "cel.yaml", strings.Replace(teamConfig, "object.spec.replicas >= 2", "object.spec.replicas >=", 1))
	notReport := writeFile(t, "b.json", `{"kind":"ConfigMap"}`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", bad}, "error: config " + bad + ": line 4: ignore[0].reason: required"},
		{[]string{"--config", cel}, "error: config " + cel + ": line 14: custom[0](replicas-at-least-2).rule: invalid CEL: column 24: Syntax error"},
		{[]string{"--config", filepath.Join(t.TempDir(), "nope.yaml")}, "error: reading config: open "},
		{[]string{"--baseline", notReport}, "error: --baseline: baseline " + notReport + ": not a kubectl-doctor report"},
		{[]string{"--baseline", filepath.Join(t.TempDir(), "nope.json")}, "error: --baseline: reading baseline: open "},
		{[]string{"-o", "xml"}, "error: --output must be one of table, wide, json, yaml, sarif, junit"},
		{[]string{"checks", "--config", bad}, "error: config " + bad + ": line 4"},
		{[]string{"explain", "x", "--config", cel}, "error: config " + cel + ": line 14: custom[0](replicas-at-least-2).rule"},
	} {
		streams, _, out, errOut := genericiooptions.NewTestIOStreams()
		code := Execute(context.Background(), streams, c.args)
		lines := strings.Split(strings.TrimRight(errOut.String(), "\n"), "\n")
		if code != ExitError || len(lines) != 1 || !strings.HasPrefix(lines[0], c.want) || out.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 2 and one line %q...", c.args, code, errOut.String(), out.String(), c.want)
		}
	}
}

func TestChecksAndExplainShowCustomChecks(t *testing.T) {
	cfg := writeFile(t, "team.yaml", teamConfig)
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	if code := Execute(context.Background(), streams, []string{"checks", "--config", cfg}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{`(?m)^replicas-at-least-2\s+critical \(config\)\s+Deployments run at least two replicas$`, `(?m)^node-pod-capacity\s+disabled \(config\)\s+Nodes at or near`} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("checks lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := Execute(context.Background(), streams, []string{"explain", "replicas-at-least-2", "--config", cfg}); code != 0 ||
		!strings.Contains(out.String(), "object.spec.replicas >= 2") || !strings.Contains(out.String(), "trimmed") {
		t.Errorf("explain (exit %d):\n%s", code, out.String())
	}
}

// Without --config, ./.kubectl-doctor.yaml is read.
func TestDefaultConfigLookup(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".kubectl-doctor.yaml"), []byte(teamConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if code := Execute(context.Background(), streams, []string{"checks"}); code != 0 || !strings.Contains(out.String(), "replicas-at-least-2") {
		t.Errorf("./.kubectl-doctor.yaml not read (exit %d):\n%s", code, out.String())
	}
	// $XDG_CONFIG_HOME/kubectl-doctor/config.yaml when there is none here.
	t.Chdir(t.TempDir())
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	if err := os.MkdirAll(filepath.Join(xdg, "kubectl-doctor"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(xdg, "kubectl-doctor", "config.yaml"), []byte(strings.ReplaceAll(teamConfig, "replicas-at-least-2", "xdg-check")), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := Execute(context.Background(), streams, []string{"checks"}); code != 0 || !strings.Contains(out.String(), "xdg-check") {
		t.Errorf("XDG config not read (exit %d):\n%s", code, out.String())
	}
}

func TestSARIFAndJUnitFromAScan(t *testing.T) {
	o := NewScanOptions(genericiooptions.NewTestIOStreamsDiscard())
	o.ci.Path = writeFile(t, "team.yaml", teamConfig)
	o.Only = []string{"replicas-at-least-2"}
	r := scanWith(t, o, deployment("shop", "web", 1))
	var b bytes.Buffer
	if err := report.Print(&b, r, printOptions("sarif", false, o.checks, doctor.Critical)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID      string `json:"id"`
						HelpURI string `json:"helpUri"`
					}
				}
			}
			Results []struct {
				RuleID string `json:"ruleId"`
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	run := doc.Runs[0]
	// Every check is a rule, the disabled ones too (their status says so).
	var custom int
	for _, rule := range run.Tool.Driver.Rules {
		if rule.ID == "replicas-at-least-2" {
			custom++
			if rule.HelpURI != "" {
				t.Errorf("custom rule with a docs URL: %+v", rule)
			}
		}
	}
	if custom != 1 || len(run.Tool.Driver.Rules) != len(checks.All())+1 || len(run.Results) != 1 || run.Results[0].RuleID != "replicas-at-least-2" {
		t.Errorf("sarif: %+v", run)
	}
	if got := printOptions("sarif", false, nil, 0).DocsURL("pod-storm"); got != DocsURL+"pod-storm.md" {
		t.Errorf("built-in docs URL %q", got)
	}
}
