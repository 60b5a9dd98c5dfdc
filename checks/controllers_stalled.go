package checks

import (
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// ControllersStalled finds the objects the controller-manager's controllers
// have not acted on: when kube-controller-manager is down (or lost its
// leader lease), nothing fails loudly, every workload simply stops changing.
var ControllersStalled = &doctor.Check{
	Name:     "controllers-stalled",
	Severity: doctor.Critical,
	Origin:   "everyday",
	Reads:    []snapshot.Resource{snapshot.Deployments},
	Optional: []snapshot.Resource{snapshot.ReplicaSets, snapshot.StatefulSets, snapshot.DaemonSets, snapshot.Jobs, snapshot.Pods},
	Run:      runControllersStalled,
	Doc: `Controllers that do not act: objects the controller-manager has not observed

## Why it matters
Deployments, ReplicaSets, StatefulSets, DaemonSets and Jobs change only
through their controllers in kube-controller-manager. When it is down, has
lost its leader lease, or cannot reach the API server, nothing reports an
error: a new image is applied and never rolls out, a scale-up never adds a
pod, a Job never starts, a new Deployment never gets a ReplicaSet, and
every status keeps saying what was true before. Each object looks merely
slow; together they say that no controller runs.

## How it is detected
From the objects' own bookkeeping: a controller records the spec generation
it has acted on in ` + "`status.observedGeneration`" + `, within seconds of a change. An
object whose ` + "`metadata.generation`" + ` is ahead of it has a change no controller
took in; one created more than five minutes ago with no observed generation
(a Job with no ` + "`startTime`" + ` and no condition) was never seen at all. One lagging
object may be a change made a second before the scan (a ` + "`helm upgrade`" + ` moves
several), and objects with no status at all are what a capture that drops
status holds: the finding needs both, one never observed for five minutes
and one lagging behind a status its controller did write, and lists them all
in one finding, dated by the oldest never-seen one. Objects being deleted are
left out. When kubeadm's ` + "`kube-controller-manager`" + ` static pod is in
the snapshot and not ready, the finding names it. Paused and suspended
objects are left out.

## How to fix
See whether kube-controller-manager runs and holds its lease: on kubeadm,
its static pod in kube-system (` + "`kubectl -n kube-system logs kube-controller-manager-<node>`" + `,
its manifest in ` + "`/etc/kubernetes/manifests`" + ` on the control-plane node); the lease's
` + "`renewTime`" + ` says when a leader last renewed it. On a managed control plane,
open a case with the provider.

## References
- https://kubernetes.io/docs/concepts/architecture/controller/
- https://kubernetes.io/docs/reference/command-line-tools-reference/kube-controller-manager/
- https://kubernetes.io/docs/concepts/architecture/leases/#leader-election`,
}

// neverSeenAfter is how long an object may exist before its controller has
// acted on it at least once.
const neverSeenAfter = 5 * time.Minute

type stalledObject struct {
	ref   doctor.ObjectRef
	words string
	since time.Time // when the controller should have acted, zero when unknown
	never bool      // created and never observed
}

func runControllersStalled(p *doctor.Pass) error {
	var out []stalledObject
	lag := func(kind string, m *metav1.ObjectMeta, observed int64, controller string) {
		if m.DeletionTimestamp != nil {
			return // deleting: its generation moved with the deletion, and controllers let it go
		}
		ref := doctor.ObjectRef{APIVersion: "apps/v1", Kind: kind, Namespace: m.Namespace, Name: m.Name}
		name := strings.ToLower(kind) + " " + m.Namespace + "/" + m.Name
		switch {
		case observed == 0 && !m.CreationTimestamp.IsZero() && p.Now.Sub(m.CreationTimestamp.Time) >= neverSeenAfter:
			out = append(out, stalledObject{ref: ref, since: m.CreationTimestamp.Time, never: true,
				words: fmt.Sprintf("%s, created %s ago, was never observed by the %s controller", name, human(p.Now.Sub(m.CreationTimestamp.Time)), controller)})
		case observed > 0 && m.Generation > observed:
			out = append(out, stalledObject{ref: ref,
				words: fmt.Sprintf("%s is at generation %d, its %s controller observed %d", name, m.Generation, controller, observed)})
		}
	}
	deps := p.Snapshot.Deployments()
	for i := range deps {
		d := &deps[i]
		if !d.Spec.Paused {
			lag("Deployment", &d.ObjectMeta, d.Status.ObservedGeneration, "deployment")
		}
	}
	if p.Snapshot.Err(snapshot.ReplicaSets) == nil {
		rss := p.Snapshot.ReplicaSets()
		for i := range rss {
			lag("ReplicaSet", &rss[i].ObjectMeta, rss[i].Status.ObservedGeneration, "replicaset")
		}
	}
	if p.Snapshot.Err(snapshot.StatefulSets) == nil {
		sts := p.Snapshot.StatefulSets()
		for i := range sts {
			lag("StatefulSet", &sts[i].ObjectMeta, sts[i].Status.ObservedGeneration, "statefulset")
		}
	}
	if p.Snapshot.Err(snapshot.DaemonSets) == nil {
		dss := p.Snapshot.DaemonSets()
		for i := range dss {
			lag("DaemonSet", &dss[i].ObjectMeta, dss[i].Status.ObservedGeneration, "daemonset")
		}
	}
	if p.Snapshot.Err(snapshot.Jobs) == nil {
		jobs := p.Snapshot.Jobs()
		for i := range jobs {
			j := &jobs[i]
			// The job controller stamps startTime (or a condition) as soon
			// as it sees a Job that is not suspended.
			if j.Spec.Suspend != nil && *j.Spec.Suspend || j.Status.StartTime != nil || len(j.Status.Conditions) > 0 || j.CreationTimestamp.IsZero() ||
				j.Status.Active+j.Status.Succeeded+j.Status.Failed > 0 || p.Now.Sub(j.CreationTimestamp.Time) < neverSeenAfter {
				continue
			}
			out = append(out, stalledObject{ref: kube.Ref("batch/v1", "Job", j), since: j.CreationTimestamp.Time, never: true,
				words: fmt.Sprintf("job %s/%s, created %s ago, was never started by the job controller", j.Namespace, j.Name, human(p.Now.Sub(j.CreationTimestamp.Time)))})
		}
	}
	lagging, never := 0, 0
	for _, o := range out {
		if o.never {
			never++
		} else {
			lagging++
		}
	}
	if lagging == 0 || never == 0 {
		// A lagging generation alone may be a change applied a second
		// before the scan (a helm upgrade moves several at once); objects
		// without any status alone are what a capture that dropped status
		// (or a pasted manifest) holds. Together, one never observed for
		// five minutes and one behind a status its controller wrote, they
		// say the controllers stopped.
		return nil
	}
	// Never-seen objects first, the oldest first: they date the outage.
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].never != out[j].never {
			return out[i].never
		}
		if !out[i].since.Equal(out[j].since) {
			return out[i].since.Before(out[j].since)
		}
		return out[i].ref.String() < out[j].ref.String()
	})
	var oldest time.Time
	var lines, members []string
	var refs []doctor.ObjectRef
	for _, o := range out {
		lines = append(lines, o.words)
		members = append(members, o.ref.Namespace+"/"+o.ref.Name)
		refs = append(refs, o.ref)
		if !o.since.IsZero() && (oldest.IsZero() || o.since.Before(oldest)) {
			oldest = o.since
		}
	}
	const most = 5
	shown := lines[:min(len(lines), most)]
	msg := fmt.Sprintf("%s not acted on by their controllers: %s", doctor.Plural(len(out), "object is", "objects are"), strings.Join(shown, "; "))
	if len(lines) > most {
		msg += fmt.Sprintf("; and %d more", len(lines)-most)
	}
	if !oldest.IsZero() {
		msg += fmt.Sprintf(" (stalled for at least %s)", human(p.Now.Sub(oldest)))
	}
	msg += ": kube-controller-manager looks down or without its leader lease, so no rollout, scale or Job moves"
	rem := []doctor.Remediation{{Text: "see whether kube-controller-manager runs (kubeadm: a static pod in kube-system; a managed control plane does not list it)",
		Command: "kubectl get pods -n kube-system -l component=kube-controller-manager"},
		{Text: "see when a leader last renewed its lease", Command: "kubectl get lease kube-controller-manager -n kube-system -o jsonpath='{.spec.holderIdentity} {.spec.renewTime}'"}}
	object := refs[0]
	if p.Snapshot.Err(snapshot.Pods) == nil {
		if down := unreadyComponent(p, "kube-controller-manager"); len(down) > 0 {
			// The outage's own object: workload-pods' finding on this
			// pod folds into this one.
			object = doctor.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: metav1.NamespaceSystem, Name: down[0]}
			msg += fmt.Sprintf("; its pod %s is not ready", strings.Join(doctor.Examples(down), ", "))
			rem = append([]doctor.Remediation{{Text: "read why it fails (a static pod: fix its manifest on the control-plane node)",
				Command: fmt.Sprintf("kubectl logs -n kube-system %s --previous", down[0])}}, rem...)
		}
	}
	p.Report(doctor.Finding{Object: object, Message: msg, Count: len(out), Examples: doctor.Examples(members), Members: refs, Remediation: rem})
	return nil
}
