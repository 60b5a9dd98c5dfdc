package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// JUnit XML, in the dialect GitLab, Jenkins and the GitHub test-report
// actions read: a <testsuites> with one <testsuite> per check. A check
// without findings is one passing testcase; a check with findings has one
// testcase per finding (per object), failing when the finding is at or
// above --fail-on and not known from the baseline; a skipped check is a
// <skipped> testcase and a check that could not run an <error> one.

type junitSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	// no skipped attribute: the Jenkins schema does not allow one on
	// <testsuites> (testdata/junit); each <testsuite> carries its own.
	Time   string       `xml:"time,attr"`
	Suites []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Hostname   string          `xml:"hostname,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// JUnit writes r as JUnit XML; o.FailOn decides which findings fail.
func JUnit(w io.Writer, r *doctor.Report, o Options) error {
	failOn := o.FailOn
	if failOn == 0 {
		failOn = doctor.Critical
	}
	byCheck := map[string][]doctor.Finding{}
	for _, f := range r.Findings {
		byCheck[f.Check] = append(byCheck[f.Check], f)
	}
	suppressed := map[string][]doctor.Finding{}
	for _, f := range r.Suppressed {
		suppressed[f.Check] = append(suppressed[f.Check], f)
	}
	doc := junitSuites{Name: "kubectl-doctor", Time: fmt.Sprintf("%.3f", time.Duration(r.Duration).Seconds())}
	props := []junitProperty{{"cluster.server", r.Cluster.Server}, {"cluster.version", r.Cluster.Version}}
	if r.Cluster.Namespace != "" {
		props = append(props, junitProperty{"cluster.namespace", r.Cluster.Namespace})
	}
	props = append(props, junitProperty{"fail-on", failOn.String()})
	for _, c := range r.Checks {
		s := junitSuite{Name: c.Name, Hostname: r.Cluster.Server, Properties: props}
		class := "kubectl-doctor." + c.Name
		switch c.Status {
		case doctor.StatusSkipped, doctor.StatusDisabled:
			msg := c.Reason
			if c.Status == doctor.StatusDisabled && msg == "" {
				msg = "disabled"
			}
			s.Cases = append(s.Cases, junitCase{Name: c.Name, Classname: class, Skipped: &junitSkipped{Message: msg}})
			s.Skipped++
		case doctor.StatusError:
			s.Cases = append(s.Cases, junitCase{Name: c.Name, Classname: class, Error: &junitProblem{Message: c.Reason, Type: "error", Text: c.Reason}})
			s.Errors++
		default:
			fs := byCheck[c.Name]
			if len(fs) == 0 {
				s.Cases = append(s.Cases, junitCase{Name: c.Name, Classname: class})
			}
			for _, f := range fs {
				tc := junitCase{Name: c.Name + ": " + objectName(f.Object), Classname: class}
				body := findingText(f)
				switch {
				case f.Baseline == doctor.BaselineKnown:
					tc.SystemOut = "known from the baseline, does not fail: " + body
				case failOn != doctor.Never && f.Severity >= failOn:
					tc.Failure = &junitProblem{Message: f.Severity.String() + ": " + f.Message, Type: f.Severity.String(), Text: body}
					s.Failures++
				default:
					tc.SystemOut = fmt.Sprintf("%s, below --fail-on %s: %s", f.Severity, failOn, body)
				}
				s.Cases = append(s.Cases, tc)
			}
		}
		for _, f := range suppressed[c.Name] {
			reason := ""
			if f.Suppression != nil {
				reason = f.Suppression.Reason
			}
			s.Cases = append(s.Cases, junitCase{Name: c.Name + ": " + objectName(f.Object), Classname: class,
				Skipped: &junitSkipped{Message: "suppressed: " + reason}, SystemOut: findingText(f)})
			s.Skipped++
		}
		if c.Partial() {
			for i := range s.Cases {
				if s.Cases[i].SystemOut == "" {
					s.Cases[i].SystemOut = "ran without some data: " + gapText(c.Missing)
				}
			}
		}
		s.Tests = len(s.Cases)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Suites = append(doc.Suites, s)
	}
	if r.Error != "" || len(r.Checks) == 0 {
		// The scan could not run (or ran nothing): one error testcase, so
		// a CI test report shows why instead of nothing.
		msg := r.Error
		if msg == "" {
			msg = r.IncompleteSummary()
		}
		doc.Suites = append(doc.Suites, junitSuite{Name: "kubectl-doctor", Tests: 1, Errors: 1, Hostname: r.Cluster.Server, Properties: props,
			Cases: []junitCase{{Name: "scan", Classname: "kubectl-doctor.scan", Error: &junitProblem{Message: msg, Type: "error", Text: msg}}}})
		doc.Tests++
		doc.Errors++
	}
	return writeJUnitXML(w, doc)
}

// gapText is "controllerrevisions.apps (absent: not in the dump: ...)".
func gapText(gaps []doctor.Gap) string {
	var parts []string
	for _, g := range gaps {
		parts = append(parts, g.Read+" ("+g.Cause+": "+g.Reason+")")
	}
	return strings.Join(parts, "; ")
}

// findingText is a finding as plain text: message, examples, remediation.
func findingText(f doctor.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s [%s]: %s", f.Severity, objectName(f.Object), f.Check, f.Message)
	if f.Count > 1 {
		fmt.Fprintf(&b, " (×%s)", doctor.Thousands(f.Count))
	}
	if len(f.Examples) > 0 {
		fmt.Fprintf(&b, "\ne.g. %s", strings.Join(f.Examples, ", "))
	}
	for _, r := range f.Remediation {
		fmt.Fprintf(&b, "\n→ %s", r.Text)
		if r.Command != "" {
			fmt.Fprintf(&b, "\n  $ %s", r.Command)
		}
	}
	if f.Partial != "" {
		fmt.Fprintf(&b, "\npartial: %s", f.Partial)
	}
	fmt.Fprintf(&b, "\nfingerprint %s", f.Fingerprint)
	return b.String()
}

// writeJUnitXML writes doc as an indented XML document ending in a newline.
func writeJUnitXML(w io.Writer, doc junitSuites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
