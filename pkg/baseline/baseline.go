// Package baseline compares a scan with an earlier report, so that a team
// can adopt kubectl-doctor as a CI gate on a cluster that already has
// problems: the known ones are listed but do not fail the gate, new ones
// do, and the ones fixed since are listed as resolved. Findings are matched
// by fingerprint (check, object, cause), never by message.
package baseline

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// Baseline is the problems of an earlier scan, by fingerprint: a finding's
// own, and one per member of a grouped finding.
type Baseline struct {
	Path     string
	Findings []doctor.Finding
	byPrint  map[string]int
}

// Kind is the kind of a compact baseline file (Write).
const Kind = "Baseline"

// File is a compact baseline: one entry per problem (per member of a
// grouped finding), the fingerprint and what it names, for review in a
// pull request. A previous JSON report is read as a baseline too.
type File struct {
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Entries    []Entry `json:"entries"`
}

// Entry is one known problem.
type Entry struct {
	Fingerprint string           `json:"fingerprint"`
	Check       string           `json:"check"`
	Object      doctor.ObjectRef `json:"object"`
	Cause       string           `json:"cause,omitempty"`
	// Cluster scopes the entry to one cluster of a fleet run; empty
	// applies to every cluster.
	Cluster string `json:"cluster,omitempty"`
}

// Load reads a baseline: a compact file written by --write-baseline, or a
// report written by `kubectl doctor -o json` (or -o yaml). Reports from
// before fingerprints existed get theirs computed the same way.
func Load(path string) (*Baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading baseline: %w", err)
	}
	return Parse(data, path)
}

// Parse reads a baseline from the content of the file at path.
func Parse(data []byte, path string) (*Baseline, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("baseline %s: not a kubectl-doctor JSON report: %v", path, oneLine(err))
	}
	if head.APIVersion == doctor.APIVersion && head.Kind == Kind {
		var f File
		if err := yaml.UnmarshalStrict(data, &f); err != nil {
			return nil, fmt.Errorf("baseline %s: %v", path, oneLine(err))
		}
		b := &Baseline{Path: path, byPrint: map[string]int{}}
		for _, e := range f.Entries {
			if e.Fingerprint == "" {
				g := doctor.Finding{Check: e.Check, Object: e.Object, Cause: e.Cause}
				e.Fingerprint = g.ComputeFingerprint()
			}
			b.byPrint[e.Fingerprint] = len(b.Findings)
			b.Findings = append(b.Findings, doctor.Finding{Cluster: e.Cluster, Check: e.Check, Object: e.Object, Cause: e.Cause, Count: 1,
				Fingerprint: e.Fingerprint, Message: "known from the baseline"})
		}
		return b, nil
	}
	var r doctor.Report
	if err := yaml.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("baseline %s: not a kubectl-doctor JSON report: %v", path, oneLine(err))
	}
	fleet := r.APIVersion == doctor.APIVersion && r.Kind == doctor.FleetKind
	if fleet {
		// A fleet report: its findings carry their cluster, and
		// ForCluster scopes them (Report has the same findings field).
		r.Kind = "Report"
	}
	if r.APIVersion != doctor.APIVersion || r.Kind != "Report" {
		return nil, fmt.Errorf("baseline %s: not a kubectl-doctor report or baseline (want apiVersion %s and kind Report, as written by kubectl doctor -o json, or kind Baseline, as written by --write-baseline)", path, doctor.APIVersion)
	}
	b := &Baseline{Path: path, Findings: r.Findings, byPrint: map[string]int{}}
	if fleet {
		// Fingerprints are unique per cluster, not across the fleet:
		// number duplicates within each cluster only.
		byCluster := map[string][]doctor.Finding{}
		var order []string
		for _, f := range b.Findings {
			if _, ok := byCluster[f.Cluster]; !ok {
				order = append(order, f.Cluster)
			}
			byCluster[f.Cluster] = append(byCluster[f.Cluster], f)
		}
		b.Findings = b.Findings[:0]
		for _, c := range order {
			doctor.AssignFingerprints(byCluster[c])
			b.Findings = append(b.Findings, byCluster[c]...)
		}
	} else {
		doctor.AssignFingerprints(b.Findings)
	}
	for i := range b.Findings {
		f := &b.Findings[i]
		if len(f.Members) > 0 && len(f.MemberFingerprints) == 0 {
			f.ComputeMemberFingerprints()
		}
		b.byPrint[f.Fingerprint] = i
		for _, p := range f.MemberFingerprints {
			b.byPrint[p] = i
		}
	}
	return b, nil
}

