package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// fleetSample is three clusters: one failing (the sample report), one
// healthy, one that could not be scanned.
func fleetSample() *doctor.FleetReport {
	bad := ciSample()
	bad.Cluster.Server = "https://prod:6443"
	ok := &doctor.Report{APIVersion: doctor.APIVersion, Kind: "Report", Checks: []doctor.CheckResult{{Name: "a", Status: doctor.StatusPassed}}}
	ok.Finalize()
	return doctor.Merge([]doctor.ClusterResult{
		{Name: "staging", Report: ok},
		{Name: "prod", Report: bad},
		{Name: "dr", Err: errors.New("cannot reach the API server at https://dr:6443: connection refused")},
	}, 0)
}

func TestFleetTableGroupsByCluster(t *testing.T) {
	var b bytes.Buffer
	if err := PrintFleet(&b, fleetSample(), Options{Format: "table", FailOn: doctor.Critical}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, re := range []string{
		`(?m)^CLUSTER\s+VERDICT\s+DETAIL\ndr\s+INCOMPLETE\s+scan failed: cannot reach the API server at https://dr:6443: connection refused\nprod\s+FAIL\s+1 critical, 0 warning, 1 info`,
		`(?m)^staging\s+OK\s+0 critical, 0 warning, 0 info$`,
		`== cluster dr ==\nscan failed`,
		`== cluster prod \(https://prod:6443`,
		`== cluster staging ==\nNo problems found.`,
		`fleet: 3 clusters · 1 critical, 0 warning, 1 info .* · INCOMPLETE fleet`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("table does not match %q:\n%s", re, out)
		}
	}
	if strings.Index(out, "== cluster dr") > strings.Index(out, "== cluster prod") {
		t.Error("clusters not sorted by name")
	}
}

func TestFleetJSONNamesEachFindingsCluster(t *testing.T) {
	var b bytes.Buffer
	if err := PrintFleet(&b, fleetSample(), Options{Format: "json"}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Kind     string `json:"kind"`
		Complete bool   `json:"complete"`
		Clusters []struct {
			Name  string `json:"name"`
			Error string `json:"error"`
		} `json:"clusters"`
		Findings   []map[string]any `json:"findings"`
		Suppressed []map[string]any `json:"suppressed"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Kind != "FleetReport" || doc.Complete || len(doc.Clusters) != 3 || doc.Clusters[0].Error == "" {
		t.Errorf("fleet header: %+v", doc)
	}
	if len(doc.Findings) != 2 {
		t.Fatalf("findings: %v", doc.Findings)
	}
	for _, f := range append(doc.Findings, doc.Suppressed...) {
		if f["cluster"] != "prod" {
			t.Errorf("finding without its cluster: %v", f)
		}
	}
}

func TestFleetSARIFValidatesAndQualifiesFingerprints(t *testing.T) {
	f := fleetSample()
	// The same report in two clusters: same fingerprints within, distinct
	// across the fleet.
	twin := ciSample()
	f = doctor.Merge([]doctor.ClusterResult{{Name: "a", Report: f.Reports[1]}, {Name: "b", Report: twin}, {Name: "dr", Err: errors.New("down")}}, 0)
	o := ciOptions("sarif")
	var b bytes.Buffer
	if err := PrintFleet(&b, f, o); err != nil {
		t.Fatal(err)
	}
	validateSARIF(t, b.Bytes())
	var log sarifLog
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 3 {
		t.Fatalf("%d runs, want one per cluster", len(log.Runs))
	}
	a, bb := log.Runs[0].Results[0], log.Runs[1].Results[0]
	if a.PartialFingerprints[FingerprintKey] != bb.PartialFingerprints[FingerprintKey] {
		t.Errorf("twin findings should share the per-cluster fingerprint")
	}
	if a.PartialFingerprints[FleetFingerprintKey] == bb.PartialFingerprints[FleetFingerprintKey] || a.Properties["cluster"] != "a" || bb.Properties["cluster"] != "b" {
		t.Errorf("fleet fingerprints must differ by cluster: %v %v", a, bb)
	}
	if !strings.HasPrefix(a.Locations[0].PhysicalLocation.ArtifactLocation.URI, "clusters/a/k8s/") {
		t.Errorf("location %v", a.Locations[0])
	}
	if log.Runs[2].Invocations[0].ExecutionSuccessful {
		t.Error("an unreachable cluster's run succeeded")
	}
}

func TestFleetJUnitSuitePerCluster(t *testing.T) {
	var b bytes.Buffer
	if err := PrintFleet(&b, fleetSample(), Options{Format: "junit", FailOn: doctor.Critical}); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Suites) != 3 || doc.Suites[0].Name != "dr" || doc.Suites[0].Errors != 1 || doc.Suites[1].Name != "prod" || doc.Suites[1].Failures != 1 || doc.Suites[2].Failures != 0 {
		t.Fatalf("suites: %+v", doc.Suites)
	}
	if doc.Failures != 1 || doc.Errors < 1 {
		t.Errorf("totals: %+v", doc)
	}
	for _, c := range doc.Suites[1].Cases {
		if !strings.HasPrefix(c.Classname, "kubectl-doctor.prod.") {
			t.Errorf("classname %q", c.Classname)
		}
	}
}
