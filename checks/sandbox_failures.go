package checks

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// SandboxFailures finds pods the scheduler placed but whose node cannot build
// their sandbox (network namespace and pause container), grouped by the cause
// the runtime reports: most often a CNI that has run out of pod IPs or is not
// installed yet.
var SandboxFailures = &doctor.Check{
	Name:     "sandbox-failures",
	Severity: doctor.Warning,
	Origin:   "VPC CNI #714",
	Reads:    []snapshot.Resource{snapshot.Pods, snapshot.Nodes, kube.WarningEventReads},
	Run:      runSandboxFailures,
	Doc: `Pods stuck because their node cannot create the pod sandbox (CNI out of IPs, CNI not ready, runtime timeouts)

## Why it matters
Before any container of a pod starts, the kubelet asks the container runtime
for a pod sandbox, and the runtime asks the CNI plugin for the pod's network
and IP address. When that fails the pod stays ` + "`ContainerCreating`" + ` forever:
it is scheduled, counted against the node's ` + "`max-pods`" + `, and the scheduler keeps
sending more pods to a node that cannot network them. In amazon-vpc-cni-k8s
PR #714 ipamd lost track of its addresses and nodes that should
take 56 pods each stalled at 14 and 28 — one and two ENIs' worth of IPs —
with every further pod failing ` + "`failed to assign an IP address to container`" + `.
The scheduler cannot see this: ` + "`status.allocatable.pods`" + ` (the kubelet's
` + "`maxPods`" + `) says the node has room, and only the kubelet's events say otherwise.

## How it is detected
From one LIST of pods, one of nodes and the scan's one list of Warning
events (its ` + "`FailedCreatePodSandBox`" + ` events): a pod is stuck when
it is bound to a node (` + "`spec.nodeName`" + `), not Succeeded or Failed, has no running
container, and has FailedCreatePodSandBox events (matched by
` + "`involvedObject`" + ` kind Pod, namespace and name, and uid when the event has one, so
events of an earlier pod of the same name do not count). Each pod's most
recent event message gives the cause:
- **IP exhaustion**: ` + "`failed to assign an IP address`, `no available IP addresses`" + `,
` + "`failed to allocate for range`, `no IP addresses available`, `range is full`" + `;
- **CNI not installed or not initialised**: ` + "`cni plugin not initialized`" + `,
` + "`failed to find plugin`, `network plugin is not ready`, `cni config uninitialized`" + `,
the VPC CNI's ` + "`Error received from AddNetwork gRPC call`" + ` (ipamd not answering);
- **runtime timeout**: ` + "`context deadline exceeded`" + `;
- anything else.

There is one finding per cause, naming every node it hits with its stuck pod
count: one broken CNI release or one exhausted subnet is one root cause, and
fifty nodes failing the same way should not be fifty findings. The finding's
object is the node with the most stuck pods. For IP exhaustion, each node's
pods that hold a sandbox (not terminal, with a running container or a pod IP)
are compared with its ` + "`status.allocatable.pods`" + `: running out below that number
means the node's max-pods is higher than what the CNI can address (the amazon-vpc-cni-k8s story's
14 of 29), and the message says so with both numbers. Warning; critical when
ten or more pods are stuck on one node.

## How to fix
Read the pod's events (` + "`kubectl describe pod`" + `) and, on the node, the CNI's own log
(` + "`/var/log/aws-routed-eni/ipamd.log`" + ` for the VPC CNI), the runtime's journal
(` + "`journalctl -u containerd`" + `) and ` + "`crictl pods`" + `. For IP exhaustion with the VPC
CNI, turn on prefix delegation
(` + "`kubectl set env daemonset aws-node -n kube-system ENABLE_PREFIX_DELEGATION=true`" + `)
or add subnets and raise the warm IP/ENI targets; with host-local IPAM look for
leaked reservations in ` + "`/var/lib/cni/networks/`" + `. In every case set the kubelet's
` + "`maxPods`" + ` to what the CNI can really address, so the scheduler stops placing
pods there that cannot get an IP. When the CNI is not initialised, check its
agent pod on the node and ` + "`/etc/cni/net.d`" + `. Timeouts point at an overloaded node
or a hung CNI plugin: read the runtime's journal.

## References
- https://github.com/aws/amazon-vpc-cni-k8s/pull/714
- https://docs.aws.amazon.com/eks/latest/userguide/cni-increase-ip-addresses.html
- https://github.com/aws/amazon-vpc-cni-k8s/blob/master/docs/troubleshooting.md
- https://kubernetes.io/docs/concepts/extend-kubernetes/compute-storage-net/network-plugins/
- https://kubernetes.io/docs/tasks/debug/debug-application/debug-pods/`,
}

