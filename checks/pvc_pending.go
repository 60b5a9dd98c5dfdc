package checks

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// PVCPending finds claims that stay Pending (or are Lost), says why from
// their StorageClass and the provisioner's events, and names the pods that
// wait on them.
var PVCPending = &doctor.Check{
	Name:     "pvc-pending",
	Severity: doctor.Warning,
	Origin:   "everyday",
	// Claims are what it judges; the pods that mount them, classes and
	// nodes enrich the verdict, and a user limited to a namespace may read
	// neither classes nor nodes (both are cluster-scoped).
	Reads:    []snapshot.Resource{snapshot.PersistentVolumeClaims},
	Optional: append(append([]snapshot.Resource{}, kube.WorkloadReads...), kube.WarningEventReads, snapshot.PersistentVolumes, snapshot.StorageClasses, snapshot.Nodes, snapshot.Pods),
	Run:      runPVCPending,
	Doc: `PersistentVolumeClaims stuck Pending, Lost, deleting or resizing, with the cause and the pods that wait on or hold them

## Why it matters
A pod whose claim is not bound never starts: the scheduler reports
` + "`pod has unbound immediate PersistentVolumeClaims`" + ` and the StatefulSet, which
creates its pods one by one, stops at the first. The cause sits elsewhere —
a StorageClass that was never created (a typo, a chart written for another
cloud), no default class for claims that name none, a CSI provisioner that
fails or is not running, or a ` + "`WaitForFirstConsumer`" + ` claim whose pod cannot be
scheduled for reasons of its own — and ` + "`kubectl get pvc`" + ` shows only ` + "`Pending`" + `.

## How it is detected
From one LIST each of claims, StorageClasses, pods and nodes (and the
workloads, to name owners, and PersistentVolumes, for Lost claims), and the
scan's one list of Warning events (` + "`ProvisioningFailed`, `ClaimLost`, `ClaimMisbound`" + `). A claim is
considered when its phase is Pending or Lost. Its class is resolved as the
API server does: the named class, else the default class
(` + "`storageclass.kubernetes.io/is-default-class`" + `). The cause, most definitive
first: the claim is Lost; the named class does not
exist; no class is named and there is no default class; the newest
ProvisioningFailed event's message; a claim of class ` + "`\"\"`" + ` waiting for a
pre-created volume; an external provisioner that has not acted for five
minutes (the PersistentVolume controller hands the claim over by setting
its ` + "`volume.kubernetes.io/storage-provisioner`" + ` annotation; its
` + "`ExternalProvisioning`" + ` events are Normal and not read). A ` + "`WaitForFirstConsumer`" + ` claim binds only once a pod using it is
scheduled: with no such pod it is left alone (nothing waits and nothing is
provisioned, so there is nothing to fix yet); when its pod is unschedulable
the claim is an info finding that links to that pod's cause (computed as the
unschedulable check does), which is the finding to act on. Claims pending
for less than five minutes with no verdict are left alone. The pods that
wait are the non-terminal pods whose volumes name the claim; claims are
grouped by those pods' top owner (a StatefulSet's claims together) and
cause.

A claim asking for more than its capacity (an expansion) is reported when
the resizer says it fails (a ` + "`ControllerResizeError`" + ` or ` + "`NodeResizeError`" + `
condition, else its newest ` + "`VolumeResizeFailed`" + ` or ` + "`FileSystemResizeFailed`" + ` event,
quoted; a kubelet's error, NodeResizeError or FileSystemResizeFailed, points at
the node and its device, a controller's at the class and the CSI resizer), or
when its file system resize has waited 30 minutes
(` + "`FileSystemResizePending`" + `): the kubelet finishes it when a pod mounts the
volume again, so the fix restarts the pod that mounts it.

StorageClasses and nodes are cluster-scoped, and a user limited to a
namespace often may read neither: the check then still reports what the
claims and events say by themselves (Lost claims, the provisioner's error,
an external provisioner that never acted, a class of ` + "`\"\"`" + `, claims deleted
while mounted), leaves out what needs the classes (a missing class, no
default, binding on first use) instead of guessing it, and, without nodes,
quotes the scheduler's message for a claim's unschedulable pod.

A claim is Lost when the PersistentVolume it was bound to
(` + "`spec.volumeName`" + `) is gone, or is bound to another claim: the finding names
that volume and says which (when PersistentVolumes could be read; otherwise
it says they could not). It is dated by the newest ` + "`ClaimLost`" + ` or
` + "`ClaimMisbound`" + ` event about the claim and carries no duration without one:
the claim's age is not how long it has been lost. No provisioner is
involved.

A claim deleted while pods still mount it lingers Terminating
(` + "`kubernetes.io/pvc-protection`" + `): after 10 minutes it is reported with the pods
that hold it and its volume's reclaim policy (with Delete, the data goes once
the last pod stops), since the next pod that needs it is refused and never
starts.

## How to fix
Create the missing StorageClass or recreate the claim with an existing one
(` + "`storageClassName`" + ` cannot be changed; a StatefulSet's
` + "`volumeClaimTemplates`" + ` neither: recreate it with ` + "`--cascade=orphan`" + `); mark one
class default; read the provisioner's error in ` + "`kubectl describe pvc`" + ` and
fix its credentials, quota or parameters; make sure the CSI driver's
controller runs. For a Lost claim, restore the volume from a backup or
snapshot as a new PersistentVolume and recreate the claim bound to it, or
recreate the claim empty: the data of a deleted volume is not recoverable
from Kubernetes.

## References
- https://kubernetes.io/docs/concepts/storage/persistent-volumes/#lifecycle-of-a-volume-and-claim
- https://kubernetes.io/docs/concepts/storage/storage-classes/#volume-binding-mode
- https://kubernetes.io/docs/tasks/administer-cluster/change-default-storage-class/
- https://kubernetes.io/docs/concepts/storage/dynamic-provisioning/`,
}

