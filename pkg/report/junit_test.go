package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

type parsedSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnitParses(t *testing.T) {
	var b bytes.Buffer
	if err := Print(&b, ciSample(), ciOptions("junit")); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, xml.Header) || strings.ContainsRune(out, '\x1b') {
		t.Errorf("no XML header, or a raw control character:\n%q", out)
	}
	var doc parsedSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not JUnit XML: %v\n%s", err, out)
	}
	// a: one failing finding (critical, new), one known (info), one
	// suppressed; b: skipped; c: errored.
	// <testsuites> has no skipped attribute (the Jenkins schema has none).
	if doc.Tests != 5 || doc.Failures != 1 || doc.Errors != 1 || doc.Skipped != 0 || len(doc.Suites) != 3 {
		t.Fatalf("totals tests=%d failures=%d errors=%d skipped=%d suites=%d\n%s", doc.Tests, doc.Failures, doc.Errors, doc.Skipped, len(doc.Suites), out)
	}
	a := doc.Suites[0]
	if a.Name != "a" || a.Tests != 3 || a.Failures != 1 {
		t.Errorf("suite a: %+v", a)
	}
	fail := a.Cases[0]
	if fail.Name != "a: shop/Deployment/web:odd name" || fail.Classname != "kubectl-doctor.a" || fail.Failure == nil ||
		fail.Failure.Type != "critical" || !strings.Contains(fail.Failure.Text, "$ kubectl describe node x") {
		t.Errorf("failing case: %+v", fail)
	}
	if known := a.Cases[1]; known.Failure != nil || !strings.HasPrefix(known.SystemOut, "known from the baseline") {
		t.Errorf("known finding must not fail: %+v", known)
	}
	if sup := a.Cases[2]; sup.Skipped == nil || sup.Skipped.Message != "suppressed: INC-1" {
		t.Errorf("suppressed finding: %+v", sup)
	}
	if s := doc.Suites[1].Cases[0]; s.Skipped == nil || !strings.Contains(s.Skipped.Message, "forbidden") {
		t.Errorf("skipped check: %+v", s)
	}
	if e := doc.Suites[2].Cases[0]; e.Error == nil || e.Error.Message != "etcd is sad" {
		t.Errorf("errored check: %+v", e)
	}
}

func TestJUnitBelowThresholdPasses(t *testing.T) {
	r := ciSample()
	r.Findings[0].Baseline = ""
	o := ciOptions("junit")
	o.FailOn = 0 // default critical
	var b bytes.Buffer
	if err := Print(&b, r, o); err != nil {
		t.Fatal(err)
	}
	var doc parsedSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Failures != 1 {
		t.Errorf("critical finding with default --fail-on: %d failures", doc.Failures)
	}
	o.FailOn = 4 // never
	b.Reset()
	_ = Print(&b, r, o)
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil || doc.Failures != 0 {
		t.Errorf("--fail-on never: %d failures, err %v", doc.Failures, err)
	}
}
