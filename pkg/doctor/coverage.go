package doctor

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// ownerChainNote says where the owner chain of f's object stops because a
// read is missing: the object itself was not listed (a pod's ReplicaSet,
// named from the pod's ownerReference, when ReplicaSets are not in the
// input), or its controller's kind was not. "" when the chain is whole or
// the object has no owner to follow.
func ownerChainNote(snap *snapshot.Snapshot, f *Finding) string {
	if f.Object.Kind == "" || f.Object.Name == "" {
		return ""
	}
	r, ok := snapshot.ForKind(f.Object.Kind)
	if !ok || !ownable[f.Object.Kind] {
		return ""
	}
	at := fmt.Sprintf("%s %s", f.Object.Kind, qualified(f.Object.Namespace, f.Object.Name))
	if err := snap.Err(r); err != nil {
		return fmt.Sprintf("owner chain stops at %s: %s", at, err)
	}
	m := metaIndex(snap, r)[f.Object.Namespace+"/"+f.Object.Name]
	if m == nil {
		return ""
	}
	c := metav1.GetControllerOfNoCopy(m)
	if c == nil {
		return ""
	}
	or, ok := snapshot.ForKind(c.Kind)
	if !ok {
		return ""
	}
	if err := snap.Err(or); err != nil {
		return fmt.Sprintf("owner chain stops at %s (controlled by %s %s): %s", at, c.Kind, c.Name, err)
	}
	return ""
}

// ownable are the kinds a finding may name whose controller a check would
// have reported instead, had it been listed.
var ownable = map[string]bool{"Pod": true, "ReplicaSet": true, "Job": true, "ControllerRevision": true}

func qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

type metaIndexKey struct{ r snapshot.Resource }

// metaIndex indexes the objects of r whose controller's kind could not be
// read: the only ones whose chain stops there (an object not in it has a
// whole chain, or no controller). Usually none: 30,000 pods need no index.
func metaIndex(snap *snapshot.Snapshot, r snapshot.Resource) map[string]metav1.Object {
	return snapshot.Memo(snap, metaIndexKey{r}, func() map[string]metav1.Object {
		out := map[string]metav1.Object{}
		failed := map[string]bool{}
		for _, o := range snap.Objects(r) {
			m, err := meta.Accessor(o)
			if err != nil {
				continue
			}
			c := metav1.GetControllerOfNoCopy(m)
			if c == nil {
				continue
			}
			bad, seen := failed[c.Kind]
			if !seen {
				or, ok := snapshot.ForKind(c.Kind)
				bad = ok && snap.Err(or) != nil
				failed[c.Kind] = bad
			}
			if bad {
				out[m.GetNamespace()+"/"+m.GetName()] = m
			}
		}
		return out
	})
}