const sandboxCritical = 10 // stuck pods on one node

// sandboxCause is kube.SandboxCause, with the words of this check.
type sandboxCause kube.SandboxCause

const (
	causeIPExhausted    = sandboxCause(kube.SandboxIPExhausted)
	causeCNINotReady    = sandboxCause(kube.SandboxCNINotReady)
	causeRuntimeTimeout = sandboxCause(kube.SandboxRuntimeTimeout)
	causeOther          = sandboxCause(kube.SandboxOther)
)

func classifySandboxFailure(msg string) sandboxCause { return sandboxCause(kube.ClassifySandbox(msg)) }

func (c sandboxCause) because() string {
	switch c {
	case causeIPExhausted:
		return "the CNI has no IP address left to assign"
	case causeCNINotReady:
		return "the node's CNI plugin is not installed or not initialised"
	case causeRuntimeTimeout:
		return "the container runtime or the CNI plugin times out (context deadline exceeded)"
	}
	return "the container runtime reports an error"
}

// podSandboxEvents is what the events say about one pod.
type podSandboxEvents struct {
	first, last time.Time
	count       int
	message     string // of the most recent event
}

type sandboxGroup struct {
	cause       sandboxCause
	pods        map[string][]string // node -> ns/name
	events      int
	first, last time.Time
	message     string // most recent
	plugins     map[string]bool
}

var cniPluginType = regexp.MustCompile(`plugin type="([^"]+)"`)

func hasRunningContainer(p *corev1.Pod) bool {
	for _, lists := range [][]corev1.ContainerStatus{p.Status.ContainerStatuses, p.Status.InitContainerStatuses} {
		for _, cs := range lists {
			if cs.State.Running != nil {
				return true
			}
		}
	}
	return false
}

func runSandboxFailures(p *doctor.Pass) error {
	byPod := map[string][]*corev1.Event{}
	for _, w := range kube.WarningEventsOf(p.Snapshot).Reason("FailedCreatePodSandBox") {
		if w.Kind == "Pod" {
			byPod[w.Namespace+"/"+w.Name] = append(byPod[w.Namespace+"/"+w.Name], w.Event)
		}
	}

	groups := map[sandboxCause]*sandboxGroup{}
	holding := map[string]int{}     // node -> pods that hold a sandbox
	hostNetwork := map[string]int{} // node -> of those, host-network pods
	pods := p.Snapshot.Pods()
	for i := range pods {
		pod := pods[i]
		node := pod.Spec.NodeName
		if node == "" || kube.Terminal(pod) {
			continue
		}
		key := pod.Namespace + "/" + pod.Name
		var ev *podSandboxEvents
		if !hasRunningContainer(pod) {
			ev = sandboxEventsFor(pod, byPod[key])
		}
		if ev == nil {
			if hasRunningContainer(pod) || pod.Status.PodIP != "" {
				holding[node]++
				if pod.Spec.HostNetwork {
					hostNetwork[node]++
				}
			}
			continue
		}
		cause := classifySandboxFailure(ev.message)
		g := groups[cause]
		if g == nil {
			g = &sandboxGroup{cause: cause, pods: map[string][]string{}, plugins: map[string]bool{}}
			groups[cause] = g
		}
		g.pods[node] = append(g.pods[node], key)
		g.events += ev.count
		if g.first.IsZero() || ev.first.Before(g.first) {
			g.first = ev.first
		}
		if ev.last.After(g.last) || g.message == "" {
			g.last, g.message = ev.last, ev.message
		}
		if m := cniPluginType.FindStringSubmatch(ev.message); m != nil {
			g.plugins[m[1]] = true
		}
		if strings.Contains(strings.ToLower(ev.message), "aws-cni") {
			g.plugins["aws-cni"] = true
		}
	}

	nodes := kube.NodesByName(p.Snapshot)
	for _, cause := range []sandboxCause{causeIPExhausted, causeCNINotReady, causeRuntimeTimeout, causeOther} {
		if g := groups[cause]; g != nil {
			reportSandboxGroup(p, g, nodes, holding, hostNetwork)
		}
	}
	return nil
}

