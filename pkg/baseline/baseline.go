// Package baseline compares a scan with an earlier report, so that a team
// can adopt kubectl-doctor as a CI gate on a cluster that already has
// problems: the known ones are listed but do not fail the gate, new ones
// do, and the ones fixed since are listed as resolved. Findings are matched
// by fingerprint (check, object, cause), never by message.
package baseline

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// Baseline is the findings of an earlier report, by fingerprint.
type Baseline struct {
	Path     string
	Findings []doctor.Finding
	byPrint  map[string]int
}

// Load reads a report written by `kubectl doctor -o json` (or -o yaml).
// Reports from before fingerprints existed get theirs computed the same way.
func Load(path string) (*Baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading baseline: %w", err)
	}
	return Parse(data, path)
}

// Parse reads a baseline from the content of the file at path.
func Parse(data []byte, path string) (*Baseline, error) {
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
		return nil, fmt.Errorf("baseline %s: not a kubectl-doctor report (want apiVersion %s and kind Report, as written by kubectl doctor -o json)", path, doctor.APIVersion)
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
	for i, f := range b.Findings {
		b.byPrint[f.Fingerprint] = i
	}
	return b, nil
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

// Apply marks each finding of r new or known, and lists as resolved the
// baseline findings that this scan no longer reports — only those of
// checks that ran to completion (passed or failed) here: a check that was
// skipped, errored or not selected proves nothing. Suppressed findings are
// not resolved either: the problem is still there. Call r.Finalize after.
func (b *Baseline) Apply(r *doctor.Report) {
	present := map[string]bool{}
	for i := range r.Findings {
		f := &r.Findings[i]
		present[f.Fingerprint] = true
		if b.Has(f.Fingerprint) {
			f.Baseline = doctor.BaselineKnown
		} else {
			f.Baseline = doctor.BaselineNew
		}
	}
	for _, f := range r.Suppressed {
		present[f.Fingerprint] = true
	}
	ran := map[string]bool{}
	for _, c := range r.Checks {
		ran[c.Name] = c.Status == doctor.StatusPassed || c.Status == doctor.StatusFailed
	}
	r.Resolved = nil
	for _, f := range b.Findings {
		if present[f.Fingerprint] || !ran[f.Check] {
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
		out.Findings = append(out.Findings, f)
	}
	return out
}
