package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// FleetFingerprintKey names the cluster-qualified fingerprint among a fleet
// SARIF result's partialFingerprints (doctor.FleetFingerprint): the same
// problem on the same object in two clusters is two results.
const FleetFingerprintKey = "kubectlDoctorFleetFingerprint/v1"

// PrintFleet writes a fleet report in the requested format. Each cluster
// is rendered by the single-cluster printer, so a cluster's part reads as
// its own scan would; the fleet adds the cluster's name everywhere.
func PrintFleet(w io.Writer, f *doctor.FleetReport, o Options) error {
	switch o.Format {
	case "json":
		return JSON(w, f)
	case "yaml":
		return YAML(w, f)
	case "sarif":
		return fleetSARIF(w, f, o)
	case "junit":
		return fleetJUnit(w, f, o)
	case "table", "wide", "":
		return fleetTable(w, f, o)
	}
	return fmt.Errorf("unknown output format %q", o.Format)
}

// Verdict is a cluster's outcome in one word: FAIL (a finding at or above
// failOn), INCOMPLETE (the scan could not run or missed checks), WARN
// (a new warning or critical finding below the gate) or OK.
func Verdict(c doctor.FleetCluster, r *doctor.Report, failOn doctor.Severity) string {
	switch {
	case r != nil && r.Fails(failOn):
		return "FAIL"
	case c.Error != "" || !c.Complete:
		return "INCOMPLETE"
	case r != nil && hasNew(r, doctor.Warning):
		return "WARN"
	}
	return "OK"
}

// hasNew says whether r has a finding at least min that is not known from
// the baseline.
func hasNew(r *doctor.Report, min doctor.Severity) bool {
	for _, f := range r.Findings {
		if f.Severity >= min && f.Baseline != doctor.BaselineKnown {
			return true
		}
	}
	return false
}

