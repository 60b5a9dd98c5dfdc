package kube

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// PodProblemReads are what OwnerProblemsOf reads.
var PodProblemReads = append([]snapshot.Resource{snapshot.Pods}, WorkloadReads...)

// OwnerProblem is one cause shared by pods of one top owner (a bare pod is
// its own owner): the unit of one finding.
type OwnerProblem struct {
	// Owner is the top owner; for bare pods, grouped by namespace, the
	// first of them (Bare is then true).
	Owner *Workload
	Bare  bool
	Cause Cause
	// Pods and Problems are parallel: each pod with its first problem of
	// this cause. Sorted by pod name.
	Pods     []*corev1.Pod
	Problems []ContainerProblem
}

// Containers are the names of the containers with the problem, sorted.
func (g *OwnerProblem) Containers() []string {
	var out []string
	for _, p := range g.Problems {
		if !slices.Contains(out, p.Container) {
			out = append(out, p.Container)
		}
	}
	sort.Strings(out)
	return out
}

// Since is when the earliest pod's problem began.
func (g *OwnerProblem) Since() time.Time {
	var t time.Time
	for _, p := range g.Problems {
		if !p.Since.IsZero() && (t.IsZero() || p.Since.Before(t)) {
			t = p.Since
		}
	}
	return t
}

