package checks

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// NodeTaints reports the taints Kubernetes itself puts on sick nodes. They are
// the cluster's own verdict that a node cannot run (or keep) pods, and they
// outlive the alert that fired when the node went bad.
var NodeTaints = &doctor.Check{
	Name:     "node-taints",
	Severity: doctor.Warning,
	Reads:    []snapshot.Resource{snapshot.Nodes},
	Run:      runNodeTaints,
	Doc: `Nodes tainted by Kubernetes as unhealthy, out of service or cordoned

## Why it matters
Kubernetes taints a node when it decides the node should not get new pods:
the node lifecycle controller adds ` + "`node.kubernetes.io/not-ready`" + ` and
` + "`unreachable`" + ` when the kubelet stops reporting Ready, the kubelet's
conditions become ` + "`memory-pressure`, `disk-pressure`, `pid-pressure`" + ` taints,
the cloud provider leaves ` + "`node.cloudprovider.kubernetes.io/uninitialized`" + `
on a node it never finished, and operators add ` + "`node.kubernetes.io/out-of-service`" + `
to a dead node. With effect NoExecute every pod without a matching toleration
is evicted (after 300 s by default for not-ready/unreachable). A forgotten
cordon quietly shrinks the cluster. "The Snowball effect" (seed 002) starts
its investigation by listing node taints for exactly this reason.

## How it is detected
Every node's ` + "`spec.taints`" + ` is read from one LIST of nodes. Problem taints
are warnings, critical when their effect is NoExecute; a cordon
(` + "`spec.unschedulable`" + ` or the ` + "`node.kubernetes.io/unschedulable`" + ` taint) is
info. Nodes sharing the same problem taint are one finding with a count and
examples, dated by the taint's ` + "`timeAdded`" + ` or the matching node condition's
` + "`lastTransitionTime`" + `. Intended taints (control-plane, dedicated pools) are not
findings; ` + "`kubectl doctor taints`" + ` lists every taint of every node.

## How to fix
Describe the node and read its conditions and events; fix the kubelet, the
container runtime or the pressure that the taint reports; uncordon a node
whose maintenance is over; remove ` + "`out-of-service`" + ` once the node is back or
deleted. The remediation lines give the command with the node names filled in.

## References
- https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/#taint-based-evictions
- https://kubernetes.io/docs/reference/labels-annotations-taints/
- https://kubernetes.io/docs/concepts/cluster-administration/node-shutdown/#non-graceful-node-shutdown`,
}

// problemTaint describes a taint Kubernetes applies to an unhealthy node.
type problemTaint struct {
	condition corev1.NodeConditionType // the node condition that dates it
	meaning   string
	fix       func(nodes string) []doctor.Remediation
}

func describeNodes(nodes string) doctor.Remediation {
	return doctor.Remediation{Text: "read the node's conditions and recent events", Command: "kubectl describe node " + nodes}
}

