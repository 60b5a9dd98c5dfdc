package checks

import (
	"fmt"
	"strings"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

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
		details += restartWindow(p, g)
		if ex.Last != nil {
			details += ", last " + terminationWords(ex.Last)
			if ex.Intermittent && !ex.Last.FinishedAt.IsZero() {
				// Running again now: when it last failed.
				details += " " + human(p.Now.Sub(ex.Last.FinishedAt)) + " ago"
			}
			if ex.Last.Message != "" && ex.Exec == "" { // an exec failure is said in words below
				details += "; last termination message: " + quote(ex.Last.Message)
			}
		}
		verb = "crash-looping"
		if ex.Intermittent {
			verb = "failing again and again"
		}
		if _, phrase, ok := probeKill(p, g, ex.Container); ok {
			return verb, details + "; " + phrase
		}
		if ex.Exec != "" {
			details += "; " + execWords(ex) + archWords(p, g)
		}
		return verb, details
	case kube.NotStarted:
		details, _, _ = notStarted(p, g)
		return "not starting", details
	case kube.OOMKill:
		details = fmt.Sprintf("%s was killed for exceeding its memory (%s), %s", cp, memoryPhrase(ex), doctor.Plural(int(ex.Restarts), "restart", "restarts")) + restartWindow(p, g)
		if ex.Reason == "" && ex.Last != nil && !ex.Last.FinishedAt.IsZero() {
			// Running again between kills: when the last one was.
			details += ", the last " + human(p.Now.Sub(ex.Last.FinishedAt)) + " ago"
		}
		return "OOM-killed", details
	case kube.ImagePull:
		pull, event := pullFromEvents(p, g, ex)
		details = fmt.Sprintf("%s: image %s %s", cp, ex.Image, pullPhrase(pull))
		if pull == kube.PullPlatform {
			details += platformWords(p, g)
		}
		switch {
		case event != "":
			details += " (" + ex.Reason + "; the kubelet's newest pull error: " + quote(event) + ")"
		case ex.Message != "":
			details += " (" + ex.Reason + ": " + quote(ex.Message) + ")"
		default:
			details += " (" + ex.Reason + ")"
		}
		if pull == kube.PullAccessDenied || pull == kube.PullAmbiguous || pull == kube.PullUnknown {
			details += fmt.Sprintf("; registry %s, %s", registryOf(ex.Image), pullSecretsPhrase(p, g.Pods[0]))
		}
		return "unable to pull the image", details
	case kube.ConfigError:
		if ex.Exec != "" {
			return "unable to start", fmt.Sprintf("%s cannot start: %s%s (%s)", cp, execWords(ex), archWords(p, g), ex.Reason)
		}
		if m := missingWords(ex); m != "" {
			details = fmt.Sprintf("%s cannot be created: %s does not exist (%s)", cp, m, ex.Reason)
		} else {
			details = fmt.Sprintf("%s cannot be created (%s: %s)", cp, ex.Reason, quote(ex.Message))
		}
		return "unable to start", details
	case kube.NodeNotReady:
		return "on a node that is not ready", nodeDownWords(g)
	case kube.InitRunning:
		return "stuck initializing", cp + " has been running all that time without finishing; the main containers wait for it"
	case kube.NotReady:
		return "running but not ready", fmt.Sprintf("%s fails its readiness probe%s, so the pods receive no Service traffic", cp, readinessFailure(p, g, ex.Container))
	case kube.ReadinessGate:
		owner, _ := gateOwner(ex.Container)
		state := "has no condition yet: " + owner + " has not set it"
		if ex.Reason != "" {
			state = "is " + strings.TrimSpace(ex.Reason)
			if ex.Message != "" {
				state += ": " + quote(ex.Message)
			}
		}
		return "running but not ready", fmt.Sprintf("every container is ready, but readiness gate %s %s, so the pods receive no Service traffic", ex.Container, state)
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
	case kube.PullPlatform:
		return "has no build for the node's platform"
	case kube.PullTLS:
		return "cannot be fetched: the node does not trust the registry's TLS certificate (or the registry speaks plain HTTP)"
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

// execWords: "its command gunicorn is not in image shop/api:2 (nor on its
// $PATH)", "its command /entrypoint.sh is not executable in image ...".
func execWords(ex kube.ContainerProblem) string {
	if ex.ExecFormat {
		return fmt.Sprintf("%s in image %s is built for another architecture than its node's (exec format error)", ex.Exec, ex.Image)
	}
	if ex.ExecDenied {
		return fmt.Sprintf("its command %s is not executable in image %s (permission denied)", ex.Exec, ex.Image)
	}
	if strings.HasPrefix(ex.Exec, "/") {
		return fmt.Sprintf("its command %s does not exist in image %s", ex.Exec, ex.Image)
	}
	return fmt.Sprintf("its command %s is not in image %s (not on its $PATH)", ex.Exec, ex.Image)
}

// nodeDownWords: "node n3 stopped reporting (Ready=Unknown,
// NodeStatusUnknown: "Kubelet stopped posting node status."): the pod's
// status is what its kubelet last wrote; the pods tolerate the outage
// without limit, so they are never evicted and nothing replaces them".
func nodeDownWords(g *kube.OwnerProblem) string {
	ex := g.Example()
	nodes := g.Nodes()
	node := "node " + strings.Join(doctor.Examples(nodes), ", ")
	if len(nodes) > 1 {
		node = "nodes " + strings.Join(doctor.Examples(nodes), ", ")
	}
	s := node + ": Ready is not True"
	switch {
	case ex.Message != "":
		s += fmt.Sprintf(" (%s)", strings.Trim(ex.Reason+": "+quote(ex.Message), ": "))
	case ex.Reason != "":
		s += fmt.Sprintf(" (%s)", ex.Reason)
	}
	s += "; the pod status is what the kubelet last wrote"
	forever := true
	for _, pod := range g.Pods {
		forever = forever && kube.ToleratesForever(pod)
	}
	switch {
	case forever:
		s += "; the pods tolerate the outage without a time limit, so they are never evicted and nothing replaces them"
	case g.Owner.Ref.Kind == "StatefulSet":
		s += "; a StatefulSet replaces a pod only once it is deleted, which the node cannot confirm"
	}
	return s
}

// restartWindow is " since the pod started 7d14h ago" for a flapping
// container (kube.ContainerProblem.Flapping) whose loop no back-off event
// dates: the restarts are all the facts, and the pod's age bounds them.
func restartWindow(p *doctor.Pass, g *kube.OwnerProblem) string {
	ex := g.Example()
	if !ex.Flapping || ex.Since.IsZero() || !backOffSince(p, g).IsZero() {
		return ""
	}
	if len(g.Pods) > 1 {
		return fmt.Sprintf(" since the oldest of the pods started %s ago", human(p.Now.Sub(g.Since())))
	}
	return fmt.Sprintf(" since the pod started %s ago", human(p.Now.Sub(ex.Since)))
}

// archWords is the nodes' platform for an exec format error, "" otherwise.
func archWords(p *doctor.Pass, g *kube.OwnerProblem) string {
	if !g.Example().ExecFormat {
		return ""
	}
	return platformWords(p, g)
}

// gateControllers are the controllers known to set readiness gates, by
// the gate's prefix: how to name them, and a word that finds their pods.
var gateControllers = []struct{ prefix, name, pods string }{
	{"target-health.elbv2.k8s.aws/", "the AWS Load Balancer Controller (target health of its target group)", "aws-load-balancer-controller"},
	{"target-health.alb.ingress.k8s.aws/", "the AWS Load Balancer Controller (target health of its target group)", "aws-load-balancer-controller"},
	{"cloud.google.com/load-balancer-neg-ready", "GKE's NEG controller", "neg"},
}

// gateOwner names the controller that sets a readiness gate's condition,
// and a word to find its pods by: a known one's, else the gate's domain.
func gateOwner(gate string) (name, pods string) {
	for _, c := range gateControllers {
		if strings.HasPrefix(gate, c.prefix) {
			return c.name, c.pods
		}
	}
	domain, _, ok := strings.Cut(gate, "/")
	if !ok {
		return "its controller", gate
	}
	first, _, _ := strings.Cut(domain, ".")
	return "the controller of " + domain, first
}
