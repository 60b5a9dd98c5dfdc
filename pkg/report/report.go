// Package report renders a doctor.Report as a table for people or as JSON or
// YAML for machines. It owns colour and terminal escaping, so no check or
// command has to think about either.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fatih/color"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// Formats accepted by -o.
var Formats = []string{"table", "wide", "json", "yaml"}

// ScanFormats are the formats of a scan's report: Formats, plus SARIF and
// JUnit XML for CI systems.
var ScanFormats = append(append([]string{}, Formats...), "sarif", "junit")

// Options says how to print.
type Options struct {
	Format string
	// Color enables ANSI colour; the caller decides (TTY and NO_COLOR).
	Color bool
	// For SARIF and JUnit: the tool's version, the checks that ran (for
	// rule titles and docs), where a check's doc page is (nil: none), and
	// the --fail-on threshold JUnit turns into failures.
	ToolVersion string
	Checks      []*doctor.Check
	DocsURL     func(check string) string
	FailOn      doctor.Severity
}

// Print writes r in the requested format.
func Print(w io.Writer, r *doctor.Report, o Options) error {
	switch o.Format {
	case "json":
		return JSON(w, r)
	case "yaml":
		return YAML(w, r)
	case "sarif":
		return SARIF(w, r, o)
	case "junit":
		return JUnit(w, r, o)
	case "table", "wide", "":
		return table(w, r, o)
	}
	return fmt.Errorf("unknown output format %q", o.Format)
}

