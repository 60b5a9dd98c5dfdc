package checks

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// WorkloadPods explains unavailable workloads by what their containers do:
// the everyday failures (crash loops, OOM kills, image pulls, missing
// configuration, failing readiness) and the rollouts they leave stuck, one
// finding per owner and cause instead of one line per pod.
var WorkloadPods = &doctor.Check{
	Name:     "workload-pods",
	Severity: doctor.Warning,
	Origin:   "everyday",
	// Pods are enough to judge: owners, revisions and Services only name
	// the cause's owner, the previous revision and what the failure takes
	// down; the unavailable APIServices and webhooks whose findings name a
	// backend's cause are where its finding folds (Via). Warning
	// events and claims are the evidence and the cause of pods that never
	// start; without them findings say what could not be read.
	Reads: []snapshot.Resource{snapshot.Pods},
	Optional: append(append(append(slices.Clone(kube.WorkloadReads), snapshot.ControllerRevisions), kube.ServiceReads...),
		append([]snapshot.Resource{snapshot.APIServices, kube.WarningEventReads, snapshot.PersistentVolumeClaims}, kube.WebhookConfigReads...)...),
	Run: runWorkloadPods,
	Doc: `Workloads whose pods crash-loop, are OOM-killed, cannot pull their image, miss their configuration or never become ready

## Why it matters
These are the failures SREs meet every week. A Deployment whose pods are in
` + "`CrashLoopBackOff`" + ` serves nothing; an OOM-killed container restarts every few
minutes and drops its requests; a rollout to an image tag that does not exist
stops half-way (` + "`ProgressDeadlineExceeded`" + `) and nothing retries; a missing
ConfigMap or Secret keeps the container from ever starting; a pod that runs
but fails its readiness probe takes no traffic. ` + "`kubectl get pods`" + ` shows one line
per pod and the reason in a column, but not the owner, how long, what the
exit code means, or what to run next.

## How it is detected
From the one LIST of pods, every container's status (init containers
included) is classified (pkg/kube ` + "`PodProblems`" + `):
- **crash loop**: waiting ` + "`CrashLoopBackOff`" + `, with the restart count, the last
  termination's exit code and what it means (1 application error, 137 SIGKILL,
  139 SIGSEGV, 143 SIGTERM...) and its termination message;
- **OOM kill**: a crash loop whose last termination is ` + "`OOMKilled`" + `, or a running
  container OOM-killed within the hour after at least three restarts, with
  the container's memory limit and request from the spec;
- **image pull**: ` + "`ErrImagePull`, `ImagePullBackOff`, `InvalidImageName`" + `, told apart
  from the kubelet's message into *not found*, *access denied* and *registry
  unreachable*;
- **configuration**: ` + "`CreateContainerConfigError`, `CreateContainerError`, `RunContainerError`" + `,
  naming the missing ConfigMap, Secret or key from the message (Secrets are
  never read);
- **not ready**: Running but not ready for more than 5 minutes.

- **not starting**: bound to a node, containers still ` + "`ContainerCreating`" + `: the
  pod's newest Warning event names the cause — a ReadWriteOnce volume still
  attached elsewhere (the holder pod and node, and strategy ` + "`Recreate`" + ` for a
  rolling Deployment), a volume source that does not exist, an attach or
  mount failure, a sandbox the node cannot create — or is quoted.

Warning events come from the scan's one list of ` + "`type=Warning`" + ` events. A
crash loop whose container the kubelet kills after failed liveness or
startup probes (` + "`Unhealthy`" + ` and ` + "`Killing`" + ` events) says so and quotes the probe's
failure; exit 137 with reason ` + "`Error`" + ` is never called an OOM kill. Image pull
failures the waiting message does not decide are read from the kubelet's
` + "`Failed`" + ` events (not found, access denied, rate limited, unreachable; Docker
Hub's "does not exist or may require docker login" is called ambiguous),
with the registry and the pull secrets the pod declares (names only). A
ReplicaSet, StatefulSet or DaemonSet the API server refuses pods
(` + "`FailedCreate`" + `, ` + "`ReplicaFailure`" + `) is reported at its top owner with the
admission error as written, parsed for ResourceQuota, LimitRange,
PodSecurity and missing service accounts, e.g.
` + "`0 of 3 replicas available: replicaset billing-1 has 0 of 3 pods: the API server refuses to create them: ResourceQuota compute is exhausted: requested requests.cpu=500m, used requests.cpu=1800m, limited requests.cpu=2`" + `.
A Deployment, StatefulSet or DaemonSet unavailable for five minutes that no
rule explains is reported with its evidence: the newest distinct Warning
events of it, its ReplicaSets and pods, and its failing conditions, e.g.
` + "`0 of 1 replicas available for 60m: 1 pod is not ready and no container problem explains it`" + `
with ` + "`FailedScheduling (x9 over 55m, 4m ago): 0/3 nodes are available: 3 Insufficient memory`" + `
under it. Such a finding names (Via) its pods, nodes and claims: when
another check reports one of them (unschedulable, pvc-pending,
sandbox-failures, admission-webhooks), the engine folds this finding into
that one ("explains") instead of reporting it twice.

Problems are grouped by the pod's top owner (pod → ReplicaSet → Deployment,
StatefulSet, DaemonSet, Job → CronJob, bare pod) and cause: one finding each,
with the count of pods, how long, the nodes for a DaemonSet, the owner's
availability, and the Services that select the pods and have no ready
endpoint left. No available replica of a Deployment, StatefulSet or DaemonSet
is critical, a partial outage or a bare pod a warning. A problem younger than
5 minutes, a rollout still within its ` + "`progressDeadlineSeconds`" + `, a container that
restarted in the past and runs ready now, and finished pods (completed Jobs)
are not reported. A workload scaled to zero has no pods and no finding.

A Deployment whose ` + "`Progressing`" + ` condition is False with ` + "`ProgressDeadlineExceeded`" + `
is reported here (not by rollout-history), once, with its new pods' cause
and ` + "`kubectl rollout undo --to-revision`" + ` naming the previous revision.

When the workload backs an unavailable APIService or an admission webhook
whose backend is broken, apiservice-unavailable and admission-webhooks name
the cause in their own finding ("deployment/metrics-server is crash-looping:
its last termination message says ...") and the engine folds this check's
finding into theirs, which lists it as explained: one finding per root
cause. The fold keeps their severity (a webhook that fails open stays a
warning however dead its backend is). When those checks do not run, this
finding stands on its own.

## How to fix
Read the previous container's logs (` + "`kubectl logs --previous`" + `); raise the memory
limit of OOM-killed containers (` + "`kubectl set resources`" + `); fix the image
reference or the pull secret; create the missing ConfigMap or Secret; roll
back a stuck rollout with ` + "`kubectl rollout undo`" + `.

## References
- https://kubernetes.io/docs/tasks/debug/debug-application/debug-running-pod/
- https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#container-restarts
- https://kubernetes.io/docs/tasks/configure-pod-container/assign-memory-resource/#exceed-a-container-s-memory-limit
- https://kubernetes.io/docs/concepts/containers/images/#imagepullbackoff
- https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#failed-deployment
- https://kubernetes.io/docs/tasks/debug/debug-application/determine-reason-pod-failure/`,
}