// Nodes are the nodes the pods run on, sorted.
func (g *OwnerProblem) Nodes() []string {
	var out []string
	for _, p := range g.Pods {
		if n := p.Spec.NodeName; n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Example is the most telling problem: the one with the most restarts, a
// termination message preferred.
func (g *OwnerProblem) Example() ContainerProblem {
	best := g.Problems[0]
	score := func(p ContainerProblem) int {
		s := int(p.Restarts)
		if p.Last != nil && p.Last.Message != "" {
			s += 1 << 20
		}
		return s
	}
	for _, p := range g.Problems[1:] {
		if score(p) > score(best) {
			best = p
		}
	}
	return best
}

type ownerProblemsKey struct{ now time.Time }

// OwnerProblemsOf classifies every pod of the snapshot and groups the
// problems by top owner and cause, sorted by owner (namespace, kind, name)
// and cause. Built once per snapshot and clock.
func OwnerProblemsOf(s *snapshot.Snapshot, now time.Time) []*OwnerProblem {
	return snapshot.Memo(s, ownerProblemsKey{now}, func() []*OwnerProblem {
		own := OwnersOf(s)
		warnings := WarningEventsOf(s)
		byKey := map[string]*OwnerProblem{}
		for _, pod := range s.Pods() {
			problems := PodProblems(pod, now)
			if p, ok := nodeDownProblem(s, pod); ok {
				// What its kubelet last wrote is stale: the node is why.
				problems = []ContainerProblem{p}
			}
			if len(problems) == 0 {
				if p, ok := StartProblem(pod, warnings); ok {
					problems = []ContainerProblem{p}
				}
			}
			if len(problems) == 0 {
				continue
			}
			w, ok := own.Top(pod)
			if !ok {
				w = &Workload{Ref: Ref("v1", "Pod", pod), Meta: &pod.ObjectMeta, Spec: &pod.Spec, SpecPath: "/spec", Object: pod}
			}
			seen := map[Cause]bool{}
			for _, p := range problems {
				if seen[p.Cause] {
					continue
				}
				seen[p.Cause] = true
				key := OwnerKey(w) + "/" + string(p.Cause)
				if !ok {
					// Bare pods of a namespace are one group only when
					// their problem is the same in substance.
					key = w.Ref.Namespace + "/Pod/*/" + string(p.Cause) + "/" + bareKey(pod, p, warnings)
				}
				g := byKey[key]
				if g == nil {
					g = &OwnerProblem{Owner: w, Bare: !ok, Cause: p.Cause}
					byKey[key] = g
				}
				g.Pods = append(g.Pods, pod)
				g.Problems = append(g.Problems, p)
			}
		}
		var out []*OwnerProblem
		for _, g := range byKey {
			idx := make([]int, len(g.Pods))
			for i := range idx {
				idx[i] = i
			}
			sort.Slice(idx, func(a, b int) bool { return g.Pods[idx[a]].Name < g.Pods[idx[b]].Name })
			pods, probs := make([]*corev1.Pod, len(idx)), make([]ContainerProblem, len(idx))
			for i, j := range idx {
				pods[i], probs[i] = g.Pods[j], g.Problems[j]
			}
			g.Pods, g.Problems = pods, probs
			if g.Bare {
				p := pods[0]
				g.Owner = &Workload{Ref: Ref("v1", "Pod", p), Meta: &p.ObjectMeta, Spec: &p.Spec, SpecPath: "/spec", Object: p}
			}
			out = append(out, g)
		}
		sort.Slice(out, func(i, j int) bool {
			a, b := out[i], out[j]
			if a.Owner.Ref.Namespace != b.Owner.Ref.Namespace {
				return a.Owner.Ref.Namespace < b.Owner.Ref.Namespace
			}
			if a.Owner.Ref.Kind != b.Owner.Ref.Kind {
				return a.Owner.Ref.Kind < b.Owner.Ref.Kind
			}
			if a.Owner.Ref.Name != b.Owner.Ref.Name {
				return a.Owner.Ref.Name < b.Owner.Ref.Name
			}
			return a.Cause < b.Cause
		})
		return out
	})
}

// bareKey is what bare pods of one namespace must share, beyond the cause,
// to be one finding: each bare pod is a workload of its own, so two are
// grouped only when their problem is the same in substance. That is the
// container (name, image, init or not) and the kubelet's waiting reason;
// for a pod that does not start, the class and subject of the event that
// says why (a Multi-Attach error and a missing Secret are two problems);
// for a container that keeps exiting, its last exit code and whether, and
// by which probe, the kubelet killed it; for a configuration error, what it
// says is missing.
func bareKey(pod *corev1.Pod, p ContainerProblem, warnings *WarningIndex) string {
	parts := []string{p.Container, p.Image, fmt.Sprint(p.Init), p.Reason}
	switch p.Cause {
	case NotStarted:
		if p.Event != nil {
			ec := ClassifyEvent(p.Event.Reason, p.Event.Message)
			parts = append(parts, string(ec.Class), ec.Subject)
			if ec.Class == EventOther {
				parts = append(parts, p.Event.Reason, p.Event.Message)
			}
		}
	case CrashLoop, OOMKill:
		if p.Last != nil {
			parts = append(parts, fmt.Sprint(p.Last.ExitCode), p.Last.Reason)
		}
		parts = append(parts, probeKillKind(pod, p.Container, warnings))
	case ConfigError:
		parts = append(parts, p.MissingKind, p.MissingName, p.MissingKey)
	case ImagePull:
		parts = append(parts, fmt.Sprint(p.Pull))
	}
	return strings.Join(parts, "|")
}

// probeKillKind is the probe ("liveness", "startup") after whose failures
// the kubelet killed the pod's container, from its Warning events; "" when
// none says so.
func probeKillKind(pod *corev1.Pod, container string, warnings *WarningIndex) string {
	for _, w := range warnings.AboutPod(pod) {
		if _, rest, ok := strings.Cut(w.FieldPath, "{"); ok {
			if name, _, _ := strings.Cut(rest, "}"); name != container {
				continue
			}
		}
		switch ClassifyEvent(w.Reason, w.Message).Class {
		case EventLivenessKill:
			return "liveness"
		case EventStartupKill:
			return "startup"
		}
	}
	return ""
}

// BackendProblem explains why a Service's pods do not serve: the first
// problem (by severity of cause) of the pods its selector matches, narrowed
// to those pods. ok is false when its pods show no container problem. A
// finding about the APIService or webhook in front names it, and the
// owner's own finding folds into that one (see ChainedOwners).
func BackendProblem(s *snapshot.Snapshot, now time.Time, namespace, service string) (g *OwnerProblem, ok bool) {
	svc := ServicesOf(s).Get(namespace, service)
	if svc == nil || len(svc.Spec.Selector) == 0 {
		return nil, false
	}
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	for _, op := range OwnerProblemsOf(s, now) {
		if op.Owner.Ref.Namespace != namespace {
			continue
		}
		var pods []*corev1.Pod
		var probs []ContainerProblem
		for i, pod := range op.Pods {
			if sel.Matches(labels.Set(pod.Labels)) {
				pods, probs = append(pods, pod), append(probs, op.Problems[i])
			}
		}
		if len(pods) == 0 {
			continue
		}
		sub := &OwnerProblem{Owner: op.Owner, Bare: op.Bare, Cause: op.Cause, Pods: pods, Problems: probs}
		if g == nil || causeRank(sub.Cause) < causeRank(g.Cause) {
			g = sub
		}
	}
	return g, g != nil
}

func causeRank(c Cause) int {
	return slices.Index([]Cause{NodeNotReady, OOMKill, CrashLoop, ImagePull, ConfigError, NotStarted, InitRunning, NotReady}, c)
}

// backend is a Service behind a broken APIService or webhook, and the
// object whose finding names it ("apiservice/v1beta1.metrics.k8s.io").
type backend struct {
	namespace, name, by string
	ref                 doctor.ObjectRef
}

// brokenBackends lists the Services behind an unavailable APIService or an
// admission webhook whose backend is broken, APIServices first. It reads
// APIServices and webhook configurations when the snapshot has them, and
// lists nothing for what it could not read.
func brokenBackends(s *snapshot.Snapshot) []backend {
	var out []backend
	if s.Err(snapshot.APIServices) == nil {
		svcs := s.APIServices()
		for i := range svcs {
			a := &svcs[i]
			if a.Spec.Service == nil {
				continue
			}
			if APIServiceDown(a) {
				out = append(out, backend{a.Spec.Service.Namespace, a.Spec.Service.Name, "apiservice/" + a.Name,
					doctor.ObjectRef{APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService", Name: a.Name}})
			}
		}
	}
	if s.Err(snapshot.MutatingWebhooks) == nil && s.Err(snapshot.ValidatingWebhooks) == nil {
		for _, w := range Webhooks(s) {
			if w.Broken != nil && w.Service != nil {
				out = append(out, backend{w.Service.Namespace, w.Service.Name, w.KubectlKind() + "/" + w.Config.Name, w.Config})
			}
		}
	}
	return out
}

// ChainedServices are the Services behind an unavailable APIService or an
// admission webhook whose backend is broken, keyed "namespace/name", with
// the objects whose findings name them. A check about Services reports
// them with these objects as Via: the engine folds its finding into theirs
// (one root cause, one finding), and it stands when their check did not run.
func ChainedServices(s *snapshot.Snapshot) map[string][]doctor.ObjectRef {
	out := map[string][]doctor.ObjectRef{}
	for _, b := range brokenBackends(s) {
		out[b.namespace+"/"+b.name] = append(out[b.namespace+"/"+b.name], b.ref)
	}
	return out
}

// ChainedOwners are the workloads whose problem is the cause of an
// unavailable APIService or a broken admission webhook, keyed
// "namespace/kind/name", with the objects whose findings name them. A check
// about workloads reports them with these objects as Via, so that the
// engine folds its finding into theirs, and it stands when their check did
// not run.
func ChainedOwners(s *snapshot.Snapshot, now time.Time) map[string][]doctor.ObjectRef {
	out := map[string][]doctor.ObjectRef{}
	for _, b := range brokenBackends(s) {
		if g, ok := BackendProblem(s, now, b.namespace, b.name); ok {
			k := OwnerKey(g.Owner)
			if !slices.Contains(out[k], b.ref) {
				out[k] = append(out[k], b.ref)
			}
		}
	}
	return out
}

// OwnerKey is the key owners are indexed by, here (ChainedOwners) and in
// checks: "namespace/Kind/name".
func OwnerKey(w *Workload) string { return RefKey(w.Ref) }

// RefKey is OwnerKey for an object reference.
func RefKey(r doctor.ObjectRef) string { return r.Namespace + "/" + r.Kind + "/" + r.Name }

// PodController is the name of the pod's controller (its ReplicaSet), or "".
func PodController(p *corev1.Pod) string {
	if c := metav1.GetControllerOfNoCopy(p); c != nil {
		return c.Name
	}
	return ""
}

// startIgnored are Warning reasons that say nothing about why a bound pod
// does not start (the scheduler's, written before it was bound).
var startIgnored = map[string]bool{"FailedScheduling": true}

// StartProblem is a pod bound to a node whose containers never started
// (all waiting in ContainerCreating or PodInitializing, or no status yet):
// its newest Warning event (by the kubelet, the attach/detach controller...)
// says why. It belongs to the first container, or the first init container
// while init containers have not completed.
func StartProblem(pod *corev1.Pod, warnings *WarningIndex) (ContainerProblem, bool) {
	if pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodPending {
		return ContainerProblem{}, false
	}
	init := false
	for _, lists := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, cs := range lists {
			if cs.State.Running != nil || cs.State.Terminated != nil && cs.State.Terminated.ExitCode != 0 {
				return ContainerProblem{}, false
			}
			if w := cs.State.Waiting; w != nil && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
				return ContainerProblem{}, false // a reason of its own, classified by PodProblems or not a start problem
			}
		}
	}
	spec := pod.Spec.Containers
	if len(pod.Spec.InitContainers) > 0 {
		init, spec = true, pod.Spec.InitContainers
	}
	if len(spec) == 0 {
		return ContainerProblem{}, false
	}
	p := ContainerProblem{Cause: NotStarted, Container: spec[0].Name, Init: init, Image: spec[0].Image, Reason: "ContainerCreating", Since: scheduledAt(pod)}
	var summary *Warning
	for _, w := range warnings.AboutPod(pod) {
		if startIgnored[w.Reason] {
			continue
		}
		if volumeSummary(w) {
			if summary == nil {
				summary = w
			}
			continue
		}
		if summary != nil && !volumeEvent[w.Reason] {
			break // the summary is newer than anything but its own details
		}
		p.Event, p.Reason, p.Message = w, w.Reason, w.Message
		break
	}
	if p.Event == nil && summary != nil {
		p.Event, p.Reason, p.Message = summary, summary.Reason, summary.Message
	}
	return p, true
}

// volumeEvent are the reasons of the kubelet's and the attach/detach
// controller's volume errors.
var volumeEvent = map[string]bool{"FailedMount": true, "FailedAttachVolume": true, "FailedMapVolume": true}

// volumeSummary: the kubelet's periodic summary of a volume wait ("Unable
// to attach or mount volumes: unmounted volumes=[data] ...: timed out
// waiting for the condition") names the volumes, not the cause; its
// MountVolume.SetUp or AttachVolume.Attach errors, often older but
// repeated, say why and are preferred.
func volumeSummary(w *Warning) bool {
	return w.Reason == "FailedMount" && unmountedVols.MatchString(w.Message)
}

// scheduledAt is when the pod was bound (PodScheduled), else created.
func scheduledAt(pod *corev1.Pod) time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	return pod.CreationTimestamp.Time
}
