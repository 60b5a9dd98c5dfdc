package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// ciSample is sample() as a CI scan sees it: fingerprints, a baseline, a
// suppressed finding, a skipped and an errored check.
func ciSample() *doctor.Report {
	r := sample()
	r.Checks = append(r.Checks, doctor.CheckResult{Name: "c", Status: doctor.StatusError, Reason: "etcd is sad"})
	r.Findings[0].Object = doctor.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web:odd name"}
	doctor.AssignFingerprints(r.Findings)
	r.Findings[0].Baseline = doctor.BaselineNew
	r.Findings[1].Baseline = doctor.BaselineKnown
	r.Suppressed = []doctor.Finding{{Check: "a", Severity: doctor.Warning, Object: doctor.ObjectRef{APIVersion: "v1", Kind: "Node", Name: "legacy"},
		Message: "old", Count: 1, Fingerprint: "ffff", Suppression: &doctor.Suppression{Source: "config", Reason: "INC-1", Line: 9}}}
	r.Resolved = []doctor.Finding{{Check: "a", Severity: doctor.Info, Object: doctor.ObjectRef{Kind: "Node", Name: "gone"}, Message: "was", Fingerprint: "eeee"}}
	r.Finalize()
	return r
}

func ciChecks() []*doctor.Check {
	doc := "Title of a\n\nWhy it matters: a paragraph long enough to satisfy the registry validation of check docs.\n\n## How to fix\n\nFix it."
	return []*doctor.Check{{Name: "a", Doc: doc, Severity: doctor.Warning}, {Name: "b", Doc: strings.Replace(doc, " a", " b", 1), Severity: doctor.Critical}}
}

func ciOptions(format string) Options {
	return Options{Format: format, ToolVersion: "v1.2.3", Checks: ciChecks(), FailOn: doctor.Warning,
		DocsURL: func(name string) string { return "https://example.com/docs/" + name + ".md" }}
}

func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "sarif", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sarif-schema-2.1.0.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// validateSARIF checks out against the official schema and against what
// GitHub code scanning additionally requires of an upload.
func validateSARIF(t *testing.T, out []byte) map[string]any {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if err := sarifSchema(t).Validate(inst); err != nil {
		t.Fatalf("SARIF does not validate against sarif-schema-2.1.0.json: %v\n%s", err, out)
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["version"] != "2.1.0" || doc["$schema"] != SARIFSchema {
		t.Errorf("version %v, $schema %v", doc["version"], doc["$schema"])
	}
	run := doc["runs"].([]any)[0].(map[string]any)
	rules := map[string]bool{}
	for _, r := range run["tool"].(map[string]any)["driver"].(map[string]any)["rules"].([]any) {
		rules[r.(map[string]any)["id"].(string)] = true
	}
	for _, x := range run["results"].([]any) {
		res := x.(map[string]any)
		if !rules[res["ruleId"].(string)] {
			t.Errorf("result of unknown rule %v", res["ruleId"])
		}
		locs, _ := res["locations"].([]any)
		if len(locs) == 0 {
			t.Fatalf("result without a location (GitHub rejects the whole file): %v", res)
		}
		uri, _ := locs[0].(map[string]any)["physicalLocation"].(map[string]any)["artifactLocation"].(map[string]any)["uri"].(string)
		if uri == "" {
			t.Errorf("result without physicalLocation.artifactLocation.uri (GitHub: GH1001): %v", res)
		}
		if fp := res["partialFingerprints"].(map[string]any)[FingerprintKey]; fp == "" || fp == nil {
			t.Errorf("result without a fingerprint: %v", res)
		}
	}
	return run
}

func TestSARIFValidatesAgainstTheOfficialSchema(t *testing.T) {
	var b bytes.Buffer
	if err := Print(&b, ciSample(), ciOptions("sarif")); err != nil {
		t.Fatal(err)
	}
	run := validateSARIF(t, b.Bytes())
	driver := run["tool"].(map[string]any)["driver"].(map[string]any)
	if driver["name"] != "kubectl-doctor" || driver["version"] != "v1.2.3" || driver["semanticVersion"] != "1.2.3" {
		t.Errorf("driver %v", driver)
	}
	rules := driver["rules"].([]any)
	if len(rules) != 3 {
		t.Fatalf("%d rules, want one per check (a, b, c)", len(rules))
	}
	a := rules[0].(map[string]any)
	if a["id"] != "a" || a["shortDescription"].(map[string]any)["text"] != "Title of a" || a["helpUri"] != "https://example.com/docs/a.md" ||
		a["defaultConfiguration"].(map[string]any)["level"] != "warning" {
		t.Errorf("rule a: %v", a)
	}
	results := run["results"].([]any)
	if len(results) != 3 {
		t.Fatalf("%d results, want 2 findings + 1 suppressed", len(results))
	}
	first := results[0].(map[string]any)
	loc := first["locations"].([]any)[0].(map[string]any)
	logical := loc["logicalLocations"].([]any)[0].(map[string]any)
	if first["level"] != "error" || first["baselineState"] != "new" || logical["fullyQualifiedName"] != "shop/Deployment/web:odd name" ||
		loc["physicalLocation"].(map[string]any)["artifactLocation"].(map[string]any)["uri"] != "k8s/shop/Deployment/web:odd%20name" ||
		!strings.HasPrefix(first["message"].(map[string]any)["text"].(string), "bad ") {
		t.Errorf("first result: %v", first)
	}
	if second := results[1].(map[string]any); second["level"] != "note" || second["baselineState"] != "unchanged" {
		t.Errorf("second result: %v", second)
	}
	sup := results[2].(map[string]any)["suppressions"].([]any)[0].(map[string]any)
	if sup["kind"] != "external" || sup["justification"] != "INC-1" {
		t.Errorf("suppression: %v", sup)
	}
	notes := run["invocations"].([]any)[0].(map[string]any)["toolExecutionNotifications"].([]any)
	if len(notes) != 2 {
		t.Errorf("notifications for the skipped and errored checks: %v", notes)
	}
}

func TestSARIFOfAnEmptyReportValidates(t *testing.T) {
	var b bytes.Buffer
	r := &doctor.Report{APIVersion: doctor.APIVersion, Kind: "Report"}
	r.Finalize()
	if err := Print(&b, r, Options{Format: "sarif", ToolVersion: "dev"}); err != nil {
		t.Fatal(err)
	}
	run := validateSARIF(t, b.Bytes())
	if len(run["results"].([]any)) != 0 {
		t.Errorf("results: %v", run["results"])
	}
}

func TestSARIFLevels(t *testing.T) {
	for sev, want := range map[doctor.Severity]string{doctor.Critical: "error", doctor.Warning: "warning", doctor.Info: "note"} {
		if got := SARIFLevel(sev); got != want {
			t.Errorf("SARIFLevel(%s) = %s, want %s", sev, got, want)
		}
	}
}

// The validator must be able to fail: a level SARIF does not define and a
// result without a message are rejected.
func TestSARIFSchemaRejectsInvalidLogs(t *testing.T) {
	var b bytes.Buffer
	if err := Print(&b, ciSample(), ciOptions("sarif")); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]string{
		"unknown level":   strings.Replace(b.String(), `"level": "error"`, `"level": "critical"`, 1),
		"missing message": strings.Replace(b.String(), `"message": {`, `"messageX": {`, 1),
		"wrong version":   strings.Replace(b.String(), `"version": "2.1.0"`, `"version": "2.0.0"`, 1),
	} {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		if sarifSchema(t).Validate(inst) == nil {
			t.Errorf("%s: the schema accepted an invalid log", name)
		}
	}
}

