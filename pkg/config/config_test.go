package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

var builtin = []string{"pod-storm", "node-pod-capacity", "node-taints"}

const header = "apiVersion: doctor.kubectl.io/v1alpha1\nkind: Config\n"

// A config that uses every section (checks, ignore with a glob and an
// expiry, custom), like the example in the README.
const example = header + `checks:
  node-pod-capacity: {enabled: false}
  pod-storm: {severity: critical}            # override the findings' severity
  replicas-at-least-2: {severity: info}
ignore:
- check: pod-storm
  namespace: legacy
  kind: Deployment
  name: "batch-*"
  reason: "INC-4711: being replaced in Q1"
  expires: "2027-03-31"
- check: replicas-at-least-2
  reason: single-replica dev cluster
custom:
- name: replicas-at-least-2
  severity: warning
  resource: deployments.apps
  rule: "object.spec.replicas >= 2"
  message: "'has ' + string(object.spec.replicas) + ' replica(s); run at least 2'"
  remediation: "kubectl scale deployment {{name}} -n {{namespace}} --replicas=2"
`

func TestParseExample(t *testing.T) {
	cfg, err := Parse([]byte(example), "x.yaml", builtin)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Enabled("node-pod-capacity") || !cfg.Enabled("pod-storm") || !cfg.Enabled("node-taints") {
		t.Errorf("enabled: %+v", cfg.Checks)
	}
	if cfg.Checks["pod-storm"].Severity != doctor.Critical || cfg.Checks["replicas-at-least-2"].Severity != doctor.Info {
		t.Errorf("severity overrides: %+v", cfg.Checks)
	}
	if len(cfg.Ignore) != 2 {
		t.Fatalf("ignore: %+v", cfg.Ignore)
	}
	ig := cfg.Ignore[0]
	if ig.Check != "pod-storm" || ig.Namespace != "legacy" || ig.Kind != "Deployment" || ig.Name != "batch-*" ||
		ig.Reason != "INC-4711: being replaced in Q1" || ig.Expires != "2027-03-31" || ig.Line != 8 {
		t.Errorf("ignore[0]: %+v", ig)
	}
	if len(cfg.Custom) != 1 {
		t.Fatalf("custom: %+v", cfg.Custom)
	}
	c := cfg.Custom[0]
	if c.Name != "replicas-at-least-2" || c.Resource != snapshot.Deployments || c.Severity != doctor.Warning || c.RuleLine != 20 || c.MessageLine != 21 {
		t.Errorf("custom: %+v", c)
	}
}

func TestIgnoreExpiry(t *testing.T) {
	cfg, err := Parse([]byte(example), "x.yaml", builtin)
	if err != nil {
		t.Fatal(err)
	}
	ig := cfg.Ignore[0]
	for now, want := range map[string]bool{
		"2027-03-30T12:00:00Z": false,
		"2027-03-31T23:59:59Z": false, // the expiry day itself still applies
		"2027-04-01T00:00:00Z": true,
	} {
		at, _ := time.Parse(time.RFC3339, now)
		if got := ig.Expired(at); got != want {
			t.Errorf("Expired(%s) = %v, want %v", now, got, want)
		}
	}
	if cfg.Ignore[1].Expired(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Error("an entry without expires never expires")
	}
}

func TestIgnoreMatches(t *testing.T) {
	ig := Ignore{Check: "pod-storm", Namespace: "leg*", Kind: "deployment", Name: "batch-?"}
	f := func(check, ns, kind, name string) *doctor.Finding {
		return &doctor.Finding{Check: check, Object: doctor.ObjectRef{Kind: kind, Namespace: ns, Name: name}}
	}
	for _, c := range []struct {
		f    *doctor.Finding
		want bool
	}{
		{f("pod-storm", "legacy", "Deployment", "batch-1"), true},
		{f("pod-storm", "legacy", "Deployment", "batch-10"), false},
		{f("pod-storm", "prod", "Deployment", "batch-1"), false},
		{f("pod-storm", "legacy", "StatefulSet", "batch-1"), false},
		{f("node-taints", "legacy", "Deployment", "batch-1"), false},
	} {
		if got := ig.Matches(c.f); got != c.want {
			t.Errorf("Matches(%+v) = %v, want %v", c.f.Object, got, c.want)
		}
	}
	if all := (Ignore{Check: "pod-storm"}); !all.Matches(f("pod-storm", "", "Node", "n")) {
		t.Error("an entry with only check matches every object")
	}
}