// problemMinAge: younger problems may be a start or a rollout in progress.
const problemMinAge = 5 * time.Minute

// availability is an owner's desired and available replicas.
type availability struct {
	desired, available int32
	unit               string // "replicas", "scheduled pods"
	known              bool
}

func (a availability) String() string {
	return fmt.Sprintf("%d of %d %s available", a.available, a.desired, a.unit)
}

func availabilityOf(w *kube.Workload) availability {
	switch o := w.Object.(type) {
	case *appsv1.Deployment:
		return availability{replicasOf(o.Spec.Replicas), o.Status.AvailableReplicas, "replicas", true}
	case *appsv1.StatefulSet:
		return availability{replicasOf(o.Spec.Replicas), o.Status.AvailableReplicas, "replicas", true}
	case *appsv1.ReplicaSet:
		return availability{replicasOf(o.Spec.Replicas), o.Status.AvailableReplicas, "replicas", true}
	case *appsv1.DaemonSet:
		return availability{o.Status.DesiredNumberScheduled, o.Status.NumberAvailable, "scheduled pods", true}
	}
	return availability{}
}

func replicasOf(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

func progressing(d *appsv1.Deployment) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == appsv1.DeploymentProgressing {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

func stuckRollout(d *appsv1.Deployment) *appsv1.DeploymentCondition {
	if c := progressing(d); c != nil && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
		return c
	}
	return nil
}

// rollingWithinDeadline: a rollout still making progress is not judged yet.
func rollingWithinDeadline(d *appsv1.Deployment, now, since time.Time) bool {
	c := progressing(d)
	if c == nil || c.Status != corev1.ConditionTrue || c.Reason == "NewReplicaSetAvailable" {
		return false
	}
	deadline := 600 * time.Second
	if d.Spec.ProgressDeadlineSeconds != nil {
		deadline = time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second
	}
	return now.Sub(since) < deadline
}

func runWorkloadPods(p *doctor.Pass) error {
	chained := kube.ChainedOwners(p.Snapshot, p.Now)
	histories := map[string]kube.WorkloadHistory{}
	for _, h := range kube.Histories(p.Snapshot) {
		histories[kube.RefKey(doctor.ObjectRef{Namespace: h.Namespace, Kind: h.Kind, Name: h.Name})] = h
	}
	stuckDone := map[string]bool{}
	reported := map[string]bool{} // owners with a finding naming a cause
	for _, g := range kube.OwnerProblemsOf(p.Snapshot, p.Now) {
		key := kube.OwnerKey(g.Owner)
		reported[key] = true
		since := g.Since()
		if g.Cause != kube.NotReady && p.Now.Sub(since) < problemMinAge {
			continue
		}
		if d, ok := g.Owner.Object.(*appsv1.Deployment); ok {
			if c := stuckRollout(d); c != nil {
				// The stuck rollout is the new ReplicaSet's pods' cause: one
				// finding; old pods failing too are a finding of their own.
				fresh, old := splitByReplicaSet(g, newReplicaSet(histories[key], d))
				if fresh != nil && !stuckDone[key] {
					stuckDone[key] = true
					reportStuck(p, d, c, fresh, histories[key], chained[key])
				}
				if old != nil {
					reportOwnerProblem(p, old, old.Since(), chained[key])
				}
				continue
			}
			if rollingWithinDeadline(d, p.Now, since) {
				continue
			}
		}
		reportOwnerProblem(p, g, since, chained[key])
	}
	deps := p.Snapshot.Deployments()
	for i := range deps {
		d := &deps[i]
		key := d.Namespace + "/Deployment/" + d.Name
		if c := stuckRollout(d); c != nil && !stuckDone[key] && !reported[key] {
			reportStuck(p, d, c, nil, histories[key], chained[key])
		}
	}
	reportCreateFailures(p, reported)
	reportUnavailable(p, reported, chained)
	return nil
}

func severityFor(a availability) doctor.Severity {
	if a.known && a.desired > 0 && a.available == 0 {
		return doctor.Critical
	}
	return doctor.Warning
}

// podsPhrase is "3 pods" or "2 of 5 pods on nodes a, b" for a DaemonSet.
func podsPhrase(g *kube.OwnerProblem, a availability) string {
	s := doctor.Plural(len(g.Pods), "pod", "pods")
	if g.Bare && len(g.Pods) > 1 {
		var names []string
		for _, p := range g.Pods {
			names = append(names, p.Name)
		}
		return fmt.Sprintf("%d bare pods in namespace %s (%s)", len(g.Pods), g.Owner.Ref.Namespace, strings.Join(doctor.Examples(names), ", "))
	}
	if g.Owner.Daemon() {
		nodes := g.Nodes()
		if a.desired > int32(len(g.Pods)) {
			s = fmt.Sprintf("%d of %d pods", len(g.Pods), a.desired)
		}
		if len(nodes) > 0 {
			s += fmt.Sprintf(" (on %s: %s)", doctor.Plural(len(nodes), "node", "nodes"), strings.Join(doctor.Examples(nodes), ", "))
		}
	}
	return s
}

func containerPhrase(g *kube.OwnerProblem) string {
	cs := g.Containers()
	ex := g.Example()
	kind := "container"
	if ex.Init {
		kind = "init container"
	}
	if len(cs) > 1 {
		return fmt.Sprintf("containers %s", strings.Join(cs, ", "))
	}
	return kind + " " + cs[0]
}

func causeDetails(p *doctor.Pass, g *kube.OwnerProblem) (verb, details string) {
	ex := g.Example()
	cp := containerPhrase(g)
	switch g.Cause {
	case kube.CrashLoop:
		details = fmt.Sprintf("%s restarted %s", cp, doctor.Plural(int(ex.Restarts), "time", "times"))
		if ex.Last != nil {
			details += ", last " + terminationWords(ex.Last)
			if ex.Last.Message != "" {
				details += "; last termination message: " + quote(ex.Last.Message)
			}
		}
		if _, phrase, ok := probeKill(p, g, ex.Container); ok {
			return "crash-looping", details + "; " + phrase
		}
		return "crash-looping", details
	case kube.NotStarted:
		details, _, _ = notStarted(p, g)
		return "not starting", details
	case kube.OOMKill:
		details = fmt.Sprintf("%s was killed for exceeding its memory (%s), %s", cp, memoryPhrase(ex), doctor.Plural(int(ex.Restarts), "restart", "restarts"))
		return "OOM-killed", details
	case kube.ImagePull:
		pull, event := pullFromEvents(p, g, ex)
		details = fmt.Sprintf("%s: image %s %s", cp, ex.Image, pullPhrase(pull))
		switch {
		case event != "":
			details += " (" + ex.Reason + "; the kubelet's newest pull error: " + quote(event) + ")"
		case ex.Message != "":
			details += " (" + ex.Reason + ": " + quote(ex.Message) + ")"
		default:
			details += " (" + ex.Reason + ")"
		}
		if pull == kube.PullAccessDenied || pull == kube.PullAmbiguous || pull == kube.PullUnknown {
			details += fmt.Sprintf("; registry %s, %s", registryOf(ex.Image), pullSecretsPhrase(g.Pods[0]))
		}
		return "unable to pull the image", details
	case kube.ConfigError:
		if m := missingWords(ex); m != "" {
			details = fmt.Sprintf("%s cannot be created: %s does not exist (%s)", cp, m, ex.Reason)
		} else {
			details = fmt.Sprintf("%s cannot be created (%s: %s)", cp, ex.Reason, quote(ex.Message))
		}
		return "unable to start", details
	case kube.NotReady:
		return "running but not ready", fmt.Sprintf("%s fails its readiness probe%s, so the pods receive no Service traffic", cp, readinessFailure(p, g, ex.Container))
	}
	return string(g.Cause), ""
}

func pullPhrase(f kube.PullFailure) string {
	switch f {
	case kube.PullNotFound:
		return "is not found: the tag or repository does not exist"
	case kube.PullAccessDenied:
		return "is refused: access denied (credentials or imagePullSecrets)"
	case kube.PullAmbiguous:
		return "is refused: the repository does not exist or needs credentials (the registry does not say which)"
	case kube.PullRateLimited:
		return "cannot be pulled: the registry rate-limits the node's pulls (toomanyrequests)"
	case kube.PullUnreachable:
		return "cannot be fetched: the registry is unreachable"
	case kube.PullInvalidName:
		return "is not a valid image reference"
	case kube.PullNever:
		return "is not on the node and imagePullPolicy is Never"
	}
	return "cannot be pulled"
}

func memoryPhrase(p kube.ContainerProblem) string {
	if p.MemoryLimit == nil {
		s := "no memory limit: the node ran out of memory"
		if p.MemoryRequest != nil {
			s += ", request " + p.MemoryRequest.String()
		}
		return s
	}
	s := "limit " + p.MemoryLimit.String()
	if p.MemoryRequest != nil {
		s += ", request " + p.MemoryRequest.String()
	}
	return s
}

// suggestedLimit doubles a memory limit, rounded up to a whole Mi.
func suggestedLimit(q *resource.Quantity) string {
	mi := float64(q.Value()) * 2 / (1 << 20)
	return fmt.Sprintf("%dMi", int64(math.Ceil(mi)))
}

// logsTarget is what kubectl logs takes: deploy/NAME when every pod of the
// owner fails this way (kubectl picks any of them), else one failing pod.
func logsTarget(g *kube.OwnerProblem, a availability) string {
	if a.known && a.available == 0 && int32(len(g.Pods)) >= a.desired && !g.Owner.Daemon() {
		switch g.Owner.Ref.Kind {
		case "Deployment":
			return "deploy/" + g.Owner.Ref.Name
		case "StatefulSet":
			return "sts/" + g.Owner.Ref.Name
		case "ReplicaSet":
			return "rs/" + g.Owner.Ref.Name
		}
	}
	if g.Owner.Ref.Kind == "Job" {
		return "job/" + g.Owner.Ref.Name
	}
	return "pod/" + g.Pods[0].Name
}

func remediationFor(p *doctor.Pass, g *kube.OwnerProblem, a availability) []doctor.Remediation {
	ex := g.Example()
	ns := g.Owner.Ref.Namespace
	target := logsTarget(g, a)
	owner := g.Owner.KindName()
	editable := g.Owner.Spec != nil && g.Owner.Ref.Kind != "Pod"
	var rem []doctor.Remediation
	switch g.Cause {
	case kube.CrashLoop:
		rem = append(rem, doctor.Remediation{Text: "read the crashed container's logs",
			Command: fmt.Sprintf("kubectl logs -n %s %s -c %s --previous", ns, target, ex.Container)})
		rem = append(rem, doctor.Remediation{Text: "see the exit codes and events of one pod",
			Command: fmt.Sprintf("kubectl describe pod -n %s %s", ns, g.Pods[0].Name)})
	case kube.OOMKill:
		if ex.MemoryLimit != nil && editable {
			rem = append(rem, doctor.Remediation{Text: fmt.Sprintf("raise the memory limit (now %s) to what the container really uses", ex.MemoryLimit),
				Command: fmt.Sprintf("kubectl set resources %s -n %s -c %s --limits=memory=%s", owner, ns, ex.Container, suggestedLimit(ex.MemoryLimit))})
		} else if editable {
			rem = append(rem, doctor.Remediation{Text: "request the memory the container uses, so the scheduler keeps room for it",
				Command: fmt.Sprintf("kubectl set resources %s -n %s -c %s --requests=memory=<usage> --limits=memory=<usage+headroom>", owner, ns, ex.Container)})
		}
		rem = append(rem, doctor.Remediation{Text: "read what it did before it was killed",
			Command: fmt.Sprintf("kubectl logs -n %s %s -c %s --previous", ns, target, ex.Container)})
	case kube.ImagePull:
		switch ex.Pull {
		case kube.PullAccessDenied:
			rem = append(rem, doctor.Remediation{Text: "give the pods credentials for the registry",
				Command: fmt.Sprintf("kubectl create secret docker-registry regcred -n %s --docker-server=%s --docker-username=<user> --docker-password=<token>", ns, registryOf(ex.Image))})
			if secrets := g.Pods[0].Spec.ImagePullSecrets; len(secrets) > 0 {
				var names []string
				for _, r := range secrets {
					names = append(names, r.Name)
				}
				rem[len(rem)-1].Text = fmt.Sprintf("the pods already use imagePullSecrets %s: renew those credentials for the registry, or create one that works", strings.Join(names, ", "))
			} else {
				// A ServiceAccount's imagePullSecrets has no merge key: a merge
				// patch would replace the secrets other workloads pull with.
				sa := serviceAccountOf(g)
				rem = append(rem, doctor.Remediation{Text: "and append it to the pods' service account's imagePullSecrets (this JSON patch keeps the ones it has)",
					Command: fmt.Sprintf(`kubectl patch serviceaccount %s -n %s --type=json -p '[{"op":"add","path":"/imagePullSecrets/-","value":{"name":"regcred"}}]'`, sa, ns)},
					doctor.Remediation{Text: "(when the service account has no imagePullSecrets yet, the patch above fails: create the list instead)",
						Command: fmt.Sprintf(`kubectl patch serviceaccount %s -n %s --type=json -p '[{"op":"add","path":"/imagePullSecrets","value":[{"name":"regcred"}]}]'`, sa, ns)})
			}
			if k := g.Owner.Ref.Kind; k == "Deployment" || k == "StatefulSet" || k == "DaemonSet" {
				rem = append(rem, doctor.Remediation{Text: "then recreate the pods so they pull with the credentials",
					Command: fmt.Sprintf("kubectl rollout restart %s -n %s", owner, ns)})
			}
		case kube.PullUnreachable:
			rem = append(rem, doctor.Remediation{Text: "check the node can resolve and reach the registry " + registryOf(ex.Image) + " (DNS, proxy, firewall, certificates)",
				Command: fmt.Sprintf("kubectl describe pod -n %s %s", ns, g.Pods[0].Name)})
		default:
			if editable {
				rem = append(rem, doctor.Remediation{Text: "point the container at an image that exists",
					Command: fmt.Sprintf("kubectl set image %s -n %s %s=<image:existing-tag>", owner, ns, ex.Container)})
			}
			rem = append(rem, doctor.Remediation{Text: "see the kubelet's pull errors",
				Command: fmt.Sprintf("kubectl describe pod -n %s %s", ns, g.Pods[0].Name)})
		}
	case kube.ConfigError:
		switch {
		case ex.MissingKind == "ConfigMap" && ex.MissingKey == "":
			rem = append(rem, doctor.Remediation{Text: "create the ConfigMap the pods reference (or fix the reference)",
				Command: fmt.Sprintf("kubectl create configmap %s -n %s --from-file=<path>", ex.MissingName, ns)})
		case ex.MissingKind == "Secret" && ex.MissingKey == "":
			rem = append(rem, doctor.Remediation{Text: "create the Secret the pods reference (or fix the reference)",
				Command: fmt.Sprintf("kubectl create secret generic %s -n %s --from-literal=<key>=<value>", ex.MissingName, ns)})
		case ex.MissingKey != "":
			rem = append(rem, doctor.Remediation{Text: fmt.Sprintf("add key %s to %s %s (or fix the reference)", ex.MissingKey, strings.ToLower(ex.MissingKind), ex.MissingName),
				Command: fmt.Sprintf("kubectl edit %s %s -n %s", strings.ToLower(ex.MissingKind), ex.MissingName, ns)})
		}
		rem = append(rem, doctor.Remediation{Text: "see the kubelet's error",
			Command: fmt.Sprintf("kubectl describe pod -n %s %s", ns, g.Pods[0].Name)})
	case kube.NotStarted:
		_, _, r := notStarted(p, g)
		rem = append(rem, r...)
	case kube.NotReady:
		rem = append(rem, doctor.Remediation{Text: "see why the readiness probe fails (the events name it)",
			Command: fmt.Sprintf("kubectl describe pod -n %s %s", ns, g.Pods[0].Name)})
		rem = append(rem, doctor.Remediation{Text: "read the container's logs",
			Command: fmt.Sprintf("kubectl logs -n %s pod/%s -c %s", ns, g.Pods[0].Name, ex.Container)})
	}
	return rem
}

func serviceAccountOf(g *kube.OwnerProblem) string {
	if sa := g.Pods[0].Spec.ServiceAccountName; sa != "" {
		return sa
	}
	return "default"
}

// registryOf is the registry host of an image reference (docker.io when
// the first path element is not a host).
func registryOf(image string) string {
	first, _, ok := strings.Cut(image, "/")
	if ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return first
	}
	return "docker.io"
}

