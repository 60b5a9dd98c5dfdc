package main_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// ciConfig exercises the whole config file on the scenario cluster: a
// severity override, an ignore entry, an expired one, and a custom CEL check
// reading deployments.apps, which rollout-history reads too.
const ciConfig = `apiVersion: doctor.kubectl.io/v1alpha1
kind: Config
checks:
  rollout-history: {severity: critical}
ignore:
- check: pod-storm
  namespace: "pinniped-*"
  kind: Deployment
  reason: "e2e: the pinned agent is being replaced"
- check: node-taints
  kind: Node
  reason: "e2e: an entry past its date"
  expires: "2020-01-01"
custom:
- name: replicas-at-least-2
  title: Deployments run at least two replicas
  resource: deployments.apps
  rule: "object.spec.replicas >= 2"
  message: "'has ' + string(object.spec.replicas) + ' replica(s); run at least 2'"
  remediation: "kubectl scale deployment {{name}} -n {{namespace}} --replicas=2"
`

// ciChecks keeps the CI scans to checks whose findings are settled on the
// scenario cluster (apiserver-metrics counts grow while the tests run).
const ciChecks = "replicas-at-least-2,rollout-history,pod-storm,node-taints"

// TestCIWorkflow: a config file with a CEL check, a baseline written by one
// scan and read by the next, SARIF validated against the official schema,
// JUnit parsed — against the real API server, whose audit log shows the
// custom check's read shared with rollout-history's.
func TestCIWorkflow(t *testing.T) {
	needCluster(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "doctor.yaml")
	if err := os.WriteFile(cfg, []byte(ciConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	// Silence the custom check on shop/api with the object's own annotation.
	annotate(t, `{"metadata":{"annotations":{"doctor.kubectl.io/ignore":"replicas-at-least-2","doctor.kubectl.io/ignore-reason":"e2e: api scales by HPA"}}}`)
	t.Cleanup(func() {
		annotate(t, `{"metadata":{"annotations":{"doctor.kubectl.io/ignore":null,"doctor.kubectl.io/ignore-reason":null}}}`)
	})

	// 1. The baseline: a JSON report, with the config applied.
	first := runDoctor(t, scenarios.Kubeconfig, "-o", "json", "--config", cfg, "--check", ciChecks, "--fail-on", "never", "--show-suppressed")
	if first.code != 0 {
		t.Fatalf("exit %d: %s", first.code, first.stderr)
	}
	rep := decodeReport(t, first.stdout)
	byCheck := map[string][]doctor.Finding{}
	for _, f := range rep.Findings {
		if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(f.Fingerprint) {
			t.Errorf("finding without a fingerprint: %+v", f)
		}
		byCheck[f.Check] = append(byCheck[f.Check], f)
	}
	// Scenario deployments: shop/web 2 replicas, shop/checkout 3, shop/api
	// 1 (annotated), pinniped-concierge/kube-cert-agent 1.
	custom := map[string]doctor.Finding{}
	for _, f := range byCheck["replicas-at-least-2"] {
		custom[f.Object.String()] = f
	}
	agent := custom["pinniped-concierge/deployment/kube-cert-agent"]
	if agent.Severity != doctor.Warning || agent.Message != "deployment pinniped-concierge/kube-cert-agent has 1 replica(s); run at least 2" ||
		len(agent.Remediation) != 1 || agent.Remediation[0].Command != "kubectl scale deployment kube-cert-agent -n pinniped-concierge --replicas=2" {
		t.Errorf("custom check finding on kube-cert-agent: %+v", agent)
	}
	for _, ok := range []string{"shop/deployment/web", "shop/deployment/checkout", "shop/deployment/api"} {
		if _, found := custom[ok]; found {
			t.Errorf("custom check reported %s (enough replicas, or annotated)", ok)
		}
	}
	for _, f := range byCheck["rollout-history"] {
		if f.Severity != doctor.Critical {
			t.Errorf("rollout-history severity override not applied: %s %s", f.Severity, f.Object)
		}
	}
	stormInPinniped := false // everyday-pods' StatefulSet storm (namespace vault) is not covered by the entry
	for _, f := range byCheck["pod-storm"] {
		stormInPinniped = stormInPinniped || strings.HasPrefix(f.Object.Namespace, "pinniped-")
	}
	if stormInPinniped || len(byCheck["node-taints"]) == 0 {
		t.Errorf("pod-storm must be suppressed by the config, node-taints not (its entry expired): %+v", byCheck)
	}
	sup := map[string]doctor.Suppression{}
	for _, f := range rep.Suppressed {
		sup[f.Check+" "+f.Object.String()] = *f.Suppression
	}
	if s := sup["replicas-at-least-2 shop/deployment/api"]; s.Source != "annotation" || s.Reason != "e2e: api scales by HPA" {
		t.Errorf("annotation suppression: %+v (all: %+v)", s, sup)
	}
	if s := sup["pod-storm pinniped-concierge/deployment/kube-cert-agent"]; s.Source != "config" || s.Line != 6 {
		t.Errorf("config suppression: %+v (all: %+v)", s, sup)
	}
	if rep.Summary.Suppressed != len(rep.Suppressed) || len(rep.ExpiredIgnores) != 1 || rep.ExpiredIgnores[0].Line != 10 ||
		rep.ExpiredIgnores[0].Matches != len(byCheck["node-taints"]) {
		t.Errorf("summary %+v, expired %+v", rep.Summary, rep.ExpiredIgnores)
	}
	baseline := filepath.Join(dir, "baseline.json")
	if err := os.WriteFile(baseline, []byte(first.stdout), 0o600); err != nil {
		t.Fatal(err)
	}

	// 2. SARIF against the baseline: everything known, exit 0 even at
	// --fail-on info, one LIST of deployments for both readers.
	before := countLines(t, scenarios.AuditLog())
	sarif := runDoctor(t, scenarios.Kubeconfig, "-o", "sarif", "--config", cfg, "--check", ciChecks, "--baseline", baseline, "--fail-on", "info")
	if sarif.code != 0 {
		t.Fatalf("exit %d with every finding in the baseline: %s\n%s", sarif.code, sarif.stderr, sarif.stdout)
	}
	run := validateSARIFFile(t, sarif.stdout)
	if len(run.Results) != len(rep.Findings) {
		t.Errorf("%d SARIF results, %d findings", len(run.Results), len(rep.Findings))
	}
	for _, r := range run.Results {
		if r.BaselineState != "unchanged" || r.Locations[0].PhysicalLocation.ArtifactLocation.URI == "" {
			t.Errorf("result %+v", r)
		}
	}
	rules := map[string]string{}
	for _, r := range run.Tool.Driver.Rules {
		rules[r.ID] = r.HelpURI
	}
	if _, ok := rules["replicas-at-least-2"]; !ok || !strings.HasSuffix(rules["pod-storm"], "/docs/checks/pod-storm.md") || len(rules) != len(checks.All())+1 {
		t.Errorf("rules %v", rules)
	}
	time.Sleep(200 * time.Millisecond)
	deploymentReads := 0
	for i, line := range readLines(t, scenarios.AuditLog()) {
		var e auditEvent
		if i < before || json.Unmarshal([]byte(line), &e) != nil || !strings.HasPrefix(e.UserAgent, "kubectl-doctor/") || e.Stage != "ResponseComplete" {
			continue
		}
		if u, _ := url.Parse(e.RequestURI); u.Path == "/apis/apps/v1/deployments" {
			deploymentReads++
		}
	}
	if deploymentReads != 1 {
		t.Errorf("deployments read %d times by one scan; the custom check must share rollout-history's read", deploymentReads)
	}

	// 3. JUnit, same baseline: parsed, nothing fails.
	junit := runDoctor(t, scenarios.Kubeconfig, "-o", "junit", "--config", cfg, "--check", ciChecks, "--baseline", baseline, "--fail-on", "info")
	var suites struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(junit.stdout), &suites); err != nil || junit.code != 0 || suites.Failures != 0 || len(suites.Suites) != len(checks.All())+1 {
		t.Errorf("junit (exit %d, err %v): %+v\n%s", junit.code, err, suites, junit.stdout)
	}

	// 4. A baseline without the custom finding on kube-cert-agent: it is new
	// and fails the gate (other scenarios' custom findings stay known).
	var doc map[string]any
	if err := json.Unmarshal([]byte(first.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	var kept []any
	for _, f := range doc["findings"].([]any) {
		m := f.(map[string]any)
		if m["check"] != "replicas-at-least-2" || m["object"].(map[string]any)["name"] != "kube-cert-agent" {
			kept = append(kept, f)
		}
	}
	doc["findings"] = kept
	older, _ := json.Marshal(doc)
	if err := os.WriteFile(baseline, older, 0o600); err != nil {
		t.Fatal(err)
	}
	gate := runDoctor(t, scenarios.Kubeconfig, "-o", "sarif", "--config", cfg, "--check", ciChecks, "--baseline", baseline, "--fail-on", "warning")
	if gate.code != 1 {
		t.Errorf("a new warning with --fail-on warning: exit %d, want 1: %s", gate.code, gate.stderr)
	}
	for _, r := range validateSARIFFile(t, gate.stdout).Results {
		agent := strings.Contains(r.Message.Text, "kube-cert-agent")
		if want := map[bool]string{true: "new", false: "unchanged"}[r.RuleID == "replicas-at-least-2" && agent]; r.BaselineState != want {
			t.Errorf("%s: baselineState %s, want %s", r.RuleID, r.BaselineState, want)
		}
	}
	table := runDoctor(t, scenarios.Kubeconfig, "--config", cfg, "--check", ciChecks, "--baseline", baseline)
	if !strings.HasPrefix(table.stdout, "NEW (1)\nWARNING (1)\n  pinniped-concierge/Deployment/kube-cert-agent  [replicas-at-least-2]") ||
		!regexp.MustCompile(`KNOWN \(\d+\) in the baseline`).MatchString(table.stdout) ||
		!regexp.MustCompile(` · 1 new, \d+ known, 0 resolved · \d+ suppressed · `).MatchString(table.stdout) ||
		!strings.Contains(table.stdout, `expired ignore entry (config line 10: node-taints kind=Node, "e2e: an entry past its date") expired on 2020-01-01`) {
		t.Errorf("table:\n%s", table.stdout)
	}

	// 5. A CEL type error exits 2 naming the custom check.
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(ciConfig, "object.spec.replicas >= 2", "object.spec.replicas + 'x'", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	oneErrorLine(t, runDoctor(t, scenarios.Kubeconfig, "--config", bad), "custom[0](replicas-at-least-2).rule: CEL expression has type")
}

func annotate(t *testing.T, patch string) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", scenarios.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AppsV1().Deployments("shop").Patch(context.Background(), "api", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

type sarifRun struct {
	Tool struct {
		Driver struct {
			Rules []struct {
				ID      string `json:"id"`
				HelpURI string `json:"helpUri"`
			} `json:"rules"`
		} `json:"driver"`
	} `json:"tool"`
	Results []struct {
		RuleID        string `json:"ruleId"`
		BaselineState string `json:"baselineState"`
		Message       struct {
			Text string `json:"text"`
		} `json:"message"`
		Locations []struct {
			PhysicalLocation struct {
				ArtifactLocation struct {
					URI string `json:"uri"`
				} `json:"artifactLocation"`
			} `json:"physicalLocation"`
		} `json:"locations"`
	} `json:"results"`
}

// validateSARIFFile validates out against the vendored official schema.
func validateSARIFFile(t *testing.T, out string) sarifRun {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "sarif", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	schemaDoc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sarif.json", schemaDoc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("sarif.json")
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if err := schema.Validate(inst); err != nil {
		t.Fatalf("invalid SARIF: %v\n%s", err, out)
	}
	var log struct {
		Runs []sarifRun `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil || len(log.Runs) != 1 {
		t.Fatalf("SARIF runs: %v", err)
	}
	return log.Runs[0]
}
