// Package doctor is kubectl-doctor's check engine: the Check a diagnosis is
// declared as, the Pass it runs with, the Finding it reports and the Report a
// scan produces. Checks are plain values in an explicit slice so that the set of
// diagnoses is visible in one place, validated at start-up and testable without
// a cluster: a check reads only the snapshot it declared and never the API.
package doctor

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// Check is one diagnosis. It is declarative so that the loader can plan the
// reads of a whole scan before anything runs, and so that docs, completion and
// `kubectl doctor checks` are generated from the same value that runs.
type Check struct {
	// Name is kebab-case and stable: it is used by --check/--skip, in JSON
	// output consumed by CI, and as the file name of the doc page.
	Name string
	// Doc is "title\n\nbody": the first line is the title shown by
	// `kubectl doctor checks`; the body explains why the check matters, how
	// it detects the problem and how to fix it (Markdown).
	Doc string
	// Severity is the default for findings that leave theirs unset.
	Severity Severity
	// Origin says where this class of problem comes from: the public
	// incident it was first written for ("Pinniped #1507"), "everyday"
	// breakage, or the "peer coverage map" (docs/coverage.md). It is the
	// "from" column of the generated checks tables.
	Origin string
	// Reads lists every resource the check looks at; the scan lists each
	// resource once for all checks, and skips a check whose reads failed.
	Reads []snapshot.Resource
	// Optional lists resources the check uses when the scan could read
	// them and does without otherwise: the evidence that links a cause
	// across objects (a crash-looping backend behind a webhook). A denied
	// or failed optional read neither skips nor errors the check, so a user
	// who may not list webhook configurations still gets every workload
	// finding; the check only loses the link (snapshot.Err tells).
	Optional []snapshot.Resource
	// Fallback names Optional reads from which the check can still judge
	// something when a read of Reads is missing: absent from the input or
	// forbidden (never when it failed, which makes the scan incomplete).
	// The check then runs if at least one of them was read, with partial
	// coverage, and its Run tells the case by snapshot.Err: a capture of
	// Deployments without their pods still has the Deployments' own
	// conditions to report.
	Fallback []snapshot.Resource
	// Run reports findings through the pass. It must not call the API.
	Run func(*Pass) error
}

// Title is the first line of the doc.
func (c *Check) Title() string {
	title, _, _ := strings.Cut(c.Doc, "\n")
	return strings.TrimSpace(title)
}

// Body is the doc without its title line.
func (c *Check) Body() string {
	_, body, _ := strings.Cut(c.Doc, "\n")
	return strings.TrimSpace(body)
}

// Pass is a check's only window on the world: the snapshot, the clock and
// the place to report findings. A fixed Now makes fixture tests repeatable.
type Pass struct {
	Check    *Check
	Snapshot *snapshot.Snapshot
	Now      time.Time
	// Context ends when the scan's --timeout does: a check that may run
	// long (a custom CEL rule over many objects) stops when it is done.
	Context context.Context

	findings []Finding
}

