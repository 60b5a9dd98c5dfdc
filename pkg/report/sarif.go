package report

import (
	"io"
	"net/url"
	"regexp"
	"strings"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// SARIF 2.1.0 (OASIS standard, errata 01): what GitHub code scanning and
// other SARIF consumers read. Only the properties kubectl-doctor fills are
// modelled; testdata/sarif holds the official schema the tests validate
// against.
const (
	SARIFVersion = "2.1.0"
	SARIFSchema  = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	// FingerprintKey names kubectl-doctor's fingerprint among a result's
	// partialFingerprints; the "/v1" follows doctor.FingerprintVersion.
	FingerprintKey = "kubectlDoctorFingerprint/v1"
	// InformationURI is the tool's home page.
	InformationURI = "https://github.com/kubectl-doctor/kubectl-doctor"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
	Properties  map[string]any    `json:"properties,omitempty"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name            string      `json:"name"`
	Version         string      `json:"version,omitempty"`
	SemanticVersion string      `json:"semanticVersion,omitempty"`
	InformationURI  string      `json:"informationUri"`
	Rules           []sarifRule `json:"rules"`
}

type sarifText struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name,omitempty"`
	ShortDescription     sarifText      `json:"shortDescription"`
	FullDescription      *sarifText     `json:"fullDescription,omitempty"`
	Help                 *sarifText     `json:"help,omitempty"`
	HelpURI              string         `json:"helpUri,omitempty"`
	DefaultConfiguration sarifRuleConf  `json:"defaultConfiguration"`
	Properties           map[string]any `json:"properties,omitempty"`
}

type sarifRuleConf struct {
	Level string `json:"level"`
}

type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level      string             `json:"level"`
	Message    sarifText          `json:"message"`
	Descriptor *sarifDescriptorRf `json:"descriptor,omitempty"`
}

type sarifDescriptorRf struct {
	ID string `json:"id"`
}

type sarifResult struct {
	RuleID              string             `json:"ruleId"`
	RuleIndex           int                `json:"ruleIndex"`
	Level               string             `json:"level"`
	Message             sarifText          `json:"message"`
	Locations           []sarifLocation    `json:"locations"`
	PartialFingerprints map[string]string  `json:"partialFingerprints"`
	BaselineState       string             `json:"baselineState,omitempty"`
	Suppressions        []sarifSuppression `json:"suppressions,omitempty"`
	Properties          map[string]any     `json:"properties,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical  `json:"physicalLocation"`
	LogicalLocations []sarifLogical `json:"logicalLocations"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifLogical struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Status        string `json:"status"`
	Justification string `json:"justification"`
}

// SARIFLevel maps a severity to a SARIF result level.
func SARIFLevel(s doctor.Severity) string {
	switch s {
	case doctor.Critical:
		return "error"
	case doctor.Warning:
		return "warning"
	}
	return "note"
}

var semverRE = regexp.MustCompile(`^v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$`)

// SARIF writes r as a SARIF 2.1.0 log with one run: one rule per check
// that ran, one result per finding (and per suppressed finding, marked
// suppressed, when the report carries them). Each result has a physical
// location — a pseudo-path k8s/NAMESPACE/KIND/NAME, since GitHub rejects
// results without one — and the logical location of the object, and its
// fingerprint as a partial fingerprint, so code scanning matches the same
// problem across scans.
func SARIF(w io.Writer, r *doctor.Report, o Options) error {
	byName := map[string]*doctor.Check{}
	for _, c := range o.Checks {
		byName[c.Name] = c
	}
	driver := sarifDriver{Name: "kubectl-doctor", Version: o.ToolVersion, InformationURI: InformationURI, Rules: []sarifRule{}}
	if m := semverRE.FindStringSubmatch(o.ToolVersion); m != nil {
		driver.SemanticVersion = m[1]
	}
	index := map[string]int{}
	for _, cr := range r.Checks {
		rule := sarifRule{ID: cr.Name, ShortDescription: sarifText{Text: cr.Name}, DefaultConfiguration: sarifRuleConf{Level: "warning"}}
		rule.Properties = map[string]any{"status": cr.Status, "coverage": cr.Coverage}
		if c := byName[cr.Name]; c != nil {
			rule.Name = ruleName(c.Name)
			rule.ShortDescription = sarifText{Text: c.Title()}
			rule.FullDescription = &sarifText{Text: firstParagraph(c.Body())}
			rule.Help = &sarifText{Text: c.Body(), Markdown: c.Body()}
			rule.DefaultConfiguration.Level = SARIFLevel(c.Severity)
			rule.Properties["tags"] = []string{"kubernetes"}
		}
		if o.DocsURL != nil {
			rule.HelpURI = o.DocsURL(cr.Name)
		}
		index[cr.Name] = len(driver.Rules)
		driver.Rules = append(driver.Rules, rule)
	}
	// A finding of a check missing from r.Checks still needs a rule.
	ruleFor := func(check string) int {
		if i, ok := index[check]; ok {
			return i
		}
		index[check] = len(driver.Rules)
		driver.Rules = append(driver.Rules, sarifRule{ID: check, ShortDescription: sarifText{Text: check}, DefaultConfiguration: sarifRuleConf{Level: "warning"}})
		return index[check]
	}
	// An incomplete scan (a read failed, nothing could run) did not succeed.
	inv := sarifInvocation{ExecutionSuccessful: len(r.Incomplete) == 0 && r.Error == ""}
	if r.Error != "" {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{Level: "error",
			Message: sarifText{Text: "the scan could not run: " + r.Error}})
	}
	for _, c := range r.Checks {
		if c.Partial() {
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{Level: "warning",
				Message: sarifText{Text: "check " + c.Name + " ran without some data: " + gapText(c.Missing)}, Descriptor: &sarifDescriptorRf{ID: c.Name}})
		}
		switch c.Status {
		case doctor.StatusDisabled:
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{Level: "note",
				Message: sarifText{Text: "check " + c.Name + " disabled: " + c.Reason}, Descriptor: &sarifDescriptorRf{ID: c.Name}})
		case doctor.StatusSkipped:
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{Level: "note",
				Message: sarifText{Text: "check " + c.Name + " skipped: " + c.Reason}, Descriptor: &sarifDescriptorRf{ID: c.Name}})
		case doctor.StatusError:
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{Level: "error",
				Message: sarifText{Text: "check " + c.Name + " failed to run: " + c.Reason}, Descriptor: &sarifDescriptorRf{ID: c.Name}})
		}
	}
	results := []sarifResult{}
	for _, f := range r.Findings {
		results = append(results, sarifFinding(f, ruleFor(f.Check)))
	}
	for _, f := range r.Suppressed {
		res := sarifFinding(f, ruleFor(f.Check))
		kind := "external"
		if f.Suppression != nil && f.Suppression.Source == "annotation" {
			kind = "inSource"
		}
		reason := ""
		if f.Suppression != nil {
			reason = f.Suppression.Reason
		}
		res.Suppressions = []sarifSuppression{{Kind: kind, Status: "accepted", Justification: reason}}
		results = append(results, res)
	}
	props := map[string]any{"cluster": r.Cluster, "summary": r.Summary, "checks": r.Checks, "complete": r.Complete}
	if len(r.Resolved) > 0 {
		var resolved []string
		for _, f := range r.Resolved {
			resolved = append(resolved, f.Fingerprint)
		}
		props["resolvedFingerprints"] = resolved
	}
	run := sarifRun{Tool: sarifTool{Driver: driver}, Invocations: []sarifInvocation{inv}, Results: results, Properties: props}
	return JSON(w, sarifLog{Schema: SARIFSchema, Version: SARIFVersion, Runs: []sarifRun{run}})
}