// TestEveryConfigError: each mistake a config file can hold gives one exit-2
// error naming the field and the line.
func TestEveryConfigError(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		line       int
		want       string
	}{
		{"empty file", "", 0, "the file is empty: want apiVersion: doctor.kubectl.io/v1alpha1 and kind: Config"},
		{"invalid yaml", header + "checks: [\n", 0, "not valid YAML: "},
		{"two documents", header + "---\n" + header, 4, "a second YAML document"},
		{"not a mapping", "- a\n", 1, "want a mapping with apiVersion"},
		{"unknown top-level field", header + "chekcs: {}\n", 3, "chekcs: unknown field (want apiVersion, kind, checks, ignore or custom)"},
		{"field twice", header + "kind: Config\n", 3, "kind: given twice"},
		{"apiVersion missing", "kind: Config\n", 1, "apiVersion: required: want doctor.kubectl.io/v1alpha1"},
		{"apiVersion wrong", "apiVersion: doctor.kubectl.io/v2\nkind: Config\n", 1, `apiVersion: unsupported "doctor.kubectl.io/v2"`},
		{"kind missing", "apiVersion: doctor.kubectl.io/v1alpha1\n", 1, "kind: required: want Config"},
		{"kind wrong", "apiVersion: doctor.kubectl.io/v1alpha1\nkind: Report\n", 2, `kind: unsupported "Report"`},
		{"checks not a mapping", header + "checks: [pod-storm]\n", 3, "checks: want a mapping of check name"},
		{"checks unknown check", header + "checks:\n  pod-stom: {enabled: false}\n", 4, `checks.pod-stom: unknown check "pod-stom" (known: pod-storm, node-pod-capacity, node-taints)`},
		{"checks entry twice", header + "checks:\n  pod-storm: {enabled: false}\n  pod-storm: {enabled: true}\n", 5, "checks.pod-storm: given twice"},
		{"checks entry not a mapping", header + "checks:\n  pod-storm: false\n", 4, "checks.pod-storm: want a mapping such as {enabled: false}"},
		{"checks unknown field", header + "checks:\n  pod-storm:\n    severty: info\n", 5, "checks.pod-storm.severty: unknown field (want enabled or severity)"},
		{"enabled not a bool", header + "checks:\n  pod-storm: {enabled: \"no\"}\n", 4, `checks.pod-storm.enabled: want true or false, got "no"`},
		{"severity unknown", header + "checks:\n  pod-storm: {severity: urgent}\n", 4, `checks.pod-storm.severity: unknown severity "urgent" (want critical, warning or info)`},
		{"severity never", header + "checks:\n  pod-storm: {severity: never}\n", 4, `unknown severity "never"`},
		{"severity not a string", header + "checks:\n  pod-storm: {severity: [info]}\n", 4, "checks.pod-storm.severity: want a string"},
		{"checks entry empty", header + "checks:\n  pod-storm: {}\n", 4, "checks.pod-storm: empty: set enabled or severity"},
		{"ignore not a list", header + "ignore: {check: pod-storm}\n", 3, "ignore: want a list of entries"},
		{"ignore entry not a mapping", header + "ignore:\n- pod-storm\n", 4, "ignore[0]: want a mapping with check and reason"},
		{"ignore check missing", header + "ignore:\n- reason: r\n", 4, "ignore[0].check: required"},
		{"ignore check unknown", header + "ignore:\n- check: nope\n  reason: r\n", 4, `ignore[0].check: unknown check "nope"`},
		{"ignore bad namespace glob", header + "ignore:\n- check: pod-storm\n  namespace: \"team-[\"\n  reason: r\n", 5, `ignore[0].namespace: invalid glob "team-["`},
		{"ignore bad name glob", header + "ignore:\n- check: pod-storm\n  name: \"[a-\"\n  reason: r\n", 5, `ignore[0].name: invalid glob "[a-"`},
		{"ignore empty name", header + "ignore:\n- check: pod-storm\n  name: \"\"\n  reason: r\n", 5, `ignore[0].name: invalid glob ""`},
		{"ignore bad kind", header + "ignore:\n- check: pod-storm\n  kind: deploy*\n  reason: r\n", 5, `ignore[0].kind: invalid kind "deploy*"`},
		{"ignore reason missing", header + "ignore:\n- check: pod-storm\n", 4, "ignore[0].reason: required: say why"},
		{"ignore reason empty", header + "ignore:\n- check: pod-storm\n  reason: \"  \"\n", 5, "ignore[0].reason: must not be empty"},
		{"ignore bad expiry", header + "ignore:\n- check: pod-storm\n  reason: r\n  expires: 31.03.2027\n", 6, `ignore[0].expires: invalid date "31.03.2027" (want YYYY-MM-DD)`},
		{"ignore impossible date", header + "ignore:\n- check: pod-storm\n  reason: r\n  expires: 2027-02-30\n", 6, `ignore[0].expires: invalid date "2027-02-30"`},
		{"ignore unknown field", header + "ignore:\n- check: pod-storm\n  reason: r\n  until: 2027-01-01\n", 6, "ignore[0].until: unknown field (want check, cluster, namespace, kind, name, reason or expires)"},
		{"custom not a list", header + "custom: {name: x}\n", 3, "custom: want a list of checks"},
		{"custom entry not a mapping", header + "custom:\n- x\n", 4, "custom[0]: want a mapping with name, resource and rule"},
		{"custom name missing", header + "custom:\n- resource: pods\n  rule: \"true\"\n", 4, "custom[0].name: required"},
		{"custom name not kebab", header + "custom:\n- name: MyCheck\n  resource: pods\n  rule: \"true\"\n", 4, `custom[0](MyCheck).name: "MyCheck" is not kebab-case`},
		{"custom name built-in", header + "custom:\n- name: pod-storm\n  resource: pods\n  rule: \"true\"\n", 4, `custom[0](pod-storm).name: "pod-storm" is a built-in check`},
		{"custom name twice", header + "custom:\n- name: a\n  resource: pods\n  rule: \"true\"\n- name: a\n  resource: pods\n  rule: \"true\"\n", 7, `custom[1](a).name: "a" is declared twice`},
		{"custom severity", header + "custom:\n- name: a\n  severity: high\n  resource: pods\n  rule: \"true\"\n", 5, `custom[0](a).severity: unknown severity "high"`},
		{"custom resource missing", header + "custom:\n- name: a\n  rule: \"true\"\n", 4, "custom[0](a).resource: required (such as deployments.apps)"},
		{"custom resource unknown", header + "custom:\n- name: a\n  resource: secrets\n  rule: \"true\"\n", 5, `custom[0](a).resource: unknown resource "secrets" (known: `},
		{"custom resource events", header + "custom:\n- name: a\n  resource: events\n  rule: \"true\"\n", 5, `unknown resource "events"`},
		{"custom rule missing", header + "custom:\n- name: a\n  resource: pods\n", 4, "custom[0](a).rule: required: a CEL expression"},
		{"custom rule empty", header + "custom:\n- name: a\n  resource: pods\n  rule: \"\"\n", 6, "custom[0](a).rule: must not be empty"},
		{"custom rule too long", header + "custom:\n- name: a\n  resource: pods\n  rule: \"" + strings.Repeat("true && ", 700) + "true\"\n", 6, "custom[0](a).rule: expression is 5604 bytes, longer than the limit of 5120"},
		{"custom message not a string", header + "custom:\n- name: a\n  resource: pods\n  rule: \"true\"\n  message: [x]\n", 7, "custom[0](a).message: want a string"},
		{"custom unknown field", header + "custom:\n- name: a\n  resource: pods\n  rule: \"true\"\n  expr: x\n", 7, "custom[0](a).expr: unknown field (want name, title, description, severity, resource, rule, message or remediation)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte(c.yaml), "team.yaml", builtin)
			var ce *Error
			if !errors.As(err, &ce) || cfg != nil {
				t.Fatalf("Parse = %v, %v; want a *config.Error", cfg, err)
			}
			if len(ce.Problems) != 1 {
				t.Fatalf("%d problems, want 1: %v", len(ce.Problems), err)
			}
			p := ce.Problems[0]
			if p.Line != c.line || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q (line %d)\nwant line %d and %q", err, p.Line, c.line, c.want)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "config team.yaml: ") || strings.Contains(msg, "\n") {
				t.Errorf("error must be one line naming the file: %q", msg)
			}
			if c.line > 0 && !strings.Contains(msg, "line ") {
				t.Errorf("error does not name the line: %q", msg)
			}
		})
	}
}

