package doctor

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// Check statuses in a report.
const (
	StatusPassed  = "passed"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
	StatusError   = "error"
	// StatusDisabled is a check the user or the config turned off
	// (--skip, --check naming others, enabled: false): listed so that a
	// report never hides what it did not look at.
	StatusDisabled = "disabled"
)

// Coverage of a check that ran (CheckResult.Coverage).
const (
	// CoverageFull: every read the check declared was available.
	CoverageFull = "full"
	// CoveragePartial: the check ran, but an optional read that enriches
	// its findings was missing (CheckResult.Missing says which and why).
	CoveragePartial = "partial"
	// CoverageNone: the check did not run.
	CoverageNone = "none"
)

// Gap is one read a check declared that the snapshot does not hold.
type Gap struct {
	// Read is the resource, as snapshot.Resource.String prints it.
	Read string `json:"read"`
	// Cause is snapshot.CauseAbsent, CauseDenied, CauseUnserved or
	// CauseFailed.
	Cause  string `json:"cause"`
	Reason string `json:"reason"`
	// Optional is true for a read that only enriches the check's findings:
	// the check ran without it.
	Optional bool `json:"optional,omitempty"`
}

// Run runs the checks concurrently against one snapshot. A check whose reads
// failed is skipped (forbidden, not served) or errored with the reason; a
// check that returns an error or panics becomes an error entry. Nothing a
// check does can abort the scan. The report is sorted deterministically.
func Run(ctx context.Context, snap *snapshot.Snapshot, checks []*Check, now time.Time) *Report {
	results := make([]CheckResult, len(checks))
	findings := make([][]Finding, len(checks))
	gaps := make([][]Gap, len(checks))
	for i, c := range checks {
		gaps[i] = Gaps(snap, c)
	}

	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, c := range checks {
		if res, ok := blocked(snap, c); ok {
			results[i] = res
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				results[i] = CheckResult{Name: c.Name, Status: StatusError, Reason: "scan cancelled: " + ctx.Err().Error()}
				return
			}
			results[i], findings[i] = runOne(ctx, c, snap, now)
			for j := range findings[i] {
				if findings[i][j].Partial == "" {
					findings[i][j].Partial = ownerChainNote(snap, &findings[i][j])
				}
			}
		}()
	}
	wg.Wait()
	for i := range results {
		results[i].Missing = gaps[i]
		switch {
		case results[i].Status == StatusSkipped || results[i].Status == StatusError && !results[i].ran:
			results[i].Coverage = CoverageNone
		case len(gaps[i]) > 0:
			results[i].Coverage = CoveragePartial
		default:
			results[i].Coverage = CoverageFull
		}
	}

	r := &Report{APIVersion: APIVersion, Kind: "Report", Checks: results}
	for _, fs := range findings {
		r.Findings = append(r.Findings, fs...)
	}
	r.Findings, r.OutsideNamespace = scopeNamespace(Fold(r.Findings), snap)
	r.sort()
	r.disambiguateFingerprints()
	r.tally()
	r.assess()
	return r
}

// assess decides whether the report is complete: a gate must never pass a
// scan that checked nothing, nor one whose failing reads hid findings.
func (r *Report) assess() {
	r.Incomplete = nil
	for _, c := range r.Checks {
		if c.Status == StatusError {
			r.Incomplete = append(r.Incomplete, Missing{Check: c.Name, Reason: c.Reason})
		}
	}
	for _, u := range r.Unreadable {
		r.Incomplete = append(r.Incomplete, Missing{Reason: "unreadable input: " + u})
	}
	if r.Summary.Passed+r.Summary.Failed == 0 {
		r.Incomplete = append(r.Incomplete, Missing{Reason: fmt.Sprintf("no check could run: %d of %d skipped, %d errored",
			r.Summary.Skipped, len(r.Checks)-r.Summary.Disabled, r.Summary.Errors)})
	}
	r.Complete = len(r.Incomplete) == 0
}

