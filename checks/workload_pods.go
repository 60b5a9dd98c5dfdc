package checks

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

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
	// start; without them findings say what could not be read. Nodes say
	// when a pod's node is down (its status is then stale) and whether the
	// node holding a ReadWriteOnce volume is.
	Reads: []snapshot.Resource{snapshot.Pods},
	Optional: append(append(append(slices.Clone(kube.WorkloadReads), snapshot.ControllerRevisions), kube.ServiceReads...),
		append([]snapshot.Resource{snapshot.APIServices, kube.WarningEventReads, snapshot.PersistentVolumeClaims, snapshot.Nodes, snapshot.Ingresses,
			snapshot.ExternalSecrets, snapshot.Certificates}, kube.WebhookConfigReads...)...),
	// Without pods, the Deployments' own status still tells a stuck
	// rollout and lost availability.
	Fallback: []snapshot.Resource{snapshot.Deployments},
	Run:      runWorkloadPods,
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
  139 SIGSEGV, 143 SIGTERM...; a negative code is none the application gave:
  the runtime could not report one) and its termination message; also a
  container running now that failed at least 5 times, on average at least
  once an hour, and last failed within twice its mean time between restarts:
  "failing again and again" (a liveness probe killing it every half hour, a crash
  every night), while one that has run longer than that since has settled,
  and restarts a node reboot caused (exit 255, reason Unknown) are no
  failures;
- **OOM kill**: a crash loop whose last termination is ` + "`OOMKilled`" + `, or a running
  container OOM-killed after at least three restarts within the hour, or
  within twice its mean time between restarts when that is longer (a leak
  that kills it every 8 hours; at most a day), with the container's memory
  limit and request from the spec, the restarts since the pod started and
  when the last kill was;
- **image pull**: ` + "`ErrImagePull`, `ImagePullBackOff`, `InvalidImageName`" + `, told apart
  from the kubelet's message into *not found*, *access denied*, *registry
  unreachable*, *registry certificate not trusted* (x509, or a plain-HTTP
  registry: reachable, so not "unreachable") and *no build for the node's platform* (an amd64-only image
  on an arm64 node: the node's platform is named, and the remediation keeps
  the pods on the cluster's other architecture with a nodeSelector or
  publishes a multi-architecture image); a program the kernel refuses with
  ` + "`exec format error`" + ` (a crash loop or a start error) is the same mismatch
  inside an image and is said and remediated the same way;
- **configuration**: ` + "`CreateContainerConfigError`, `CreateContainerError`, `RunContainerError`" + `,
  naming the missing ConfigMap, Secret or key from the message (Secrets are
  never read), or the command the image does not have or cannot execute
  (runc, crun, containerd and CRI-O's "executable file not found in $PATH",
  "no such file or directory", "permission denied"; also in a crash loop's
  last termination, whose exit code is then the runtime's, not the app's);
- **not ready**: Running but not ready for more than 5 minutes;
- **readiness gate**: every container ready, but a readiness gate
  (` + "`spec.readinessGates`" + `) not True for more than 5 minutes: its condition
  missing (the controller that sets it, such as the AWS Load Balancer
  Controller's target health, has not acted) or False with its message;
- **node not ready**: the pod's node has Ready False or Unknown (its
  kubelet stopped reporting): the containers' statuses are what that kubelet
  last wrote, so the node is named as the cause instead of them, with whether
  the pods tolerate the outage without limit (DaemonSets: never evicted,
  never replaced) or belong to a StatefulSet (replaced only once deleted);
  the finding folds into node-health's for that node;
- **stuck initializing**: an init container (not a native sidecar, which
  restarts always) running for more than 5 minutes while the pod is not
  initialized, e.g. a "wait for the database" loop whose dependency never
  comes: the main containers never start.

- **not starting**: bound to a node, containers still ` + "`ContainerCreating`" + `: the
  pod's newest Warning event names the cause — a ReadWriteOnce volume still
  attached elsewhere (the holder pod and its node from the pod's
  ` + "`spec.nodeName`" + `; when that node is not ready — Ready ` + "`False`" + ` or ` + "`Unknown`" + ` — it
  says so: the volume stays attached to it until the holder is deleted and
  the attach/detach controller force-detaches it six minutes later, or its
  VolumeAttachment is deleted, with the out-of-service taint as the fix;
  otherwise strategy ` + "`Recreate`" + ` for a rolling Deployment), a volume source that does not exist, an attach or
  mount failure, a sandbox the node cannot create — or is quoted.