// schedulingChecks report pods the scheduler cannot place on their top
// owner: a rollout stuck for that reason is their finding.
var schedulingChecks = []string{"unschedulable", "pending-taints"}

// chainedOwnerVia are the checks whose findings name a workload as the broken
// backend of an APIService or admission webhook: workload-pods' finding on
// that workload folds into theirs, without raising their severity (they
// weigh the impact: a webhook that fails open stays a warning).
var chainedOwnerVia = []string{"apiservice-unavailable", "admission-webhooks"}

// reportOwnerProblem reports an owner's pod problem; chained, when set, are
// the APIServices or webhooks this owner's problem breaks.
func reportOwnerProblem(p *doctor.Pass, g *kube.OwnerProblem, since time.Time, chained []doctor.ObjectRef) {
	a := availabilityOf(g.Owner)
	verb, details := causeDetails(p, g)
	be := "are"
	if len(g.Pods) == 1 {
		be = "is"
	}
	msg := fmt.Sprintf("%s %s %s for %s: %s", podsPhrase(g, a), be, verb, duration.HumanDuration(p.Now.Sub(since)), details)
	if a.known {
		msg = a.String() + ": " + msg
	}
	if dead := servicesWithoutEndpoints(p.Snapshot, g); len(dead) > 0 {
		if len(dead) == 1 {
			msg += "; service " + dead[0] + " has no ready endpoint"
		} else {
			msg += fmt.Sprintf("; %d services have no ready endpoint: %s", len(dead), strings.Join(doctor.Examples(dead), ", "))
		}
	}
	var names []string
	for _, pod := range g.Pods {
		names = append(names, pod.Namespace+"/"+pod.Name)
	}
	// Cause keeps the fingerprint of "web crash-loops" apart from "web
	// cannot pull its image" (a baseline must not hide the second).
	cause := string(g.Cause)
	var via []doctor.ObjectRef
	switch g.Cause {
	case kube.CrashLoop:
		if kind, _, ok := probeKill(p, g, g.Example().Container); ok {
			cause = kind + "-probe-kill"
		}
	case kube.NotStarted:
		_, via, _ = notStarted(p, g)
		if ex := g.Example(); ex.Event != nil {
			cause += "-" + string(kube.ClassifyEvent(ex.Event.Reason, ex.Event.Message).Class)
		}
	}
	f := doctor.Finding{Severity: severityFor(a), Object: g.Owner.Ref, Message: msg, Count: len(g.Pods), Cause: cause,
		Examples: doctor.Examples(names), Remediation: remediationFor(p, g, a), Via: via}
	chain(&f, chained)
	p.Report(f)
}

