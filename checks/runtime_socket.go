package checks

import (
	"fmt"
	"path"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"

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

// socketKind is the runtime a hostPath socket (or socket directory) belongs to.
type socketKind string

const (
	socketDocker     socketKind = "docker"
	socketCRIDockerd socketKind = "cri-dockerd"
	socketDockershim socketKind = "dockershim"
	socketContainerd socketKind = "containerd"
	socketCRIO       socketKind = "cri-o"
	socketAny        socketKind = "any" // /run, /var/run: every runtime's socket
)

var socketLabels = map[socketKind]string{
	socketDocker: "the Docker Engine socket", socketCRIDockerd: "the cri-dockerd socket", socketDockershim: "the dockershim socket",
	socketContainerd: "the containerd socket", socketCRIO: "the CRI-O socket", socketAny: "the host's runtime directory",
}

var socketDirs = map[string]socketKind{
	"/run/containerd": socketContainerd, "/var/run/containerd": socketContainerd, "/run/k3s/containerd": socketContainerd,
	"/run/crio": socketCRIO, "/var/run/crio": socketCRIO,
	"/run": socketAny, "/var/run": socketAny,
}

// classifyHostPath says which runtime's socket a hostPath reaches.
func classifyHostPath(p string) (socketKind, bool) {
	if p == "" {
		return "", false
	}
	clean := path.Clean(p)
	base := path.Base(clean)
	switch {
	case base == "cri-dockerd.sock":
		return socketCRIDockerd, true
	case base == "dockershim.sock":
		return socketDockershim, true
	case strings.HasSuffix(base, "docker.sock"):
		return socketDocker, true
	case strings.HasSuffix(base, "containerd.sock"):
		return socketContainerd, true
	case strings.HasSuffix(base, "crio.sock"):
		return socketCRIO, true
	}
	k, ok := socketDirs[clean]
	return k, ok
}

// knownRuntimes are the containerRuntimeVersion schemes this check judges.
var knownRuntimes = map[string]bool{"containerd": true, "cri-o": true, "docker": true}

// serves says whether a node with this runtime (and kubelet) has the socket.
func (k socketKind) serves(runtime, kubeletVersion string) bool {
	switch k {
	case socketAny:
		return true
	case socketDocker, socketCRIDockerd:
		return runtime == "docker"
	case socketDockershim:
		if runtime != "docker" {
			return false
		}
		v, err := version.ParseGeneric(kubeletVersion)
		return err != nil || v.LessThan(version.MajorMinor(1, 24))
	case socketContainerd:
		return runtime == "containerd"
	case socketCRIO:
		return runtime == "cri-o"
	}
	return false
}

// templateKinds are the controllers whose pod template is at
// /spec/template/spec, which the remediation patches.
var templateKinds = map[string]bool{"Deployment": true, "DaemonSet": true, "StatefulSet": true, "ReplicaSet": true, "ReplicationController": true, "Job": true}

// runtimeSocketPath is where each runtime serves the socket agents should use.
var runtimeSocketPath = map[string]string{
	"containerd": "/run/containerd/containerd.sock",
	"cri-o":      "/var/run/crio/crio.sock",
	"docker":     "/var/run/cri-dockerd.sock",
}

type runtimeMount struct {
	index      int // in spec.volumes, for JSON patches
	path       string
	kind       socketKind
	socketType bool // hostPath type Socket: the kubelet refuses a missing socket
}

type socketWorkload struct {
	*kube.Workload
	mounts []runtimeMount
	// fromPods: the controller is not in the input; Spec is one of its
	// pods' (a mirror pod's own, for a static pod).
	fromPods bool
	static   bool
}

func (w *socketWorkload) key() string { return w.Ref.Kind + "/" + w.Ref.Namespace + "/" + w.Ref.Name }

func (w *socketWorkload) sockets() string {
	var parts []string
	for _, m := range w.mounts {
		parts = append(parts, m.path)
	}
	return strings.Join(parts, ", ")
}

// runtimeMounts are the hostPath volumes of spec that reach a runtime socket
// and that some container mounts.
func runtimeMounts(spec *corev1.PodSpec) []runtimeMount {
	mounted := map[string]bool{}
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range cs {
			for _, vm := range c.VolumeMounts {
				mounted[vm.Name] = true
			}
		}
	}
	var out []runtimeMount
	for i, v := range spec.Volumes {
		if v.HostPath == nil || !mounted[v.Name] {
			continue
		}
		kind, ok := classifyHostPath(v.HostPath.Path)
		if !ok {
			continue
		}
		out = append(out, runtimeMount{index: i, path: v.HostPath.Path, kind: kind,
			socketType: v.HostPath.Type != nil && *v.HostPath.Type == corev1.HostPathSocket})
	}
	return out
}

func socketWorkloads(s *snapshot.Snapshot) []*socketWorkload {
	var out []*socketWorkload
	for w := range kube.TopWorkloads(s) {
		if mounts := runtimeMounts(w.Spec); len(mounts) > 0 {
			out = append(out, &socketWorkload{Workload: w, mounts: mounts})
		}
	}
	// Pods whose controller is not in the input: the pod's spec is the
	// template's (as far as volumes go), one workload per controller.
	own := kube.OwnersOf(s)
	seen := map[string]bool{}
	for _, pod := range s.Pods() {
		top, ok := own.Top(pod)
		if !ok || top.Spec != nil || kube.Terminal(pod) {
			continue // a bare pod, or a listed controller: judged above
		}
		mounts := runtimeMounts(&pod.Spec)
		if len(mounts) == 0 {
			continue
		}
		w := &socketWorkload{Workload: &kube.Workload{Ref: top.Ref, Meta: &pod.ObjectMeta, Spec: &pod.Spec, SpecPath: "/spec/template/spec", Object: pod},
			mounts: mounts, fromPods: true}
		if top.Ref.Kind == "ReplicaSet" {
			// A Deployment's ReplicaSet is named after it and the template's hash.
			if hash := pod.Labels["pod-template-hash"]; hash != "" && strings.HasSuffix(top.Ref.Name, "-"+hash) {
				w.Ref = doctor.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: pod.Namespace, Name: strings.TrimSuffix(top.Ref.Name, "-"+hash)}
			}
		}
		if top.Ref.Kind == "Node" { // a mirror pod: its spec is a manifest on the node
			w.Workload = &kube.Workload{Ref: kube.Ref("v1", "Pod", &pod.ObjectMeta), Meta: &pod.ObjectMeta, Spec: &pod.Spec, SpecPath: "/spec", Object: pod}
			w.static = true
		}
		if seen[w.key()] {
			continue
		}
		seen[w.key()] = true
		out = append(out, w)
	}
	return out
}

func runRuntimeSocket(p *doctor.Pass) error {
	workloads := socketWorkloads(p.Snapshot)
	if len(workloads) == 0 {
		return nil
	}
	nodeList := p.Snapshot.Nodes()
	nodes := map[string]*corev1.Node{}
	for i := range nodeList {
		nodes[nodeList[i].Name] = &nodeList[i]
	}
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
			Object:   doctor.ObjectRef{APIVersion: "v1", Kind: "Namespace", Name: ns},
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

func workloadMembers(ws []*socketWorkload) []doctor.ObjectRef {
	out := make([]doctor.ObjectRef, len(ws))
	for i, w := range ws {
		out[i] = w.Ref
	}
	return out
}
