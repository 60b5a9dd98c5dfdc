package doctor

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
)

// FleetKind is the kind of a report over several clusters.
const FleetKind = "FleetReport"

// FleetReport is one run over several clusters (kubeconfig contexts or
// --from captures): each cluster's own verdict, and every finding of every
// cluster in one list, each carrying its cluster's name. Its JSON field
// names are a contract like Report's.
type FleetReport struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Summary adds up the clusters' summaries.
	Summary Summary `json:"summary"`
	// Complete is true only when every cluster's scan is complete.
	Complete bool            `json:"complete"`
	Clusters []FleetCluster  `json:"clusters"`
	Findings []Finding       `json:"findings"`
	Duration Duration        `json:"duration"`
	Config   string          `json:"config,omitempty"`
	Resolved []Finding       `json:"resolved,omitempty"`
	Supp     []Finding       `json:"suppressed,omitempty"`
	Expired  []ExpiredIgnore `json:"expiredIgnores,omitempty"`
	// Reports are the clusters' own reports, in Clusters order (nil for a
	// cluster whose scan could not run); the printers render them.
	Reports []*Report `json:"-"`
}

// FleetCluster is one cluster of a fleet run: its name, what was scanned,
// and its verdict. Error is set when its scan could not run at all (the
// cluster was unreachable, the context broken, the capture unreadable); such
// a cluster is incomplete and has no checks.
type FleetCluster struct {
	Name       string        `json:"name"`
	Cluster    Cluster       `json:"cluster"`
	Error      string        `json:"error,omitempty"`
	Complete   bool          `json:"complete"`
	Incomplete []Missing     `json:"incomplete,omitempty"`
	Summary    Summary       `json:"summary"`
	Checks     []CheckResult `json:"checks"`
	Requests   int           `json:"requests"`
	Retries    int           `json:"retries,omitempty"`
	Duration   Duration      `json:"duration"`
}

// ClusterResult is what one cluster's scan gave: a report, or the error
// that kept the scan from running.
type ClusterResult struct {
	Name   string
	Report *Report
	Err    error
}

// Merge builds the fleet report of results, sorted by cluster name. Each
// finding (reported, suppressed, resolved) gets its cluster's name; the
// per-cluster reports keep their own findings for the printers.
func Merge(results []ClusterResult, total Duration) *FleetReport {
	rs := append([]ClusterResult(nil), results...)
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Name < rs[j].Name })
	f := &FleetReport{APIVersion: APIVersion, Kind: FleetKind, Complete: true, Duration: total, Findings: []Finding{}, Clusters: []FleetCluster{}}
	for _, res := range rs {
		c := FleetCluster{Name: res.Name, Checks: []CheckResult{}}
		r := res.Report
		if r == nil {
			msg := "the scan did not run"
			if res.Err != nil {
				msg = res.Err.Error()
			}
			c.Error = msg
			c.Incomplete = []Missing{{Reason: msg}}
			f.Complete = false
			f.Clusters = append(f.Clusters, c)
			f.Reports = append(f.Reports, nil)
			continue
		}
		for _, list := range [][]Finding{r.Findings, r.Suppressed, r.Resolved} {
			for i := range list {
				list[i].Cluster = res.Name
			}
		}
		c.Cluster, c.Complete, c.Incomplete, c.Summary, c.Checks = r.Cluster, r.Complete, r.Incomplete, r.Summary, r.Checks
		c.Requests, c.Retries, c.Duration = r.Requests, r.Retries, r.Duration
		if !r.Complete {
			f.Complete = false
		}
		f.Findings = append(f.Findings, r.Findings...)
		f.Supp = append(f.Supp, r.Suppressed...)
		f.Resolved = append(f.Resolved, r.Resolved...)
		f.Expired = append(f.Expired, r.ExpiredIgnores...)
		if r.Config != "" {
			f.Config = r.Config
		}
		addSummary(&f.Summary, r.Summary)
		f.Clusters = append(f.Clusters, c)
		f.Reports = append(f.Reports, r)
	}
	// Findings: by severity first, then cluster, as each report sorts.
	sort.SliceStable(f.Findings, func(i, j int) bool {
		a, b := f.Findings[i], f.Findings[j]
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		return a.Cluster < b.Cluster
	})
	return f
}

func addSummary(dst *Summary, s Summary) {
	dst.Critical += s.Critical
	dst.Warning += s.Warning
	dst.Info += s.Info
	dst.Passed += s.Passed
	dst.Failed += s.Failed
	dst.Skipped += s.Skipped
	dst.Errors += s.Errors
	dst.Suppressed += s.Suppressed
	dst.New += s.New
	dst.Known += s.Known
	dst.Resolved += s.Resolved
}

// Fails says whether any cluster's report fails a gate at threshold.
func (f *FleetReport) Fails(threshold Severity) bool {
	for _, r := range f.Reports {
		if r != nil && r.Fails(threshold) {
			return true
		}
	}
	return false
}

// IncompleteSummary is one line naming the clusters whose scan is
// incomplete, each with why; "" when every cluster is complete.
func (f *FleetReport) IncompleteSummary() string {
	var parts []string
	for i, c := range f.Clusters {
		switch {
		case c.Error != "":
			parts = append(parts, fmt.Sprintf("%s: scan failed: %s", c.Name, c.Error))
		case !c.Complete && f.Reports[i] != nil:
			parts = append(parts, c.Name+": "+f.Reports[i].IncompleteSummary())
		}
	}
	if len(parts) == 0 {
		return ""
	}
	s := fmt.Sprintf("%s of %d incomplete (", Plural(len(parts), "cluster", "clusters"), len(f.Clusters))
	for i, p := range parts {
		if i > 0 {
			s += "; "
		}
		s += p
	}
	return s + ")"
}

// FleetFingerprint is the identity of a finding across a fleet: its
// fingerprint within its cluster, and the cluster's name, so the same
// problem on the same object in two clusters is two problems.
func FleetFingerprint(f *Finding) string {
	if f.Cluster == "" {
		return f.Fingerprint
	}
	h := sha256.Sum256([]byte(FingerprintVersion + "\x00cluster\x00" + f.Cluster + "\x00" + f.Fingerprint))
	return hex.EncodeToString(h[:16])
}