type pvcGroup struct {
	owner   *kube.Workload
	ns      string
	claims  []*corev1.PersistentVolumeClaim
	pods    map[string]bool
	cause   string
	sev     doctor.Severity
	start   time.Time
	class   string             // the claim's class name, "" when none
	problem *kube.ClassProblem // the class problem, if the cause is one
	podRef  string             // for WaitForFirstConsumer: the consumer pod
	lost    *kube.LostClaim    // for a Lost claim: its volume and what dates the loss
}

func runPVCPending(p *doctor.Pass) error {
	st := kube.StorageOf(p.Snapshot)
	own := kube.OwnersOf(p.Snapshot)
	consumers := map[string][]*corev1.Pod{}
	for _, pod := range p.Snapshot.Pods() {
		if kube.Terminal(pod) || pod.DeletionTimestamp != nil {
			continue
		}
		for _, c := range kube.ClaimNames(&pod.Spec) {
			consumers[pod.Namespace+"/"+c] = append(consumers[pod.Namespace+"/"+c], pod)
		}
	}
	failed := kube.NewestEvents(kube.WarningEventsOf(p.Snapshot).Reason("ProvisioningFailed"), "PersistentVolumeClaim")

	reportDeletingClaims(p, consumers, own)
	reportResizes(p, consumers)
	classesRead := p.Snapshot.Err(snapshot.StorageClasses) == nil
	groups := map[string]*pvcGroup{}
	pvcs := p.Snapshot.PersistentVolumeClaims()
	for i := range pvcs {
		pvc := &pvcs[i]
		if pvc.DeletionTimestamp != nil || (pvc.Status.Phase != corev1.ClaimPending && pvc.Status.Phase != corev1.ClaimLost) {
			continue
		}
		key := pvc.Namespace + "/" + pvc.Name
		start := pvc.CreationTimestamp.Time
		var lost *kube.LostClaim
		if pvc.Status.Phase == corev1.ClaimLost {
			// A Lost claim is dated by the event that says it was
			// lost, or not at all: its age says nothing about that.
			lc := kube.LostClaimOf(p.Snapshot, pvc)
			lost, start = &lc, lc.Since
		}
		if e := failed[key]; e != nil {
			if first, _, _ := kube.EventTimes(e); !first.IsZero() && (start.IsZero() || first.Before(start)) {
				start = first
			}
		}
		old := p.Now.Sub(start) >= kube.UnschedulableGrace
		sc, problem := st.ClassOf(pvc)
		if !classesRead {
			// Without the classes, a class that is not found is not a
			// missing class, and whether it binds on first use is unknown.
			sc, problem = nil, nil
		}
		waiting := consumers[key]
		sev := doctor.Warning
		var cause, podRef string
		switch {
		case lost != nil:
			cause = lostCause(lost)
			if len(waiting) > 0 {
				sev = doctor.Critical
			}
		case problem != nil:
			cause = classProblemWords(problem)
		case sc != nil && st.WaitsForConsumer(pvc) && pvc.Annotations["volume.kubernetes.io/selected-node"] == "" && failed[key] == nil:
			if p.Snapshot.Err(snapshot.Pods) != nil {
				continue // whether a pod waits for it is not known
			}
			cause, podRef = consumerCause(p, waiting)
			if cause == "" {
				continue // no consumer yet, or one the scheduler has not judged: nothing to fix
			}
			sev = doctor.Info
		case failed[key] != nil && old:
			cause = "provisioning fails: " + failed[key].Message
		case !old:
			continue
		case externalProvisioner(pvc) != "":
			// The PersistentVolume controller hands a claim over only once
			// it is to be provisioned now (after its pod is scheduled, for
			// a class that binds on first use).
			cause = fmt.Sprintf("it waits for the external provisioner %s, which has not created a volume (is its controller running?)", externalProvisioner(pvc))
		case pvc.Spec.StorageClassName != nil && *pvc.Spec.StorageClassName == "":
			cause = `its storageClassName is "" (no dynamic provisioning), and no pre-created PersistentVolume matches it`
		case !classesRead || sc == nil:
			// Its class could not be read: whether it exists, is the
			// default or binds on first use is unknown, and the pods that
			// wait on the claim are reported with their own cause.
			continue
		default:
			cause = fmt.Sprintf("no volume has been provisioned by %s and no event says why", sc.Provisioner)
		}
		var owner *kube.Workload
		for _, pod := range waiting {
			if o, ok := own.Top(pod); ok {
				owner = o
				break
			}
		}
		if owner == nil && p.Snapshot.Err(snapshot.Pods) != nil {
			owner = claimTemplateOwner(p.Snapshot, own, pvc)
		}
		gk := pvc.Namespace + "|" + pvc.Name + "|" + cause
		if owner != nil {
			gk = pvc.Namespace + "|" + owner.Ref.Kind + "/" + owner.Ref.Name + "|" + cause
		}
		g := groups[gk]
		if g == nil {
			g = &pvcGroup{owner: owner, ns: pvc.Namespace, pods: map[string]bool{}, cause: cause, sev: sev, start: start, problem: problem, podRef: podRef, lost: lost}
			if sc != nil {
				g.class = sc.Name
			} else if pvc.Spec.StorageClassName != nil {
				g.class = *pvc.Spec.StorageClassName
			}
			groups[gk] = g
		}
		g.claims = append(g.claims, pvc)
		g.sev = max(g.sev, sev)
		if !start.IsZero() && (g.start.IsZero() || start.Before(g.start)) {
			g.start = start
		}
		for _, pod := range waiting {
			g.pods[pod.Name] = true
		}
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		reportPVC(p, groups[k], st)
	}
	return nil
}

