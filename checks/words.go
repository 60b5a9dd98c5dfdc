package checks

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// Wording that several checks share. The facts come from pkg/kube; how a
// finding says them is decided here, once, so two checks never phrase the
// same fact two ways.

// apiServiceWhy is the aggregator's verdict on an APIService, as its
// Available condition gives it: "EndpointsNotFound: cannot find
// endpointslices for ..." (a trailing period dropped, the sentence goes on).
func apiServiceWhy(a *apiregistrationv1.APIService) string {
	c := kube.APIServiceAvailable(a)
	if c == nil {
		return "no Available condition"
	}
	if c.Message == "" {
		return c.Reason
	}
	return c.Reason + ": " + strings.TrimSuffix(c.Message, ".")
}

// nodeProblemWording is how findings speak of a node problem (a
// kube.NodeProblem, by its taint): node-taints explains the taint with it,
// node-health the condition.
type nodeProblemWording struct {
	// State completes "node X has been ...": "under MemoryPressure".
	State string
	// Meaning says why the taint is there.
	Meaning string
	// Effect says what the condition does to pods.
	Effect string
	// Fix gives the remediation for the nodes (space-separated names) and
	// the first of them, for commands that take one node.
	Fix func(names, first string) []doctor.Remediation
}

// describeNodes is the first step of every node remediation.
func describeNodes(names string) doctor.Remediation {
	return doctor.Remediation{Text: "read the node's conditions and recent events", Command: "kubectl describe node " + names}
}

func podsOn(first string) string {
	return "kubectl get pods -A -o wide --field-selector spec.nodeName=" + first
}

// nodeRegistrationGrace is how long a newly registered node may go without
// its kubelet posting status before that is reported: a kubelet posts its
// first status within seconds of registering, and the node lifecycle
// controller waits its own grace period (40s by default) before it marks
// such a node Unknown.
const nodeRegistrationGrace = 5 * time.Minute

// neverPostedMeaning says why a node whose kubelet never posted status is
// not Ready, and neverPostedFix what to do about it: node-health and
// node-taints both word it.
const neverPostedMeaning = "its kubelet registered the Node but has not posted any status since, so the node is not Ready (no Ready condition)"

func neverPostedFix(names string) []doctor.Remediation {
	return []doctor.Remediation{describeNodes(names),
		{Text: "on the node, see why the kubelet does not report: it may have stopped after registering, or cannot reach the API server or renew its certificate", Command: "systemctl status kubelet; journalctl -u kubelet --since -1h"},
		{Text: "leave the taint until the kubelet reports Ready; if the machine never came up, delete the Node", Command: "kubectl delete node " + names}}
}

// nodeProblemWords has an entry for every kube.NodeProblem taint.
var nodeProblemWords = map[string]nodeProblemWording{
	corev1.TaintNodeNotReady: {State: "NotReady",
		Meaning: "the kubelet reports NotReady (runtime, network or PLEG trouble)",
		Fix: func(n, _ string) []doctor.Remediation {
			return []doctor.Remediation{describeNodes(n),
				{Text: "on the node, check the kubelet and the container runtime", Command: "journalctl -u kubelet --since -1h; crictl info"}}
		}},
	corev1.TaintNodeUnreachable: {State: "unreachable",
		Meaning: "the node controller has lost contact with the kubelet",
		Effect:  "no new pods are scheduled there, and pods without a longer unreachable toleration are evicted after the default 300s",
		Fix: func(n, _ string) []doctor.Remediation {
			return []doctor.Remediation{describeNodes(n),
				{Text: "from the node or its serial console, check the kubelet", Command: "systemctl status kubelet; journalctl -u kubelet --since -1h"},
				{Text: "keep new pods off it", Command: "kubectl cordon " + n},
				{Text: "if the machine is gone for good, delete the Node so its pods are recreated elsewhere at once (a drain would wait for a kubelet that never answers), or mark it out of service so its stateful pods and volumes move",
					Command: "kubectl taint nodes " + n + " " + corev1.TaintNodeOutOfService + "=nodeshutdown:NoExecute"}}
		}},
	corev1.TaintNodeMemoryPressure: {State: "under MemoryPressure",
		Meaning: "the kubelet reports MemoryPressure and is evicting pods",
		Effect:  "the kubelet evicts pods to reclaim memory, BestEffort and those over their requests first, and admits no new BestEffort pods",
		Fix: func(n, first string) []doctor.Remediation {
			return []doctor.Remediation{describeNodes(n),
				{Text: "find the pods on the node and give the biggest consumers memory limits", Command: podsOn(first)},
				{Text: "on the node, see what uses the memory", Command: "crictl stats; free -m"}}
		}},
	corev1.TaintNodeDiskPressure: {State: "under DiskPressure",
		Meaning: "the kubelet reports DiskPressure (node filesystem or image store nearly full)",
		Effect:  "the kubelet garbage-collects images and evicts pods to free its filesystems, and admits no new pods",
		Fix: func(n, _ string) []doctor.Remediation {
			return []doctor.Remediation{describeNodes(n),
				{Text: "on the node, find what fills the disk and prune unused images", Command: "df -h /var/lib/kubelet /var/lib/containerd; du -sh /var/log/pods; crictl rmi --prune"}}
		}},
	corev1.TaintNodePIDPressure: {State: "under PIDPressure",
		Meaning: "the kubelet reports PIDPressure (process IDs nearly exhausted)",
		Effect:  "the kubelet evicts pods to free process IDs and admits no new pods",
		Fix: func(n, first string) []doctor.Remediation {
			return []doctor.Remediation{describeNodes(n),
				{Text: "find the pods on the node; cap processes per pod with the kubelet's podPidsLimit", Command: podsOn(first)},
				{Text: "on the node, find the processes", Command: "ps -eLf --no-headers | wc -l; ps -e -o pid,nlwp,cmd --sort=-nlwp | head"}}
		}},
	corev1.TaintNodeNetworkUnavailable: {State: "NetworkUnavailable",
		Meaning: "the node's network is not configured (NetworkUnavailable: the CNI or route controller has not finished)",
		Effect:  "the node's pod network (routes or CNI) is not configured, so pods there have no network; no new pods are scheduled there",
		Fix: func(n, first string) []doctor.Remediation {
			return []doctor.Remediation{describeNodes(n),
				{Text: "check the CNI agent pod on the node (or the cloud route controller)", Command: "kubectl get pods -n kube-system -o wide --field-selector spec.nodeName=" + first}}
		}},
	"node.cloudprovider.kubernetes.io/uninitialized": {
		Meaning: "the cloud controller manager has not initialised the node",
		Fix: func(n, first string) []doctor.Remediation {
			return []doctor.Remediation{describeNodes(n),
				{Text: "check the cloud-controller-manager's events and logs for this node", Command: "kubectl get events -A --field-selector involvedObject.name=" + first}}
		}},
	corev1.TaintNodeOutOfService: {
		Meaning: "the node is marked out of service: its pods are force-deleted and volumes detached",
		Fix: func(n, _ string) []doctor.Remediation {
			return []doctor.Remediation{{Text: "once the node is back or deleted, remove the taint", Command: "kubectl taint nodes " + n + " " + corev1.TaintNodeOutOfService + "-"}}
		}},
}