Warning events come from the scan's one list of ` + "`type=Warning`" + ` events, read
and quoted without the mark client-go's event aggregator puts on events it
folds together (` + "`(combined from similar events): `" + `): their count says they
repeated. A
crash loop whose container the kubelet kills after failed liveness or
startup probes (` + "`Unhealthy`" + ` and ` + "`Killing`" + ` events) says so and quotes the probe's
failure; exit 137 with reason ` + "`Error`" + ` is never called an OOM kill. Image pull
failures the waiting message does not decide are read from the kubelet's
` + "`Failed`" + ` events (not found, access denied, rate limited, unreachable; Docker
Hub's "does not exist or may require docker login" is called ambiguous),
with the registry and the pull secrets the pod declares (names only). A
ReplicaSet, StatefulSet or DaemonSet the API server refuses pods
(` + "`FailedCreate`" + `, ` + "`ReplicaFailure`" + `) is reported at its top owner with the
admission error as written, parsed for ResourceQuota, LimitRange (every
bound listed, with the ` + "`kubectl set resources`" + ` values that fit a bound per
Container), PodSecurity and missing service accounts, e.g.
` + "`0 of 3 replicas available: replicaset billing-1 has 0 of 3 pods: the API server refuses to create them: ResourceQuota compute is exhausted: requested requests.cpu=500m, used requests.cpu=1800m, limited requests.cpu=2`" + `.
A CronJob whose Jobs the API server refuses (its own ` + "`FailedCreate`" + `
events, and no Job created since the newest) is reported the same way; a
suspended CronJob is not.
A Deployment, StatefulSet or DaemonSet unavailable for five minutes that no
rule explains is reported with its evidence: the newest distinct Warning
events of it, its ReplicaSets and pods, and its failing conditions, e.g.
` + "`0 of 1 replicas available for 60m: 1 pod was never scheduled: PodScheduled=False (Unschedulable): \"0/3 nodes are available: 3 Insufficient memory.\"`" + `
with ` + "`FailedScheduling (x9 over 55m, 4m ago): 0/3 nodes are available: 3 Insufficient memory`" + `
under it. A pod that never got a node is described by what the cluster
recorded: the scheduling gates that hold it, else its ` + "`PodScheduled=False`" + `
condition's reason and message, else its newest Warning event, else that no
scheduler has acted on it, naming ` + "`spec.schedulerName`" + ` when it is not
` + "`default-scheduler`" + ` (a pod for a scheduler that does not run waits forever,
with the command that lists every pod waiting for it). Such a finding names (Via) its pods, nodes and claims: when
another check reports one of them (unschedulable, pvc-pending,
sandbox-failures, admission-webhooks), the engine folds this finding into
that one ("explains") instead of reporting it twice.

Problems are grouped by the pod's top owner (pod → ReplicaSet → Deployment,
StatefulSet, DaemonSet, Job → CronJob, bare pod) and cause: one finding each,
with the count of pods, how long, the nodes for a DaemonSet, the owner's
availability, and the Services that select the pods and have no ready
endpoint left. How long is the pod's Ready (or Initialized) condition's
last transition, except for a container that restarts and whose pod
turned Ready during its last run (no readiness probe: the condition flips
with every restart and dates only the last crash): its loop is dated by
the first time of the kubelet's "Back-off restarting failed container"
event, which a loop keeps alive, else its restarts are counted "since the
pod started". No available replica of a Deployment, StatefulSet or DaemonSet
is critical, a partial outage or a bare pod a warning. Bare pods are
workloads of their own: those of one namespace are one finding only when
their problem is the same in substance (the cause, the container's name and
image, and for pods that do not start the class and subject of the event
that says why; for crash loops the exit code and the probe that killed it),
else one finding each. A problem younger than
5 minutes, a rollout still within its ` + "`progressDeadlineSeconds`" + `, a container that
restarted in the past and runs ready now, and finished pods (completed Jobs)
are not reported — except a crash loop or OOM kill with at least 3 restarts in
every pod of the group, which is reported at once, rollout or not (with the
kubelet's back-off that is four failures over more than a minute: a new
Deployment whose every pod fails so is not left silent for the ten minutes of
its progress deadline) — and a problem no retry mends, reported once it is a
minute old: an image that does not exist or whose name is invalid, a pull
refused for credentials, a command that is not in the image, a ConfigMap or
Secret that does not exist (a registry that cannot be reached, a rate limit
or a bare back-off keeps the 5 minutes). A workload scaled to zero has no pods
and no finding.

A StatefulSet with the ` + "`OrderedReady`" + ` pod management policy (the default)
creates pod N+1 only once pod N is Ready: when its failing pod holds back
the creation of the others, the finding names them ("4 pods (pg-1 to
pg-4) are not created until pg-0 is Ready"), so the missing replicas are
not taken for a second problem. When the failing pods run the update
revision of a rolling update (` + "`currentRevision`" + ` differs from
` + "`updateRevision`" + `), the finding says the update waits on them and the
remediation is the StatefulSet's forced rollback: ` + "`kubectl rollout undo`" + `
and then deleting those pods, which the controller does not replace while
they never became Ready. A DaemonSet whose failing pods run its newest
ControllerRevision while fewer than all its nodes are updated has a stuck
rolling update: the finding says so and offers ` + "`kubectl rollout undo`" + `.

A Deployment whose ` + "`Progressing`" + ` condition is False with ` + "`ProgressDeadlineExceeded`" + `
is reported here (not by rollout-history), once, with its new pods' cause
and ` + "`kubectl rollout undo --to-revision`" + ` naming the previous revision.
When its new pods have no problem because they do not exist (the API server
refuses them: a ResourceQuota, a LimitRange, Pod Security), the refusal is
the one finding and the passed deadline its evidence; a stuck rollout with
no known cause folds into unschedulable's, pending-taints', pvc-pending's or
replica-failure's finding on the Deployment when they report one.

When the workload backs an unavailable APIService or an admission webhook
whose backend is broken, apiservice-unavailable and admission-webhooks name
the cause in their own finding ("deployment/metrics-server is crash-looping:
its last termination message says ...") and the engine folds this check's
finding into theirs, which lists it as explained: one finding per root
cause. The fold keeps their severity (a webhook that fails open stays a
warning however dead its backend is). When those checks do not run, this
finding stands on its own.

A static pod (a mirror pod, owned by its node) is its own workload: the
finding names the pod, and one of the control plane in kube-system
(kubeadm's ` + "`component`" + ` label: kube-scheduler, kube-controller-manager,
kube-apiserver, etcd) is critical and says what its outage stops. Pods that
no scheduler has acted on name the default scheduler's pod when it is not
ready.

Without pods (a pasted ` + "`kubectl get deployment -o yaml`" + `, a capture or a user
without them) the check still runs on the Deployments' own status: a rollout
past its progress deadline, and availability lost after a completed rollout
(` + "`Available=False`" + ` for five minutes while ` + "`Progressing`" + ` says the new ReplicaSet
is available), critical when no replica is available. Such a finding says
that pods were not read and offers the command that lists them; a rollout
still within its deadline, a paused or scaled-to-zero Deployment and a
manifest without status are not judged.

## How to fix
Read the previous container's logs (` + "`kubectl logs --previous`" + `); a container
that exits 0 and is restarted is a one-shot task run as a service (run it as
a Job or CronJob) or a server that does not stay in the foreground; exit 126
or 127 from a shell is a program of its script not found or not executable
(the remediation prints the command to read); for a
container the kubelet kills after failed probes, fix the probe where it is
the probe's own limit: a liveness or startup probe that times out gets a
longer ` + "`timeoutSeconds`" + `, a startup probe that gives up before the
application is up a wider ` + "`failureThreshold`" + `, a probe refused on a port
number the container does not declare (when it declares others) the declared
port (a ` + "`kubectl patch`" + ` of the owner's template at the container's index; not
for a probe a webhook injected into the pod); raise the memory
limit of OOM-killed containers (` + "`kubectl set resources`" + `); fix the image
reference or the pull secret; create the missing ConfigMap or Secret (or, for a volume whose items[] names a key
its ConfigMap or Secret lacks, fix the key: the remediation prints the volume); roll
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

// persistentRestarts: a container that crash-loops or is OOM-killed with at
// least this many restarts in every pod of a group is judged at once, not
// after problemMinAge or a rollout's progress deadline: with the kubelet's
// back-off (10s, 20s, 40s...) that is four failures over more than a
// minute, not a start in progress, and a new Deployment whose every pod
// fails so would otherwise go unreported for the ten minutes of its
// deadline.
const persistentRestarts = 3

// persistent: the group's problem repeats in every pod (see
// persistentRestarts).
func persistent(g *kube.OwnerProblem) bool {
	if g.Cause != kube.CrashLoop && g.Cause != kube.OOMKill {
		return false
	}
	for _, pr := range g.Problems {
		if pr.Restarts < persistentRestarts {
			return false
		}
	}
	return len(g.Problems) > 0
}

// definiteAfter is how long a problem that no retry can mend must last
// before it is judged, instead of problemMinAge: an image reference that
// does not exist or is not valid, a pull refused for its credentials, a
// command that is not in the image, a ConfigMap or Secret that does not
// exist. Only a change to the cluster makes them go away, the kubelet has
// retried several times in a minute, and a capture taken two minutes after
// a bad deploy must not come back clean; a minute still lets an install
// that creates a Secret just after its Deployment settle.
const definiteAfter = time.Minute

// definite: every pod of the group fails for a reason no retry mends (see
// definiteAfter). A bare back-off, a registry that cannot be reached or a
// rate limit may pass by itself and keeps problemMinAge.
func definite(g *kube.OwnerProblem) bool {
	for _, pr := range g.Problems {
		switch pr.Cause {
		case kube.ImagePull:
			switch pr.Pull {
			case kube.PullNotFound, kube.PullInvalidName, kube.PullNever, kube.PullAccessDenied, kube.PullAmbiguous, kube.PullPlatform, kube.PullTLS:
			default:
				return false
			}
		case kube.ConfigError:
			if pr.Exec == "" && pr.MissingName == "" {
				return false
			}
		default:
			return false
		}
	}
	return len(g.Problems) > 0
}

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

func runWorkloadPods(p *doctor.Pass) error {
	if !podsWereRead(p.Snapshot) {
		return runWorkloadStatus(p)
	}
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
		settled := persistent(g) || definite(g) && p.Now.Sub(since) >= definiteAfter
		if d, ok := g.Owner.Object.(*appsv1.Deployment); ok && stuckRollout(d) != nil {
			// Past its progress deadline the rollout has waited long
			// enough: its new pods' problem is the cause, however young
			// (a pod recreated a minute ago after an image pull back-off).
			settled = true
		}
		if g.Cause != kube.NotReady && g.Cause != kube.ReadinessGate && p.Now.Sub(since) < problemMinAge && !settled {
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
			if rollingWithinDeadline(d, p.Now, since) && !settled {
				continue
			}
		}
		reportOwnerProblem(p, g, since, chained[key])
	}
	// A rollout stuck with no pod problem: when the API server refuses its
	// pods, the refusal is the one finding and the deadline its evidence.
	deps := p.Snapshot.Deployments()
	stuck := map[string]*appsv1.DeploymentCondition{}
	var stuckOrder []*appsv1.Deployment
	for i := range deps {
		d := &deps[i]
		key := d.Namespace + "/Deployment/" + d.Name
		if c := stuckRollout(d); c != nil && !stuckDone[key] && !reported[key] {
			stuck[key] = c
			stuckOrder = append(stuckOrder, d)
		}
	}
	reportCreateFailures(p, reported, stuck)
	for _, d := range stuckOrder {
		key := d.Namespace + "/Deployment/" + d.Name
		if c, ok := stuck[key]; ok {
			reportStuck(p, d, c, nil, histories[key], chained[key])
		}
	}
	reportUnavailable(p, reported, chained)
	return nil
}

func severityFor(a availability) doctor.Severity {
	if a.known && a.desired > 0 && a.available == 0 {
		return doctor.Critical
	}
	return doctor.Warning
}

// reportOwnerProblem reports an owner's pod problem; chained, when set, are
// the APIServices or webhooks this owner's problem breaks.
func reportOwnerProblem(p *doctor.Pass, g *kube.OwnerProblem, since time.Time, chained []doctor.ObjectRef) {
	a := availabilityOf(g.Owner)
	verb, details := causeDetails(p, g)
	be := "are"
	if len(g.Pods) == 1 {
		be = "is"
	}
	forWhat := " for " + human(p.Now.Sub(since))
	if since.IsZero() {
		forWhat = "" // nothing dates it (an object without times)
	}
	if g.Example().Flapping {
		// The restarts are counted since the pod started (causeDetails);
		// how long the loop lasts only its back-off events say.
		forWhat = ""
		if t := backOffSince(p, g); !t.IsZero() {
			forWhat = " for " + human(p.Now.Sub(t))
		}
	}
	msg := fmt.Sprintf("%s %s %s%s: %s", podsPhrase(g, a), be, verb, forWhat, details)
	if a.known {
		msg = a.String() + ": " + msg
	}
	if held := orderedHeld(g); held != "" {
		msg += "; " + held
	}
	if u := stuckSetUpdate(g); u != nil {
		msg += fmt.Sprintf("; the rolling update to revision %s waits on it (%d of %d pods updated): the controller updates no other pod while this one is not Ready",
			u.set.Status.UpdateRevision, u.set.Status.UpdatedReplicas, replicasOf(u.set.Spec.Replicas))
	}
	if u := stuckDaemonUpdate(p.Snapshot, g); u != nil {
		msg += fmt.Sprintf("; the failing pods run its newest revision (%d): its rolling update is stuck at %d of %d nodes, the others still run the previous one",
			u.revision, u.ds.Status.UpdatedNumberScheduled, u.ds.Status.DesiredNumberScheduled)
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
	case kube.ImagePull:
		if pull, _ := pullFromEvents(p, g, g.Example()); pull == kube.PullAccessDenied && len(missingPullSecrets(p, g.Pods[0])) > 0 {
			// The pull secret the pods name does not exist: one cause,
			// missing-references' finding on this owner, which lists this.
			via = append(via, g.Owner.Ref)
		}
	case kube.NodeNotReady:
		// One node outage is one finding: node-health's, which lists this.
		for _, n := range g.Nodes() {
			via = append(via, doctor.ObjectRef{APIVersion: "v1", Kind: "Node", Name: n})
		}
	case kube.ConfigError:
		// A Secret that an ExternalSecret or a Certificate writes: their
		// finding says why it is missing, and takes this one in.
		if ex := g.Example(); ex.MissingKind == "Secret" && ex.MissingKey == "" {
			if ref, _, ok := secretWriter(p, g.Owner.Ref.Namespace, ex.MissingName); ok {
				via = append(via, ref)
			}
		}
	case kube.NotStarted:
		_, via, _ = notStarted(p, g)
		if ex := g.Example(); ex.Event != nil {
			cause += "-" + string(kube.ClassifyEvent(ex.Event.Reason, ex.Event.Message).Class)
		}
	}
	sev := severityFor(a)
	kcm := false
	if role := controlPlaneRole(g.Pods[0]); role != "" {
		// A control-plane component down is the whole cluster's problem.
		sev = doctor.Critical
		msg += "; it is a static pod of the control plane (its manifest on node " + g.Pods[0].Spec.NodeName + "): " + role
		kcm = g.Pods[0].Labels["component"] == "kube-controller-manager" && len(via) == 0
	}
	f := doctor.Finding{Severity: sev, Object: g.Owner.Ref, Message: msg, Count: len(g.Pods), Cause: cause,
		Examples: doctor.Examples(names), Remediation: remediationFor(p, g, a), Via: via}
	if len(via) > 0 {
		f.ViaChecks = unavailableCauses
		if g.Cause == kube.ImagePull {
			f.ViaChecks, f.ViaCause = []string{MissingReferences.Name}, "pull-secret"
		}
	}
	if kcm {
		// What it stalls, when controllers-stalled found it, is reported
		// there on this pod: one finding for the outage.
		f.Via, f.ViaChecks = []doctor.ObjectRef{g.Owner.Ref}, []string{ControllersStalled.Name}
	}
	chain(&f, chained)
	p.Report(f)
}

// orderedHeld says which pods a StatefulSet with the OrderedReady policy
// (the default) does not create because of the group's failing pod: the
// controller creates pod N+1 only once pod N is Running and Ready, so
// "1 of 3 pods exists" is this pod's failure, not a second problem. ""
// for other owners, the Parallel policy, or when every replica exists.
func orderedHeld(g *kube.OwnerProblem) string {
	sts, ok := g.Owner.Object.(*appsv1.StatefulSet)
	if !ok || sts.Spec.PodManagementPolicy == appsv1.ParallelPodManagement {
		return ""
	}
	want := replicasOf(sts.Spec.Replicas)
	if sts.Status.Replicas >= want {
		return ""
	}
	// The lowest failing ordinal holds the ones after it.
	lowest := -1
	for _, pod := range g.Pods {
		if n, ok := ordinalOf(sts.Name, pod.Name); ok && (lowest < 0 || n < lowest) {
			lowest = n
		}
	}
	if lowest < 0 {
		return ""
	}
	var missing []string
	for i := lowest + 1; i < int(want); i++ {
		missing = append(missing, fmt.Sprintf("%s-%d", sts.Name, i))
	}
	if len(missing) == 0 || int(sts.Status.Replicas) > lowest+1 {
		// The pods after it exist (an update, or the controller already
		// created them): nothing is held back.
		return ""
	}
	held := strings.Join(missing, ", ") + " are"
	switch {
	case len(missing) == 1:
		held = missing[0] + " is"
	case len(missing) > 3:
		held = fmt.Sprintf("%d pods (%s to %s) are", len(missing), missing[0], missing[len(missing)-1])
	}
	return fmt.Sprintf("%s not created until %s-%d is Ready (podManagementPolicy OrderedReady)", held, sts.Name, lowest)
}

// setUpdate is a StatefulSet's rolling update held by failing pods of its
// update revision.
type setUpdate struct {
	set  *appsv1.StatefulSet
	pods []string // the failing pods that run the update revision
}

// stuckSetUpdate: the group's failing pods run the StatefulSet's update
// revision during a RollingUpdate (currentRevision is not updateRevision):
// the rollout stops at them. Reverting the template is not enough then: the
// controller does not replace a pod of the bad revision that never became
// Ready, so it must be deleted too (the StatefulSet docs' "forced
// rollback"). nil otherwise, and for OnDelete (pods change only when
// deleted).
func stuckSetUpdate(g *kube.OwnerProblem) *setUpdate {
	sts, ok := g.Owner.Object.(*appsv1.StatefulSet)
	if !ok || sts.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return nil
	}
	st := sts.Status
	if st.UpdateRevision == "" || st.UpdateRevision == st.CurrentRevision {
		return nil
	}
	u := &setUpdate{set: sts}
	for _, pod := range g.Pods {
		if pod.Labels[appsv1.ControllerRevisionHashLabelKey] == st.UpdateRevision {
			u.pods = append(u.pods, pod.Name)
		}
	}
	if len(u.pods) == 0 {
		return nil
	}
	return u
}

// daemonUpdate is a DaemonSet's rolling update whose new pods fail.
type daemonUpdate struct {
	ds       *appsv1.DaemonSet
	revision int64
}

// stuckDaemonUpdate: the group's failing pods run the DaemonSet's newest
// ControllerRevision (their controller-revision-hash label) while fewer
// than all its nodes are updated: the update stops at them (maxUnavailable)
// and rolling back is the quick fix. nil otherwise, for OnDelete, and
// when ControllerRevisions were not read.
func stuckDaemonUpdate(s *snapshot.Snapshot, g *kube.OwnerProblem) *daemonUpdate {
	ds, ok := g.Owner.Object.(*appsv1.DaemonSet)
	if !ok || ds.Spec.UpdateStrategy.Type == appsv1.OnDeleteDaemonSetStrategyType || s.Err(snapshot.ControllerRevisions) != nil ||
		ds.Status.UpdatedNumberScheduled >= ds.Status.DesiredNumberScheduled {
		return nil
	}
	var newest *appsv1.ControllerRevision
	for _, cr := range s.ControllerRevisions() {
		if c := metav1.GetControllerOfNoCopy(&cr); c != nil && c.UID == ds.UID && (newest == nil || cr.Revision > newest.Revision) {
			newest = &cr
		}
	}
	if newest == nil {
		return nil
	}
	hash := strings.TrimPrefix(newest.Name, ds.Name+"-")
	for _, pod := range g.Pods {
		if pod.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] != hash {
			return nil
		}
	}
	return &daemonUpdate{ds: ds, revision: newest.Revision}
}

// ordinalOf is the ordinal of a StatefulSet's pod ("web-2" of web: 2).
func ordinalOf(set, pod string) (int, bool) {
	rest, ok := strings.CutPrefix(pod, set+"-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n >= 0
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

// controlPlaneRole says what a control-plane static pod's outage stops
// (kubeadm's component label on its mirror pod in kube-system), "" for
// other pods.
func controlPlaneRole(pod *corev1.Pod) string {
	if pod.Namespace != metav1.NamespaceSystem || !kube.MirrorPod(pod) {
		return ""
	}
	switch pod.Labels["component"] {
	case "kube-scheduler":
		return "while no scheduler runs, no new pod is placed on a node"
	case "kube-controller-manager":
		return "while it is down, no controller acts: Deployments, ReplicaSets, Jobs and node lifecycle stand still"
	case "kube-apiserver":
		return "an API server of this node is down"
	case "etcd":
		return "an etcd member is down: the cluster's store loses a replica"
	}
	return ""
}