// consumerCause links a WaitForFirstConsumer claim to why its first
// consumer cannot be scheduled; "" when no consumer has a verdict yet.
func consumerCause(p *doctor.Pass, pods []*corev1.Pod) (string, string) {
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	for _, pod := range pods {
		start, cond, ok := kube.UnschedulableSince(pod)
		if !ok || p.Now.Sub(start) < kube.UnschedulableGrace {
			continue
		}
		why := "the scheduler says: " + strings.TrimSpace(cond.Message)
		if p.Snapshot.Err(snapshot.Nodes) == nil {
			// Placement is computed only from the nodes themselves.
			why = fitCause(kube.Explain(p.Snapshot, pod))
		}
		return fmt.Sprintf("its class binds on first use (WaitForFirstConsumer) and its pod %s cannot be scheduled: %s",
			pod.Name, why), pod.Name
	}
	return "", ""
}

func reportPVC(p *doctor.Pass, g *pvcGroup, st *kube.Storage) {
	names := make([]string, len(g.claims))
	for i, c := range g.claims {
		names[i] = c.Name
	}
	sort.Strings(names)
	pods := make([]string, 0, len(g.pods))
	for n := range g.pods {
		pods = append(pods, n)
	}
	sort.Strings(pods)
	// "pending for 12m", "lost for 21m"; a Lost claim no event dates is
	// just "lost".
	phase := strings.ToLower(string(g.claims[0].Status.Phase))
	if !g.start.IsZero() {
		phase += " for " + human(p.Now.Sub(g.start))
	}
	var who string
	ref := doctor.ObjectRef{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: g.ns, Name: names[0]}
	switch {
	case g.owner != nil:
		who = fmt.Sprintf("%s of %s %s (%s)", doctor.Plural(len(names), "claim", "claims"), g.owner.KindName(), phase, examplesEllipsis(names))
		ref = g.owner.Ref
	case len(names) == 1:
		who = fmt.Sprintf("persistentvolumeclaim %s %s", names[0], phase)
	default:
		who = fmt.Sprintf("%d claims in namespace %s %s (%s)", len(names), g.ns, phase, strings.Join(doctor.Examples(names), ", "))
	}
	msg := who + ": " + g.cause
	switch {
	case g.podRef != "":
		msg += "; act on the pod's scheduling (see the unschedulable or pending-taints finding)"
	case len(pods) > 0:
		obj := "them"
		if len(names) == 1 {
			obj = "it"
		}
		msg += fmt.Sprintf("; %s on %s: %s", doctor.Plural(len(pods), "pod waits", "pods wait"), obj, strings.Join(doctor.Examples(pods), ", "))
	}
	rem := []doctor.Remediation{{Text: "read the claim's events", Command: fmt.Sprintf("kubectl describe pvc %s -n %s", names[0], g.ns)}}
	switch {
	case g.lost != nil:
		rem = append(rem, lostRemediation(g, names[0], pods)...)
	case g.problem != nil && g.problem.Missing != "":
		text := fmt.Sprintf("create StorageClass %s, or recreate the claims with an existing class (storageClassName cannot be changed)", g.class)
		if g.owner != nil && g.owner.Ref.Kind == "StatefulSet" {
			text += fmt.Sprintf("; %s's volumeClaimTemplates cannot be changed either: recreate it with kubectl delete statefulset %s -n %s --cascade=orphan and apply the fixed manifest",
				g.owner.KindName(), g.owner.Ref.Name, g.ns)
		}
		rem = append(rem, doctor.Remediation{Text: text, Command: "kubectl get storageclass"})
	case g.problem != nil:
		rem = append(rem, doctor.Remediation{Text: "mark a StorageClass as the default (claims that name none are then given it), or name a class in the claims",
			Command: `kubectl patch storageclass <class> -p '{"metadata":{"annotations":{"` + kube.DefaultClassAnnotation + `":"true"}}}'`})
		if len(st.Defaults()) == 0 {
			rem[len(rem)-1].Command = "kubectl get storageclass"
		}
	case g.podRef != "":
		rem = append(rem, doctor.Remediation{Text: "read why the claim's pod cannot be scheduled", Command: fmt.Sprintf("kubectl describe pod %s -n %s", g.podRef, g.ns)})
	case g.class != "":
		rem = append(rem, doctor.Remediation{Text: "check the class's provisioner and parameters, then its controller's logs",
			Command: fmt.Sprintf("kubectl get storageclass %s -o yaml", g.class)})
	}
	p.Report(doctor.Finding{Severity: g.sev, Object: ref, Message: msg, Count: len(names), Examples: doctor.Examples(names), Remediation: rem})
}