func fleetTable(w io.Writer, f *doctor.FleetReport, o Options) error {
	p := newPalette(o.Color)
	var b strings.Builder
	width := len("CLUSTER")
	for _, c := range f.Clusters {
		width = max(width, len(Esc(c.Name)))
	}
	fmt.Fprintf(&b, "%-*s  %-10s  %s\n", width, "CLUSTER", "VERDICT", "DETAIL")
	for i, c := range f.Clusters {
		r := f.Reports[i]
		v := Verdict(c, r, o.FailOn)
		colour := p.green
		switch v {
		case "FAIL":
			colour = p.sev[doctor.Critical]
		case "INCOMPLETE", "WARN":
			colour = p.sev[doctor.Warning]
		}
		detail := ""
		if c.Error != "" {
			detail = "scan failed: " + Esc(c.Error)
		} else {
			s := c.Summary
			detail = fmt.Sprintf("%d critical, %d warning, %d info", s.Critical, s.Warning, s.Info)
			if !c.Complete {
				detail += " · " + Esc(r.IncompleteSummary())
			}
		}
		fmt.Fprintf(&b, "%-*s  %s  %s\n", width, Esc(c.Name), colour.Sprintf("%-10s", v), detail)
	}
	for i, c := range f.Clusters {
		r := f.Reports[i]
		title := "cluster " + Esc(c.Name)
		if c.Cluster.Server != "" {
			title += " (" + Esc(c.Cluster.Server)
			if c.Cluster.Version != "" {
				title += ", " + Esc(c.Cluster.Version)
			}
			title += ")"
		}
		fmt.Fprintf(&b, "\n%s\n", p.bold.Sprint("== "+title+" =="))
		if r == nil {
			fmt.Fprintf(&b, "scan failed: %s\n", Esc(c.Error))
			continue
		}
		var part strings.Builder
		if err := table(&part, r, o); err != nil {
			return err
		}
		b.WriteString(part.String())
	}
	s := f.Summary
	line := fmt.Sprintf("\nfleet: %s · %d critical, %d warning, %d info · %s passed, %d skipped",
		doctor.Plural(len(f.Clusters), "cluster", "clusters"), s.Critical, s.Warning, s.Info, doctor.Plural(s.Passed, "check", "checks"), s.Skipped)
	if s.Errors > 0 {
		line += fmt.Sprintf(", %d errors", s.Errors)
	}
	line += " in " + roundDuration(time.Duration(f.Duration))
	if !f.Complete {
		line += " · INCOMPLETE fleet"
	}
	b.WriteString(line + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// fleetSARIF writes one SARIF run per cluster (a cluster that could not be
// scanned is a run with a failed invocation), each result carrying the
// cluster as a property and a cluster-qualified partial fingerprint.
func fleetSARIF(w io.Writer, f *doctor.FleetReport, o Options) error {
	log := sarifLog{Schema: SARIFSchema, Version: SARIFVersion, Runs: []sarifRun{}}
	for i, c := range f.Clusters {
		r := f.Reports[i]
		if r == nil {
			r = &doctor.Report{APIVersion: doctor.APIVersion, Kind: "Report", Incomplete: c.Incomplete}
		}
		var buf bytes.Buffer
		if err := SARIF(&buf, r, o); err != nil {
			return err
		}
		var one sarifLog
		if err := json.Unmarshal(buf.Bytes(), &one); err != nil {
			return fmt.Errorf("internal: re-reading SARIF: %w", err)
		}
		for _, run := range one.Runs {
			if run.Properties == nil {
				run.Properties = map[string]any{}
			}
			run.Properties["clusterName"] = c.Name
			if c.Error != "" {
				run.Invocations = []sarifInvocation{{ExecutionSuccessful: false, ToolExecutionNotifications: []sarifNotification{{
					Level: "error", Message: sarifText{Text: "cluster " + c.Name + ": scan failed: " + c.Error}}}}}
			}
			for j := range run.Results {
				res := &run.Results[j]
				if res.Properties == nil {
					res.Properties = map[string]any{}
				}
				res.Properties["cluster"] = c.Name
				fp := doctor.Finding{Cluster: c.Name, Fingerprint: res.PartialFingerprints[FingerprintKey]}
				res.PartialFingerprints[FleetFingerprintKey] = doctor.FleetFingerprint(&fp)
				// The physical location is per cluster, so the same object
				// in two clusters is two locations.
				for k := range res.Locations {
					loc := &res.Locations[k]
					loc.PhysicalLocation.ArtifactLocation.URI = "clusters/" + pathSegment(c.Name) + "/" + loc.PhysicalLocation.ArtifactLocation.URI
					for l := range loc.LogicalLocations {
						loc.LogicalLocations[l].FullyQualifiedName = c.Name + ":" + loc.LogicalLocations[l].FullyQualifiedName
					}
				}
			}
			log.Runs = append(log.Runs, run)
		}
	}
	return JSON(w, log)
}

// pathSegment makes a cluster name one URI path segment.
func pathSegment(s string) string {
	return strings.NewReplacer("/", "%2F", " ", "%20", "?", "%3F", "#", "%23", "%", "%25").Replace(s)
}

// fleetJUnit writes one <testsuite> per cluster; its test cases are the
// single-cluster report's, their classname qualified by the cluster. A
// cluster that could not be scanned is one errored test case.
func fleetJUnit(w io.Writer, f *doctor.FleetReport, o Options) error {
	failOn := o.FailOn
	if failOn == 0 {
		failOn = doctor.Critical
	}
	doc := junitSuites{Name: "kubectl-doctor", Time: fmt.Sprintf("%.3f", time.Duration(f.Duration).Seconds())}
	for i, c := range f.Clusters {
		suite := junitSuite{Name: c.Name, Hostname: c.Cluster.Server,
			Properties: []junitProperty{{"cluster.name", c.Name}, {"cluster.server", c.Cluster.Server}, {"cluster.version", c.Cluster.Version}, {"fail-on", failOn.String()}}}
		r := f.Reports[i]
		if r == nil {
			suite.Cases = []junitCase{{Name: "scan", Classname: "kubectl-doctor." + c.Name, Error: &junitProblem{Message: c.Error, Type: "error", Text: c.Error}}}
			suite.Errors = 1
		} else {
			var buf bytes.Buffer
			if err := JUnit(&buf, r, o); err != nil {
				return err
			}
			var one junitSuites
			if err := xml.Unmarshal(buf.Bytes(), &one); err != nil {
				return fmt.Errorf("internal: re-reading JUnit: %w", err)
			}
			for _, s := range one.Suites {
				for _, tc := range s.Cases {
					tc.Classname = "kubectl-doctor." + c.Name + "." + s.Name
					suite.Cases = append(suite.Cases, tc)
				}
				suite.Failures += s.Failures
				suite.Errors += s.Errors
				suite.Skipped += s.Skipped
			}
		}
		suite.Tests = len(suite.Cases)
		doc.Tests += suite.Tests
		doc.Failures += suite.Failures
		doc.Errors += suite.Errors
		doc.Suites = append(doc.Suites, suite)
	}
	return writeJUnitXML(w, doc)
}