var problemTaints = map[string]problemTaint{
	"node.kubernetes.io/not-ready": {condition: corev1.NodeReady,
		meaning: "the kubelet reports NotReady (runtime, network or PLEG trouble)",
		fix: func(n string) []doctor.Remediation {
			return []doctor.Remediation{describeNodes(n),
				{Text: "on the node, check the kubelet and the container runtime", Command: "journalctl -u kubelet --since -1h; crictl info"}}
		}},
	"node.kubernetes.io/unreachable": {condition: corev1.NodeReady,
		meaning: "the node controller has lost contact with the kubelet",
		fix: func(n string) []doctor.Remediation {
			return []doctor.Remediation{describeNodes(n),
				{Text: "if the machine is gone for good, mark it out of service so its stateful pods and volumes move", Command: "kubectl taint nodes " + n + " node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"}}
		}},
	"node.kubernetes.io/memory-pressure": {condition: corev1.NodeMemoryPressure,
		meaning: "the kubelet reports MemoryPressure and is evicting pods",
		fix: func(n string) []doctor.Remediation {
			return []doctor.Remediation{describeNodes(n),
				{Text: "find the pods using the most memory on the node", Command: "kubectl get pods -A -o wide --field-selector spec.nodeName=" + firstName(n)}}
		}},
	"node.kubernetes.io/disk-pressure": {condition: corev1.NodeDiskPressure,
		meaning: "the kubelet reports DiskPressure (node filesystem or image store nearly full)",
		fix: func(n string) []doctor.Remediation {
			return []doctor.Remediation{describeNodes(n),
				{Text: "on the node, free image space and look for large logs or emptyDirs", Command: "crictl rmi --prune; df -h /var/lib/kubelet /var/lib/containerd"}}
		}},
	"node.kubernetes.io/pid-pressure": {condition: corev1.NodePIDPressure,
		meaning: "the kubelet reports PIDPressure (process IDs nearly exhausted)",
		fix: func(n string) []doctor.Remediation {
			return []doctor.Remediation{describeNodes(n),
				{Text: "find the pods on the node and set a pod PID limit (kubelet --pod-max-pids)", Command: "kubectl get pods -A -o wide --field-selector spec.nodeName=" + firstName(n)}}
		}},
	"node.kubernetes.io/network-unavailable": {condition: corev1.NodeNetworkUnavailable,
		meaning: "the node's network is not configured (NetworkUnavailable: the CNI or route controller has not finished)",
		fix: func(n string) []doctor.Remediation {
			return []doctor.Remediation{describeNodes(n),
				{Text: "check the CNI agent pod on the node", Command: "kubectl get pods -n kube-system -o wide --field-selector spec.nodeName=" + firstName(n)}}
		}},
	"node.cloudprovider.kubernetes.io/uninitialized": {
		meaning: "the cloud controller manager has not initialised the node",
		fix: func(n string) []doctor.Remediation {
			return []doctor.Remediation{describeNodes(n),
				{Text: "check the cloud-controller-manager's events and logs for this node", Command: "kubectl get events -A --field-selector involvedObject.name=" + firstName(n)}}
		}},
	"node.kubernetes.io/out-of-service": {
		meaning: "the node is marked out of service: its pods are force-deleted and volumes detached",
		fix: func(n string) []doctor.Remediation {
			return []doctor.Remediation{{Text: "once the node is back or deleted, remove the taint", Command: "kubectl taint nodes " + n + " node.kubernetes.io/out-of-service-"}}
		}},
}

const unschedulableTaint = "node.kubernetes.io/unschedulable"

func firstName(names string) string {
	first, _, _ := strings.Cut(names, " ")
	return first
}

// TaintClass says what a taint means, for `kubectl doctor taints`.
func TaintClass(key string) string {
	switch {
	case problemTaints[key].meaning != "":
		return "problem"
	case key == unschedulableTaint:
		return "cordon"
	case key == "node-role.kubernetes.io/control-plane" || key == "node-role.kubernetes.io/master":
		return "control-plane"
	}
	return "intended"
}

// taintSince dates a taint: timeAdded when the API server set it (NoExecute
// taints), else the transition of the node condition behind it.
func taintSince(node *corev1.Node, t corev1.Taint) *time.Time {
	if t.TimeAdded != nil {
		tt := t.TimeAdded.Time
		return &tt
	}
	if cond := problemTaints[t.Key].condition; cond != "" {
		for _, c := range node.Status.Conditions {
			if c.Type == cond && !c.LastTransitionTime.IsZero() {
				tt := c.LastTransitionTime.Time
				return &tt
			}
		}
	}
	return nil
}

type taintGroup struct {
	key, effects string
	noExecute    bool
	nodes        []string
	oldest       *time.Time
}