// externalProvisioner is the provisioner the PersistentVolume controller
// handed the claim to (it annotates the claim when it does), "" when none.
func externalProvisioner(pvc *corev1.PersistentVolumeClaim) string {
	if p := pvc.Annotations["volume.kubernetes.io/storage-provisioner"]; p != "" {
		return p
	}
	return pvc.Annotations["volume.beta.kubernetes.io/storage-provisioner"]
}

// classProblemWords says why a claim has no StorageClass.
func classProblemWords(p *kube.ClassProblem) string {
	if p.Missing != "" {
		return fmt.Sprintf("storageclass %q does not exist", p.Missing)
	}
	return "it names no StorageClass and the cluster has no default StorageClass"
}

// lostCause says why a claim is Lost, claiming no more than was read.
func lostCause(lc *kube.LostClaim) string {
	switch {
	case lc.Volume == "":
		return "the claim is Lost: the PersistentVolume it was bound to is gone (the claim names none in spec.volumeName)"
	case !lc.Checked:
		return fmt.Sprintf("the claim is Lost: the PersistentVolume controller no longer finds its PersistentVolume %s (PersistentVolumes could not be read to confirm)", lc.Volume)
	case !lc.Exists:
		return fmt.Sprintf("the claim is Lost: its PersistentVolume %s no longer exists; the data on it cannot be recovered from Kubernetes", lc.Volume)
	case lc.BoundTo != "":
		return fmt.Sprintf("the claim is Lost: its PersistentVolume %s is bound to another claim, %s (two claims were bound to one volume)", lc.Volume, lc.BoundTo)
	}
	return fmt.Sprintf("the claim is Lost: its PersistentVolume %s was gone when the PersistentVolume controller checked, and exists again now (%s); the claim stays Lost", lc.Volume, lc.Phase)
}

