package checks

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// MissingReferences reports workloads whose pod template names a
// ServiceAccount that does not exist, or image pull secrets the kubelet
// could not find: the first makes the API server refuse every new pod, the
// second makes pulls from private registries fail. StatefulSets whose
// governing Service is missing are reported too: their pods get no DNS
// names.
var MissingReferences = &doctor.Check{
	Name:     "missing-references",
	Severity: doctor.Critical,
	Origin:   "peer coverage map",
	Reads:    append([]snapshot.Resource{snapshot.ServiceAccounts, snapshot.Pods, snapshot.Services}, kube.WorkloadReads...),
	// The kubelet's FailedToRetrieveImagePullSecret warnings are the one
	// way to learn a pull secret is missing without reading Secrets; they
	// come from the scan's one Warning-events read.
	Optional: []snapshot.Resource{kube.WarningEventReads},
	Run:      runMissingReferences,
	Doc: `Workloads that name a ServiceAccount, pull secret or governing Service that does not exist

## Why it matters
A pod template only names its ServiceAccount and its image pull secrets;
nothing checks them when the Deployment is applied. When the ServiceAccount
is missing (a chart that creates it was not installed, it was renamed, the
namespace was recreated without it) the ServiceAccount admission plugin
refuses every pod: the ReplicaSet, StatefulSet or Job records
` + "`FailedCreate ... serviceaccount \"x\" not found`" + ` and the workload has no pod at all,
so no pod-level check sees anything. Pods created before the account was
deleted keep running until the next rollout, eviction or node failure, and
then are not replaced. A StatefulSet whose ` + "`serviceName`" + ` names no Service
runs, but its pods get no stable DNS names (` + "`db-0.db`" + `): members of a cluster
that find each other by name never do, and clients that address a member by
its name cannot reach it. A missing image pull secret makes the kubelet pull
anonymously: private images fail with ` + "`ImagePullBackOff`" + ` (see workload-pods).

## How it is detected
ServiceAccounts are listed (their names; a ServiceAccount holds only the
names of its Secrets). For every workload users manage (Deployment,
StatefulSet, DaemonSet, Job, CronJob, bare pod) the template's
` + "`serviceAccountName`" + ` (or ` + "`default`" + `) must exist in its namespace. Deployments and
StatefulSets scaled to zero, finished Jobs and suspended CronJobs are left
alone. Critical when the workload has no running pod (nothing serves), a
warning when older pods still run (the next rollout or eviction leaves it
with none). A StatefulSet of more than one replica must have the Service its
` + "`serviceName`" + ` names in its own namespace (a warning; a Service of that name
in another namespace does not count; an empty ` + "`serviceName`" + ` asks for none; a
single member has no peer to find by name).

Secrets are never read, so a missing pull secret is not guessed from the
spec: the kubelet says it, with a ` + "`FailedToRetrieveImagePullSecret`" + ` event
(listed only with that reason) naming the secrets it could not find for a
pod. Those pods are grouped by owner and secret: a warning (a public image
still pulls without it).

## How to fix
Create the ServiceAccount (` + "`kubectl create serviceaccount NAME -n NS`" + `) or point
the template at one that exists (` + "`kubectl set serviceaccount`" + `). Create the
StatefulSet's headless Service (` + "`clusterIP: None`" + `, selecting its pods). Create the pull
secret in the pod's namespace (` + "`kubectl create secret docker-registry`" + `) or remove
it from the template or ServiceAccount.

## References
- https://kubernetes.io/docs/tasks/configure-pod-container/configure-service-account/
- https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#serviceaccount
- https://kubernetes.io/docs/tasks/configure-pod-container/pull-image-private-registry/
- https://kubernetes.io/docs/concepts/workloads/controllers/statefulset/#stable-network-id`,
}

// missingPullSecretRE takes the secret names out of the kubelet's
// "Unable to retrieve some image pull secrets (a, b); attempting to pull
// the image may not succeed."
var missingPullSecretRE = regexp.MustCompile(`image pull secrets? \(([^)]*)\)`)