func runNodeTaints(p *doctor.Pass) error {
	groups := map[string]*taintGroup{}
	var cordoned []string
	nodes := p.Snapshot.Nodes()
	for i := range nodes {
		n := &nodes[i]
		effects := map[string][]corev1.TaintEffect{}
		var since = map[string]*time.Time{}
		cordon := n.Spec.Unschedulable
		for _, t := range n.Spec.Taints {
			if t.Key == unschedulableTaint {
				cordon = true
				continue
			}
			if problemTaints[t.Key].meaning == "" {
				continue
			}
			effects[t.Key] = append(effects[t.Key], t.Effect)
			if s := taintSince(n, t); s != nil && (since[t.Key] == nil || s.Before(*since[t.Key])) {
				since[t.Key] = s
			}
		}
		if cordon {
			cordoned = append(cordoned, n.Name)
		}
		for key, effs := range effects {
			sort.Slice(effs, func(a, b int) bool { return effs[a] < effs[b] })
			names := make([]string, len(effs))
			noExec := false
			for j, e := range effs {
				names[j] = string(e)
				noExec = noExec || e == corev1.TaintEffectNoExecute
			}
			id := key + "|" + strings.Join(names, "+")
			g := groups[id]
			if g == nil {
				g = &taintGroup{key: key, effects: strings.Join(names, "+"), noExecute: noExec}
				groups[id] = g
			}
			g.nodes = append(g.nodes, n.Name)
			if s := since[key]; s != nil && (g.oldest == nil || s.Before(*g.oldest)) {
				g.oldest = s
			}
		}
	}
	for _, g := range groups {
		sort.Strings(g.nodes)
		pt := problemTaints[g.key]
		sev := doctor.Warning
		consequence := "no new pods are scheduled there"
		if g.noExecute {
			sev = doctor.Critical
			consequence = "pods without a matching toleration are evicted"
		}
		who := "node " + g.nodes[0] + " is"
		if len(g.nodes) > 1 {
			who = doctor.Plural(len(g.nodes), "node", "nodes") + " are"
		}
		age := ""
		if g.oldest != nil {
			age = " for " + duration.HumanDuration(p.Now.Sub(*g.oldest))
		}
		p.Report(doctor.Finding{
			Severity:    sev,
			Object:      nodeRef(g.nodes[0]),
			Message:     fmt.Sprintf("%s tainted %s:%s%s: %s; %s", who, g.key, g.effects, age, pt.meaning, consequence),
			Count:       len(g.nodes),
			Examples:    doctor.Examples(g.nodes),
			Remediation: pt.fix(strings.Join(doctor.Examples(g.nodes), " ")),
		})
	}
	if len(cordoned) > 0 {
		sort.Strings(cordoned)
		who := "node " + cordoned[0] + " is"
		if len(cordoned) > 1 {
			who = doctor.Plural(len(cordoned), "node", "nodes") + " are"
		}
		names := strings.Join(doctor.Examples(cordoned), " ")
		p.Report(doctor.Finding{
			Severity: doctor.Info,
			Object:   nodeRef(cordoned[0]),
			Message:  who + " cordoned (unschedulable): existing pods stay, no new pods are scheduled there",
			Count:    len(cordoned),
			Examples: doctor.Examples(cordoned),
			Remediation: []doctor.Remediation{
				{Text: "uncordon once the maintenance is over", Command: "kubectl uncordon " + names},
			},
		})
	}
	return nil
}

func nodeRef(name string) doctor.ObjectRef {
	return doctor.ObjectRef{APIVersion: "v1", Kind: "Node", Name: name}
}

// TaintRow is one row of `kubectl doctor taints`: one taint of one node, or
// a node without taints (Key empty).
type TaintRow struct {
	Node   string     `json:"node"`
	Key    string     `json:"key,omitempty"`
	Value  string     `json:"value,omitempty"`
	Effect string     `json:"effect,omitempty"`
	Since  *time.Time `json:"since,omitempty"`
	Class  string     `json:"class,omitempty"`
}

// TaintRows lists every taint of every node, sorted by node then key, with
// untainted nodes as a row of their own so the listing covers the fleet.
func TaintRows(nodes []corev1.Node) []TaintRow {
	var rows []TaintRow
	for i := range nodes {
		n := &nodes[i]
		if len(n.Spec.Taints) == 0 {
			rows = append(rows, TaintRow{Node: n.Name})
			continue
		}
		for _, t := range n.Spec.Taints {
			rows = append(rows, TaintRow{Node: n.Name, Key: t.Key, Value: t.Value, Effect: string(t.Effect),
				Since: taintSince(n, t), Class: TaintClass(t.Key)})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Node != rows[j].Node {
			return rows[i].Node < rows[j].Node
		}
		if rows[i].Key != rows[j].Key {
			return rows[i].Key < rows[j].Key
		}
		return rows[i].Effect < rows[j].Effect
	})
	return rows
}
