package checks

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

// probeOf is the container's probe of that kind ("liveness", "startup",
// "readiness"), nil when it declares none.
func probeOf(c *corev1.Container, kind string) *corev1.Probe {
	if c == nil {
		return nil
	}
	switch kind {
	case "liveness":
		return c.LivenessProbe
	case "startup":
		return c.StartupProbe
	}
	return c.ReadinessProbe
}

// describeProbe is "httpGet :8080/healthz, timeout 1s, every 10s, 3 failures".
func describeProbe(pr *corev1.Probe) string {
	var what string
	switch h := pr.ProbeHandler; {
	case h.HTTPGet != nil:
		what = fmt.Sprintf("httpGet :%s%s", h.HTTPGet.Port.String(), h.HTTPGet.Path)
	case h.TCPSocket != nil:
		what = "tcpSocket :" + h.TCPSocket.Port.String()
	case h.GRPC != nil:
		what = fmt.Sprintf("grpc :%d", h.GRPC.Port)
	case h.Exec != nil:
		what = "exec " + clipLine(strings.Join(h.Exec.Command, " "), 60)
	default:
		what = "probe"
	}
	orDefault := func(v, d int32) int32 {
		if v == 0 {
			return d
		}
		return v
	}
	return fmt.Sprintf("%s, timeout %ds, every %ds, %d failures", what, orDefault(pr.TimeoutSeconds, 1), orDefault(pr.PeriodSeconds, 10), orDefault(pr.FailureThreshold, 3))
}

func specContainer(pod *corev1.Pod, name string) *corev1.Container {
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// containerOfField reads "spec.containers{app}" (an event's fieldPath).
func containerOfField(fp string) string {
	_, rest, ok := strings.Cut(fp, "{")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "}")
	return name
}

// probeKill says whether the kubelet killed the group's container after
// failed liveness or startup probes (its Killing and Unhealthy events), with
// the probe's spec and the newest failure message: a SIGKILL exit 137 with
// reason Error is such a kill or a stop that ignored SIGTERM, never an OOM
// kill (that is reason OOMKilled).
func probeKill(p *doctor.Pass, g *kube.OwnerProblem, container string) (kind, phrase string, ok bool) {
	kind, phrase, _, ok = probeKillFailure(p, g, container)
	return kind, phrase, ok
}

// probeKillFailure is probeKill with the newest Unhealthy event (nil when
// none is left).
func probeKillFailure(p *doctor.Pass, g *kube.OwnerProblem, container string) (kind, phrase string, failure *kube.Warning, ok bool) {
	containerWarnings(p, g, container, func(w *kube.Warning) {
		ec := kube.ClassifyEvent(w.Reason, w.Message)
		if ec.Class != kube.EventLivenessKill && ec.Class != kube.EventStartupKill {
			return
		}
		if kind == "" {
			kind = "liveness"
			if ec.Class == kube.EventStartupKill {
				kind = "startup"
			}
		}
		if w.Reason == "Unhealthy" && (failure == nil || w.Last.After(failure.Last)) {
			failure = w
		}
	})
	if kind == "" {
		return "", "", nil, false
	}
	phrase = "the kubelet kills it after failed " + kind + " probes"
	if pr := probeOf(specContainer(g.Pods[0], container), kind); pr != nil {
		phrase += " (" + describeProbe(pr) + ")"
	}
	if failure != nil {
		phrase += ": " + quote(failure.Message)
		if failure.Count > 1 {
			phrase += fmt.Sprintf(" (x%d)", failure.Count)
		}
	}
	return kind, phrase, failure, true
}

// probeTimedOut: the probe's failure is its own timeout (the kubelet's
// HTTP client, a gRPC deadline, an exec probe that ran out of time), not
// an answer from the application.
var probeTimedOut = regexp.MustCompile(`(?i)context deadline exceeded|Client\.Timeout|i/o timeout|timed out|timeout:`)