// quote shortens a cluster-provided message to one line of at most 200
// characters, quoted.
func quote(s string) string {
	return fmt.Sprintf("%q", clipLine(s, maxQuote))
}

// examplesEllipsis is the first doctor.MaxExamples names, sorted, joined
// with commas, and ", ..." when there are more: "a, b, c, ...".
// (node-drift's exampleList counts the rest instead: "and 5 more".)
func examplesEllipsis(names []string) string {
	s := strings.Join(doctor.Examples(names), ", ")
	if len(names) > doctor.MaxExamples {
		s += ", ..."
	}
	return s
}

// webhookWords is "webhook NAME (failurePolicy Fail, timeout 30s)".
func webhookWords(w kube.Webhook) string {
	return fmt.Sprintf("webhook %s (failurePolicy %s, timeout %ds)", w.Name, w.FailurePolicy, w.Timeout)
}

// faultWords says why a webhook's backend fails: "service ns/name has no
// ready endpoint".
func faultWords(f *kube.BackendFault) string {
	switch f.Kind {
	case kube.FaultNoService:
		return fmt.Sprintf("service %s does not exist", f.Service)
	case kube.FaultNoPort:
		return fmt.Sprintf("service %s has no port %d", f.Service, f.Port)
	case kube.FaultNoEndpoint:
		return fmt.Sprintf("service %s has no ready endpoint", f.Service)
	case kube.FaultNoCABundle:
		return "its caBundle is empty and nothing injects one, so the API server cannot verify the service's certificate"
	case kube.FaultCABundleNotPEM:
		return "its caBundle is not PEM"
	case kube.FaultCABundleInvalid:
		return "its caBundle does not parse: " + f.Err
	case kube.FaultCallFails:
		return fmt.Sprintf("calling it fails (%s; its backend, service %s, is in a namespace this scan did not read)", quote(f.Err), f.Service)
	}
	return "its backend fails"
}

// ownerNames names the pods' top owners, sorted: "deployment/web"; with
// more than one owner each carries its pod count ("deployment/web (3 pods)");
// pods without a controller are listed last as "bare pods a, b".
func ownerNames(s *snapshot.Snapshot, pods []*corev1.Pod) []string {
	o := kube.OwnersOf(s)
	count := map[string]int{}
	var bare []string
	for _, p := range pods {
		if w, ok := o.Top(p); ok {
			count[w.KindName()]++
		} else {
			bare = append(bare, p.Name)
		}
	}
	out := make([]string, 0, len(count)+1)
	for n, c := range count {
		if c > 1 && len(count)+min(len(bare), 1) > 1 {
			n = fmt.Sprintf("%s (%d pods)", n, c)
		}
		out = append(out, n)
	}
	sort.Strings(out)
	if len(bare) > 0 {
		sort.Strings(bare)
		what := "bare pod "
		if len(bare) > 1 {
			what = "bare pods "
		}
		out = append(out, what+strings.Join(bare, ", "))
	}
	return out
}