// Report records a finding; Check and a zero Severity or Count are filled in
// from the check's defaults.
func (p *Pass) Report(f Finding) {
	f.Check = p.Check.Name
	if f.Severity == 0 {
		f.Severity = p.Check.Severity
	}
	if f.Count == 0 {
		f.Count = 1
	}
	f.Fingerprint = f.ComputeFingerprint()
	f.ComputeMemberFingerprints()
	p.findings = append(p.findings, f)
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// ValidName says the name is kebab-case ("replicas-at-least-2"), as every
// check's name, built in or from a configuration, must be.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// Validate rejects a registry that would confuse users or CI: unnamed,
// duplicate or undocumented checks, checks with no reads or no run function.
// It is called at start-up and by a test, so a bad check never ships.
func Validate(checks []*Check) error {
	seen := map[string]bool{}
	for i, c := range checks {
		switch {
		case c == nil:
			return fmt.Errorf("check %d is nil", i)
		case !ValidName(c.Name):
			return fmt.Errorf("check %d: name %q is not kebab-case", i, c.Name)
		case seen[c.Name]:
			return fmt.Errorf("check %q is registered twice", c.Name)
		case c.Title() == "" || len(c.Body()) < 80:
			return fmt.Errorf("check %q: doc needs a title line and a body that says why, how it is detected and how to fix", c.Name)
		case c.Severity < Info || c.Severity > Critical:
			return fmt.Errorf("check %q: invalid default severity %d", c.Name, c.Severity)
		case len(c.Reads) == 0:
			return fmt.Errorf("check %q declares no reads", c.Name)
		case c.Run == nil:
			return fmt.Errorf("check %q has no Run function", c.Name)
		}
		for _, r := range c.Fallback {
			if !slices.Contains(c.Optional, r) {
				return fmt.Errorf("check %q: fallback read %s is not among its optional reads", c.Name, r)
			}
		}
		seen[c.Name] = true
	}
	return nil
}

// Select returns the checks named by --check (all when empty) minus those
// named by --skip, in registry order. Unknown names are an error that lists
// the valid ones, so a typo in CI fails loudly instead of silently passing.
func Select(all []*Check, only, skip []string) ([]*Check, error) {
	byName := map[string]*Check{}
	var names []string
	for _, c := range all {
		byName[c.Name] = c
		names = append(names, c.Name)
	}
	for _, n := range append(append([]string{}, only...), skip...) {
		if byName[n] == nil {
			return nil, fmt.Errorf("unknown check %q (known: %s)", n, strings.Join(names, ", "))
		}
	}
	want := map[string]bool{}
	for _, n := range only {
		want[n] = true
	}
	for _, n := range skip {
		delete(want, n)
	}
	var out []*Check
	for _, c := range all {
		if len(only) > 0 && !want[c.Name] {
			continue
		}
		if slices.Contains(skip, c.Name) {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// Reads is the union of what the checks read, for the snapshot loader.
func Reads(checks []*Check) []snapshot.Resource {
	var out []snapshot.Resource
	for _, c := range checks {
		out = append(append(out, c.Reads...), c.Optional...)
	}
	return out
}

// Markdown is the check's doc page (docs/checks/NAME.md), generated so that
// the page and `kubectl doctor explain` can never disagree.
func (c *Check) Markdown() string {
	var reads []string
	for _, r := range snapshot.Plan(c.Reads) {
		reads = append(reads, "`"+r.String()+"`")
	}
	for _, r := range snapshot.Plan(c.Optional) {
		if !slices.Contains(c.Reads, r) {
			reads = append(reads, "`"+r.String()+"` (optional)")
		}
	}
	return fmt.Sprintf("# %s\n\n**%s**\n\nDefault severity: **%s** · Reads: %s · Run alone: `kubectl doctor --check %s`\n\n%s\n\n---\n"+
		"<sub>Generated by `make docs` from the check's `Doc` in `checks/`; edit it there.</sub>\n",
		c.Name, c.Title(), c.Severity, strings.Join(reads, ", "), c.Name, c.Body())
}

// Index is docs/checks/README.md: one row per check.
func Index(checks []*Check) string {
	var b strings.Builder
	b.WriteString("# Checks\n\n")
	b.WriteString(Table(checks, ""))
	b.WriteString("\n<sub>Generated by `make docs`.</sub>\n")
	return b.String()
}

// Table is the checks table of the README and of the docs index: one row per
// check with its default severity, its title and where the class comes from.
// dir is the path from the including file to docs/checks/ ("" inside it).
func Table(checks []*Check, dir string) string {
	var b strings.Builder
	b.WriteString("| check | default severity | what it finds | from |\n|---|---|---|---|\n")
	for _, c := range checks {
		fmt.Fprintf(&b, "| [%s](%s%s.md) | %s | %s | %s |\n", c.Name, dir, c.Name, c.Severity, c.Title(), c.Origin)
	}
	return b.String()
}