// probeRemediation is what to change when the kubelet kills the group's
// container after failed liveness or startup probes, from the newest
// failure: a probe that times out (timeoutSeconds, 1 second by default, is
// shorter than the endpoint takes: raise it, or make the endpoint answer
// without waiting on dependencies); a startup probe whose window
// (failureThreshold × periodSeconds) is shorter than the start; otherwise
// the endpoint's own answer, which the logs explain. The patch names the
// container by its index in the owner's template.
func probeRemediation(p *doctor.Pass, g *kube.OwnerProblem, container string) []doctor.Remediation {
	kind, _, failure, ok := probeKillFailure(p, g, container)
	if !ok || g.Owner.Spec == nil || g.Owner.Ref.Kind == "Pod" {
		return nil
	}
	idx := slices.IndexFunc(g.Owner.Spec.Containers, func(c corev1.Container) bool { return c.Name == container })
	if idx < 0 {
		return nil
	}
	// The pod's probe is the one that failed (the template may have
	// changed since); one that only the pod has (a webhook injected it
	// with its container) is not the template's to patch.
	pr := probeOf(specContainer(g.Pods[0], container), kind)
	if pr == nil || probeOf(&g.Owner.Spec.Containers[idx], kind) == nil {
		return nil
	}
	field := kind + "Probe"
	patch := func(what string, value int32) string {
		return fmt.Sprintf(`kubectl patch %s -n %s --type=json -p '[{"op":"add","path":"%s/containers/%d/%s/%s","value":%d}]'`,
			g.Owner.KindName(), g.Owner.Ref.Namespace, g.Owner.SpecPath, idx, field, what, value)
	}
	timeout := max(pr.TimeoutSeconds, 1)
	var portFix []doctor.Remediation
	if failure != nil && strings.Contains(failure.Message, "connection refused") {
		// The template's probe, not the pod's: a mesh (Istio) rewrites
		// the pod's probes to its agent's port.
		if r, ok := undeclaredProbePort(g, idx, kind, probeOf(&g.Owner.Spec.Containers[idx], kind)); ok {
			portFix = append(portFix, r)
		}
	}
	if rem := probeLimitRemediation(kind, pr, failure, timeout, patch); len(rem) > 0 || len(portFix) > 0 {
		return append(portFix, rem...)
	}
	return nil
}

// probeLimitRemediation is the fix of a probe's own limit: a timeout too
// short for the endpoint, a startup window too short for the start.
func probeLimitRemediation(kind string, pr *corev1.Probe, failure *kube.Warning, timeout int32, patch func(string, int32) string) []doctor.Remediation {
	switch {
	case failure != nil && probeTimedOut.MatchString(failure.Message):
		return []doctor.Remediation{{
			Text:    fmt.Sprintf("the %s probe gives up after %ds: raise its timeoutSeconds (and make the endpoint answer without waiting on the app's dependencies)", kind, timeout),
			Command: patch("timeoutSeconds", max(5, 2*timeout))}}
	case kind == "startup":
		period, threshold := pr.PeriodSeconds, pr.FailureThreshold
		if period <= 0 {
			period = 10 // the API's defaults
		}
		if threshold <= 0 {
			threshold = 3
		}
		return []doctor.Remediation{{
			Text:    fmt.Sprintf("the startup probe allows %ds (%d failures every %ds) before the kubelet kills the container: give it the time the application needs to start", period*threshold, threshold, period),
			Command: patch("failureThreshold", 3*threshold)}}
	}
	return nil
}

