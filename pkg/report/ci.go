package report

import (
	"fmt"
	"strings"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// usesBaseline says whether the report was compared with a baseline.
func usesBaseline(r *doctor.Report) bool {
	if len(r.Resolved) > 0 {
		return true
	}
	for _, f := range r.Findings {
		if f.Baseline != "" {
			return true
		}
	}
	return false
}

// writeBaseline prints new findings first, in full and by severity, then
// the known ones in one line each, then what the baseline had that this
// scan no longer finds.
func writeBaseline(b *strings.Builder, r *doctor.Report, p palette, wide bool) {
	var fresh, known []doctor.Finding
	for _, f := range r.Findings {
		if f.Baseline == doctor.BaselineKnown {
			known = append(known, f)
		} else {
			fresh = append(fresh, f)
		}
	}
	if len(fresh) > 0 {
		fmt.Fprintf(b, "%s\n", p.bold.Sprintf("NEW (%d)", len(fresh)))
		writeFindings(b, fresh, p, wide)
	}
	if len(known) > 0 {
		fmt.Fprintf(b, "%s %s\n", p.bold.Sprintf("KNOWN (%d)", len(known)), p.dim.Sprint("in the baseline: listed, not failing the gate"))
		for _, f := range known {
			if wide {
				writeFinding(b, f, p, wide)
				continue
			}
			fmt.Fprintf(b, "  %s %s  %s  %s\n", p.sev[f.Severity].Sprint(f.Severity), p.bold.Sprint(Esc(objectName(f.Object))),
				p.dim.Sprintf("[%s]", f.Check), Esc(f.Message))
		}
	}
	if len(r.Resolved) > 0 {
		fmt.Fprintf(b, "%s %s\n", p.green.Sprintf("RESOLVED (%d)", len(r.Resolved)), p.dim.Sprint("in the baseline, not found any more"))
		for _, f := range r.Resolved {
			fmt.Fprintf(b, "  %s  %s  %s\n", p.bold.Sprint(Esc(objectName(f.Object))), p.dim.Sprintf("[%s]", f.Check), Esc(f.Message))
		}
	}
}

// writeSuppressed prints suppressed findings (present with
// --show-suppressed) with their reason, and expired ignore entries.
func writeSuppressed(b *strings.Builder, r *doctor.Report, p palette) {
	if len(r.Suppressed) > 0 {
		fmt.Fprintf(b, "%s\n", p.dim.Sprintf("SUPPRESSED (%d)", len(r.Suppressed)))
		for _, f := range r.Suppressed {
			fmt.Fprintf(b, "  %s %s  %s  %s\n", f.Severity, Esc(objectName(f.Object)), fmt.Sprintf("[%s]", f.Check), Esc(f.Message))
			if s := f.Suppression; s != nil {
				fmt.Fprintf(b, "    %s %s\n", p.dim.Sprint("suppressed by "+suppressionSource(s)+":"), Esc(s.Reason))
			}
		}
	}
	for _, e := range r.ExpiredIgnores {
		target := e.Check
		for _, part := range []struct{ k, v string }{{"namespace", e.Namespace}, {"kind", e.Kind}, {"name", e.Name}} {
			if part.v != "" {
				target += " " + part.k + "=" + part.v
			}
		}
		fmt.Fprintf(b, "%s ignore entry (config line %d: %s, %q) expired on %s: %s it matched reported again\n",
			p.sev[doctor.Warning].Sprint("expired"), e.Line, Esc(target), Esc(e.Reason), e.Expires,
			doctor.Plural(e.Matches, "finding", "findings"))
	}
}

func suppressionSource(s *doctor.Suppression) string {
	switch {
	case s.Source == "config" && s.Expires != "":
		return fmt.Sprintf("config line %d until %s", s.Line, s.Expires)
	case s.Source == "config":
		return fmt.Sprintf("config line %d", s.Line)
	}
	return "annotation"
}

// ciSummary is the summary line's part about baseline and suppressions.
func ciSummary(r *doctor.Report) string {
	s := r.Summary
	out := ""
	if usesBaseline(r) {
		out += fmt.Sprintf(" · %d new, %d known, %d resolved", s.New, s.Known, s.Resolved)
	}
	if s.Suppressed > 0 {
		out += fmt.Sprintf(" · %d suppressed", s.Suppressed)
	}
	return out
}