func sarifFinding(f doctor.Finding, ruleIndex int) sarifResult {
	text := f.Message
	for _, rem := range f.Remediation {
		text += "\n→ " + rem.Text
		if rem.Command != "" {
			text += ": " + rem.Command
		}
	}
	res := sarifResult{
		RuleID:    f.Check,
		RuleIndex: ruleIndex,
		Level:     SARIFLevel(f.Severity),
		Message:   sarifText{Text: text},
		Locations: []sarifLocation{{
			PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: ObjectPath(f.Object)}, Region: sarifRegion{StartLine: 1}},
			LogicalLocations: []sarifLogical{{Name: f.Object.Name, FullyQualifiedName: objectName(f.Object), Kind: "resource"}},
		}},
		PartialFingerprints: map[string]string{FingerprintKey: f.Fingerprint},
		Properties:          map[string]any{"severity": f.Severity.String(), "count": f.Count, "object": f.Object},
	}
	if len(f.Examples) > 0 {
		res.Properties["examples"] = f.Examples
	}
	if f.Cause != "" {
		res.Properties["cause"] = f.Cause
	}
	switch f.Baseline {
	case doctor.BaselineNew:
		res.BaselineState = "new"
	case doctor.BaselineKnown:
		res.BaselineState = "unchanged"
	}
	return res
}

// ObjectPath is the pseudo-path SARIF results are located at:
// k8s/NAMESPACE/KIND/NAME, or k8s/KIND/NAME for cluster-scoped objects
// (kinds are capitalised, namespaces never are, so the two cannot be
// confused), each segment URI-escaped.
func ObjectPath(o doctor.ObjectRef) string {
	segs := []string{"k8s"}
	if o.Namespace != "" {
		segs = append(segs, url.PathEscape(o.Namespace))
	}
	kind := o.Kind
	if kind == "" {
		kind = "Object"
	}
	return strings.Join(append(segs, url.PathEscape(kind), url.PathEscape(o.Name)), "/")
}

// objectName is namespace/Kind/name, or Kind/name when cluster-scoped.
func objectName(o doctor.ObjectRef) string {
	s := o.Kind + "/" + o.Name
	if o.Namespace != "" {
		s = o.Namespace + "/" + s
	}
	return s
}

// ruleName is the check name in PascalCase, SARIF's convention for
// reportingDescriptor.name: pod-storm → PodStorm.
func ruleName(check string) string {
	var b strings.Builder
	for _, p := range strings.Split(check, "-") {
		if p == "" {
			continue
		}
		b.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	return b.String()
}

// firstParagraph is the first paragraph of prose of a check's doc body:
// headings ("## Why it matters") are not paragraphs, and a heading line
// directly above the text does not make the text part of it.
func firstParagraph(s string) string {
	for _, p := range strings.Split(s, "\n\n") {
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(p), "\n") {
			if len(lines) == 0 && strings.HasPrefix(strings.TrimSpace(l), "#") {
				continue // a heading above the paragraph
			}
			lines = append(lines, l)
		}
		if text := strings.TrimSpace(strings.Join(lines, "\n")); text != "" {
			return text
		}
	}
	return strings.TrimSpace(s)
}
