package checks

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// RuntimeSocket finds workloads that talk to the container runtime through a
// hostPath socket of a runtime their nodes do not run, and lists every
// workload with that kind of host-level access.
var RuntimeSocket = &doctor.Check{
	Name:     "runtime-socket",
	Severity: doctor.Warning,
	Origin:   "VPC CNI #714",
	// Controllers give the templates a fix changes; pods whose controller
	// is not in the input (a must-gather or kubectl output holding pods
	// only) are judged from their own spec, grouped by controller.
	Reads:    []snapshot.Resource{snapshot.Nodes, snapshot.Pods},
	Optional: []snapshot.Resource{snapshot.ReplicaSets, snapshot.Deployments, snapshot.DaemonSets, snapshot.StatefulSets, snapshot.Jobs, snapshot.CronJobs},
	Run:      runRuntimeSocket,
	Doc: `Workloads mounting a container-runtime socket their nodes do not serve, and every workload with runtime access

## Why it matters
Node agents — CNI daemons, log shippers, monitoring and security agents —
reach the container runtime through its socket mounted from the host:
` + "`/var/run/docker.sock`" + ` (Docker Engine), ` + "`/var/run/dockershim.sock`" + ` (the kubelet's
dockershim, removed in Kubernetes 1.24), ` + "`/run/containerd/containerd.sock`" + `,
` + "`/var/run/crio/crio.sock`" + `. The socket differs per runtime: amazon-vpc-cni-k8s
PR #714 moved ipamd from the Docker API to the CRI socket for this
reason, after ipamd's view of the node's pods went wrong and pod IPs leaked.
An agent whose socket belongs to a runtime the node does not run finds no
socket, or an empty directory the runtime created in its place: it starts,
sees no containers, and silently does nothing — or, with hostPath type
` + "`Socket`" + `, never starts. Separately, any workload that can reach the runtime
socket controls every container on its node: it is worth knowing which do.

## How it is detected
From one LIST each of nodes, pods, Deployments, ReplicaSets, DaemonSets,
StatefulSets, Jobs and CronJobs. The workloads are Deployments, DaemonSets,
StatefulSets, CronJobs, Jobs not owned by a CronJob, and pods without a
controller. A hostPath volume that a container mounts counts as runtime access
when its path (cleaned) ends in ` + "`docker.sock`, `cri-dockerd.sock`, `dockershim.sock`" + `,
` + "`containerd.sock` or `crio.sock`" + `, or is one of the runtime directories
` + "`/run/containerd`, `/var/run/containerd`, `/run/k3s/containerd`, `/run/crio`" + `,
` + "`/var/run/crio`" + ` — or ` + "`/run`, `/var/run`" + `, which hold every runtime's socket and so
never mismatch. Broader mounts (` + "`/`, `/var`" + `) and the runtimes' data directories
(` + "`/var/lib/containerd`" + `...) are not counted: they are a different concern.

A pod whose controller is not in the input (a capture of pods without their
DaemonSets or ReplicaSets, a must-gather's per-pod files, a controller of a
kind not read) is judged from its own spec, one workload per controller,
on the nodes its pods are bound to; the finding says so. A mirror pod (a
static pod, controlled by its Node) is judged on its node.

The nodes a workload runs or would run on: for a DaemonSet, the nodes that
match its ` + "`nodeSelector`" + ` and required node affinity and whose NoSchedule/NoExecute
taints it tolerates (with the tolerations the DaemonSet controller adds); for
the others, the nodes their pods are bound to, else the node their template
pins with ` + "`nodeName`" + `, else every node matching the template's selector,
affinity and tolerations. Each node's runtime is the scheme of
` + "`status.nodeInfo.containerRuntimeVersion`" + ` (` + "`containerd://1.7.20`, `cri-o://1.30.1`" + `,
` + "`docker://24.0.7`" + `); nodes that report none, or another runtime, are not judged.
A docker or cri-dockerd socket is served by docker nodes, a dockershim socket
by docker nodes whose kubelet is older than 1.24, a containerd or CRI-O socket
(or directory) by that runtime only. When no mounted socket of a workload is
served by some of its nodes, that is one warning for the workload, naming the
sockets and the nodes' runtimes with counts.

Every workload with runtime access is also listed, as one info finding per
namespace (the namespace is the object): agents of one vendor usually share a
namespace, and one line per namespace keeps a large cluster's inventory
readable while still naming each workload and its socket.

## How to fix
Mount the socket of the node's runtime (` + "`/run/containerd/containerd.sock`" + ` for
containerd) and make the agent speak CRI through a crictl-compatible client:
a Docker API client cannot talk to containerd. The remediation gives the
` + "`kubectl patch`" + ` that replaces the host path in the workload. For the inventory,
review why each listed workload needs the runtime, and drop the mount where it
does not: ` + "`kubectl get <kind> <name> -n <ns> -o jsonpath='{.spec.template.spec.volumes}'`" + `.

## References
- https://github.com/aws/amazon-vpc-cni-k8s/pull/714
- https://kubernetes.io/blog/2022/02/17/dockershim-faq/
- https://kubernetes.io/docs/tasks/administer-cluster/migrating-from-dockershim/check-if-dockershim-removal-affects-you/
- https://kubernetes.io/docs/concepts/storage/volumes/#hostpath
- https://kubernetes.io/docs/tasks/debug/debug-cluster/crictl/`,
}

