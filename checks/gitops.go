package checks

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// GitOpsSync reports what Argo CD and Flux say they cannot deliver: an
// Application whose manifests cannot be compared, whose last sync failed or
// has been running for half an hour, which is Degraded or Missing (naming
// the resources and Argo CD's health messages), or stuck deleting; a Flux
// Kustomization or HelmRelease that is not ready, in its controller's words,
// with the revision the cluster still runs, and the objects that only wait
// for it folded into its finding.
var GitOpsSync = &doctor.Check{
	Name:     "gitops-sync",
	Severity: doctor.Warning,
	Origin:   "everyday",
	Reads:    []snapshot.Resource{snapshot.ArgoApplications},
	Optional: []snapshot.Resource{snapshot.FluxKustomizations, snapshot.FluxHelmReleases},
	Fallback: []snapshot.Resource{snapshot.FluxKustomizations, snapshot.FluxHelmReleases},
	Run:      runGitOpsSync,
	Doc: `Argo CD Applications and Flux Kustomizations and HelmReleases that fail to deliver what Git holds

## Why it matters
With GitOps the change an engineer merged reaches the cluster only through
a controller: when Argo CD cannot render the manifests, a sync fails or
hangs on a hook, or Flux cannot build a Kustomization or upgrade a Helm
release, the cluster keeps running the previous revision while everyone
believes the fix is deployed. The controllers know why, and write it on
their objects; a ` + "`kubectl get pods`" + ` shows nothing wrong.

## How it is detected
From one LIST of ` + "`applications.argoproj.io`" + ` (and, when served and readable, of
` + "`kustomizations.kustomize.toolkit.fluxcd.io`" + ` v1 and ` + "`helmreleases.helm.toolkit.fluxcd.io`" + `
v2; a cluster without Argo CD or Flux answers 404 and the check passes with nothing to judge (its reason says so); Flux
releases older than 2.3, which serve HelmReleases only as v2beta1/v2beta2, are
not read live; captures of v2beta1/v2beta2 HelmReleases and v1beta2
Kustomizations are).
One finding per Application, its problems combined:
- an error condition (` + "`ComparisonError`" + `, ` + "`InvalidSpecError`" + `, ` + "`SyncError`" + `,
  ` + "`UnknownError`" + `) held for 10 minutes, quoted;
- the last sync ` + "`Failed`" + ` or in ` + "`Error`" + ` while the Application is not Synced, with
  its message and the resources that failed;
- a sync ` + "`Running`" + ` for 30 minutes (a hook that never finishes, a resource that
  never becomes healthy), with the hooks still running;
- health ` + "`Degraded`" + ` or ` + "`Missing`" + ` for 10 minutes, naming the resources in that state
  and Argo CD's health message for each;
- deletion pending for 10 minutes (the resources finalizer waits), with the
  ` + "`DeletionError`" + ` condition when there is one.
For Flux, ` + "`Ready=False`" + ` (or ` + "`Stalled=True`" + `: the controller gave up retrying) is one
finding when it holds for 10 minutes, when the revision attempted is not the
one applied (a HelmRelease's applied revision is its newest history entry),
or when another object waits for it (Flux restamps Ready at every attempt,
so its time is the last attempt's, not the failure's start); it is quoting the reason and message (and, when stalled,
the last failure), with the revision last applied when the one attempted
differs (the cluster still runs the old one). An object that is
not ready only because a dependency is not (` + "`DependencyNotReady`" + `) is folded
into that dependency's finding. A suspended object is an info when it is
also not ready, a warning when others wait for it. Young conditions,
OutOfSync Applications without an error (a sync not yet made: a new
resource is Missing until then), health while a sync runs or within 10
minutes of the last one (Argo CD before 2.14 does not date health) and
Progressing health are not judged. Argo CD 3 keeps each resource's health
out of the Application by default (` + "`resourceHealthSource: appTree`" + `): the finding
then says where to see it. A Degraded Application whose resource another
check of workload health reported folds into that finding; an app of apps
Degraded only because of child Applications folds into theirs. A
dependency cycle between Flux objects is one finding naming the cycle; a
Kustomization whose health check fails on a HelmRelease reported here folds
into that release's finding. A HelmRelease whose chart source fails
(` + "`ArtifactFailed`" + `) is pointed at its HelmChart and repositories.

## How to fix
Read the controller's own account (` + "`kubectl describe application`" + `, ` + "`argocd app get NAME`" + `,
` + "`flux get kustomizations -A`" + `), fix the cause in Git or in the cluster (a Degraded
Application is usually a workload another check of this report explains),
then sync or reconcile again: ` + "`argocd app sync NAME`" + `, ` + "`flux reconcile kustomization NAME --with-source`" + `.

## References
- https://argo-cd.readthedocs.io/en/stable/operator-manual/health/
- https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/
- https://argo-cd.readthedocs.io/en/stable/faq/
- https://fluxcd.io/flux/cheatsheets/troubleshooting/
- https://fluxcd.io/flux/components/kustomize/kustomizations/#dependencies`,
}

