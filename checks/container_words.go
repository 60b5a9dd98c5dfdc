package checks

import (
	"fmt"
	"strings"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

// The words of container problems (kube.ContainerProblem, kube.OwnerProblem):
// workload-pods says them in full, apiservice-unavailable and
// admission-webhooks name the backend's problem with them.

// backendSentence is a kube.BackendProblem in words:
// "deployment/metrics-server is crash-looping: its last termination
// message says ...".
func backendSentence(g *kube.OwnerProblem) string {
	ex := g.Example()
	who := g.Owner.KindName()
	if spec := g.Owner.Spec; spec != nil && len(spec.Containers)+len(spec.InitContainers) > 1 {
		who += " (container " + ex.Container + ")"
	}
	return fmt.Sprintf("%s %s", who, problemSummary(ex))
}

// inspectProblem is the command that shows an owner problem's evidence:
// the crashed container's previous logs, or the pod's events.
func inspectProblem(g *kube.OwnerProblem) (text, command string) {
	ex := g.Example()
	ns := g.Owner.Ref.Namespace
	switch g.Cause {
	case kube.CrashLoop, kube.OOMKill:
		target := "pod/" + g.Pods[0].Name
		switch g.Owner.Ref.Kind {
		case "Deployment":
			target = "deploy/" + g.Owner.Ref.Name
		case "StatefulSet":
			target = "sts/" + g.Owner.Ref.Name
		}
		return "read the crashed container's logs", fmt.Sprintf("kubectl logs -n %s %s -c %s --previous", ns, target, ex.Container)
	}
	return "see the kubelet's verdict in the pod's events", fmt.Sprintf("kubectl describe pod -n %s %s", ns, g.Pods[0].Name)
}

// missingWords names what a ConfigError says is missing: "configmap
// app-config", "key password in secret db-creds"; "" when the message
// names nothing.
func missingWords(p kube.ContainerProblem) string {
	kind, name, key := p.MissingKind, p.MissingName, p.MissingKey
	switch {
	case name == "":
		return ""
	case key != "":
		return fmt.Sprintf("key %s in %s %s", key, strings.ToLower(kind), name)
	}
	return strings.ToLower(kind) + " " + name
}

// exitCodeMeaning says what a container's exit code usually means: 128+N is
// death by signal N.
func exitCodeMeaning(code int32) string {
	switch code {
	case 0:
		return "exited successfully, but the container is expected to keep running"
	case 1:
		return "application error"
	case 2:
		return "misuse of a shell builtin or bad arguments"
	case 126:
		return "command cannot execute (permissions)"
	case 127:
		return "command not found"
	case 128 + 6:
		return "SIGABRT: the process aborted"
	case 128 + 9:
		return "SIGKILL: killed, by the OOM killer or after ignoring SIGTERM"
	case 128 + 11:
		return "SIGSEGV: segmentation fault"
	case 128 + 15:
		return "SIGTERM: asked to stop, e.g. by a failed liveness probe"
	case 255:
		return "exit status out of range or fatal error"
	}
	if code > 128 && code < 128+65 {
		return fmt.Sprintf("killed by signal %d", code-128)
	}
	if code < 0 {
		// A Linux process exits with 0-255; a negative code was written
		// by the runtime or the kubelet when they had none to report
		// (-1), or is a Windows status (an NTSTATUS such as 0xC0000005
		// read as a signed number).
		return "not an exit status of the application: the container runtime could not report one (or, on Windows, a crash status)"
	}
	return "application error"
}

// terminationWords is a container's last termination in words: "exit
// code 1 (application error), reason Error".
func terminationWords(t *kube.Termination) string {
	meaning := exitCodeMeaning(t.ExitCode)
	if t.ExitCode == 128+9 && t.Reason != "OOMKilled" {
		// Reason Error with SIGKILL is a kill from outside (a probe, a
		// stop that ignored SIGTERM), never the OOM killer's.
		meaning = "SIGKILL, not an OOM kill: killed from outside, e.g. after failed liveness probes or ignoring SIGTERM"
	}
	if t.Reason == "StartError" || t.Reason == "ContainerCannotRun" {
		// The runtime never started the process: the code is its own.
		meaning = "the runtime could not start the process"
	}
	s := fmt.Sprintf("exit code %d (%s)", t.ExitCode, meaning)
	if t.Reason != "" && t.Reason != "Error" && t.Reason != "Completed" {
		s += ", reason " + t.Reason
	}
	return s
}

// problemSummary is a container problem in a few words, for messages of
// other checks: "is crash-looping: its last termination message says ...".
func problemSummary(p kube.ContainerProblem) string {
	switch p.Cause {
	case kube.CrashLoop:
		s := "is crash-looping"
		if p.Last != nil {
			if p.Last.Message != "" {
				return s + ": its last termination message says " + quote(p.Last.Message)
			}
			return s + ": last " + terminationWords(p.Last)
		}
		return s
	case kube.OOMKill:
		s := "is OOM-killed"
		if p.MemoryLimit != nil {
			s += " at its " + p.MemoryLimit.String() + " memory limit"
		}
		return s
	case kube.ImagePull:
		return fmt.Sprintf("cannot pull image %s: %s", p.Image, pullShort[p.Pull])
	case kube.ConfigError:
		if m := missingWords(p); m != "" {
			return fmt.Sprintf("cannot start: %s does not exist", m)
		}
		return "cannot start: " + quote(p.Message)
	case kube.NodeNotReady:
		return "is on a node that is not ready"
	case kube.InitRunning:
		return "is stuck initializing: init container " + p.Container + " never finishes"
	case kube.NotReady:
		return "is running but not ready"
	case kube.ReadinessGate:
		return "is not ready: readiness gate " + p.Container + " is not True"
	}
	return string(p.Cause)
}

// pullShort names an image pull failure in a container's problem.
var pullShort = map[kube.PullFailure]string{
	kube.PullNotFound:     "not found",
	kube.PullAccessDenied: "access denied",
	kube.PullAmbiguous:    "not found or access denied",
	kube.PullRateLimited:  "rate limited",
	kube.PullUnreachable:  "registry unreachable",
	kube.PullInvalidName:  "invalid image name",
	kube.PullNever:        "not present with imagePullPolicy Never",
	kube.PullPlatform:     "no build for the node's platform",
	kube.PullTLS:          "registry certificate not trusted",
	kube.PullUnknown:      "failing",
}