// templateKinds are the controllers whose pod template is at
// /spec/template/spec, which the remediation patches.
var templateKinds = map[string]bool{"Deployment": true, "DaemonSet": true, "StatefulSet": true, "ReplicaSet": true, "ReplicationController": true, "Job": true}

func runRuntimeSocket(p *doctor.Pass) error {
	workloads := socketWorkloads(p.Snapshot)
	if len(workloads) == 0 {
		return nil
	}
	nodeList := p.Snapshot.Nodes()
	nodes := kube.NodesByName(p.Snapshot)
	// The nodes each workload's pods are bound to.
	bound := map[string]map[string]bool{}
	own := kube.OwnersOf(p.Snapshot)
	pods := p.Snapshot.Pods()
	for i := range pods {
		pod := pods[i]
		if pod.Spec.NodeName == "" || kube.Terminal(pod) {
			continue
		}
		key := "Pod/" + pod.Namespace + "/" + pod.Name
		if o, ok := own.Top(pod); ok {
			key = o.Ref.Kind + "/" + o.Ref.Namespace + "/" + o.Ref.Name
		}
		if bound[key] == nil {
			bound[key] = map[string]bool{}
		}
		bound[key][pod.Spec.NodeName] = true
	}

	byNamespace := map[string][]*socketWorkload{}
	for _, w := range workloads {
		byNamespace[w.Ref.Namespace] = append(byNamespace[w.Ref.Namespace], w)
		var targets []*corev1.Node
		how := "it can be scheduled on"
		switch {
		case w.Daemon() && !w.fromPods:
			how = "it targets"
			pl := kube.NewPlacement(w.Spec, true)
			for i := range nodeList {
				if pl.Allows(&nodeList[i]) {
					targets = append(targets, &nodeList[i])
				}
			}
		case len(bound[w.key()]) > 0:
			how = "its pods run on"
			if w.Ref.Kind == "Pod" {
				how = "it runs on"
			}
			for n := range bound[w.key()] {
				if nodes[n] != nil {
					targets = append(targets, nodes[n])
				}
			}
		case w.Spec.NodeName != "":
			how = "it is pinned to"
			if nodes[w.Spec.NodeName] != nil {
				targets = append(targets, nodes[w.Spec.NodeName])
			}
		default:
			pl := kube.NewPlacement(w.Spec, false)
			for i := range nodeList {
				if pl.Allows(&nodeList[i]) {
					targets = append(targets, &nodeList[i])
				}
			}
		}
		reportSocketMismatch(p, w, targets, how)
	}

	namespaces := make([]string, 0, len(byNamespace))
	for ns := range byNamespace {
		namespaces = append(namespaces, ns)
	}
	sort.Strings(namespaces)
	for _, ns := range namespaces {
		ws := byNamespace[ns]
		sort.Slice(ws, func(i, j int) bool { return ws[i].KindName() < ws[j].KindName() })
		var ids, listed []string
		for i, w := range ws {
			ids = append(ids, w.KindName())
			if i < 5 {
				listed = append(listed, fmt.Sprintf("%s (%s)", w.KindName(), w.sockets()))
			} else if i == 5 {
				listed = append(listed, fmt.Sprintf("%d more", len(ws)-5))
			}
		}
		var rem []doctor.Remediation
		for _, w := range ws[:min(len(ws), doctor.MaxExamples)] {
			kind, name, _ := strings.Cut(w.KindName(), "/")
			rem = append(rem, doctor.Remediation{
				Text:    fmt.Sprintf("review why %s needs the runtime, and drop the hostPath volume if it does not", w.KindName()),
				Command: fmt.Sprintf("kubectl get %s %s -n %s -o jsonpath='{%s}'", kind, name, ns, strings.ReplaceAll(w.SpecPath, "/", ".")+".volumes"),
			})
		}
		p.Report(doctor.Finding{
			Severity: doctor.Info,
			Object:   kube.NamespaceRef(ns),
			Message: fmt.Sprintf("%s in namespace %s %s host-level access to the container runtime through a hostPath socket: %s; whoever controls %s controls every container on %s nodes",
				doctor.Plural(len(ws), "workload", "workloads"), ns, map[bool]string{true: "has", false: "have"}[len(ws) == 1],
				strings.Join(listed, ", "), map[bool]string{true: "it", false: "them"}[len(ws) == 1], map[bool]string{true: "its", false: "their"}[len(ws) == 1]),
			Count:       len(ws),
			Examples:    doctor.Examples(ids),
			Members:     workloadMembers(ws),
			Remediation: rem,
		})
	}
	return nil
}

