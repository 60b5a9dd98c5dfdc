package kube

import (
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Cause is what is wrong with a pod's container, as the kubelet reports it
// in the container's status. Checks that explain an unavailable owner, a
// Service without ready endpoints or a broken aggregated API link to it.
type Cause string

const (
	// CrashLoop: the container keeps exiting and the kubelet backs off
	// before restarting it (waiting reason CrashLoopBackOff).
	CrashLoop Cause = "crash-loop"
	// OOMKill: the container's last termination was OOMKilled and it is
	// crash-looping or was killed again recently.
	OOMKill Cause = "oom-killed"
	// ImagePull: the image cannot be pulled (ErrImagePull, ImagePullBackOff,
	// InvalidImageName, ErrImageNeverPull).
	ImagePull Cause = "image-pull"
	// ConfigError: the container cannot be created or started
	// (CreateContainerConfigError, CreateContainerError, RunContainerError).
	ConfigError Cause = "container-config"
	// NotReady: the container runs but fails its readiness probe.
	NotReady Cause = "not-ready"
	// NotStarted: the pod is on a node but its containers never started
	// (ContainerCreating, PodInitializing): a volume that cannot be
	// attached or mounted, a sandbox that cannot be created, or another
	// reason the kubelet writes in the pod's Warning events (see
	// StartProblem).
	NotStarted Cause = "not-started"
	// InitRunning: a (non-sidecar) init container has been running for
	// NotReadyAfter without finishing, so the pod never starts its main
	// containers: typically a "wait for the database" loop whose
	// dependency never comes. (An unavailable workload is reported after
	// the same time anyway; this names the container.)
	InitRunning Cause = "init-running"
	// ReadinessGate: every container is ready, but a readiness gate of
	// the pod (spec.readinessGates) has not been True for NotReadyAfter:
	// the controller that sets it (a load balancer controller's target
	// health) has not, so the pod gets no Service traffic. Container is
	// the gate's condition type; Reason and Message its condition's, or
	// empty when the condition does not exist.
	ReadinessGate Cause = "readiness-gate"
)

// PullFailure tells image pull failures apart by what the waiting message says.
type PullFailure int

const (
	// PullNone: not an image pull failure (the zero value).
	PullNone PullFailure = iota
	// PullUnknown: the message says nothing decisive (a bare back-off).
	PullUnknown
	PullNotFound
	PullAccessDenied
	// PullAmbiguous: Docker Hub's "repository does not exist or may require
	// 'docker login'" says the same for a missing repository and missing
	// credentials; it is never called a missing tag alone.
	PullAmbiguous
	PullRateLimited
	PullUnreachable
	PullInvalidName
	// PullNever: the image is not on the node and imagePullPolicy is Never.
	PullNever
	// PullPlatform: the image exists, but has no build for the node's
	// OS and architecture (an amd64-only image on an arm64 node).
	PullPlatform
	// PullTLS: the registry answers, but the node does not trust its
	// certificate (a private CA, an expired certificate) or it speaks
	// plain HTTP where HTTPS is expected.
	PullTLS
)

// Termination is a container's last termination.
type Termination struct {
	ExitCode   int32
	Signal     int32
	Reason     string
	Message    string
	StartedAt  time.Time
	FinishedAt time.Time
}

// ContainerProblem is one container of a pod in trouble, with the facts that
// explain it. Exactly one Cause per container.
type ContainerProblem struct {
	Cause     Cause
	Container string
	Init      bool // an init container: the pod never starts its main containers
	Image     string
	Restarts  int32
	// Since is when the problem began, as best the pod's status tells
	// (the Ready or Initialized condition's transition, else the pod's start).
	Since time.Time
	// Flapping: the container restarts and the pod's condition changed
	// during its last run, as it does on every restart of a container
	// without a readiness probe; that transition dates the last crash, not
	// the start of the loop, so Since is the pod's start instead: a bound,
	// all the restarts happened after it, not the loop's length.
	Flapping bool
	// Intermittent: the container runs now and has failed again and again
	// (see intermittentRestarts): a CrashLoop between two failures.
	Intermittent bool
	// Reason and Message are the kubelet's waiting reason and message.
	Reason, Message string
	Last            *Termination // the last termination, when there is one
	Pull            PullFailure  // for ImagePull
	// MissingKind, MissingName and MissingKey say what a ConfigError says
	// is missing (a ConfigMap or Secret, and a key of it); empty when the
	// message names nothing.
	MissingKind string
	MissingName string
	MissingKey  string
	// Exec is the program the runtime could not run (ExecFailure), from
	// a ConfigError's message or a crash loop's last termination; ExecDenied
	// when it exists but is not executable; ExecFormat when it is built for
	// another architecture than the node's ("exec format error").
	Exec          string
	ExecDenied    bool
	ExecFormat    bool
	MemoryLimit   *resource.Quantity // from the pod's spec, for OOMKill
	MemoryRequest *resource.Quantity
	// Event is the pod's newest Warning event that says why, for
	// NotStarted (and, set by checks, for other causes); nil when none.
	Event *Warning
}

// NotReadyAfter is how long a running container may fail readiness before it
// is a problem: rollouts and slow starts are not.
const NotReadyAfter = 5 * time.Minute

// oomRecent is how recent a previous OOM kill of a running container must be
// for the container to count as OOM-killed "every few minutes".
const oomRecent = time.Hour

// oomWindow is how recent the last OOM kill of a running container must be
// to count: oomRecent, or twice the pod's mean time between restarts when
// that is longer (a leak that kills it every 8 hours, 127 times in 43
// days, is as much a problem three hours after the last kill), at most
// oomWindowMax.
func oomWindow(pod *corev1.Pod, restarts int32, now time.Time) time.Duration {
	return max(oomRecent, failureWindow(pod, restarts, now))
}

// failureWindow is twice the pod's mean time between restarts, at most
// oomWindowMax: a container that has run longer than that since its last
// failure has settled.
func failureWindow(pod *corev1.Pod, restarts int32, now time.Time) time.Duration {
	start := pod.CreationTimestamp.Time
	if pod.Status.StartTime != nil {
		start = pod.Status.StartTime.Time
	}
	var w time.Duration
	if !start.IsZero() && restarts > 0 && now.After(start) {
		w = 2 * now.Sub(start) / time.Duration(restarts)
	}
	return min(w, oomWindowMax)
}

// intermittentRestarts is how many restarts a running container needs for
// its failures to be a pattern rather than incidents, and intermittentEvery
// the longest mean time between them: a container that restarts twice a
// day (on a k3s laptop, each time the API server it watches went away) is
// not failing again and again.
const (
	intermittentRestarts = 5
	intermittentEvery    = time.Hour
)

// oomWindowMax bounds oomWindow: a kill a day ago is old news.
const oomWindowMax = 24 * time.Hour

// PodProblems classifies every container (init containers first) of a pod
// that is neither finished nor being deleted. A container that runs and is
// ready has no problem once it has settled: run for longer than twice its
// mean time between restarts since its last failure (failureWindow),
// however often it restarted before.
func PodProblems(pod *corev1.Pod, now time.Time) []ContainerProblem {
	if pod.DeletionTimestamp != nil || Terminal(pod) {
		return nil
	}
	var out []ContainerProblem
	for i := range pod.Status.InitContainerStatuses {
		if p, ok := classify(pod, &pod.Status.InitContainerStatuses[i], true, now); ok {
			out = append(out, p)
		}
	}
	for i := range pod.Status.ContainerStatuses {
		if p, ok := classify(pod, &pod.Status.ContainerStatuses[i], false, now); ok {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		if p, ok := gateProblem(pod, now); ok {
			out = append(out, p)
		}
	}
	return out
}

// gateProblem is a running pod whose containers are all ready and whose
// readiness gate has not been True for NotReadyAfter (see ReadinessGate).
func gateProblem(pod *corev1.Pod, now time.Time) (ContainerProblem, bool) {
	if len(pod.Spec.ReadinessGates) == 0 || pod.Status.Phase != corev1.PodRunning || Ready(pod) || len(pod.Status.ContainerStatuses) == 0 {
		return ContainerProblem{}, false
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if !cs.Ready {
			return ContainerProblem{}, false
		}
	}
	since := NotReadySince(pod)
	if since.IsZero() || now.Sub(since) < NotReadyAfter {
		return ContainerProblem{}, false
	}
	for _, g := range pod.Spec.ReadinessGates {
		p := ContainerProblem{Cause: ReadinessGate, Container: string(g.ConditionType), Since: since}
		found := false
		for _, c := range pod.Status.Conditions {
			if c.Type == g.ConditionType {
				found = true
				if c.Status != corev1.ConditionTrue {
					p.Reason, p.Message = string(c.Status)+" "+c.Reason, strings.TrimSpace(c.Message)
					return p, true
				}
			}
		}
		if !found {
			return p, true
		}
	}
	return ContainerProblem{}, false
}

func classify(pod *corev1.Pod, cs *corev1.ContainerStatus, init bool, now time.Time) (ContainerProblem, bool) {
	p := ContainerProblem{Container: cs.Name, Init: init, Image: cs.Image, Restarts: cs.RestartCount, Since: problemSince(pod, init)}
	if spec := containerSpec(pod, cs.Name, init); spec != nil {
		p.Image = spec.Image
		if q, ok := spec.Resources.Limits[corev1.ResourceMemory]; ok {
			p.MemoryLimit = &q
		}
		if q, ok := spec.Resources.Requests[corev1.ResourceMemory]; ok {
			p.MemoryRequest = &q
		}
	}
	if t := cs.LastTerminationState.Terminated; t != nil {
		p.Last = &Termination{ExitCode: t.ExitCode, Signal: t.Signal, Reason: t.Reason, Message: strings.TrimSpace(t.Message),
			StartedAt: t.StartedAt.Time, FinishedAt: t.FinishedAt.Time}
	}
	if w := cs.State.Waiting; w != nil {
		p.Reason, p.Message = w.Reason, strings.TrimSpace(w.Message)
		switch w.Reason {
		case "CrashLoopBackOff":
			p.Cause = CrashLoop
			if p.Last != nil {
				p.Exec, p.ExecDenied = ExecFailure(p.Last.Message)
				if p.Exec == "" {
					p.Exec, p.ExecFormat = WrongArch(p.Last.Message)
				}
			}
			if p.Last != nil && p.Last.Reason == "OOMKilled" {
				p.Cause = OOMKill
			}
			p.dateLoop(pod)
			return p, true
		case "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull", "RegistryUnavailable":
			p.Cause, p.Pull = ImagePull, ClassifyPull(w.Reason, w.Message)
			return p, true
		case "CreateContainerConfigError", "CreateContainerError", "RunContainerError", "PreCreateHookError", "PreStartHookError", "PostStartHookError":
			p.Cause = ConfigError
			p.MissingKind, p.MissingName, p.MissingKey = MissingConfig(w.Message)
			p.Exec, p.ExecDenied = ExecFailure(w.Message)
			if p.Exec == "" {
				p.Exec, p.ExecFormat = WrongArch(w.Message)
			}
			return p, true
		}
		return p, false
	}
	if cs.State.Running == nil {
		return p, false
	}
	if p.Last != nil && p.Last.Reason == "OOMKilled" && cs.RestartCount >= 3 && now.Sub(p.Last.FinishedAt) < oomWindow(pod, cs.RestartCount, now) {
		// Running again between kills: no condition dates the kills, which
		// are counted since the pod started (see Flapping).
		p.Cause, p.Flapping = OOMKill, true
		p.Since = pod.CreationTimestamp.Time
		if pod.Status.StartTime != nil {
			p.Since = pod.Status.StartTime.Time
		}
		return p, true
	}
	// Caught between two restarts: a container that keeps failing (killed by
	// its probes, exiting non-zero) is running again and not ready; the
	// kubelet has not backed off yet, but it is the same crash loop.
	if !cs.Ready && cs.RestartCount >= 3 && p.Last != nil && p.Last.ExitCode != 0 && !p.Last.FinishedAt.IsZero() && now.Sub(p.Last.FinishedAt) < NotReadyAfter {
		p.Cause = CrashLoop
		p.dateLoop(pod)
		return p, true
	}
	// Running now, but failing again and again over hours or days: a
	// liveness probe that kills it every half hour, a crash every night.
	// Judged by rate (failureWindow): at least one failure an hour on
	// average, and one that has run for twice its mean time between
	// restarts since has settled. Restarts a node
	// reboot or a lost runtime caused (exit 255, Unknown) are not failures.
	if cs.RestartCount >= intermittentRestarts && p.Last != nil && p.Last.ExitCode != 0 && p.Last.ExitCode != 255 &&
		p.Last.Reason != "Unknown" && p.Last.Reason != "ContainerStatusUnknown" && p.Last.Reason != "Completed" &&
		!p.Last.FinishedAt.IsZero() && failureWindow(pod, cs.RestartCount, now) <= 2*intermittentEvery &&
		now.Sub(p.Last.FinishedAt) < failureWindow(pod, cs.RestartCount, now) && (!init || sidecar(pod, cs.Name)) {
		p.Cause, p.Flapping, p.Intermittent = CrashLoop, true, true
		p.Since = pod.CreationTimestamp.Time
		if pod.Status.StartTime != nil {
			p.Since = pod.Status.StartTime.Time
		}
		return p, true
	}
	if init && !sidecar(pod, cs.Name) && !initialized(pod) {
		if started := cs.State.Running.StartedAt.Time; !started.IsZero() && now.Sub(started) >= NotReadyAfter {
			p.Cause, p.Since = InitRunning, started
			return p, true
		}
		return p, false
	}
	if !init && !cs.Ready && pod.Status.Phase == corev1.PodRunning {
		// A container is not ready since the pod is, or since it last
		// started when that is later: a container that just restarted is
		// starting again, and gets NotReadyAfter to become ready.
		since := NotReadySince(pod)
		if started := cs.State.Running.StartedAt.Time; since.IsZero() || started.After(since) {
			since = started
		}
		if !since.IsZero() && now.Sub(since) >= NotReadyAfter {
			p.Cause, p.Since = NotReady, since
			return p, true
		}
	}
	return p, false
}

// dateLoop marks a restarting container whose pod condition changed during
// its last run (see Flapping) and dates its problem from the pod's start.
func (p *ContainerProblem) dateLoop(pod *corev1.Pod) {
	if p.Restarts < 2 || p.Last == nil {
		return
	}
	run := p.Last.StartedAt
	if run.Unix() <= 0 {
		// Never started (a StartError records the Unix epoch): the
		// failure's own time.
		run = p.Last.FinishedAt
	}
	if run.IsZero() || p.Since.Before(run) {
		return // not ready since before the last run: the transition dates the loop
	}
	p.Flapping = true
	p.Since = pod.CreationTimestamp.Time
	if pod.Status.StartTime != nil {
		p.Since = pod.Status.StartTime.Time
	}
}

// sidecar: the init container restarts always (a native sidecar), so its
// running is its job.
func sidecar(pod *corev1.Pod, name string) bool {
	c := containerSpec(pod, name, true)
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// initialized: the pod's Initialized condition is True, or it has none
// and its Ready condition is True (which implies it; the snapshot drops the
// conditions a True Ready implies).
func initialized(pod *corev1.Pod) bool {
	ready := false
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodInitialized {
			return c.Status == corev1.ConditionTrue
		}
		ready = ready || c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
	}
	return ready
}

func containerSpec(pod *corev1.Pod, name string, init bool) *corev1.Container {
	list := pod.Spec.Containers
	if init {
		list = pod.Spec.InitContainers
	}
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}

// problemSince is when the pod stopped being ready (or initialized, for init
// containers), else when it started, else when it was created.
func problemSince(pod *corev1.Pod, init bool) time.Time {
	if init {
		return lostSince(pod, corev1.PodInitialized)
	}
	return lostSince(pod, corev1.PodReady)
}

// NotReadySince is when the pod stopped being ready: its Ready condition's
// last transition to not True; for a pod whose status does not date it
// (no Ready condition yet), when it started, else when it was created.
// Zero for a ready pod. Every "the pod has not been ready for N minutes"
// is measured from it. A container's own NotReady cause starts its
// NotReadyAfter allowance at the container's last start when that is later
// (containerProblem): a container that just restarted is starting again.
func NotReadySince(pod *corev1.Pod) time.Time {
	if Ready(pod) {
		return time.Time{}
	}
	return lostSince(pod, corev1.PodReady)
}

// lostSince is when the pod's condition of type t became not True, else
// when the pod started, else when it was created.
func lostSince(pod *corev1.Pod, t corev1.PodConditionType) time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == t && c.Status != corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	if pod.Status.StartTime != nil {
		return pod.Status.StartTime.Time
	}
	return pod.CreationTimestamp.Time
}

var (
	pullNotFound = []string{"not found", "manifest unknown", "name unknown", "repository does not exist", "no such image",
		"does not exist", "notfound"}
	pullDenied = []string{"unauthorized", "authentication required", "access denied", "denied:", "403 forbidden", "401 unauthorized",
		"insufficient_scope", "requested access to the resource is denied", "no basic auth credentials", "forbidden"}
	// pullDecisivelyDenied are a registry's words that settle Docker's
	// "does not exist or may require" in favour of credentials.
	pullDecisivelyDenied = []string{"unauthorized", "authentication required", "insufficient_scope", "no basic auth credentials"}
	pullRateLimited      = []string{"toomanyrequests", "too many requests", "rate limit"}
	// pullTLS: the node and the registry agree on no trusted TLS.
	pullTLS = []string{"x509:", "certificate signed by unknown authority", "certificate has expired", "tls: failed to verify certificate",
		"server gave http response to https client"}
	// pullPlatform: containerd's, Docker's and CRI-O's words for an image
	// with no build for the node's platform.
	pullPlatform = []string{"no match for platform in manifest", "no matching manifest for", "no image found in manifest list for architecture",
		"does not match the specified platform", "no image found in image index for architecture"}
	pullUnreachable = []string{"no such host", "i/o timeout", "connection refused", "network is unreachable", "tls handshake timeout",
		"context deadline exceeded", "connection reset", "server misbehaving", "503 service unavailable",
		"502 bad gateway", "dial tcp"}
)

// ClassifyPull tells a missing image from refused credentials from a
// registry that cannot be reached or rate-limits, from the kubelet's
// waiting reason and message. Docker Hub answers "pull access denied ...
// repository does not exist or may require 'docker login'" both for
// repositories that do not exist and for private ones without
// credentials: that is PullAmbiguous, never "not found" alone.
func ClassifyPull(reason, message string) PullFailure {
	switch reason {
	case "InvalidImageName":
		return PullInvalidName
	case "ErrImageNeverPull":
		return PullNever
	}
	m := strings.ToLower(message)
	switch {
	case containsAny(m, pullPlatform):
		return PullPlatform
	case containsAny(m, pullRateLimited):
		return PullRateLimited
	case strings.Contains(m, "repository does not exist or may require"):
		// The daemon's phrase hedges; a registry's own words after it
		// ("unauthorized: authentication required", "insufficient_scope")
		// do not: then it is credentials.
		if containsAny(m, pullDecisivelyDenied) {
			return PullAccessDenied
		}
		return PullAmbiguous
	case containsAny(m, pullDenied):
		return PullAccessDenied
	case containsAny(m, pullNotFound):
		return PullNotFound
	case containsAny(m, pullTLS):
		return PullTLS
	case containsAny(m, pullUnreachable):
		return PullUnreachable
	}
	return PullUnknown
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

var (
	missingObject = regexp.MustCompile(`(?i)\b(configmap|secret)s? "([^"]+)" not found`)
	missingKey    = regexp.MustCompile(`(?i)couldn't find key (\S+) in (ConfigMap|Secret) ([^/\s]+)/(\S+)`)
)

// MissingConfig reads which ConfigMap or Secret (and key) a
// CreateContainerConfigError message says is missing: `secret "db" not
// found`, `couldn't find key password in Secret shop/db`. Secrets are never
// read to check: the kubelet already did.
func MissingConfig(message string) (kind, name, key string) {
	if m := missingKey.FindStringSubmatch(message); m != nil {
		return canonicalKind(m[2]), m[4], m[1]
	}
	if m := missingObject.FindStringSubmatch(message); m != nil {
		return canonicalKind(m[1]), m[2], ""
	}
	return "", "", ""
}

// Exec failures as runc, crun, containerd and CRI-O word them.
var (
	execNotFound = []*regexp.Regexp{
		regexp.MustCompile(`exec: "([^"]+)": executable file not found in \$PATH`),
		regexp.MustCompile("executable file [`'\"]([^`'\"]+)[`'\"] not found in \\$PATH"),
		regexp.MustCompile(`exec: "([^"]+)": stat [^:]+: no such file or directory`),
		regexp.MustCompile(`exec ([^:\s]+): no such file or directory`),
	}
	execDenied = []*regexp.Regexp{
		regexp.MustCompile(`exec: "([^"]+)": permission denied`),
		regexp.MustCompile(`exec ([^:\s]+): permission denied`),
	}
)

// ExecFailure reads a runtime's message for a container whose command
// cannot be run: the program and whether it is missing from the image (or
// its $PATH) or not executable. Empty when the message says neither.
func ExecFailure(message string) (program string, denied bool) {
	for _, re := range execNotFound {
		if m := re.FindStringSubmatch(message); m != nil {
			return m[1], false
		}
	}
	for _, re := range execDenied {
		if m := re.FindStringSubmatch(message); m != nil {
			return m[1], true
		}
	}
	return "", false
}

// execFormat: the kernel refused the program as not built for its
// architecture: runc's "exec /app: exec format error", its older
// "exec user process caused: exec format error", crun's "exec format
// error" after the path.
var execFormat = []*regexp.Regexp{
	regexp.MustCompile(`exec user process caused:? "?exec format error`),
	regexp.MustCompile(`exec:? "?([^\s":]+)"?: exec format error`),
	regexp.MustCompile(`(\S+): exec format error`),
}

// WrongArch reads a runtime's message for a program built for another
// architecture than the node's: the program ("" when the message does not
// name it) and true.
func WrongArch(message string) (program string, ok bool) {
	if !strings.Contains(message, "exec format error") {
		return "", false
	}
	for _, re := range execFormat {
		if m := re.FindStringSubmatch(message); m != nil {
			if len(m) > 1 {
				return strings.Trim(m[1], `"`), true
			}
			return "the container's program", true
		}
	}
	return "the container's program", true
}

func canonicalKind(s string) string {
	if strings.EqualFold(s, "secret") {
		return "Secret"
	}
	return "ConfigMap"
}