const (
	// gitopsGrace is how long a condition must hold before it is judged.
	gitopsGrace = 10 * time.Minute
	// syncHung is how long a sync may run.
	syncHung = 30 * time.Minute
)

func runGitOpsSync(p *doctor.Pass) error {
	apps := slices.Clone(p.Snapshot.ArgoApplications()) // sorted here, not in the shared snapshot
	sort.Slice(apps, func(i, j int) bool {
		if apps[i].Namespace != apps[j].Namespace {
			return apps[i].Namespace < apps[j].Namespace
		}
		return apps[i].Name < apps[j].Name
	})
	// An app of apps Degraded only because child Applications are is
	// folded into the children's findings: one finding per cause.
	found := map[string]*doctor.Finding{}
	var order []*doctor.Finding
	for i := range apps {
		if f := reportApplication(p, &apps[i]); f != nil {
			found[f.Object.Namespace+"/"+f.Object.Name] = f
			order = append(order, f)
		}
	}
	for _, f := range order {
		if len(f.Via) == 0 {
			continue
		}
		var child *doctor.Finding
		all := true
		for _, v := range f.Via {
			c := found[v.Namespace+"/"+v.Name]
			if v.Kind != "Application" || c == nil || c == f {
				all = false
				break
			}
			if child == nil {
				child = c
			}
		}
		if all && child != nil {
			child.Message += "; its parent application " + f.Object.Name + " is Degraded because of it"
			child.Members = append(child.Members, f.Object)
			f.Object = doctor.ObjectRef{} // folded
		}
	}
	for _, f := range order {
		if f.Object.Name != "" {
			p.Report(*f)
		}
	}
	ks := fluxFindings(p, "Kustomization", snapshot.FluxKustomizeGroup+"/v1", p.Snapshot.FluxKustomizations())
	hrs := fluxFindings(p, "HelmRelease", snapshot.FluxHelmGroup+"/v2", p.Snapshot.FluxHelmReleases())
	// A Kustomization whose health check fails only on a HelmRelease that
	// is itself reported waits for that release: one finding.
	byRelease := map[string]*doctor.Finding{}
	for _, f := range hrs {
		byRelease[f.Object.Namespace+"/"+f.Object.Name] = f
	}
	for _, f := range ks {
		if m := healthOfRelease.FindAllStringSubmatch(f.Message, -1); len(m) == 1 && strings.Contains(f.Message, "(HealthCheckFailed)") {
			if hr := byRelease[m[0][1]+"/"+m[0][2]]; hr != nil {
				hr.Members = append(append(hr.Members, f.Object), f.Members...)
				hr.Message += fmt.Sprintf("; kustomization %s/%s fails its health check on it", f.Object.Namespace, f.Object.Name)
				if len(f.Members) > 0 {
					hr.Message += fmt.Sprintf(" (and %s on that)", doctor.Plural(len(f.Members), "object waits", "objects wait"))
				}
				f.Object = doctor.ObjectRef{} // folded
			}
		}
	}
	for _, f := range append(ks, hrs...) {
		if f.Object.Name != "" {
			p.Report(*f)
		}
	}
	return nil
}