func runMissingReferences(p *doctor.Pass) error {
	sas := map[string]bool{}
	for _, sa := range p.Snapshot.ServiceAccounts() {
		sas[sa.Namespace+"/"+sa.Name] = true
	}
	// Running pods per top owner, to tell "nothing serves" from "the next
	// rollout breaks it".
	owners := kube.OwnersOf(p.Snapshot)
	running := map[string]int{}
	for _, pod := range p.Snapshot.Pods() {
		if pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil {
			continue
		}
		if w, ok := owners.Top(pod); ok {
			running[kube.OwnerKey(w)]++
		} else {
			running[pod.Namespace+"/Pod/"+pod.Name]++
		}
	}
	svcs := kube.ServicesOf(p.Snapshot)
	for w := range kube.TopWorkloads(p.Snapshot) {
		if w.Spec == nil || dormant(w) {
			continue
		}
		if sts, ok := w.Object.(*appsv1.StatefulSet); ok {
			reportGoverningService(p, w, sts, svcs)
		}
		name := w.Spec.ServiceAccountName
		if name == "" {
			name = w.Spec.DeprecatedServiceAccount
		}
		if name == "" {
			name = "default"
		}
		ns := w.Ref.Namespace
		if sas[ns+"/"+name] {
			continue
		}
		n := running[kube.OwnerKey(w)]
		sev := doctor.Critical
		effect := "the API server refuses every pod it creates (serviceaccount \"" + name + "\" not found) and none runs"
		if n > 0 {
			sev = doctor.Warning
			verb := "were"
			if n == 1 {
				verb = "was"
			}
			effect = fmt.Sprintf("its %s %s created before the account went missing; the API server refuses every new one (serviceaccount %q not found), so the next rollout, eviction or node failure leaves it with none", doctor.Plural(n, "running pod", "running pods"), verb, name)
		}
		if w.Ref.Kind == "Pod" {
			effect = fmt.Sprintf("it runs, but cannot be recreated as it is (serviceaccount %q not found)", name)
			sev = doctor.Warning
		}
		rem := []doctor.Remediation{{Text: "create the ServiceAccount it names", Command: fmt.Sprintf("kubectl create serviceaccount %s -n %s", name, ns)}}
		if w.Ref.Kind != "Pod" {
			rem = append(rem, doctor.Remediation{Text: "or point it at an account that exists",
				Command: fmt.Sprintf("kubectl set serviceaccount %s -n %s NAME", w.KindName(), ns)})
		}
		p.Report(doctor.Finding{Severity: sev, Object: w.Ref, Cause: "service-account",
			Message:     fmt.Sprintf("%s runs as serviceaccount %s, which does not exist in namespace %s: %s", w.KindName(), name, ns, effect),
			Remediation: rem})
	}
	reportPullSecrets(p, owners)
	return nil
}

// reportGoverningService reports a StatefulSet whose serviceName names no
// Service in its namespace (a Service of that name elsewhere does not
// govern it): its pods get no DNS records of their own. An empty
// serviceName asks for none; Services that could not be read are never
// called missing.
func reportGoverningService(p *doctor.Pass, w *kube.Workload, sts *appsv1.StatefulSet, svcs *kube.Services) {
	name := sts.Spec.ServiceName
	// A single member has no peer to find by name, and single-replica
	// charts often name a headless Service they do not create: nothing
	// breaks, so it is not reported.
	if name == "" || replicasOf(sts.Spec.Replicas) < 2 || p.Snapshot.Err(snapshot.Services) != nil || svcs.Get(sts.Namespace, name) != nil {
		return
	}
	effect := fmt.Sprintf("its pods get no stable DNS names (%s-0.%s), so members that find each other by name never do", sts.Name, name)
	// The Service selects what the StatefulSet selects: its template's
	// other labels (a chart's version, a mode) change with upgrades.
	sel := sts.Spec.Template.Labels
	if sts.Spec.Selector != nil && len(sts.Spec.Selector.MatchLabels) > 0 {
		sel = sts.Spec.Selector.MatchLabels
	}
	p.Report(doctor.Finding{Severity: doctor.Warning, Object: w.Ref, Cause: "governing-service",
		Message: fmt.Sprintf("statefulset/%s names serviceName %s, which does not exist in namespace %s: %s", sts.Name, name, sts.Namespace, effect),
		Remediation: []doctor.Remediation{{Text: "create the headless Service that governs it",
			Command: fmt.Sprintf("kubectl create service clusterip %s -n %s --clusterip=None && kubectl set selector service %s -n %s '%s'",
				name, sts.Namespace, name, sts.Namespace, kube.SelectorString(sel))}}})
}

// dormant says whether a workload creates no pods on purpose: scaled to
// zero, finished, suspended.
func dormant(w *kube.Workload) bool {
	switch o := w.Object.(type) {
	case *appsv1.Deployment:
		return o.Spec.Replicas != nil && *o.Spec.Replicas == 0
	case *appsv1.StatefulSet:
		return o.Spec.Replicas != nil && *o.Spec.Replicas == 0
	case *batchv1.Job:
		return kube.JobFinished(o) || (o.Spec.Suspend != nil && *o.Spec.Suspend)
	case *batchv1.CronJob:
		return o.Spec.Suspend != nil && *o.Spec.Suspend
	case *corev1.Pod:
		return kube.Terminal(o)
	}
	return false
}