// SetUnreadable records the input files that could not be read
// (--keep-going) and reassesses the report: it is incomplete.
func (r *Report) SetUnreadable(files []string) {
	r.Unreadable = files
	r.assess()
}

// IncompleteSummary is one line naming what an incomplete scan misses and
// why: checks grouped by reason, "pod-storm, pending-taints: timed out
// reading pods after 18s; ...". It is "" for a complete scan.
func (r *Report) IncompleteSummary() string {
	if r.Complete {
		return ""
	}
	var reasons, general []string
	byReason := map[string][]string{}
	for _, m := range r.Incomplete {
		if m.Check == "" {
			general = append(general, m.Reason)
			continue
		}
		if _, ok := byReason[m.Reason]; !ok {
			reasons = append(reasons, m.Reason)
		}
		byReason[m.Reason] = append(byReason[m.Reason], m.Check)
	}
	var parts []string
	for _, reason := range reasons {
		parts = append(parts, strings.Join(byReason[reason], ", ")+": "+reason)
	}
	parts = append(general, parts...)
	errored := len(r.Incomplete) - len(general)
	head := fmt.Sprintf("incomplete scan: %s of %d could not run", Plural(errored, "check", "checks"), len(r.Checks)-r.Summary.Disabled)
	if errored == 0 {
		head = "incomplete scan"
	}
	const most = 3
	if len(parts) > most {
		parts = append(parts[:most], fmt.Sprintf("and %d more reasons in the report", len(parts)-most))
	}
	return head + " (" + strings.Join(parts, "; ") + ")"
}

// Gaps lists the reads c declared that snap does not hold, required ones
// first, each with why. A read both required and optional is required.
func Gaps(snap *snapshot.Snapshot, c *Check) []Gap {
	var out []Gap
	seen := map[snapshot.Resource]bool{}
	add := func(rs []snapshot.Resource, optional bool) {
		for _, r := range snapshot.Plan(rs) {
			if seen[r] {
				continue
			}
			seen[r] = true
			if err := snap.Err(r); err != nil {
				out = append(out, Gap{Read: r.String(), Cause: snapshot.CauseOf(err), Reason: err.Error(), Optional: optional})
			}
		}
	}
	add(c.Reads, false)
	add(c.Optional, true)
	return out
}

// blocked says whether a check cannot run because a resource it reads could
// not be listed, and why.
func blocked(snap *snapshot.Snapshot, c *Check) (CheckResult, bool) {
	var skip, fail []string
	for _, res := range c.Reads {
		err := snap.Err(res)
		if err == nil {
			continue
		}
		if snapshot.IsSkippable(err) {
			skip = appendUnique(skip, err.Error())
		} else {
			fail = appendUnique(fail, err.Error())
		}
	}
	switch {
	case len(fail) > 0:
		return CheckResult{Name: c.Name, Status: StatusError, Reason: strings.Join(fail, "; ")}, true
	case len(skip) > 0 && !slices.ContainsFunc(c.Fallback, func(r snapshot.Resource) bool { return snap.Err(r) == nil }):
		return CheckResult{Name: c.Name, Status: StatusSkipped, Reason: strings.Join(skip, "; ")}, true
	}
	return CheckResult{}, false
}

// notInstalled is why a check had nothing to judge: it reads add-on kinds
// (of the resources it needs, or falls back on) and the cluster serves none
// of them. "" when it serves one, or the check reads no add-on kind.
func notInstalled(snap *snapshot.Snapshot, c *Check) string {
	var kinds []string
	for _, r := range slices.Concat(c.Reads, c.Fallback) {
		if !r.Extension() || slices.Contains(kinds, r.String()) {
			continue
		}
		if !snap.NotServed(r) {
			return ""
		}
		kinds = append(kinds, r.String())
	}
	if len(kinds) == 0 {
		return ""
	}
	// Not served at the version read: not installed, or (an older
	// release) served at another version this check does not read.
	return "nothing to judge: the cluster does not serve " + strings.Join(kinds, ", ") + " at the version read (not installed, or an older release)"
}