// held says whether a transition at t is at least d old; an unknown time
// counts as old enough (a capture is judged on what it says).
func held(now time.Time, t time.Time, d time.Duration) bool {
	return t.IsZero() || now.Sub(t) >= d
}

// reportApplication is the finding of one Application, or nil.
func reportApplication(p *doctor.Pass, a *snapshot.Application) *doctor.Finding {
	var parts []string
	var rem []doctor.Remediation
	var via []doctor.ObjectRef // the unhealthy resources, when health is the only problem
	ns := a.Namespace
	st := &a.Status
	if a.DeletionTimestamp != nil {
		if !held(p.Now, a.DeletionTimestamp.Time, gitopsGrace) {
			return nil
		}
		part := "has been deleting for " + human(p.Now.Sub(a.DeletionTimestamp.Time))
		if c := argoCondition(st.Conditions, "DeletionError"); c != nil {
			part += ": " + quote(c.Message)
		} else if len(a.Finalizers) > 0 {
			what := "what it manages"
			if n := len(st.Resources); n > 0 {
				what = "the " + doctor.Plural(n, "resource", "resources") + " it manages"
			}
			if strings.Contains(strings.Join(a.Finalizers, ","), "argocd.argoproj.io") {
				part += fmt.Sprintf(": finalizer %s waits for Argo CD to delete %s", strings.Join(a.Finalizers, ", "), what)
			} else {
				part += fmt.Sprintf(": finalizer %s holds it", strings.Join(a.Finalizers, ", "))
			}
		}
		parts = append(parts, part)
		rem = append(rem, doctor.Remediation{Text: "if Argo CD can no longer delete them (the destination cluster is gone), removing the finalizer deletes the Application and leaves its resources in place",
			Command: fmt.Sprintf(`kubectl patch application %s -n %s --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]'`, a.Name, ns)})
	}
	op := st.OperationState
	opFailed := op != nil && (op.Phase == "Failed" || op.Phase == "Error") && st.Sync.Status != "Synced"
	for _, c := range st.Conditions {
		if !strings.HasSuffix(c.Type, "Error") || c.Type == "DeletionError" {
			continue
		}
		if c.Type == "SyncError" && opFailed && (strings.Contains(op.Message, c.Message) || strings.Contains(c.Message, op.Message)) {
			continue // the failed sync below quotes it
		}
		var since time.Time
		if c.LastTransitionTime != nil {
			since = c.LastTransitionTime.Time
		}
		if !held(p.Now, since, gitopsGrace) {
			continue
		}
		what := map[string]string{"ComparisonError": "cannot render or compare its manifests", "InvalidSpecError": "has an invalid spec",
			"SyncError": "cannot sync"}[c.Type]
		if what == "" {
			what = "reports " + c.Type
		} else {
			what += " (" + c.Type + ")"
		}
		if !since.IsZero() {
			what += " for " + human(p.Now.Sub(since))
		}
		parts = append(parts, what+": "+quote(c.Message))
	}
	if op != nil {
		switch {
		case opFailed:
			part := "failed to sync"
			if op.FinishedAt != nil && !op.FinishedAt.IsZero() {
				part += " " + human(p.Now.Sub(op.FinishedAt.Time)) + " ago"
			}
			if op.RetryCount > 0 {
				part += fmt.Sprintf(" after %s", doctor.Plural(int(op.RetryCount), "retry", "retries"))
			}
			part += ": " + quote(op.Message)
			if failed := syncFailures(op); failed != "" {
				part += "; " + failed
			}
			parts = append(parts, part)
			if m := missingNamespaceRe.FindStringSubmatch(op.Message); m != nil {
				rem = append(rem, doctor.Remediation{Text: fmt.Sprintf("namespace %s does not exist: create it, or add CreateNamespace=true to the Application's spec.syncPolicy.syncOptions", m[1]),
					Command: "kubectl create namespace " + m[1]})
			}
		case op.Phase == "Running" && !op.StartedAt.IsZero() && p.Now.Sub(op.StartedAt.Time) >= syncHung:
			part := "has been syncing for " + human(p.Now.Sub(op.StartedAt.Time))
			if strings.TrimSpace(op.Message) != "" {
				part += ": " + quote(op.Message)
			}
			if hooks := runningHooks(op); hooks != "" {
				part += "; " + hooks
			}
			parts = append(parts, part)
			rem = append(rem, doctor.Remediation{Text: "once the cause is fixed, or to give up on this sync, terminate it", Command: fmt.Sprintf("argocd app terminate-op %s/%s", ns, a.Name)})
		}
	}
	if h := st.Health; (h.Status == "Degraded" || h.Status == "Missing") && a.DeletionTimestamp == nil && healthJudged(p, st) {
		var since time.Time
		if h.LastTransitionTime != nil {
			since = h.LastTransitionTime.Time
		}
		{
			part := "is " + h.Status
			if !since.IsZero() {
				part += " for " + human(p.Now.Sub(since))
			}
			bad, first := unhealthyResources(st.Resources, h.Status)
			for _, r := range st.Resources {
				if r.Health != nil && r.Health.Status == h.Status {
					via = append(via, doctor.ObjectRef{APIVersion: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name})
				}
			}
			switch {
			case bad != "":
				part += ": " + bad
			case h.Message != "":
				part += ": " + quote(h.Message)
			case st.ResourceHealthSource == "appTree":
				part += fmt.Sprintf(" (Argo CD keeps each resource's health outside the Application: argocd app get %s/%s names them)", ns, a.Name)
			default:
				part += fmt.Sprintf(" (argocd app get %s/%s names the resources)", ns, a.Name)
			}
			parts = append(parts, part)
			if first != nil && first.Namespace != "" {
				rem = append(rem, doctor.Remediation{Text: "look at the resource Argo CD finds " + strings.ToLower(h.Status) + " (another finding of this report may already explain it)",
					Command: fmt.Sprintf("kubectl describe %s %s -n %s", strings.ToLower(first.Kind), first.Name, first.Namespace)})
			}
		}
	}
	if len(parts) == 0 {
		return nil
	}
	rem = append([]doctor.Remediation{{Text: "read Argo CD's account of it: conditions, the last operation, each resource's sync and health",
		Command: fmt.Sprintf("kubectl describe application %s -n %s", a.Name, ns)}}, rem...)
	if a.DeletionTimestamp == nil {
		rem = append(rem, doctor.Remediation{Text: "after the fix, sync it again", Command: fmt.Sprintf("argocd app sync %s/%s", ns, a.Name)})
	}
	f := doctor.Finding{Object: doctor.ObjectRef{APIVersion: "argoproj.io/v1alpha1", Kind: "Application", Namespace: ns, Name: a.Name},
		Message: "application " + a.Name + " " + strings.Join(parts, "; "), Remediation: rem}
	if len(parts) == 1 && len(via) > 0 {
		// Degraded and nothing else: the resource's own finding, if a
		// check of workload health made one, is the cause and takes this
		// one in (never a finding that merely names the same object, such
		// as a missing change-cause).
		f.Via, f.ViaKeepsSeverity = via, true
		f.ViaChecks = append(slices.Clone(unavailableCauses), WorkloadPods.Name, ServiceEndpoints.Name, PVCPending.Name)
	}
	return &f
}