// reportPullSecrets groups the kubelet's FailedToRetrieveImagePullSecret
// events of live pods by owner and missing secrets.
func reportPullSecrets(p *doctor.Pass, owners *kube.Owners) {
	if p.Snapshot.Err(kube.WarningEventReads) != nil {
		return
	}
	pods := map[string]*corev1.Pod{}
	for _, pod := range p.Snapshot.Pods() {
		pods[pod.Namespace+"/"+pod.Name] = pod
	}
	type group struct {
		ref      doctor.ObjectRef
		kind     string
		secrets  string
		pods     []string
		sa       string
		registry string
	}
	groups := map[string]*group{}
	var order []string
	for _, ev := range kube.WarningEventsOf(p.Snapshot).Reason("FailedToRetrieveImagePullSecret") {
		if ev.Kind != "Pod" {
			continue
		}
		pod := pods[ev.Namespace+"/"+ev.Name]
		if pod == nil || pod.DeletionTimestamp != nil || kube.Terminal(pod) || (ev.UID != "" && ev.UID != pod.UID) {
			continue // an event of a pod that is gone
		}
		names := pullSecretNames(ev.Message)
		if len(names) == 0 {
			continue
		}
		sort.Strings(names)
		secrets := strings.Join(names, ", ")
		ref, kind := kube.Ref("v1", "Pod", pod), "pod/"+pod.Name
		if w, ok := owners.Top(pod); ok {
			ref, kind = w.Ref, w.KindName()
		}
		key := ref.String() + "|" + secrets
		if groups[key] == nil {
			groups[key] = &group{ref: ref, kind: kind, secrets: secrets, sa: pod.Spec.ServiceAccountName, registry: privateRegistry(pod)}
			order = append(order, key)
		}
		if !containsString(groups[key].pods, pod.Name) {
			groups[key].pods = append(groups[key].pods, pod.Name)
		}
	}
	sort.Strings(order)
	for _, key := range order {
		g := groups[key]
		ns := g.ref.Namespace
		first := strings.Split(g.secrets, ", ")[0]
		rem := []doctor.Remediation{
			{Text: "create the pull secret in the pods' namespace", Command: fmt.Sprintf("kubectl create secret docker-registry %s -n %s --docker-server=%s --docker-username=<user> --docker-password=<token>", first, ns, g.registry)},
			{Text: "or remove the name from the template (or from its ServiceAccount's imagePullSecrets)", Command: fmt.Sprintf("kubectl get %s -n %s -o jsonpath='{.spec..imagePullSecrets}'", g.kind, ns)},
		}
		if g.sa != "" {
			rem = append(rem, doctor.Remediation{Text: "see whether the ServiceAccount adds it", Command: fmt.Sprintf("kubectl get serviceaccount %s -n %s -o jsonpath='{.imagePullSecrets}'", g.sa, ns)})
		}
		p.Report(doctor.Finding{Severity: doctor.Warning, Object: g.ref, Cause: "pull-secret", Count: len(g.pods), Examples: doctor.Examples(g.pods),
			Message: fmt.Sprintf("%s names image pull secret %s, which the kubelet could not find in namespace %s (FailedToRetrieveImagePullSecret on %s): images from private registries cannot be pulled",
				g.kind, g.secrets, ns, doctor.Plural(len(g.pods), "pod", "pods")),
			Remediation: rem})
	}
}

// privateRegistry is the registry a pod's pull secret is for: the one
// registry its images come from other than Docker Hub (docker.io when all
// do), "<registry>" when they come from several.
func privateRegistry(pod *corev1.Pod) string {
	regs := map[string]bool{}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if r := registryOf(c.Image); r != "docker.io" {
				regs[r] = true
			}
		}
	}
	switch len(regs) {
	case 0:
		return "docker.io"
	case 1:
		for r := range regs {
			return r
		}
	}
	return "<registry>"
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// pullSecretNames are the secrets a FailedToRetrieveImagePullSecret event
// names ("Unable to retrieve some image pull secrets (a, b); ..."), nil
// when it names none.
func pullSecretNames(message string) []string {
	m := missingPullSecretRE.FindStringSubmatch(message)
	if m == nil {
		return nil
	}
	var out []string
	for _, n := range strings.Split(m[1], ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}