// Entries are the compact baseline of findings: one entry per member of a
// grouped finding, else one per finding; sorted.
func Entries(findings []doctor.Finding) []Entry {
	var out []Entry
	for _, f := range findings {
		if len(f.Members) == 0 {
			out = append(out, Entry{Fingerprint: f.Fingerprint, Check: f.Check, Object: f.Object, Cause: f.Cause, Cluster: f.Cluster})
			continue
		}
		for _, m := range f.Members {
			out = append(out, Entry{Fingerprint: f.MemberFingerprint(m), Check: f.Check, Object: m, Cause: f.Cause, Cluster: f.Cluster})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Cluster != b.Cluster {
			return a.Cluster < b.Cluster
		}
		if a.Check != b.Check {
			return a.Check < b.Check
		}
		if a.Object.String() != b.Object.String() {
			return a.Object.String() < b.Object.String()
		}
		return a.Fingerprint < b.Fingerprint
	})
	return out
}

// Write writes the compact baseline of r's findings (suppressed ones are
// not problems the team accepted here, they are silenced elsewhere) to
// path, atomically: a partial file never replaces a good one.
func Write(path string, r *doctor.Report) error {
	f := File{APIVersion: doctor.APIVersion, Kind: Kind, Entries: Entries(r.Findings)}
	if f.Entries == nil {
		f.Entries = []Entry{}
	}
	data, err := yaml.Marshal(f)
	if err != nil {
		return err
	}
	header := []byte("# kubectl-doctor baseline: known problems, one per object; use with --baseline\n")
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing baseline: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(header, data...)); err != nil {
		tmp.Close()
		return fmt.Errorf("writing baseline: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing baseline: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing baseline: %w", err)
	}
	return nil
}

func oneLine(err error) string {
	s := []rune(err.Error())
	for i, r := range s {
		if r == '\n' {
			s[i] = ' '
		}
	}
	return string(s)
}

// Has says whether the baseline holds the problem with this fingerprint.
func (b *Baseline) Has(fingerprint string) bool {
	_, ok := b.byPrint[fingerprint]
	return ok
}

// maxNewMembers bounds how many new members a finding names.
const maxNewMembers = 10

// Apply marks each finding of r new or known, and lists as resolved the
// baseline findings that this scan no longer reports — only those of
// checks that ran to completion (passed or failed) here: a check that was
// skipped, errored or not selected proves nothing. Suppressed findings are
// not resolved either: the problem is still there. A grouped finding is
// known only when every member is: a second node going unreachable is new
// (NewMembers names it). Call r.Finalize after.
func (b *Baseline) Apply(r *doctor.Report) {
	present := map[string]bool{}
	for i := range r.Findings {
		f := &r.Findings[i]
		f.NewMembers = nil
		for _, p := range append([]string{f.Fingerprint}, f.MemberFingerprints...) {
			present[p] = true
		}
		known := b.Has(f.Fingerprint)
		if len(f.Members) > 0 {
			known = true
			for _, m := range f.Members {
				if !b.Has(f.MemberFingerprint(m)) {
					known = false
					if len(f.NewMembers) < maxNewMembers {
						f.NewMembers = append(f.NewMembers, m.String())
					}
				}
			}
		}
		if known {
			f.Baseline = doctor.BaselineKnown
		} else {
			f.Baseline = doctor.BaselineNew
		}
	}
	for _, f := range r.Suppressed {
		for _, p := range append([]string{f.Fingerprint}, f.MemberFingerprints...) {
			present[p] = true
		}
	}
	ran := map[string]bool{}
	for _, c := range r.Checks {
		ran[c.Name] = c.Status == doctor.StatusPassed || c.Status == doctor.StatusFailed
	}
	r.Resolved = nil
	for _, f := range b.Findings {
		if !ran[f.Check] || present[f.Fingerprint] || slices.ContainsFunc(f.MemberFingerprints, func(p string) bool { return present[p] }) {
			continue
		}
		f.Baseline, f.Suppression = "", nil
		r.Resolved = append(r.Resolved, f)
	}
}

// ForCluster is the baseline as it applies to the cluster named name in a
// fleet run: the findings recorded for that cluster, and those recorded
// without one (a single-cluster report used as every cluster's baseline).
func (b *Baseline) ForCluster(name string) *Baseline {
	if b == nil {
		return nil
	}
	out := &Baseline{Path: b.Path, byPrint: map[string]int{}}
	for _, f := range b.Findings {
		if f.Cluster != "" && f.Cluster != name {
			continue
		}
		f.Cluster = ""
		out.byPrint[f.Fingerprint] = len(out.Findings)
		for _, p := range f.MemberFingerprints {
			out.byPrint[p] = len(out.Findings)
		}
		out.Findings = append(out.Findings, f)
	}
	return out
}