// JSON writes v as indented JSON.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// YAML writes v as YAML with the same field names as JSON.
func YAML(w io.Writer, v any) error {
	b, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Esc makes a cluster-supplied string safe to print on a terminal:
// kubectl's EscapeTerminal (ESC, CR), and the other C0 controls (BEL, NL,
// TAB, ...) in caret notation, so a crafted name can neither drive the
// terminal nor forge report lines.
func Esc(s string) string {
	s = printers.EscapeTerminal(s)
	if strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == 0x7f:
			b.WriteString("^?")
		case isControl(r):
			b.WriteByte('^')
			b.WriteRune(r + '@')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

type palette struct {
	sev   map[doctor.Severity]*color.Color
	dim   *color.Color
	bold  *color.Color
	green *color.Color
}

func newPalette(on bool) palette {
	p := palette{
		sev: map[doctor.Severity]*color.Color{
			doctor.Critical: color.New(color.FgRed, color.Bold),
			doctor.Warning:  color.New(color.FgYellow, color.Bold),
			doctor.Info:     color.New(color.FgCyan),
		},
		dim:   color.New(color.Faint),
		bold:  color.New(color.Bold),
		green: color.New(color.FgGreen),
	}
	for _, c := range append([]*color.Color{p.dim, p.bold, p.green}, p.sev[doctor.Critical], p.sev[doctor.Warning], p.sev[doctor.Info]) {
		if on {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	return p
}

// Findings writes findings grouped by severity, critical first, each with
// its object, message, examples and remediation: the body of every table
// report (scan, audit).
func Findings(w io.Writer, findings []doctor.Finding, o Options) error {
	var b strings.Builder
	writeFindings(&b, findings, newPalette(o.Color), o.Format == "wide")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFindings(b *strings.Builder, findings []doctor.Finding, p palette, wide bool) {
	for _, sev := range []doctor.Severity{doctor.Critical, doctor.Warning, doctor.Info} {
		var group []doctor.Finding
		for _, f := range findings {
			if f.Severity == sev {
				group = append(group, f)
			}
		}
		if len(group) == 0 {
			continue
		}
		fmt.Fprintf(b, "%s\n", p.sev[sev].Sprintf("%s (%d)", strings.ToUpper(sev.String()), len(group)))
		for _, f := range group {
			writeFinding(b, f, p, wide)
		}
	}
}

func table(w io.Writer, r *doctor.Report, o Options) error {
	p := newPalette(o.Color)
	var b strings.Builder
	wide := o.Format == "wide"
	// An incomplete scan says so before anything else, so that no finding
	// list or verdict is read as the whole story.
	if !r.Complete {
		why := strings.TrimPrefix(strings.TrimPrefix(r.IncompleteSummary(), "incomplete scan: "), "incomplete scan ")
		fmt.Fprintf(&b, "%s %s\n\n", p.sev[doctor.Critical].Sprint("INCOMPLETE:"), Esc(why))
	}
	if usesBaseline(r) {
		writeBaseline(&b, r, p, wide)
	} else {
		writeFindings(&b, r.Findings, p, wide)
	}
	writeSuppressed(&b, r, p)
	for _, c := range r.Checks {
		if c.Status == doctor.StatusSkipped || c.Status == doctor.StatusError {
			fmt.Fprintf(&b, "%s %s: %s\n", p.dim.Sprint(c.Status), c.Name, Esc(c.Reason))
		}
	}
	if o.Format == "wide" {
		fmt.Fprintf(&b, "\ncluster %s (%s)\n", Esc(r.Cluster.Server), Esc(r.Cluster.Version))
		for _, c := range r.Checks {
			fmt.Fprintf(&b, "  %-8s %-28s %s%s\n", statusWord(c), c.Name, doctor.Plural(c.Findings, "finding", "findings"), missingText(c))
		}
	}
	if len(r.Findings) > 0 || o.Format == "wide" || r.Summary.Skipped+r.Summary.Errors > 0 || len(r.Suppressed)+len(r.ExpiredIgnores) > 0 {
		b.WriteString("\n")
	}
	if r.Cluster.AgesAsOf != "" {
		// A capture that does not say when it was taken: "stuck for 5s"
		// may be five days.
		fmt.Fprintf(&b, "%s\n", p.dim.Sprintf("ages are lower bounds: the input does not say when it was captured; they are measured from its newest timestamp, %s", Esc(r.Cluster.AgesAsOf)))
	}
	b.WriteString(SummaryLine(r) + "\n")
	// The last line is the verdict with what it rests on: never a bare
	// all-clear.
	verdict := Esc(r.CoverageLine())
	if r.Complete && r.Worst() == 0 && r.Summary.Skipped+r.Summary.Partial == 0 {
		verdict = p.green.Sprint(verdict)
	}
	b.WriteString(verdict + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFinding(b *strings.Builder, f doctor.Finding, p palette, wide bool) {
	obj := f.Object.Kind + "/" + f.Object.Name
	if f.Object.Namespace != "" {
		obj = f.Object.Namespace + "/" + obj
	}
	count := ""
	if f.Count > 1 {
		count = fmt.Sprintf("  ×%s", doctor.Thousands(f.Count))
	}
	fmt.Fprintf(b, "  %s%s  %s\n", p.bold.Sprint(Esc(obj)), count, p.dim.Sprintf("[%s]", f.Check))
	fmt.Fprintf(b, "    %s\n", Esc(f.Message))
	writeQuoted(b, f.Evidence, "│", p, wide)
	writeQuoted(b, f.Explains, "explains", p, wide)
	if len(f.Examples) > 0 && (wide || f.Count > 1) {
		ex := make([]string, len(f.Examples))
		for i, e := range f.Examples {
			ex[i] = Esc(e)
		}
		fmt.Fprintf(b, "    %s %s\n", p.dim.Sprint("e.g."), strings.Join(ex, ", "))
	}
	if f.Partial != "" {
		fmt.Fprintf(b, "    %s\n", p.dim.Sprint("(partial: "+Esc(f.Partial)+")"))
	}
	if len(f.NewMembers) > 0 {
		fmt.Fprintf(b, "    new since the baseline: %s\n", Esc(strings.Join(f.NewMembers, ", ")))
	}
	for _, rem := range f.Remediation {
		fmt.Fprintf(b, "    → %s\n", Esc(rem.Text))
		if rem.Command != "" {
			fmt.Fprintf(b, "      %s\n", p.bold.Sprint("$ "+Esc(rem.Command)))
		}
	}
}

// writeQuoted prints a finding's evidence (or what it explains) indented
// under its message: doctor.MaxEvidence lines, all of them when wide.
func writeQuoted(b *strings.Builder, lines []string, mark string, p palette, wide bool) {
	for i, l := range lines {
		if i == doctor.MaxEvidence && !wide {
			fmt.Fprintf(b, "      %s\n", p.dim.Sprintf("(%d more with -o wide)", len(lines)-i))
			break
		}
		fmt.Fprintf(b, "      %s %s\n", p.dim.Sprint(mark), Esc(l))
	}
}

// SummaryLine is "2 critical, 3 warning, 5 info · 14 checks passed, 1 skipped · 23 API requests in 0.4s".
func SummaryLine(r *doctor.Report) string {
	s := r.Summary
	line := fmt.Sprintf("%d critical, %d warning, %d info · %s passed", s.Critical, s.Warning, s.Info,
		doctor.Plural(s.Passed, "check", "checks"))
	if s.Failed > 0 {
		line += fmt.Sprintf(", %d failed", s.Failed)
	}
	if s.Partial > 0 {
		line += fmt.Sprintf(", %d partial", s.Partial)
	}
	line += fmt.Sprintf(", %d skipped", s.Skipped)
	if s.Disabled > 0 {
		line += fmt.Sprintf(", %d disabled", s.Disabled)
	}
	if s.Errors > 0 {
		line += fmt.Sprintf(", %d errors", s.Errors)
	}
	line += ciSummary(r)
	line += fmt.Sprintf(" · %s in %s", doctor.Plural(r.Requests, "API request", "API requests"),
		roundDuration(time.Duration(r.Duration)))
	if r.Retries > 0 {
		line += fmt.Sprintf(" (+%d retried)", r.Retries)
	}
	if len(r.Incomplete) > 0 {
		line += " · INCOMPLETE scan"
	}
	return line
}

// statusWord is the check's status for people: "partial" for a check that
// ran without some optional read.
func statusWord(c doctor.CheckResult) string {
	if c.Coverage == doctor.CoveragePartial {
		return c.Status + "*"
	}
	return c.Status
}

// missingText is " (without: events(reason=X): absent)" for the wide table.
func missingText(c doctor.CheckResult) string {
	if len(c.Missing) == 0 || c.Status == doctor.StatusSkipped {
		return ""
	}
	var parts []string
	for _, g := range c.Missing {
		parts = append(parts, g.Read+": "+g.Cause)
	}
	return " (without " + Esc(strings.Join(parts, ", ")) + ")"
}

func roundDuration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}