// chain makes f a consequence of the APIServices or webhooks it breaks.
func chain(f *doctor.Finding, chained []doctor.ObjectRef) {
	if len(chained) > 0 {
		f.Via, f.ViaChecks, f.ViaKeepsSeverity = chained, chainedOwnerVia, true
	}
}

// reportStuck reports a rollout past its progress deadline, with the new
// ReplicaSet's pods' cause when there is one.
func reportStuck(p *doctor.Pass, d *appsv1.Deployment, c *appsv1.DeploymentCondition, g *kube.OwnerProblem, h kube.WorkloadHistory, chained []doctor.ObjectRef) {
	rev := d.Annotations[kube.RevisionAnnotation]
	ref := "deployment/" + d.Name
	// The condition's time is when the deadline passed, not when the
	// rollout broke: say so, never "stuck for 17s" of a rollout broken
	// for an hour.
	passed := ""
	if s := since(p.Now, c.LastTransitionTime); s != "" {
		passed = " " + s + " ago"
	}
	msg := fmt.Sprintf("rollout of revision %s is stuck (ProgressDeadlineExceeded%s): %d of %d replicas updated, %d available",
		orUnknown(rev), passed, d.Status.UpdatedReplicas, replicasOf(d.Spec.Replicas), d.Status.AvailableReplicas)
	count := 1
	var rem []doctor.Remediation
	if g != nil {
		a := availabilityOf(g.Owner)
		verb, details := causeDetails(p, g)
		msg += fmt.Sprintf("; its new pods are %s: %s", verb, details)
		count = len(g.Pods)
		rem = append(rem, remediationFor(p, g, a)...)
	} else if c.Message != "" {
		msg += "; " + c.Message
	}
	sev := doctor.Warning
	if d.Status.AvailableReplicas == 0 && replicasOf(d.Spec.Replicas) > 0 && g != nil {
		sev = doctor.Critical
	}
	if prev := previousRevision(h, rev); prev > 0 {
		rem = append([]doctor.Remediation{{Text: fmt.Sprintf("roll back to revision %d if the change is bad", prev),
			Command: fmt.Sprintf("kubectl rollout undo %s -n %s --to-revision=%d", ref, d.Namespace, prev)}}, rem...)
		rem = append(rem, doctor.Remediation{Text: "compare the revisions", Command: fmt.Sprintf("kubectl doctor history %s -n %s", ref, d.Namespace)})
	}
	var ev []string
	if g == nil {
		rem = append(rem, doctor.Remediation{Text: "see why the new pods do not become ready", Command: fmt.Sprintf("kubectl describe %s -n %s", ref, d.Namespace)})
		// No container problem: quote what the new ReplicaSet and its
		// pods were told (quota, scheduling, volumes), not the symptom.
		refs := []doctor.ObjectRef{kube.Ref("apps/v1", "Deployment", d)}
		var conds []string
		var pods []*corev1.Pod
		if rs := newReplicaSet(h, d); rs != "" {
			refs = append(refs, doctor.ObjectRef{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: d.Namespace, Name: rs})
			for _, pod := range p.Snapshot.Pods() {
				if pod.Namespace == d.Namespace && kube.PodController(pod) == rs && !kube.Ready(pod) {
					pods = append(pods, pod)
					conds = append(conds, failingConditions(pod)...)
				}
			}
		}
		slices.Sort(conds)
		ev = evidence(p, refs, pods, slices.Compact(conds))
	}
	f := doctor.Finding{Severity: sev, Object: kube.Ref("apps/v1", "Deployment", d), Message: msg, Count: count, Cause: "stuck-rollout", Remediation: rem, Evidence: ev}
	if g == nil {
		// No pod problem of ours explains it: pods the scheduler cannot
		// place are the usual cause, and those checks report them on this
		// Deployment. Fold into their finding; stand alone otherwise.
		f.Via, f.ViaChecks = []doctor.ObjectRef{f.Object}, schedulingChecks
	}
	chain(&f, chained)
	p.Report(f)
}