func TestAllMistakesInOneLine(t *testing.T) {
	_, err := Parse([]byte(header+"checks:\n  pod-stom: {enabled: false}\nignore:\n- check: pod-storm\n"), "team.yaml", builtin)
	want := `config team.yaml: 2 mistakes: line 4: checks.pod-stom: unknown check "pod-stom" (known: pod-storm, node-pod-capacity, node-taints); line 6: ignore[0].reason: required`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got  %v\nwant %s...", err, want)
	}
}

func TestCustomNamesAreKnownToChecksAndIgnore(t *testing.T) {
	y := header + "checks:\n  mine: {severity: info}\nignore:\n- check: mine\n  reason: r\ncustom:\n- name: mine\n  resource: nodes\n  rule: \"true\"\n"
	if _, err := Parse([]byte(y), "x", builtin); err != nil {
		t.Error(err)
	}
}

func TestDefaultPaths(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/xdg")
	if got := defaultPaths(); len(got) != 2 || got[0] != ".kubectl-doctor.yaml" || got[1] != "/xdg/kubectl-doctor/config.yaml" {
		t.Errorf("defaultPaths() = %v", got)
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", "/home/u")
	if got := defaultPaths(); got[1] != "/home/u/.config/kubectl-doctor/config.yaml" {
		t.Errorf("without XDG_CONFIG_HOME: %v", got)
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load(t.TempDir()+"/nope.yaml", builtin); err == nil || !strings.Contains(err.Error(), "reading config") {
		t.Errorf("Load of a missing file: %v", err)
	}
}

func TestIgnoreScopedToCluster(t *testing.T) {
	cfg, err := Parse([]byte("apiVersion: doctor.kubectl.io/v1alpha1\nkind: Config\nignore:\n- check: pod-storm\n  cluster: prod-*\n  reason: r\n- check: pod-storm\n  namespace: kube-system\n  reason: everywhere\n"), "c.yaml", []string{"pod-storm"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cfg.ForCluster("prod-eu").Ignore); n != 2 {
		t.Errorf("prod-eu: %d entries, want 2", n)
	}
	if got := cfg.ForCluster("staging").Ignore; len(got) != 1 || got[0].Reason != "everywhere" {
		t.Errorf("staging: %+v, want only the unscoped entry", got)
	}
	if (*Config)(nil).ForCluster("x") != nil {
		t.Error("nil config")
	}
}