func appendUnique(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func runOne(ctx context.Context, c *Check, snap *snapshot.Snapshot, now time.Time) (res CheckResult, fs []Finding) {
	res.Name = c.Name
	defer func() {
		if v := recover(); v != nil {
			res, fs = CheckResult{Name: c.Name, Status: StatusError, Reason: fmt.Sprintf("check panicked: %v", v), ran: true}, nil
		}
	}()
	p := &Pass{Check: c, Snapshot: snap, Now: now, Context: ctx}
	if err := c.Run(p); err != nil {
		return CheckResult{Name: c.Name, Status: StatusError, Reason: err.Error(), ran: true}, nil
	}
	res.Status = StatusPassed
	if r := notInstalled(snap, c); r != "" {
		// It passed on nothing: say so rather than claim it judged.
		res.Reason = r
	}
	if len(p.findings) > 0 {
		res.Status = StatusFailed
	}
	res.Findings = len(p.findings)
	return res, p.findings
}

// APIVersion is the version of the JSON/YAML report contract.
const APIVersion = "doctor.kubectl.io/v1alpha1"

// Report is the result of a scan, and the one document every printer renders.
// Its JSON field names are a contract for CI; add fields, never rename them.
type Report struct {
	APIVersion string        `json:"apiVersion"`
	Kind       string        `json:"kind"`
	Cluster    Cluster       `json:"cluster"`
	Summary    Summary       `json:"summary"`
	Checks     []CheckResult `json:"checks"`
	Findings   []Finding     `json:"findings"`
	// Complete is false when a selected check errored (a read failed or
	// timed out, the check broke) or when no check could run at all; a
	// check skipped because the user may not read what it needs leaves the
	// scan complete as long as another check ran. Incomplete says why.
	Complete   bool      `json:"complete"`
	Incomplete []Missing `json:"incomplete,omitempty"`
	// Unreadable lists the input files (--from with --keep-going) that
	// did not parse and were passed over, each "FILE (resource): error":
	// each makes the scan incomplete, since anything may be in it.
	Unreadable []string `json:"unreadable,omitempty"`
	// Requests counts the reads the scan sent to the API server, a retried
	// read once; Retries counts the extra requests retries took.
	Requests int `json:"requests"`
	Retries  int `json:"retries,omitempty"`
	// Duration is the wall time of the scan.
	Duration Duration `json:"duration"`
	// CI workflow (ci.go): the config file used, findings suppressed by it
	// or by annotations (only with --show-suppressed), baseline findings no
	// longer reported, and ignore entries past their expiry date.
	// Error is why the scan could not run at all (FailedReport): the
	// kubeconfig, the cluster or the --from input. No check ran.
	Error string `json:"error,omitempty"`
	// GeneratedAt is when the report was made (RFC 3339, UTC) and
	// DoctorVersion by which kubectl-doctor: a report kept or served
	// (serve's /report) says how old it is and what judged it.
	GeneratedAt   string `json:"generatedAt,omitempty"`
	DoctorVersion string `json:"doctorVersion,omitempty"`
	// OutsideNamespace counts, in a scan of one namespace (-n), the
	// findings on cluster-scoped objects that namespace does not depend on,
	// left out of the report (a scan without -n shows them).
	OutsideNamespace int `json:"outsideNamespace,omitempty"`

	Config         string          `json:"config,omitempty"`
	Suppressed     []Finding       `json:"suppressed,omitempty"`
	Resolved       []Finding       `json:"resolved,omitempty"`
	ExpiredIgnores []ExpiredIgnore `json:"expiredIgnores,omitempty"`
}

// Missing is one reason a scan is incomplete: a check that could not run,
// or (with no Check) that no check ran at all.
type Missing struct {
	Check  string `json:"check,omitempty"`
	Reason string `json:"reason"`
}

// Cluster identifies what was scanned.
type Cluster struct {
	Server  string `json:"server"`
	Version string `json:"version"`
	// Context is the kubeconfig context scanned (live scans).
	Context   string `json:"context,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// AgesAsOf is set for a capture that does not say when it was taken:
	// ages are measured from its newest timestamp (RFC 3339), so every age
	// in the report is a lower bound.
	AgesAsOf string `json:"agesAsOf,omitempty"`
}

// Summary counts findings by severity and checks by status.
type Summary struct {
	Critical int `json:"critical"`
	Warning  int `json:"warning"`
	Info     int `json:"info"`
	Passed   int `json:"passed"`
	Failed   int `json:"failed"`
	Skipped  int `json:"skipped"`
	Errors   int `json:"errors"`
	// Partial counts checks that ran without some optional read, Disabled
	// those turned off by flags or the config.
	Partial  int `json:"partial,omitempty"`
	Disabled int `json:"disabled,omitempty"`
	// Suppressed counts findings silenced by the config or an annotation;
	// New, Known and Resolved compare with --baseline (0 without one).
	Suppressed int `json:"suppressed"`
	New        int `json:"new,omitempty"`
	Known      int `json:"known,omitempty"`
	Resolved   int `json:"resolved,omitempty"`
}

// CheckResult is the outcome of one check.
type CheckResult struct {
	Name     string `json:"name"`
	Status   string `json:"status"`
	Reason   string `json:"reason,omitempty"`
	Findings int    `json:"findings"`
	// Coverage is "full", "partial" (ran without an optional read: see
	// Missing) or "none" (skipped, errored before running, disabled).
	Coverage string `json:"coverage,omitempty"`
	// Missing lists the declared reads the scan did not have, and why.
	Missing []Gap `json:"missing,omitempty"`

	ran bool
}

// Partial says whether the check ran without some of its optional reads.
func (c *CheckResult) Partial() bool { return c.Coverage == CoveragePartial }

// Duration marshals as a Go duration string ("412ms").
type Duration time.Duration

// MarshalText renders the duration rounded to milliseconds.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(time.Duration(d).Round(time.Millisecond).String()), nil
}

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

func (r *Report) sort() {
	sort.SliceStable(r.Findings, func(i, j int) bool {
		a, b := r.Findings[i], r.Findings[j]
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		if a.Check != b.Check {
			return a.Check < b.Check
		}
		if a.Object.Namespace != b.Object.Namespace {
			return a.Object.Namespace < b.Object.Namespace
		}
		if a.Object.Name != b.Object.Name {
			return a.Object.Name < b.Object.Name
		}
		if a.Object.Kind != b.Object.Kind {
			return a.Object.Kind < b.Object.Kind
		}
		return a.Message < b.Message
	})
	sort.SliceStable(r.Checks, func(i, j int) bool { return r.Checks[i].Name < r.Checks[j].Name })
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
}

func (r *Report) tally() {
	r.Summary = Summary{}
	for _, f := range r.Findings {
		switch f.Severity {
		case Critical:
			r.Summary.Critical++
		case Warning:
			r.Summary.Warning++
		default:
			r.Summary.Info++
		}
	}
	for _, c := range r.Checks {
		switch c.Status {
		case StatusPassed:
			r.Summary.Passed++
		case StatusFailed:
			r.Summary.Failed++
		case StatusSkipped:
			r.Summary.Skipped++
		case StatusDisabled:
			r.Summary.Disabled++
		default:
			r.Summary.Errors++
		}
		if c.Coverage == CoveragePartial {
			r.Summary.Partial++
		}
	}
}

// Disable adds checks that were selected out (by --check/--skip or the
// config) to the report as disabled, with why, so that every output says
// what the scan did not look at.
func (r *Report) Disable(names []string, reason string) {
	for _, n := range names {
		if slices.ContainsFunc(r.Checks, func(c CheckResult) bool { return c.Name == n }) {
			continue
		}
		r.Checks = append(r.Checks, CheckResult{Name: n, Status: StatusDisabled, Reason: reason, Coverage: CoverageNone})
	}
	r.Finalize()
}

// Worst is the highest severity among the findings, 0 when there are none;
// findings known from a baseline do not count.
func (r *Report) Worst() Severity {
	var w Severity
	for _, f := range r.Findings {
		if f.Baseline == BaselineKnown {
			continue // in the baseline: known, does not fail the gate
		}
		if f.Severity > w {
			w = f.Severity
		}
	}
	return w
}

// Fails says whether the report should fail a CI run gated at threshold.
func (r *Report) Fails(threshold Severity) bool {
	return threshold != Never && r.Worst() >= threshold
}

// FailedReport is the report of a scan that could not start (exit 2), so
// that CI still gets the format it asked for, saying why: an incomplete
// report with no check and the error.
func FailedReport(reason string) *Report {
	r := &Report{APIVersion: APIVersion, Kind: "Report", Checks: []CheckResult{}, Findings: []Finding{}, Error: reason}
	r.Incomplete = []Missing{{Reason: "the scan could not run: " + reason}}
	return r
}

// ErrNoChecks is returned when --check/--skip leave nothing to run.
var ErrNoChecks = errors.New("no checks selected")

// Fold applies the explains/via relation after every check has run: a
// finding whose Via names the object of another check's finding is folded
// into that finding (listed in its Explains, its severity raised to the
// higher of the two) instead of being reported twice; a grouped finding is
// found through its Object and each of its Members. Only findings that
// are not folded themselves take others in: a chain of symptoms is followed
// to its root cause, which takes in every finding along it.
// Input order is kept otherwise.
func Fold(fs []Finding) []Finding {
	// Objects match by kind, namespace and name: checks may spell the
	// apiVersion differently (a ref from an event, from a list).
	key := func(o ObjectRef) ObjectRef { o.APIVersion = ""; return o }
	// A grouped finding stands for each of its Members too (three NotReady
	// nodes are one finding on the first): a Via naming any of them finds it.
	byObject := map[ObjectRef][]int{}
	for i, f := range fs {
		byObject[key(f.Object)] = append(byObject[key(f.Object)], i)
		for _, m := range f.Members {
			if k := key(m); k != key(f.Object) && !slices.Contains(byObject[k], i) {
				byObject[k] = append(byObject[k], i)
			}
		}
	}
	target := func(i int) []int {
		var out []int
		for _, v := range fs[i].Via {
			for _, j := range byObject[key(v)] {
				if len(fs[i].ViaChecks) > 0 && !slices.Contains(fs[i].ViaChecks, fs[j].Check) ||
					fs[i].ViaCause != "" && fs[j].Cause != fs[i].ViaCause {
					continue
				}
				if j != i && fs[j].Check != fs[i].Check && !slices.Contains(out, j) {
					out = append(out, j)
				}
			}
		}
		return out
	}
	symptom := make([]bool, len(fs))
	for i := range fs {
		symptom[i] = len(target(i)) > 0
	}
	// root follows a chain of symptoms to a finding that is not one: a
	// Service down because its pods are, whose pods are down because
	// their node is, ends at the node's finding. -1 when the chain loops.
	var root func(j, depth int) int
	root = func(j, depth int) int {
		if !symptom[j] {
			return j
		}
		if depth > 8 {
			return -1
		}
		for _, k := range target(j) {
			if r := root(k, depth+1); r >= 0 {
				return r
			}
		}
		return -1
	}
	folded := make([]bool, len(fs))
	for i := range fs {
		if !symptom[i] {
			continue
		}
		for _, t := range target(i) {
			j := root(t, 0)
			if j < 0 || j == i || fs[j].Check == fs[i].Check {
				continue
			}
			g := &fs[j]
			g.Explains = append(g.Explains, fmt.Sprintf("%s %s: %s", fs[i].Check, fs[i].Object, fs[i].Message))
			if !fs[i].ViaKeepsSeverity && fs[i].Severity > g.Severity {
				g.Severity = fs[i].Severity
			}
			folded[i] = true
			break
		}
	}
	out := fs[:0:0]
	for i, f := range fs {
		if !folded[i] {
			out = append(out, f)
		}
	}
	return out
}

// byName says whether the object of resource r named name passes in, and
// whether that is known: an unread resource keeps its findings (unknown).
func byName[T any](snap *snapshot.Snapshot, r snapshot.Resource, items []T, name string, nameOf func(*T) string, in func(*T) bool) (keep, known bool) {
	if snap.Err(r) != nil {
		return true, false
	}
	for i := range items {
		if nameOf(&items[i]) == name {
			return in(&items[i]), true
		}
	}
	return false, true
}

// scopeNamespace keeps, in a scan of one namespace (-n), the findings on
// that namespace's objects and on the cluster-scoped objects it depends on:
// the nodes that run or were meant to run its pods, its Namespace object,
// the PersistentVolumes its claims bind, the ClusterRoleBindings of its
// ServiceAccounts, and any cluster-scoped object whose finding explains
// one of this scan's (an APIService behind its HPAs, a webhook that blocks
// its pods). Checks that judge webhooks, ClusterIssuers and
// ClusterSecretStores scope them themselves. Anything else cluster-wide (a
// node outage elsewhere, the API server's metrics) is not this namespace's
// problem and must not fail its CI gate: it is left out and counted, and
// the report says so. Cluster-wide scans keep everything.
func scopeNamespace(fs []Finding, snap *snapshot.Snapshot) ([]Finding, int) {
	ns := snap.Namespace
	if ns == "" {
		return fs, 0
	}
	nodes := map[string]bool{}
	podsKnown := snap.Err(snapshot.Pods) == nil
	for _, p := range snap.Pods() {
		if p.Spec.NodeName != "" {
			nodes[p.Spec.NodeName] = true
		}
		if n := p.Status.NominatedNodeName; n != "" {
			nodes[n] = true
		}
	}
	related := func(o ObjectRef) (keep, known bool) {
		switch o.Kind {
		case "Node":
			return nodes[o.Name], podsKnown
		case "Namespace":
			return o.Name == ns, true
		case "PersistentVolume":
			return byName(snap, snapshot.PersistentVolumes, snap.PersistentVolumes(), o.Name,
				func(pv *corev1.PersistentVolume) string { return pv.Name },
				func(pv *corev1.PersistentVolume) bool {
					return pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.Namespace == ns
				})
		case "ClusterRoleBinding":
			return byName(snap, snapshot.ClusterRoleBindings, snap.ClusterRoleBindings(), o.Name,
				func(b *rbacv1.ClusterRoleBinding) string { return b.Name },
				func(b *rbacv1.ClusterRoleBinding) bool {
					return slices.ContainsFunc(b.Subjects, func(sub rbacv1.Subject) bool {
						return sub.Namespace == ns || sub.Kind == "Group" && sub.Name == "system:serviceaccounts:"+ns
					})
				})
		case "APIService":
			// One served from this namespace is this namespace's.
			return byName(snap, snapshot.APIServices, snap.APIServices(), o.Name,
				func(a *apiregistrationv1.APIService) string { return a.Name },
				func(a *apiregistrationv1.APIService) bool {
					return a.Spec.Service != nil && a.Spec.Service.Namespace == ns
				})
		case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "ClusterIssuer", "ClusterSecretStore", "GatewayClass":
			// Their checks report them under -n only when this
			// namespace uses them.
			return true, true
		}
		return false, true
	}
	out := fs[:0:0]
	outside := 0
	for _, f := range fs {
		keep := f.Object.Namespace != "" || len(f.Explains) > 0
		if !keep {
			k, known := related(f.Object)
			keep = k || !known
		}
		for _, m := range f.Members {
			if keep {
				break
			}
			if m.Namespace == ns {
				keep = true
			} else if m.Namespace == "" {
				k, _ := related(m)
				keep = k
			}
		}
		if keep {
			out = append(out, f)
		} else {
			outside++
		}
	}
	return out, outside
}