// lostRemediation restores or replaces a Lost claim's volume: no
// provisioner is involved, the volume the claim was bound to is gone.
func lostRemediation(g *pvcGroup, claim string, pods []string) []doctor.Remediation {
	lc := g.lost
	if lc.Checked && lc.Exists && lc.BoundTo != "" {
		return []doctor.Remediation{{Text: "find out which claim the volume belongs to; the other claim needs a volume of its own (recreate it)",
			Command: fmt.Sprintf("kubectl get pv %s -o jsonpath='{.spec.claimRef}'", lc.Volume)}}
	}
	rem := []doctor.Remediation{{
		Text:    "restore the data: create a PersistentVolume from your backup or volume snapshot and recreate the claim bound to it (spec.volumeName); Kubernetes keeps no copy of a volume's data",
		Command: fmt.Sprintf("kubectl get pvc %s -n %s -o yaml", claim, g.ns)}}
	recreate := doctor.Remediation{Text: "or start empty: delete the claim and create it again (its data is gone with the volume)",
		Command: fmt.Sprintf("kubectl delete pvc %s -n %s", claim, g.ns)}
	if g.owner != nil && g.owner.Ref.Kind == "StatefulSet" && len(pods) > 0 {
		recreate.Text = fmt.Sprintf("or start empty: delete the claim and its pod, and %s creates both again with a new, empty volume", g.owner.KindName())
		recreate.Command = fmt.Sprintf("kubectl delete pvc %s -n %s --wait=false && kubectl delete pod %s -n %s", claim, g.ns, pods[0], g.ns)
	}
	return append(rem, recreate)
}

// claimDeletingAfter is how long a claim may be deleting while pods still
// use it before it is news (a rollout that replaces them takes minutes).
const claimDeletingAfter = 10 * time.Minute

// reportDeletingClaims reports claims deleted while pods still mount them:
// kubernetes.io/pvc-protection keeps each until no pod uses it, so it
// lingers Terminating, and the next pod that needs it (a rollout, an
// eviction, a restart elsewhere) is refused ("is being deleted") and never
// starts. The volume's reclaim policy says whether the data goes with it.
func reportDeletingClaims(p *doctor.Pass, consumers map[string][]*corev1.Pod, own *kube.Owners) {
	pvcs := p.Snapshot.PersistentVolumeClaims()
	for i := range pvcs {
		pvc := &pvcs[i]
		users := consumers[pvc.Namespace+"/"+pvc.Name]
		if pvc.DeletionTimestamp == nil || len(users) == 0 || p.Now.Sub(pvc.DeletionTimestamp.Time) < claimDeletingAfter ||
			!slices.Contains(pvc.Finalizers, "kubernetes.io/pvc-protection") {
			continue
		}
		var who []string
		for _, pod := range users {
			name := "pod " + pod.Name
			if w, ok := own.Top(pod); ok {
				name += " (" + w.KindName() + ")"
			}
			who = append(who, name)
		}
		msg := fmt.Sprintf("claim %s has been deleting for %s: kubernetes.io/pvc-protection keeps it while %s still %s it; the next pod that needs it (a rollout, an eviction, a node drain) is refused and never starts",
			pvc.Name, human(p.Now.Sub(pvc.DeletionTimestamp.Time)), strings.Join(doctor.Examples(who), ", "), map[bool]string{true: "mounts", false: "mount"}[len(users) == 1])
		rem := []doctor.Remediation{{Text: "see which pods use it", Command: fmt.Sprintf("kubectl describe pvc %s -n %s", pvc.Name, pvc.Namespace)}}
		if pv := pvc.Spec.VolumeName; pv != "" {
			var policy corev1.PersistentVolumeReclaimPolicy
			if p.Snapshot.Err(snapshot.PersistentVolumes) == nil {
				for _, v := range p.Snapshot.PersistentVolumes() {
					if v.Name == pv {
						policy = v.Spec.PersistentVolumeReclaimPolicy
					}
				}
			}
			switch policy {
			case corev1.PersistentVolumeReclaimRetain:
				msg += fmt.Sprintf(" (volume %s is Retain: its data stays after the claim goes)", pv)
				rem = append(rem, doctor.Remediation{Text: "if the deletion was a mistake, recreate the claim bound to the retained volume once it is gone (clear the volume's claimRef)",
					Command: fmt.Sprintf("kubectl get pv %s -o yaml", pv)})
			default:
				what := "reclaim policy " + string(policy)
				if policy == "" {
					what = "its reclaim policy unknown"
				}
				msg += fmt.Sprintf(" (volume %s, %s: with Delete, its data goes once the last pod stops)", pv, what)
				rem = append(rem, doctor.Remediation{Text: "if the deletion was a mistake, keep the data before the last pod stops: set the volume to Retain, then recreate the claim bound to it",
					Command: fmt.Sprintf(`kubectl patch pv %s -p '{"spec":{"persistentVolumeReclaimPolicy":"Retain"}}'`, pv)})
			}
		}
		p.Report(doctor.Finding{Object: kube.Ref("v1", "PersistentVolumeClaim", pvc), Message: msg, Cause: "claim-deleting", Remediation: rem})
	}
}