// undeclaredProbePort: a probe refused on a port number the container
// does not declare, when it declares others, most likely probes the wrong
// port (a port changed in the app, not in the probe). The fix points the
// probe at the declared port: the only one, or the one named like a health
// or HTTP port.
func undeclaredProbePort(g *kube.OwnerProblem, idx int, kind string, pr *corev1.Probe) (doctor.Remediation, bool) {
	c := &g.Owner.Spec.Containers[idx]
	var port intstr.IntOrString
	var field string
	switch {
	case pr.HTTPGet != nil:
		port, field = pr.HTTPGet.Port, "httpGet"
	case pr.TCPSocket != nil:
		port, field = pr.TCPSocket.Port, "tcpSocket"
	default:
		return doctor.Remediation{}, false
	}
	if port.Type != intstr.Int || len(c.Ports) == 0 {
		return doctor.Remediation{}, false
	}
	var declared []string
	var to *corev1.ContainerPort
	for i := range c.Ports {
		cp := &c.Ports[i]
		if cp.ContainerPort == port.IntVal {
			return doctor.Remediation{}, false
		}
		name := fmt.Sprint(cp.ContainerPort)
		if cp.Name != "" {
			name = cp.Name + "=" + name
		}
		declared = append(declared, name)
		if len(c.Ports) == 1 || to == nil && (strings.Contains(cp.Name, "health") || cp.Name == "http") {
			to = cp
		}
	}
	text := fmt.Sprintf("the %s probe connects to port %d, which container %s does not declare (it declares %s), and is refused: if the app listens only on the declared port, point the probe there",
		kind, port.IntVal, c.Name, strings.Join(declared, ", "))
	if to == nil {
		return doctor.Remediation{Text: text, Command: fmt.Sprintf("kubectl edit %s -n %s", g.Owner.KindName(), g.Owner.Ref.Namespace)}, true
	}
	return doctor.Remediation{Text: text,
		Command: fmt.Sprintf(`kubectl patch %s -n %s --type=json -p '[{"op":"replace","path":"%s/containers/%d/%sProbe/%s/port","value":%d}]'`,
			g.Owner.KindName(), g.Owner.Ref.Namespace, g.Owner.SpecPath, idx, kind, field, to.ContainerPort)}, true
}

// readinessFailure quotes the newest readiness probe failure of the group.
func readinessFailure(p *doctor.Pass, g *kube.OwnerProblem, container string) string {
	if p.Snapshot.Err(kube.WarningEventReads) != nil {
		return ""
	}
	var newest *kube.Warning
	containerWarnings(p, g, container, func(w *kube.Warning) {
		if kube.ClassifyEvent(w.Reason, w.Message).Class == kube.EventReadiness && (newest == nil || w.Last.After(newest.Last)) {
			newest = w
		}
	})
	s := ""
	if pr := probeOf(specContainer(g.Pods[0], container), "readiness"); pr != nil {
		s = " (" + describeProbe(pr) + ")"
	}
	if newest != nil {
		s += ": " + quote(newest.Message)
	}
	return s
}

// containerWarnings calls fn for each Warning event about the group's pods
// that concerns the container (or no container in particular); none when
// the scan could not read Warning events.
func containerWarnings(p *doctor.Pass, g *kube.OwnerProblem, container string, fn func(*kube.Warning)) {
	if p.Snapshot.Err(kube.WarningEventReads) != nil {
		return
	}
	x := kube.WarningEventsOf(p.Snapshot)
	for _, pod := range g.Pods {
		for _, w := range x.AboutPod(pod) {
			if c := containerOfField(w.FieldPath); c == "" || c == container {
				fn(w)
			}
		}
	}
}

// backOffSince is when the kubelet began backing off the group's
// container: the earliest first time of its "Back-off restarting failed
// container" events. A loop that goes on keeps its event alive past the
// events' time to live, so its first time is the loop's start; zero when
// no such event is left (or events were not read).
func backOffSince(p *doctor.Pass, g *kube.OwnerProblem) time.Time {
	var first time.Time
	containerWarnings(p, g, g.Example().Container, func(w *kube.Warning) {
		if w.Reason == "BackOff" && strings.HasPrefix(w.Message, "Back-off restarting failed container") &&
			!w.First.IsZero() && (first.IsZero() || w.First.Before(first)) {
			first = w.First
		}
	})
	return first
}