// reportSocketMismatch warns when some of the workload's nodes serve none of
// the runtime sockets it mounts.
func reportSocketMismatch(p *doctor.Pass, w *socketWorkload, targets []*corev1.Node, how string) {
	judged := 0
	badRuntimes := map[string]int{} // containerRuntimeVersion -> nodes
	runtimes := map[string]int{}    // runtime name -> nodes
	var badNodes []string
	for _, n := range targets {
		rv := n.Status.NodeInfo.ContainerRuntimeVersion
		rt := runtimeName(rv)
		if !knownRuntimes[rt] {
			continue
		}
		judged++
		served := false
		for _, m := range w.mounts {
			if m.kind.serves(rt, n.Status.NodeInfo.KubeletVersion) {
				served = true
				break
			}
		}
		if !served {
			badRuntimes[rv]++
			runtimes[rt]++
			badNodes = append(badNodes, n.Name)
		}
	}
	if len(badNodes) == 0 {
		return
	}
	sort.Strings(badNodes)
	var sockets []string
	docker, socketType := false, false
	for _, m := range w.mounts {
		sockets = append(sockets, socketLabels[m.kind]+" "+m.path)
		docker = docker || m.kind == socketDocker || m.kind == socketDockershim || m.kind == socketCRIDockerd
		socketType = socketType || m.socketType
	}
	which := fmt.Sprintf("the %s %s", doctor.Plural(len(badNodes), "node", "nodes"), how)
	if len(badNodes) == 1 {
		which = "the node " + how
	}
	if len(badNodes) < judged {
		which = fmt.Sprintf("%d of the %d nodes %s", len(badNodes), judged, how)
	}
	msg := fmt.Sprintf("%s mounts %s, but %s %s %s: the socket is missing there or belongs to another runtime, so it cannot see or manage their containers",
		w.KindName(), strings.Join(sockets, " and "), which, map[bool]string{true: "runs", false: "run"}[len(badNodes) == 1], counts(badRuntimes))
	if docker {
		msg += " (dockershim was removed in Kubernetes 1.24)"
	}
	if socketType {
		msg += "; its hostPath type is Socket, so its pods fail to mount it and never start there"
	}
	if w.fromPods && !w.static {
		msg += fmt.Sprintf(" (judged from its pods: the %s is not in the input)", w.Ref.Kind)
	}

	// The runtime most of the unserved nodes run is the one to mount.
	target := ""
	for rt, n := range runtimes {
		if target == "" || n > runtimes[target] || (n == runtimes[target] && rt < target) {
			target = rt
		}
	}
	want := runtimeSocketPath[target]
	if target == "docker" && w.mounts[0].kind == socketDocker {
		want = "/var/run/docker.sock"
	}
	// Replace the mount that no unserved node can use.
	m := w.mounts[0]
	for _, cand := range w.mounts {
		if !cand.kind.serves(target, "") {
			m = cand
			break
		}
	}
	ns := w.Ref.Namespace
	text := fmt.Sprintf("mount the socket of the nodes' runtime (%s) at %s instead of %s", target, want, m.path)
	if m.kind == socketDocker && target != "docker" {
		text += ", and point the agent at it with a CRI (crictl-compatible) client: a Docker API client cannot talk to " + target
	}
	var fix doctor.Remediation
	switch {
	case w.static:
		fix = doctor.Remediation{Text: "a static pod's spec is a manifest file on its node (the kubelet's staticPodPath, usually /etc/kubernetes/manifests): " + text + " there; the kubelet recreates the pod"}
	case w.fromPods && !templateKinds[w.Ref.Kind]:
		fix = doctor.Remediation{Text: fmt.Sprintf("in the pod template of %s %s (not in the input; a %s), %s", w.Ref.Kind, w.Ref.Name, w.Ref.APIVersion, text),
			Command: fmt.Sprintf("kubectl get %s %s -n %s -o yaml", strings.ToLower(w.Ref.Kind), w.Ref.Name, ns)}
	case w.Ref.Kind == "Pod":
		fix = doctor.Remediation{Text: "a pod's volumes cannot change: recreate it with the right socket; " + text,
			Command: fmt.Sprintf("kubectl get pod %s -n %s -o yaml | sed 's#%s#%s#' | kubectl replace --force -f -", w.Ref.Name, ns, m.path, want)}
	case w.Ref.Kind == "Job":
		fix = doctor.Remediation{Text: "a Job's pod template cannot change: in the manifest it came from, " + text + "; then delete the Job and create it again",
			Command: fmt.Sprintf("kubectl delete job %s -n %s", w.Ref.Name, ns)}
	default:
		fix = doctor.Remediation{Text: text,
			Command: fmt.Sprintf(`kubectl patch %s -n %s --type=json -p '[{"op":"replace","path":"%s/volumes/%d/hostPath/path","value":"%s"}]'`,
				w.KindName(), ns, w.SpecPath, m.index, want)}
	}
	rem := []doctor.Remediation{fix}
	if len(runtimes) > 1 {
		rem = append(rem, doctor.Remediation{Text: "its nodes run different runtimes: mount each runtime's socket (hostPath type unset tolerates a missing one), or split the workload by node label"})
	}
	rem = append(rem,
		doctor.Remediation{Text: "see which runtime each node runs",
			Command: fmt.Sprintf("kubectl get nodes %s -o custom-columns=NAME:.metadata.name,RUNTIME:.status.nodeInfo.containerRuntimeVersion,KUBELET:.status.nodeInfo.kubeletVersion",
				strings.Join(doctor.Examples(badNodes), " "))})
	if w.Ref.Kind != "CronJob" {
		rem = append(rem, doctor.Remediation{Text: "read the agent's complaints about the socket", Command: fmt.Sprintf("kubectl logs %s -n %s --all-containers --tail=50", w.KindName(), ns)})
	}
	p.Report(doctor.Finding{
		Severity:    doctor.Warning,
		Object:      w.Ref,
		Message:     msg,
		Count:       len(badNodes),
		Examples:    doctor.Examples(badNodes),
		Remediation: rem,
	})
}