// sandboxEventsFor sums the events about pod, nil when there are none. Events
// carrying another uid are about an earlier pod of the same name.
func sandboxEventsFor(pod *corev1.Pod, events []*corev1.Event) *podSandboxEvents {
	var out *podSandboxEvents
	for _, e := range events {
		if e.InvolvedObject.UID != "" && pod.UID != "" && e.InvolvedObject.UID != pod.UID {
			continue
		}
		first, last, count := kube.EventTimes(e)
		if out == nil {
			out = &podSandboxEvents{first: first, last: last, count: count, message: kube.EventMessage(e.Message)}
			continue
		}
		out.count += count
		if first.Before(out.first) {
			out.first = first
		}
		if last.After(out.last) {
			out.last, out.message = last, kube.EventMessage(e.Message)
		}
	}
	return out
}

// sandboxMessage trims the kubelet's prefix and caps the runtime's error.
func sandboxMessage(msg string) string {
	return clipLine(strings.TrimPrefix(strings.TrimSpace(msg), "Failed to create pod sandbox:"), maxQuote)
}

func reportSandboxGroup(p *doctor.Pass, g *sandboxGroup, nodes map[string]*corev1.Node, holding, hostNetwork map[string]int) {
	nodeNames := make([]string, 0, len(g.pods))
	total, worst := 0, 0
	var all []string
	for n, ps := range g.pods {
		nodeNames = append(nodeNames, n)
		total += len(ps)
		all = append(all, ps...)
		if len(ps) > worst {
			worst = len(ps)
		}
	}
	// Most stuck pods first, then by name: the first node is the finding's object.
	sort.Slice(nodeNames, func(i, j int) bool {
		a, b := len(g.pods[nodeNames[i]]), len(g.pods[nodeNames[j]])
		if a != b {
			return a > b
		}
		return nodeNames[i] < nodeNames[j]
	})
	top := nodeNames[0]
	sev := doctor.Warning
	if worst >= sandboxCritical {
		sev = doctor.Critical
	}

	where := "on node " + top
	if len(nodeNames) > 1 {
		var parts []string
		for i, n := range nodeNames {
			if i == 5 {
				parts = append(parts, fmt.Sprintf("%d more", len(nodeNames)-5))
				break
			}
			parts = append(parts, fmt.Sprintf("%s ×%d", n, len(g.pods[n])))
		}
		where = fmt.Sprintf("on %d nodes (%s)", len(nodeNames), strings.Join(parts, ", "))
	}
	msg := fmt.Sprintf("%s %s cannot start: creating the pod sandbox fails because %s (FailedCreatePodSandBox ×%s, first %s ago, last %s ago): %s",
		doctor.Plural(total, "pod", "pods"), where, g.cause.because(), doctor.Thousands(g.events),
		human(p.Now.Sub(g.first)), human(p.Now.Sub(g.last)), sandboxMessage(g.message))

	// IP exhaustion below max-pods: the kubelet admits pods the CNI cannot address.
	var capped []string
	canAddress := map[string]int{}
	if g.cause == causeIPExhausted {
		for _, n := range nodeNames {
			node := nodes[n]
			if node == nil {
				continue
			}
			maxPods, ok := node.Status.Allocatable[corev1.ResourcePods]
			if !ok || maxPods.Value() <= 0 || int64(holding[n]) >= maxPods.Value() {
				continue
			}
			at := doctor.Plural(holding[n], "pod", "pods")
			if hn := hostNetwork[n]; hn > 0 {
				at += fmt.Sprintf(" (%d of them host-network)", hn)
			}
			capped = append(capped, fmt.Sprintf("node %s ran out of pod IPs at %s while max-pods is %d", n, at, maxPods.Value()))
			canAddress[n] = holding[n] - hostNetwork[n]
		}
		if len(capped) > 0 {
			if len(capped) > 3 {
				capped = append(capped[:3], fmt.Sprintf("%d more nodes likewise", len(capped)-3))
			}
			msg += "; " + strings.Join(capped, ", ") + ": the kubelet admits more pods than the CNI can address, and the scheduler keeps sending them"
		}
	}

	firstPod := doctor.Examples(g.pods[top])[0]
	ns, name, _ := strings.Cut(firstPod, "/")
	describe := doctor.Remediation{Text: "read the pod's events", Command: fmt.Sprintf("kubectl describe pod -n %s %s", ns, name)}
	unit := runtimeUnit(nodes[top])
	onNode := ""
	if len(nodeNames) > 1 {
		onNode = " (and likewise on the other nodes)"
	}
	aws := g.plugins["aws-cni"]
	var rem []doctor.Remediation
	switch g.cause {
	case causeIPExhausted:
		if aws {
			rem = append(rem,
				doctor.Remediation{Text: "on node " + top + onNode + ", read why ipamd has no address to give, and the runtime's sandboxes",
					Command: fmt.Sprintf("tail -n 200 /var/log/aws-routed-eni/ipamd.log; journalctl -u %s --since -1h; crictl pods", unit)},
				doctor.Remediation{Text: "give the VPC CNI more addresses: prefix delegation (Nitro instances) assigns /28 prefixes instead of single IPs; or add subnets and raise WARM_IP_TARGET/WARM_ENI_TARGET",
					Command: "kubectl set env daemonset aws-node -n kube-system ENABLE_PREFIX_DELEGATION=true"})
		} else {
			rem = append(rem,
				doctor.Remediation{Text: "on node " + top + onNode + ", read the runtime's journal and look for leaked host-local IPAM reservations",
					Command: fmt.Sprintf("journalctl -u %s --since -1h; crictl pods; ls /var/lib/cni/networks/*/", unit)},
				doctor.Remediation{Text: "compare the node's pod CIDR with its max-pods",
					Command: fmt.Sprintf("kubectl get node %s -o jsonpath='{.spec.podCIDR}{\" \"}{.status.allocatable.pods}{\"\\n\"}'", top)})
		}
		if n, ok := canAddress[top]; ok {
			rem = append(rem, doctor.Remediation{Text: fmt.Sprintf("set the kubelet's maxPods to what the CNI can address (about %d pod-network pods on node %s, plus host-network pods), so the scheduler stops placing pods there that cannot get an IP", n, top)})
		}
	case causeCNINotReady:
		rem = append(rem,
			doctor.Remediation{Text: "check the CNI agent pod on node " + top,
				Command: "kubectl get pods -n kube-system -o wide --field-selector spec.nodeName=" + top},
			doctor.Remediation{Text: "on node " + top + onNode + ", check that the CNI config and binaries are installed, and read the runtime's journal",
				Command: fmt.Sprintf("ls /etc/cni/net.d /opt/cni/bin; journalctl -u %s --since -1h", unit)})
		if aws {
			rem = append(rem, doctor.Remediation{Text: "read the VPC CNI agent's log",
				Command: "kubectl logs -n kube-system -l k8s-app=aws-node --tail=100"})
		}
	case causeRuntimeTimeout:
		rem = append(rem,
			doctor.Remediation{Text: "check the node's conditions and load", Command: "kubectl describe node " + top},
			doctor.Remediation{Text: "on node " + top + onNode + ", read the runtime's journal for the slow sandbox and CNI calls",
				Command: fmt.Sprintf("journalctl -u %s --since -1h; crictl pods", unit)})
	default:
		rem = append(rem, doctor.Remediation{Text: "on node " + top + onNode + ", read the runtime's journal",
			Command: fmt.Sprintf("journalctl -u %s --since -1h; crictl pods", unit)})
	}
	rem = append(rem, describe)

	p.Report(doctor.Finding{
		Severity:    sev,
		Object:      kube.NodeRef(top),
		Message:     msg,
		Count:       total,
		Examples:    doctor.Examples(all),
		Remediation: rem,
	})
}

// runtimeUnit is the systemd unit of the node's container runtime, for
// journalctl: containerd unless the node reports another.
func runtimeUnit(n *corev1.Node) string {
	if n == nil {
		return "containerd"
	}
	switch runtimeName(n.Status.NodeInfo.ContainerRuntimeVersion) {
	case "cri-o":
		return "crio"
	case "docker":
		return "cri-docker"
	}
	return "containerd"
}

// runtimeName is "containerd" for "containerd://1.7.20", "" when unknown.
func runtimeName(version string) string {
	name, _, ok := strings.Cut(version, "://")
	if !ok {
		return ""
	}
	return strings.ToLower(name)
}