// healthJudged says whether an Application's Degraded or Missing health
// means something: not while a sync runs, not Missing for an OutOfSync
// Application (a new resource in Git is Missing until a sync creates it) or
// after a failed sync (its failure is the finding),
// and not within gitopsGrace of the last sync when Argo CD (before 2.14)
// does not date its health.
func healthJudged(p *doctor.Pass, st *snapshot.ApplicationStatus) bool {
	op := st.OperationState
	if op != nil && op.Phase == "Running" {
		return false
	}
	failed := op != nil && (op.Phase == "Failed" || op.Phase == "Error")
	if st.Health.Status == "Missing" && (st.Sync.Status == "OutOfSync" || failed) {
		// Not created yet: a sync nobody made, or one that failed (and
		// is reported as such).
		return false
	}
	if lt := st.Health.LastTransitionTime; lt != nil && !lt.IsZero() {
		return held(p.Now, lt.Time, gitopsGrace)
	}
	if op != nil && op.FinishedAt != nil && !op.FinishedAt.IsZero() {
		return held(p.Now, op.FinishedAt.Time, gitopsGrace)
	}
	return true
}

func argoCondition(conds []snapshot.ApplicationCondition, typ string) *snapshot.ApplicationCondition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// missingNamespaceRe finds the destination namespace a sync could not
// write to (`namespaces "payments-v2" not found`).
var missingNamespaceRe = regexp.MustCompile(`namespaces "([a-z0-9-]+)" not found`)