// previousRevision is the highest revision below the current one.
func previousRevision(h kube.WorkloadHistory, current string) int64 {
	var cur int64
	if _, err := fmt.Sscan(current, &cur); err != nil {
		return 0
	}
	var prev int64
	for _, r := range h.Revisions {
		if r.Revision < cur && r.Revision > prev {
			prev = r.Revision
		}
	}
	return prev
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// servicesWithoutEndpoints are the Services that select the group's pods and
// have no ready endpoint: what the pods' failure takes down.
func servicesWithoutEndpoints(s *snapshot.Snapshot, g *kube.OwnerProblem) []string {
	if s.Err(snapshot.EndpointSlices) != nil {
		return nil // which Services lost their endpoints is unknown
	}
	svcs := kube.ServicesOf(s)
	var out []string
	for _, svc := range s.Services() {
		if svc.Namespace != g.Owner.Ref.Namespace || len(svc.Spec.Selector) == 0 {
			continue
		}
		sel := labels.SelectorFromSet(svc.Spec.Selector)
		if sel.Matches(labels.Set(g.Pods[0].Labels)) && svcs.ReadyAny(svc.Namespace, svc.Name) == 0 {
			out = append(out, svc.Name)
		}
	}
	return out
}

// newReplicaSet is the name of the ReplicaSet of the Deployment's current revision.
func newReplicaSet(h kube.WorkloadHistory, d *appsv1.Deployment) string {
	for _, r := range h.Revisions {
		if fmt.Sprint(r.Revision) == d.Annotations[kube.RevisionAnnotation] {
			if name, ok := strings.CutPrefix(r.Source, "replicaset/"); ok {
				return name
			}
		}
	}
	return ""
}

// splitByReplicaSet splits a group into the pods of ReplicaSet rs and the others.
func splitByReplicaSet(g *kube.OwnerProblem, rs string) (in, out *kube.OwnerProblem) {
	for i, pod := range g.Pods {
		dst := &out
		if rs != "" && kube.PodController(pod) == rs {
			dst = &in
		}
		if *dst == nil {
			*dst = &kube.OwnerProblem{Owner: g.Owner, Bare: g.Bare, Cause: g.Cause}
		}
		(*dst).Pods = append((*dst).Pods, pod)
		(*dst).Problems = append((*dst).Problems, g.Problems[i])
	}
	return in, out
}