// CoverageLine is the last line of a text report: the verdict and what it
// rests on. "No problems found by 20 checks; 2 not run, the input lacks
// their data: job-backlog, hpa-scaling; 1 ran without some data the input
// lacks: workload-pods." A report never ends in a bare all-clear; which
// reads are missing is in the lines above and in CheckResult.Missing.
func (r *Report) CoverageLine() string {
	var ran int
	var disabled []string
	notRun, partial := map[string][]string{}, map[string][]string{}
	var notRunCauses, partialCauses []string
	add := func(m map[string][]string, order *[]string, cause, name string) {
		if _, ok := m[cause]; !ok {
			*order = append(*order, cause)
		}
		m[cause] = append(m[cause], name)
	}
	for _, c := range r.Checks {
		switch {
		case c.Status == StatusDisabled:
			disabled = append(disabled, c.Name)
		case c.Status == StatusSkipped || c.Status == StatusError && c.Coverage == CoverageNone:
			cause := snapshot.CauseFailed
			for _, g := range c.Missing {
				if !g.Optional {
					cause = g.Cause
					break
				}
			}
			if c.Status == StatusError {
				cause = snapshot.CauseFailed
			}
			add(notRun, &notRunCauses, cause, c.Name)
		default:
			ran++
			if c.Coverage == CoveragePartial && len(c.Missing) > 0 {
				add(partial, &partialCauses, c.Missing[0].Cause, c.Name)
			}
		}
	}
	open := 0
	for _, f := range r.Findings {
		if f.Baseline != BaselineKnown {
			open++
		}
	}
	var verdict string
	switch {
	case r.Error != "":
		return "No check ran: " + r.Error
	case ran == 0 && len(r.Findings) == 0:
		// Never an all-clear when nothing was checked.
		verdict = "Nothing checked"
	case len(r.Findings) == 0:
		verdict = "No problems found"
	case open == 0:
		verdict = fmt.Sprintf("No new problems (%s known from the baseline) found", Plural(len(r.Findings), "problem", "problems"))
	case r.Summary.New > 0:
		verdict = fmt.Sprintf("%s (%d new) found", Plural(len(r.Findings), "problem", "problems"), r.Summary.New)
	default:
		verdict = Plural(len(r.Findings), "problem", "problems") + " found"
	}
	line := fmt.Sprintf("%s by %s", verdict, Plural(ran, "check", "checks"))
	if ran == 0 && len(r.Findings) == 0 {
		line = verdict
	}
	if n := r.OutsideNamespace; n > 0 {
		line += fmt.Sprintf(" (and %s on cluster-wide objects this namespace does not depend on, left out: scan without -n to see %s)",
			Plural(n, "problem", "problems"), map[bool]string{true: "it", false: "them"}[n == 1])
	}
	var idle []string
	for _, c := range r.Checks {
		if c.Status == StatusPassed && strings.HasPrefix(c.Reason, "nothing to judge") {
			idle = append(idle, c.Name)
		}
	}
	if len(idle) > 0 {
		// They passed on nothing: the add-on they judge is not installed.
		line += fmt.Sprintf("; %d had nothing to judge, the cluster does not serve what %s: %s", len(idle), map[bool]string{true: "it reads", false: "they read"}[len(idle) == 1], firstN(idle, 4))
	}
	if len(notRun)+len(partial)+len(disabled) == 0 {
		if len(idle) > 0 && len(idle) == ran {
			return line + "."
		}
		if len(idle) > 0 {
			return line + "; every other check ran with all its data."
		}
		return line + "; every check ran with all its data."
	}
	const most = 4
	for _, cause := range notRunCauses {
		names := notRun[cause]
		line += fmt.Sprintf("; %d not run, %s: %s", len(names), causePhrase(cause, "their data"), firstN(names, most))
	}
	for _, cause := range partialCauses {
		names := partial[cause]
		line += fmt.Sprintf("; %d ran without some data, %s: %s", len(names), causePhrase(cause, "it"), firstN(names, most))
	}
	if len(disabled) > 0 {
		line += fmt.Sprintf("; %d disabled", len(disabled))
	}
	return line + "."
}

// causePhrase says why reads are missing, for the coverage line.
func causePhrase(cause, what string) string {
	switch cause {
	case snapshot.CauseAbsent:
		return "the input lacks " + what
	case snapshot.CauseDenied:
		return "reads denied"
	case snapshot.CauseUnserved:
		return "API not served by the cluster"
	}
	return "reads failed or the check errored"
}

func firstN(list []string, n int) string {
	if len(list) > n {
		return strings.Join(list[:n], ", ") + fmt.Sprintf(", +%d more", len(list)-n)
	}
	return strings.Join(list, ", ")
}

// Coverage causes for exit codes: whether any selected check did not run
// or ran without some data because the input lacked it, because reads were
// denied, or because reads failed.
func (r *Report) GapCauses() map[string]bool {
	out := map[string]bool{}
	for _, c := range r.Checks {
		if c.Status == StatusDisabled {
			continue
		}
		for _, g := range c.Missing {
			out[g.Cause] = true
		}
		if c.Status == StatusError {
			out[snapshot.CauseFailed] = true
		}
	}
	return out
}