// syncFailures names the resources a failed sync could not apply, with
// their messages (at most three).
func syncFailures(op *snapshot.OperationState) string {
	if op.SyncResult == nil {
		return ""
	}
	var out []string
	n := 0
	for _, r := range op.SyncResult.Resources {
		if r.Status != "SyncFailed" && r.HookPhase != "Failed" && r.HookPhase != "Error" {
			continue
		}
		n++
		if len(out) < 3 {
			out = append(out, fmt.Sprintf("%s %s: %s", r.Kind, nsName(r.Namespace, r.Name), quote(r.Message)))
		}
	}
	if n == 0 {
		return ""
	}
	s := doctor.Plural(n, "resource", "resources") + " failed: " + strings.Join(out, "; ")
	if n > len(out) {
		s += fmt.Sprintf("; and %d more", n-len(out))
	}
	return s
}

// runningHooks names the hooks a running sync waits for.
func runningHooks(op *snapshot.OperationState) string {
	if op.SyncResult == nil {
		return ""
	}
	var out []string
	for _, r := range op.SyncResult.Resources {
		if r.HookPhase == "Running" || r.HookPhase == "Pending" {
			out = append(out, r.Kind+" "+nsName(r.Namespace, r.Name))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "waiting for hook " + strings.Join(doctor.Examples(out), ", ")
}

// unhealthyResources lists the managed resources in the given health, with
// Argo CD's message, and returns the first.
func unhealthyResources(rs []snapshot.ApplicationResource, status string) (string, *snapshot.ApplicationResource) {
	var out []string
	var first *snapshot.ApplicationResource
	n := 0
	for i := range rs {
		r := &rs[i]
		if r.Health == nil || r.Health.Status != status {
			continue
		}
		n++
		if first == nil {
			first = r
		}
		if len(out) < 3 {
			s := r.Kind + " " + nsName(r.Namespace, r.Name)
			if r.Health.Message != "" {
				s += " (" + quote(r.Health.Message) + ")"
			}
			out = append(out, s)
		}
	}
	if n == 0 {
		return "", nil
	}
	s := strings.Join(out, ", ")
	if n > len(out) {
		s += fmt.Sprintf(" and %d more", n-len(out))
	}
	return s, first
}

func nsName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// dependencyRe finds the dependency a Flux object waits for in its
// DependencyNotReady message ("dependency 'flux-system/infra' is not ready").
// ("dependency 'flux-system/infra' is not ready", "... revision is not up to
// date").
var dependencyRe = regexp.MustCompile(`dependency '([^'/]+)/([^']+)' (?:is not ready|revision is not up to date)`)

// healthOfRelease finds the HelmRelease a Kustomization's health check
// names ("[HelmRelease/cache/redis status: 'Failed']").
var healthOfRelease = regexp.MustCompile(`HelmRelease/([a-z0-9-]+)/([a-z0-9.-]+) status`)

// sourceOfRelease finds the HelmChart a HelmRelease waits for
// ("HelmChart 'flux-system/cache-redis' is not ready").
var sourceOfRelease = regexp.MustCompile(`HelmChart '([a-z0-9-]+)/([a-z0-9.-]+)'`)

// fluxFindings are the findings of the Flux objects of one kind that are not ready; those
// that only wait for a reported dependency are folded into its finding.
func fluxFindings(p *doctor.Pass, kind, apiVersion string, objs []*snapshot.FluxObject) []*doctor.Finding {
	sort.Slice(objs, func(i, j int) bool {
		if objs[i].Namespace != objs[j].Namespace {
			return objs[i].Namespace < objs[j].Namespace
		}
		return objs[i].Name < objs[j].Name
	})
	type entry struct {
		f         doctor.Finding
		waitFor   string // "ns/name" of the dependency it waits for
		pending   bool   // a fresh failure: reported only if others wait for it
		suspended bool
	}
	var entries []*entry
	var out []*doctor.Finding
	byKey := map[string]*entry{}
	lower := strings.ToLower(kind)
	for _, o := range objs {
		if o.DeletionTimestamp != nil {
			continue
		}
		ready := platformCondition(o.Status.Conditions, "Ready")
		stalled := platformCondition(o.Status.Conditions, "Stalled")
		bad := ready
		if stalled != nil && stalled.Status == "True" {
			bad = stalled
		} else if ready == nil || ready.Status != "False" {
			continue
		}
		// Flux marks Ready Unknown at each attempt, then False again:
		// Ready's transition time is the last attempt, not the start of
		// the failure. A revision it could not apply, or a failure held
		// for gitopsGrace, is judged; a fresh failure of the revision it
		// runs may be a blip (roots that others wait for are judged below).
		applied, attempted := o.Status.LastAppliedRevision, o.Status.LastAttemptedRevision
		if kind == "HelmRelease" && len(o.Status.History) > 0 {
			applied = o.Status.History[0].ChartVersion
		}
		stuck := applied != "" && attempted != "" && applied != attempted
		young := !held(p.Now, bad.LastTransitionTime.Time, gitopsGrace)
		ref := doctor.ObjectRef{APIVersion: apiVersion, Kind: kind, Namespace: o.Namespace, Name: o.Name}
		since := heldFor(p.Now, bad)
		if young {
			since = "" // the last attempt's time, not the failure's
		}
		msg := fmt.Sprintf("%s %s is not ready%s%s", lower, o.Name, since, quoteReason(bad.Reason, bad.Message))
		if bad == stalled {
			// Stalled: the controller gave up; Ready keeps the failure.
			msg = fmt.Sprintf("%s %s is stalled%s%s", lower, o.Name, since, quoteReason(bad.Reason, bad.Message))
			if ready != nil && ready.Status == "False" && ready.Message != "" && ready.Message != stalled.Message {
				msg += "; the last failure" + quoteReason(ready.Reason, ready.Message)
			}
			msg += "; it no longer retries on its own"
		}
		switch {
		case stuck && bad.Reason == "HealthCheckFailed":
			// Flux applied it; it records a revision as applied only
			// once its health checks pass.
			msg += fmt.Sprintf("; revision %s is applied but not healthy (the last healthy one: %s)", attempted, applied)
		case stuck:
			msg += fmt.Sprintf("; the cluster still runs revision %s, not %s", applied, attempted)
		}
		e := &entry{f: doctor.Finding{Object: ref, Message: msg}, pending: young && !stuck && bad != stalled}
		verb := map[string]string{"Kustomization": "kustomization", "HelmRelease": "helmrelease"}[kind]
		e.f.Remediation = []doctor.Remediation{
			{Text: "read the controller's account of it", Command: fmt.Sprintf("kubectl describe %s %s -n %s", lower, o.Name, o.Namespace)},
			{Text: "after the fix, reconcile it now instead of at its next interval", Command: fmt.Sprintf("flux reconcile %s %s -n %s --with-source", verb, o.Name, o.Namespace)}}
		if m := sourceOfRelease.FindStringSubmatch(bad.Message); m != nil && bad.Reason == "ArtifactFailed" {
			e.f.Remediation = append([]doctor.Remediation{{Text: "the chart's source fails: its HelmChart and HelmRepository (or Git/OCI repository) say why (a wrong URL, credentials, a chart version that does not exist)",
				Command: fmt.Sprintf("kubectl describe helmchart %s -n %s; kubectl get helmrepositories,gitrepositories,ocirepositories -n %s", m[2], m[1], m[1])}}, e.f.Remediation...)
		}
		if bad == stalled && kind == "HelmRelease" {
			e.f.Remediation[1] = doctor.Remediation{Text: "after the fix, force a new install or upgrade (a stalled release waits for a change otherwise)",
				Command: fmt.Sprintf("flux reconcile helmrelease %s -n %s --force", o.Name, o.Namespace)}
		}
		if o.Spec.Suspend {
			e.suspended = true
			e.f.Severity = doctor.Info
			e.f.Message += "; it is suspended, so nothing is reconciled"
			e.f.Remediation[1] = doctor.Remediation{Text: "resume it when it should deliver again", Command: fmt.Sprintf("flux resume %s %s -n %s", verb, o.Name, o.Namespace)}
		}
		if bad.Reason == "DependencyNotReady" {
			if m := dependencyRe.FindStringSubmatch(bad.Message); m != nil {
				e.waitFor = m[1] + "/" + m[2]
			}
		}
		entries = append(entries, e)
		byKey[o.Namespace+"/"+o.Name] = e
	}
	// Fold each waiting object into the first reported object up its
	// dependency chain; objects on a cycle wait for each other forever
	// and are reported as the cycle.
	for _, e := range entries {
		root, seen, chain := e, map[*entry]bool{e: true}, []string{e.f.Object.Namespace + "/" + e.f.Object.Name}
		cycle := false
		for root.waitFor != "" {
			next := byKey[root.waitFor]
			if next == nil {
				break
			}
			if seen[next] {
				cycle = next == e
				break
			}
			seen[next] = true
			chain = append(chain, next.f.Object.Namespace+"/"+next.f.Object.Name)
			root = next
		}
		if cycle {
			e.f.Message = fmt.Sprintf("%s %s waits for itself through a dependency cycle (%s -> %s): none of them is ever applied", lower, e.f.Object.Name, strings.Join(chain, " -> "), chain[0])
			e.f.Remediation = append([]doctor.Remediation{{Text: "break the cycle: remove one of the dependsOn entries", Command: fmt.Sprintf("kubectl get %s -A -o custom-columns=NAME:.metadata.name,DEPENDS_ON:.spec.dependsOn", lower)}}, e.f.Remediation...)
			e.waitFor, e.pending = "", false
			continue
		}
		if root == e || root.waitFor != "" && byKey[root.waitFor] != nil {
			continue
		}
		root.f.Members = append(root.f.Members, e.f.Object)
		e.f.Object = doctor.ObjectRef{} // folded
	}
	for _, e := range entries {
		if e.f.Object.Name == "" || e.pending && len(e.f.Members) == 0 {
			continue
		}
		if e.suspended && len(e.f.Members) > 0 {
			e.f.Severity = 0 // others wait for it: not a quiet pause any more
		}
		if n := len(e.f.Members); n > 0 {
			names := make([]string, 0, n)
			for _, m := range e.f.Members {
				names = append(names, m.Namespace+"/"+m.Name)
			}
			e.f.Message += fmt.Sprintf("; %s %s for it: %s", doctor.Plural(n, lower, lower+"s"), map[bool]string{true: "waits", false: "wait"}[n == 1], examplesEllipsis(names))
			e.f.Count, e.f.Examples = n, doctor.Examples(names)
		}
		out = append(out, &e.f)
	}
	return out
}
