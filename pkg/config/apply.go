package config

import (
	"slices"
	"strings"
	"time"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// Annotations an object carries to silence checks on itself, with a reason.
const (
	IgnoreAnnotation       = "doctor.kubectl.io/ignore"
	IgnoreReasonAnnotation = "doctor.kubectl.io/ignore-reason"
)

// Enabled says whether check runs: false only when the config switches it off.
func (c *Config) Enabled(check string) bool {
	if c == nil {
		return true
	}
	cc, ok := c.Checks[check]
	return !ok || cc.Enabled == nil || *cc.Enabled
}

// Apply rewrites a scan's report by the config (cfg may be nil) and the
// objects' ignore annotations: severity overrides, then suppressions, which
// move findings to r.Suppressed with the reason, and the ignore entries
// past their expiry into r.ExpiredIgnores. Checks left without findings
// count as passed. Call r.Finalize afterwards.
func Apply(cfg *Config, r *doctor.Report, snap *snapshot.Snapshot, now time.Time) {
	if cfg != nil {
		for i := range r.Findings {
			if cc, ok := cfg.Checks[r.Findings[i].Check]; ok && cc.Severity != 0 {
				r.Findings[i].Severity = cc.Severity
			}
		}
	}
	var expired []doctor.ExpiredIgnore
	var active []*Ignore
	if cfg != nil {
		for i := range cfg.Ignore {
			ig := &cfg.Ignore[i]
			if ig.Expired(now) {
				expired = append(expired, doctor.ExpiredIgnore{Check: ig.Check, Namespace: ig.Namespace, Kind: ig.Kind,
					Name: ig.Name, Reason: ig.Reason, Expires: ig.Expires, Line: ig.Line})
				continue
			}
			active = append(active, ig)
		}
	}
	ann := newAnnotationIndex(snap)
	var kept []doctor.Finding
	remaining := map[string]int{}
	for _, f := range r.Findings {
		if s := suppression(&f, active, ann); s != nil {
			f.Suppression = s
			r.Suppressed = append(r.Suppressed, f)
			continue
		}
		if s, all := suppressMembers(&f, active, ann); all {
			f.Suppression = s
			r.Suppressed = append(r.Suppressed, f)
			continue
		}
		if cfg != nil {
			for j, ig := range cfg.Ignore {
				if ig.Expired(now) && ig.Matches(&f) {
					for k := range expired {
						if expired[k].Line == cfg.Ignore[j].Line {
							expired[k].Matches++
						}
					}
				}
			}
		}
		kept = append(kept, f)
		remaining[f.Check]++
	}
	r.Findings = kept
	r.ExpiredIgnores = append(r.ExpiredIgnores, expired...)
	for i := range r.Checks {
		c := &r.Checks[i]
		if c.Status == doctor.StatusFailed {
			c.Findings = remaining[c.Name]
			if c.Findings == 0 {
				c.Status = doctor.StatusPassed
			}
		}
	}
}

// suppression is why f is suppressed as a whole, nil when it is not: the
// object's own annotation first, then the first active ignore entry that
// matches. A grouped finding whose object is one of its members is judged
// member by member instead (suppressMembers): an ignore entry written for
// one node must not silence a problem that spreads to others.
func suppression(f *doctor.Finding, active []*Ignore, ann *annotationIndex) *doctor.Suppression {
	if slices.Contains(f.Members, f.Object) {
		return nil
	}
	return objectSuppression(f, active, ann)
}

// suppressMembers drops from a grouped finding the members that are
// suppressed, recounting it, and says whether every member was (the
// finding is then suppressed, with the first member's reason).
func suppressMembers(f *doctor.Finding, active []*Ignore, ann *annotationIndex) (*doctor.Suppression, bool) {
	if len(f.Members) == 0 || !slices.Contains(f.Members, f.Object) {
		return nil, false
	}
	var kept []doctor.ObjectRef
	var first *doctor.Suppression
	for _, m := range f.Members {
		g := *f
		g.Object = m
		if s := objectSuppression(&g, active, ann); s != nil {
			if first == nil {
				first = s
			}
			continue
		}
		kept = append(kept, m)
	}
	if len(kept) == 0 {
		return first, true
	}
	if len(kept) < len(f.Members) {
		if f.Count == len(f.Members) {
			f.Count = len(kept)
		}
		if !slices.Contains(kept, f.Object) {
			f.Object = kept[0]
			f.Fingerprint = f.ComputeFingerprint()
		}
		f.Members = kept
		f.ComputeMemberFingerprints()
		f.Examples = slices.DeleteFunc(f.Examples, func(e string) bool {
			return !slices.ContainsFunc(kept, func(m doctor.ObjectRef) bool { return e == m.Name || e == m.Namespace+"/"+m.Name })
		})
	}
	return nil, false
}

func objectSuppression(f *doctor.Finding, active []*Ignore, ann *annotationIndex) *doctor.Suppression {
	if a := ann.get(f.Object); a != nil {
		if checks, ok := a[IgnoreAnnotation]; ok && listed(checks, f.Check) {
			reason := strings.TrimSpace(a[IgnoreReasonAnnotation])
			if reason == "" {
				reason = "(no " + IgnoreReasonAnnotation + " annotation)"
			}
			return &doctor.Suppression{Source: "annotation", Reason: reason}
		}
	}
	for _, ig := range active {
		if ig.Matches(f) {
			return &doctor.Suppression{Source: "config", Reason: ig.Reason, Expires: ig.Expires, Line: ig.Line}
		}
	}
	return nil
}

// listed says whether the comma-separated annotation value names check
// (or "*", every check).
func listed(value, check string) bool {
	for _, s := range strings.Split(value, ",") {
		if s = strings.TrimSpace(s); s == check || s == "*" {
			return true
		}
	}
	return false
}

// annotationIndex finds the annotations of a finding's object among what
// the scan listed, indexing each resource once.
type annotationIndex struct {
	snap   *snapshot.Snapshot
	byKind map[snapshot.Resource]map[string]map[string]string
}

func newAnnotationIndex(snap *snapshot.Snapshot) *annotationIndex {
	return &annotationIndex{snap: snap, byKind: map[snapshot.Resource]map[string]map[string]string{}}
}

func (x *annotationIndex) get(o doctor.ObjectRef) map[string]string {
	if x.snap == nil {
		return nil
	}
	group, _, ok := strings.Cut(o.APIVersion, "/")
	if !ok {
		group = ""
	}
	r, ok := snapshot.ResourceFor(group, o.Kind)
	if !ok && o.APIVersion == "" { // a check that left the API version out
		for _, c := range snapshot.Readable() {
			if c.Kind == o.Kind {
				r, ok = c, true
			}
		}
	}
	if !ok {
		return nil
	}
	idx, ok := x.byKind[r]
	if !ok {
		idx = map[string]map[string]string{}
		for _, m := range x.snap.Metadata(r) {
			if a := m.GetAnnotations(); a != nil {
				if _, has := a[IgnoreAnnotation]; has {
					idx[m.GetNamespace()+"/"+m.GetName()] = a
				}
			}
		}
		x.byKind[r] = idx
	}
	return idx[o.Namespace+"/"+o.Name]
}

// CheckNames are the names of checks, for messages and validation.
func CheckNames(checks []*doctor.Check) []string {
	out := make([]string, 0, len(checks))
	for _, c := range checks {
		if !slices.Contains(out, c.Name) {
			out = append(out, c.Name)
		}
	}
	return out
}