// TestSARIFScanFailure: a scan that could not start still writes SARIF,
// valid, that says it did not succeed and why.
func TestSARIFScanFailure(t *testing.T) {
	var b bytes.Buffer
	if err := Print(&b, doctor.FailedReport("--from capture.tar.gz: truncated archive"), ciOptions("sarif")); err != nil {
		t.Fatal(err)
	}
	run := validateSARIF(t, b.Bytes())
	inv := run["invocations"].([]any)[0].(map[string]any)
	if inv["executionSuccessful"] != false {
		t.Errorf("executionSuccessful = %v", inv["executionSuccessful"])
	}
	notes := inv["toolExecutionNotifications"].([]any)
	msg := notes[0].(map[string]any)["message"].(map[string]any)["text"]
	if msg != "the scan could not run: --from capture.tar.gz: truncated archive" {
		t.Errorf("notification %v", msg)
	}
}

// TestSARIFFullDescription is the first paragraph of prose: the doc of a
// check opens with a heading, which is not a paragraph.
func TestSARIFFullDescription(t *testing.T) {
	body := "## Why it matters\nThese are the failures SREs meet.\nEvery week.\n\n## How it is detected\nFrom pods."
	if got, want := firstParagraph(body), "These are the failures SREs meet.\nEvery week."; got != want {
		t.Errorf("firstParagraph = %q, want %q", got, want)
	}
	r := ciSample()
	r.Disable([]string{"d"}, "disabled by the config")
	r.Checks[0].Coverage, r.Checks[0].Missing = doctor.CoveragePartial, []doctor.Gap{{Read: "events", Cause: "absent", Reason: "not in the dump: events", Optional: true}}
	checks := append(ciChecks(), &doctor.Check{Name: "d", Doc: "Title of d\n\n" + body, Severity: doctor.Info})
	o := ciOptions("sarif")
	o.Checks = checks
	var b bytes.Buffer
	if err := Print(&b, r, o); err != nil {
		t.Fatal(err)
	}
	run := validateSARIF(t, b.Bytes())
	var texts []string
	for _, n := range run["invocations"].([]any)[0].(map[string]any)["toolExecutionNotifications"].([]any) {
		texts = append(texts, n.(map[string]any)["message"].(map[string]any)["text"].(string))
	}
	joined := strings.Join(texts, "\n")
	for _, want := range []string{"check d disabled: disabled by the config", "check a ran without some data: events (absent: not in the dump: events)"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notifications lack %q:\n%s", want, joined)
		}
	}
	for _, x := range run["tool"].(map[string]any)["driver"].(map[string]any)["rules"].([]any) {
		rule := x.(map[string]any)
		if rule["id"] == "d" {
			if got := rule["fullDescription"].(map[string]any)["text"]; got != "These are the failures SREs meet.\nEvery week." {
				t.Errorf("fullDescription of d = %q", got)
			}
			if rule["properties"].(map[string]any)["status"] != "disabled" {
				t.Errorf("rule d properties %v", rule["properties"])
			}
		}
	}
}
