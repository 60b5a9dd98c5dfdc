package checks

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

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
	if u := stuckDaemonUpdate(p.Snapshot, g); u != nil {
		rem = append(rem, doctor.Remediation{Text: "roll the DaemonSet back to the revision its other nodes run, then fix the new one",
			Command: fmt.Sprintf("kubectl rollout undo daemonset/%s -n %s", u.ds.Name, ns)})
	}
	if u := stuckSetUpdate(g); u != nil {
		rem = append(rem, doctor.Remediation{Text: "roll the StatefulSet back to the revision that served",
			Command: fmt.Sprintf("kubectl rollout undo statefulset/%s -n %s", u.set.Name, ns)},
			doctor.Remediation{Text: "then delete its pods of the failed revision: a StatefulSet does not replace a pod that never became Ready (forced rollback)",
				Command: fmt.Sprintf("kubectl delete pod -n %s %s", ns, strings.Join(u.pods, " "))})
	}
	switch g.Cause {
	case kube.CrashLoop:
		if ex.ExecFormat {
			rem = append(rem, archRemediation(p, g)...)
		} else if ex.Exec != "" {
			rem = append(rem, execRemediation(g, ex))
		} else if ex.Last != nil {
			switch code := ex.Last.ExitCode; {
			case code == 0 && ex.Last.Reason != "OOMKilled" && g.Owner.Ref.Kind != "Job" && g.Owner.Ref.Kind != "CronJob":
				// It finishes and is started again: a task run as a
				// service, or a server that does not stay in the foreground.
				r := execRemediation(g, ex)
				r.Text = "the container exits successfully and is restarted because its owner expects it to keep running: run a one-shot task as a Job or CronJob, else make the command stay in the foreground"
				rem = append(rem, r)
			case code == 126 || code == 127:
				// A shell's "not executable" / "not found" for a program in
				// its script: the command says which.
				r := execRemediation(g, ex)
				r.Text = "a program the command runs is not found or not executable (exit " + strconv.Itoa(int(code)) + " from a shell): read the command and fix the missing program or its path"
				rem = append(rem, r)
			}
		}
		rem = append(rem, probeRemediation(p, g, ex.Container)...)
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
		// The kubelet's events may say what the waiting message does not;
		// the finding's words already use them.
		pull, _ := pullFromEvents(p, g, ex)
		switch pull {
		case kube.PullAccessDenied:
			rem = append(rem, doctor.Remediation{Text: "give the pods credentials for the registry",
				Command: fmt.Sprintf("kubectl create secret docker-registry regcred -n %s --docker-server=%s --docker-username=<user> --docker-password=<token>", ns, registryOf(ex.Image))})
			if missing := missingPullSecrets(p, g.Pods[0]); len(missing) > 0 {
				// The secret they name does not exist: create it under
				// that name, and the pods pull with it once recreated.
				rem[len(rem)-1] = doctor.Remediation{Text: fmt.Sprintf("create the pull secret %s the pods name (the kubelet cannot find it in namespace %s)", missing[0], ns),
					Command: fmt.Sprintf("kubectl create secret docker-registry %s -n %s --docker-server=%s --docker-username=<user> --docker-password=<token>", missing[0], ns, registryOf(ex.Image))}
			} else if secrets := g.Pods[0].Spec.ImagePullSecrets; len(secrets) > 0 {
				var names []string
				for _, r := range secrets {
					names = append(names, r.Name)
				}
				// Renew the secret the pods name in place: a new one under
				// another name would be used by no pod.
				text := fmt.Sprintf("the pods already use imagePullSecrets %s: the registry rejects the credentials, renew them in place (the kubelet reads the secret at each pull)", strings.Join(names, ", "))
				if reg := registryOf(ex.Image); strings.Contains(reg, ".dkr.ecr.") && strings.HasSuffix(reg, ".amazonaws.com") {
					text += "; ECR passwords expire after 12 hours, so a static secret stops working: use the kubelet's ECR credential provider or a job that refreshes it"
				}
				secret := names[0]
				if len(names) > 1 {
					// Which one is for this registry is in the Secrets,
					// which kubectl-doctor does not read.
					secret = "<secret-for-" + registryOf(ex.Image) + ">"
				}
				rem[len(rem)-1] = doctor.Remediation{Text: text,
					Command: fmt.Sprintf("kubectl create secret docker-registry %s -n %s --docker-server=%s --docker-username=<user> --docker-password=<token> --dry-run=client -o yaml | kubectl apply -f -", secret, ns, registryOf(ex.Image))}
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
		case kube.PullPlatform:
			rem = append(rem, archRemediation(p, g)...)
		case kube.PullTLS:
			reg := registryOf(ex.Image)
			rem = append(rem, doctor.Remediation{Text: "make the nodes' container runtime trust the registry " + reg + ": its CA under containerd's /etc/containerd/certs.d/" + reg + "/ (or CRI-O's /etc/containers/certs.d/), or a certificate from a CA the nodes trust; a plain-HTTP registry must be configured as such",
				Command: fmt.Sprintf("kubectl describe pod -n %s %s", ns, g.Pods[0].Name)})
		case kube.PullUnreachable:
			rem = append(rem, doctor.Remediation{Text: "check the node can resolve and reach the registry " + registryOf(ex.Image) + " (DNS, proxy, firewall, certificates)",
				Command: fmt.Sprintf("kubectl describe pod -n %s %s", ns, g.Pods[0].Name)})
		case kube.PullUnknown:
			// Nothing says why (a bare back-off, no pull error event left):
			// a missing image is only one of the possibilities.
			rem = append(rem, doctor.Remediation{Text: "the status does not say why the pull fails: read the kubelet's pull errors (not found, credentials, registry unreachable)",
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
		if ex.ExecFormat {
			rem = append(rem, archRemediation(p, g)...)
		} else if ex.Exec != "" {
			rem = append(rem, execRemediation(g, ex))
		}
		switch {
		case ex.MissingKind == "ConfigMap" && ex.MissingKey == "":
			rem = append(rem, doctor.Remediation{Text: "create the ConfigMap the pods reference (or fix the reference)",
				Command: fmt.Sprintf("kubectl create configmap %s -n %s --from-file=<path>", ex.MissingName, ns)})
		case ex.MissingKind == "Secret" && ex.MissingKey == "":
			rem = append(rem, secretRemediation(p, ns, ex.MissingName, "the pods reference"))
		case ex.MissingKey != "":
			rem = append(rem, doctor.Remediation{Text: fmt.Sprintf("add key %s to %s %s (or fix the reference)", ex.MissingKey, strings.ToLower(ex.MissingKind), ex.MissingName),
				Command: fmt.Sprintf("kubectl edit %s %s -n %s", strings.ToLower(ex.MissingKind), ex.MissingName, ns)})
		}
		rem = append(rem, doctor.Remediation{Text: "see the kubelet's error",
			Command: fmt.Sprintf("kubectl describe pod -n %s %s", ns, g.Pods[0].Name)})
	case kube.NotStarted:
		_, _, r := notStarted(p, g)
		rem = append(rem, r...)
	case kube.NodeNotReady:
		nodes := g.Nodes()
		rem = append(rem, doctor.Remediation{Text: "see why the node is not ready (conditions, events, kubelet)",
			Command: "kubectl describe node " + nodes[0]})
		if ex.Reason == "KubeletNotReady" {
			// The kubelet runs and says what is wrong (runtime, CNI): fix
			// that; the node is not shut down.
			rem = append(rem, doctor.Remediation{Text: "fix what the kubelet reports (the node's Ready message; node-health names the cause)",
				Command: fmt.Sprintf("kubectl get node %s -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].message}'", nodes[0])})
		} else {
			rem = append(rem, doctor.Remediation{Text: "once the node is confirmed shut down, mark it out of service so its pods and volumes move",
				Command: fmt.Sprintf("kubectl taint nodes %s node.kubernetes.io/out-of-service=nodeshutdown:NoExecute", strings.Join(nodes, " "))})
		}
	case kube.InitRunning:
		rem = append(rem, doctor.Remediation{Text: "read what the init container is waiting for or doing",
			Command: fmt.Sprintf("kubectl logs -n %s pod/%s -c %s", ns, g.Pods[0].Name, ex.Container)})
		rem = append(rem, doctor.Remediation{Text: "see its command and the pod's events",
			Command: fmt.Sprintf("kubectl describe pod -n %s %s", ns, g.Pods[0].Name)})
	case kube.ReadinessGate:
		rem = append(rem, doctor.Remediation{Text: "see the pod's readiness gates and conditions",
			Command: fmt.Sprintf("kubectl get pod %s -n %s -o jsonpath='{.spec.readinessGates}{\"\\n\"}{.status.conditions}'", g.Pods[0].Name, ns)})
		owner, pods := gateOwner(ex.Container)
		why := "check that " + owner + " runs and can reach the pods: its logs say why it does not set the condition"
		if ex.Reason != "" {
			// It set the condition, to False: its reason and message say
			// why, and its logs say more.
			why = "the condition is set, to False: read what " + owner + " reports about these pods (its logs)"
		}
		rem = append(rem, doctor.Remediation{Text: why, Command: "kubectl get pods -A -o wide | grep -i " + pods})
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

// execRemediation shows the command the container runs, to fix it or the
// image: "kubectl get deployment/api -n shop -o jsonpath=...".
func execRemediation(g *kube.OwnerProblem, ex kube.ContainerProblem) doctor.Remediation {
	list := "containers"
	if ex.Init {
		list = "initContainers"
	}
	target, path := "pod/"+g.Pods[0].Name, ".spec"
	if g.Owner.Spec != nil && g.Owner.Ref.Kind != "Pod" {
		target, path = g.Owner.KindName(), strings.ReplaceAll(g.Owner.SpecPath, "/", ".")
	}
	text := "fix the container's command (or use an image that has " + ex.Exec + ")"
	if ex.ExecDenied {
		text = "fix the container's command (or make " + ex.Exec + " executable in the image: chmod +x)"
	}
	return doctor.Remediation{Text: text,
		Command: fmt.Sprintf(`kubectl get %s -n %s -o jsonpath='{%s.%s[?(@.name=="%s")].command}'`, target, g.Owner.Ref.Namespace, path, list, ex.Container)}
}