// resizeStuckAfter is how long a volume expansion may wait before it is
// news: a controller resize takes minutes, a file system resize happens at
// the next mount.
const resizeStuckAfter = 30 * time.Minute

// reportResizes reports claims whose expansion fails or waits: the
// resizer's own error (a ControllerResizeError or NodeResizeError
// condition, else the newest VolumeResizeFailed or FileSystemResizeFailed
// event), or a file system resize left pending (FileSystemResizePending)
// for half an hour, which finishes only when a pod mounts the volume
// again. A claim whose requested size was reached is not judged.
func reportResizes(p *doctor.Pass, consumers map[string][]*corev1.Pod) {
	var failed map[string]*corev1.Event
	if p.Snapshot.Err(kube.WarningEventReads) == nil {
		x := kube.WarningEventsOf(p.Snapshot)
		failed = kube.NewestEvents(append(append([]*kube.Warning{}, x.Reason("VolumeResizeFailed")...), x.Reason("FileSystemResizeFailed")...), "PersistentVolumeClaim")
	}
	pvcs := p.Snapshot.PersistentVolumeClaims()
	for i := range pvcs {
		pvc := &pvcs[i]
		want, have := pvc.Spec.Resources.Requests[corev1.ResourceStorage], pvc.Status.Capacity[corev1.ResourceStorage]
		if pvc.DeletionTimestamp != nil || pvc.Status.Phase != corev1.ClaimBound || want.IsZero() || have.IsZero() || want.Cmp(have) <= 0 {
			continue
		}
		key := pvc.Namespace + "/" + pvc.Name
		size := fmt.Sprintf("claim %s asks for %s, its capacity is %s", pvc.Name, want.String(), have.String())
		rem := []doctor.Remediation{{Text: "read the resizer's events", Command: fmt.Sprintf("kubectl describe pvc %s -n %s", pvc.Name, pvc.Namespace)}}
		var msg string
		nodeSide := false // the kubelet's file system resize, not the controller's volume resize
		for _, c := range pvc.Status.Conditions {
			switch {
			case c.Status == corev1.ConditionTrue && strings.HasSuffix(string(c.Type), "ResizeError"):
				msg = fmt.Sprintf("%s: expanding it fails (%s%s): %s", size, c.Type, forDuration(p.Now, c.LastTransitionTime), quote(c.Message))
				nodeSide = strings.HasPrefix(string(c.Type), "Node")
			case c.Status == corev1.ConditionTrue && c.Type == corev1.PersistentVolumeClaimFileSystemResizePending && msg == "" &&
				p.Now.Sub(c.LastTransitionTime.Time) >= resizeStuckAfter:
				msg = fmt.Sprintf("%s: the volume was expanded, but its file system waits for a pod to mount it again for %s (FileSystemResizePending)", size, human(p.Now.Sub(c.LastTransitionTime.Time)))
				switch pods := consumers[key]; {
				case len(pods) > 0 && metav1.GetControllerOfNoCopy(pods[0]) == nil:
					msg += "; pod " + pods[0].Name + " mounts it"
					rem = append(rem, doctor.Remediation{Text: "recreate the pod that mounts it (a pod with no controller is not recreated when deleted: save its manifest first): the kubelet resizes the file system when it mounts the volume again",
						Command: fmt.Sprintf("kubectl get pod %s -n %s -o yaml", pods[0].Name, pvc.Namespace)})
				case len(pods) > 0:
					msg += "; pod " + pods[0].Name + " mounts it"
					rem = append(rem, doctor.Remediation{Text: "restart the pod that mounts it: the kubelet resizes the file system when it mounts the volume again",
						Command: fmt.Sprintf("kubectl delete pod %s -n %s", pods[0].Name, pvc.Namespace)})
				case p.Snapshot.Err(snapshot.Pods) == nil:
					rem = append(rem, doctor.Remediation{Text: "no pod mounts it: the file system is resized when one does"})
				default:
					rem = append(rem, doctor.Remediation{Text: "restart the pod that mounts it (pods were not read): the kubelet resizes the file system when it mounts the volume again"})
				}
			}
		}
		if e := failed[key]; msg == "" && e != nil {
			first, last, _ := kube.EventTimes(e)
			if p.Now.Sub(first) >= resizeStuckAfter && p.Now.Sub(last) < resizeStuckAfter {
				msg = fmt.Sprintf("%s: expanding it fails (%s, since %s ago): %s", size, e.Reason, human(p.Now.Sub(first)), quote(e.Message))
				nodeSide = e.Reason == "FileSystemResizeFailed"
			}
		}
		if msg == "" {
			continue
		}
		switch {
		case strings.Contains(msg, "expanding it fails") && nodeSide:
			// The volume grew; the kubelet cannot grow its file system.
			text, cmd := "the kubelet cannot grow the file system on the node: read its error and the kubelet's log there (journalctl -u kubelet), and check the device (a file system resize2fs or xfs_growfs cannot read)", fmt.Sprintf("kubectl describe pvc %s -n %s", pvc.Name, pvc.Namespace)
			if pods := consumers[key]; len(pods) > 0 && pods[0].Spec.NodeName != "" {
				msg += fmt.Sprintf("; pod %s mounts it on node %s", pods[0].Name, pods[0].Spec.NodeName)
				text = fmt.Sprintf("the kubelet on node %s cannot grow the file system: read its log there (journalctl -u kubelet) and check the device (a file system resize2fs or xfs_growfs cannot read)", pods[0].Spec.NodeName)
				cmd = fmt.Sprintf("kubectl describe node %s", pods[0].Spec.NodeName)
			}
			rem = append(rem, doctor.Remediation{Text: text, Command: cmd})
		case strings.Contains(msg, "expanding it fails"):
			rem = append(rem, doctor.Remediation{Text: "fix what the resizer reports (a provider's rate limit passes with time; the class must allow expansion; the CSI driver's resizer must run); the resizer retries on its own",
				Command: "kubectl get storageclass -o custom-columns=NAME:.metadata.name,EXPANSION:.allowVolumeExpansion"})
		}
		p.Report(doctor.Finding{Object: kube.Ref("v1", "PersistentVolumeClaim", pvc), Message: msg, Cause: "resize", Remediation: rem})
	}
}

// claimTemplateOwner is the StatefulSet whose volumeClaimTemplates made the
// claim, by the name the controller gives it (TEMPLATE-SET-ORDINAL), for
// when the pods that would say so were not read; nil otherwise.
func claimTemplateOwner(s *snapshot.Snapshot, own *kube.Owners, pvc *corev1.PersistentVolumeClaim) *kube.Workload {
	if s.Err(snapshot.StatefulSets) != nil {
		return nil
	}
	sets := s.StatefulSets()
	for i := range sets {
		set := &sets[i]
		if set.Namespace != pvc.Namespace {
			continue
		}
		for _, t := range set.Spec.VolumeClaimTemplates {
			ord, ok := strings.CutPrefix(pvc.Name, t.Name+"-"+set.Name+"-")
			if _, err := strconv.Atoi(ord); ok && err == nil {
				return own.Find(kube.Ref("apps/v1", "StatefulSet", set))
			}
		}
	}
	return nil
}
