package doctor

import (
	"fmt"
	"strings"

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

func metaIndex(snap *snapshot.Snapshot, r snapshot.Resource) map[string]metav1.Object {
	return snapshot.Memo(snap, metaIndexKey{r}, func() map[string]metav1.Object {
		out := map[string]metav1.Object{}
		for _, m := range snap.Metadata(r) {
			out[m.GetNamespace()+"/"+m.GetName()] = m
		}
		return out
	})
}

// CoverageLine is the last line of a text report: the verdict and what it
// rests on. "No problems found by 20 checks; 2 not run: job-backlog
// (absent: cronjobs.batch); 1 ran without some data: workload-pods
// (absent: controllerrevisions.apps)". A report never ends in a bare
// all-clear.
func (r *Report) CoverageLine() string {
	var ran, partial, notRun, disabled []string
	var partialWhy, notRunWhy []string
	for _, c := range r.Checks {
		switch {
		case c.Status == StatusDisabled:
			disabled = append(disabled, c.Name)
		case c.Status == StatusSkipped || c.Status == StatusError && c.Coverage == CoverageNone:
			notRun = append(notRun, c.Name)
			notRunWhy = append(notRunWhy, c.Name+" ("+shortWhy(c.Missing, c.Reason)+")")
		default:
			ran = append(ran, c.Name)
			if c.Coverage == CoveragePartial {
				partial = append(partial, c.Name)
				partialWhy = append(partialWhy, c.Name+" ("+shortWhy(c.Missing, "")+")")
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
	case len(r.Findings) == 0:
		verdict = "No problems found"
	case open == 0:
		verdict = fmt.Sprintf("No new problems (%s known from the baseline) found", Plural(len(r.Findings), "problem", "problems"))
	case r.Summary.New > 0:
		verdict = fmt.Sprintf("%s (%d new) found", Plural(len(r.Findings), "problem", "problems"), r.Summary.New)
	default:
		verdict = Plural(len(r.Findings), "problem", "problems") + " found"
	}
	line := fmt.Sprintf("%s by %s", verdict, Plural(len(ran), "check", "checks"))
	if len(notRun)+len(partial)+len(disabled) == 0 {
		return line + "; every check ran with all its data."
	}
	const most = 4
	if len(notRun) > 0 {
		line += fmt.Sprintf("; %d not run: %s", len(notRun), firstN(notRunWhy, most))
	}
	if len(partial) > 0 {
		line += fmt.Sprintf("; %d ran without some data: %s", len(partial), firstN(partialWhy, most))
	}
	if len(disabled) > 0 {
		line += fmt.Sprintf("; %d disabled: %s", len(disabled), firstN(disabled, most))
	}
	return line + "."
}

func firstN(list []string, n int) string {
	if len(list) > n {
		return strings.Join(list[:n], ", ") + fmt.Sprintf(", +%d more", len(list)-n)
	}
	return strings.Join(list, ", ")
}

// shortWhy groups gaps by cause: "absent: cronjobs.batch, jobs.batch".
func shortWhy(gaps []Gap, fallback string) string {
	var causes []string
	byCause := map[string][]string{}
	for _, g := range gaps {
		if _, ok := byCause[g.Cause]; !ok {
			causes = append(causes, g.Cause)
		}
		byCause[g.Cause] = append(byCause[g.Cause], g.Read)
	}
	if len(causes) == 0 {
		return fallback
	}
	var parts []string
	for _, c := range causes {
		parts = append(parts, c+": "+firstN(byCause[c], 3))
	}
	return strings.Join(parts, "; ")
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
