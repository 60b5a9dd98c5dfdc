package checks

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// DaemonSetNoNodes reports DaemonSets that run on no node although the
// cluster has nodes: node agents (CNI, CSI, log shippers, security agents)
// that silently do nothing.
var DaemonSetNoNodes = &doctor.Check{
	Name:     "daemonset-no-nodes",
	Severity: doctor.Warning,
	Origin:   "peer coverage map",
	Reads:    []snapshot.Resource{snapshot.DaemonSets, snapshot.Nodes},
	Run:      runDaemonSetNoNodes,
	Doc: `DaemonSets that run on no node, and the selector or taints that keep them off

## Why it matters
A DaemonSet schedules nothing when no node fits its nodeSelector, node
affinity and tolerations: ` + "`DESIRED 0`" + `, no pod, no event, no error. A CSI
node plugin, CNI agent, log shipper or security agent that runs nowhere
breaks volumes, networking or compliance far from the cause — typically
after nodes were relabelled, a pool was replaced, or a new taint was added
to every node.

## How it is detected
For every DaemonSet whose status is observed for its current generation
and whose ` + "`desiredNumberScheduled`" + ` is 0, in a cluster whose nodes were
listed and are not none, the template's placement is matched against
every node as the DaemonSet controller does (nodeSelector, required node
affinity, NoSchedule/NoExecute taints against its tolerations plus the
ones the controller adds). A warning when nodes match the selector but
their taints keep the pods off (a taint added to every node, most likely);
info when no node has the labels its selector asks for (the selector is
wrong, or it targets a pool that has no node right now, such as GPU nodes
scaled to zero). DaemonSets with a desired count above zero are left to
the pod checks.

A selector on a kind of node pools add on demand (GPU, accelerator, spot or
preemptible labels) is said to wait for one, with nothing to fix if none is
expected, never "fix the selector or delete it".

## How to fix
Add the tolerations the taints need
(` + "`kubectl patch daemonset`" + ` with the toleration printed), fix the nodeSelector
to the labels the nodes have (` + "`kubectl get nodes --show-labels`" + `), or delete a
DaemonSet whose nodes are gone for good.

## References
- https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/#how-daemon-pods-are-scheduled
- https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/#taint-based-evictions
- https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/`,
}

func runDaemonSetNoNodes(p *doctor.Pass) error {
	nodes := p.Snapshot.Nodes()
	if len(nodes) == 0 {
		return nil
	}
	dss := p.Snapshot.DaemonSets()
	for i := range dss {
		ds := &dss[i]
		if ds.Status.DesiredNumberScheduled > 0 || ds.Status.ObservedGeneration < ds.Generation || ds.DeletionTimestamp != nil {
			continue
		}
		ref := kube.Ref("apps/v1", "DaemonSet", ds)
		place := kube.NewPlacement(&ds.Spec.Template.Spec, true)
		matching := place.MatchingNodes(nodes)
		if len(matching) == 0 {
			sel := selectorText(&ds.Spec.Template.Spec)
			if optionalNodeClass.MatchString(sel) {
				// Made for a kind of node the cluster adds on demand (GPU,
				// spot): it runs when one joins, and nothing is wrong now.
				p.Report(doctor.Finding{Severity: doctor.Info, Object: ref, Cause: "no-matching-node",
					Message:     fmt.Sprintf("daemonset %s runs on no node: none of the %s has the labels its %s asks for, a kind of node (GPU, accelerator, spot) pools add on demand: it starts when one joins", ds.Name, doctor.Plural(len(nodes), "node", "nodes"), sel),
					Remediation: []doctor.Remediation{{Text: "nothing to do if no such node is expected; otherwise see which nodes carry those labels", Command: "kubectl get nodes --show-labels"}}})
				continue
			}
			p.Report(doctor.Finding{Severity: doctor.Info, Object: ref, Cause: "no-matching-node",
				Message: fmt.Sprintf("daemonset %s runs on no node: none of the %s has the labels its %s asks for", ds.Name, doctor.Plural(len(nodes), "node", "nodes"), sel),
				Remediation: []doctor.Remediation{
					{Text: "compare the selector with the nodes' labels", Command: "kubectl get nodes --show-labels"},
					{Text: "fix the selector (or delete the DaemonSet if its nodes are gone for good)", Command: fmt.Sprintf("kubectl edit daemonset %s -n %s", ds.Name, ds.Namespace)}}})
			continue
		}
		// Nodes match its selector; taints keep it off every one of them.
		taints := map[string]corev1.Taint{}
		var keys []string
		for _, n := range matching {
			for _, t := range place.BlockingTaints(n) {
				k := t.ToString()
				if _, ok := taints[k]; !ok {
					taints[k] = t
					keys = append(keys, k)
				}
			}
		}
		sort.Strings(keys)
		var tols []corev1.Toleration
		for _, k := range keys {
			tols = append(tols, kube.TolerationFor(taints[k]))
		}
		body, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"tolerations": append(append([]corev1.Toleration{}, ds.Spec.Template.Spec.Tolerations...), tols...)}}}})
		p.Report(doctor.Finding{Object: ref, Cause: "tainted",
			Message: fmt.Sprintf("daemonset %s runs on no node: the %s its selector matches all carry taints it does not tolerate (%s)",
				ds.Name, doctor.Plural(len(matching), "node", "nodes"), strings.Join(doctor.Examples(keys), ", ")+more(len(keys))),
			Remediation: []doctor.Remediation{
				{Text: "tolerate the taints (if the agent belongs on those nodes)", Command: fmt.Sprintf("kubectl patch daemonset %s -n %s --type=merge -p '%s'", ds.Name, ds.Namespace, body)},
				{Text: "or see who tainted the nodes", Command: "kubectl get nodes -o custom-columns=NAME:.metadata.name,TAINTS:.spec.taints"}}})
	}
	return nil
}

// selectorText is "nodeSelector gpu=true" or "node affinity".
func selectorText(spec *corev1.PodSpec) string {
	var parts []string
	if len(spec.NodeSelector) > 0 {
		parts = append(parts, "nodeSelector "+kube.SelectorString(spec.NodeSelector))
	}
	if spec.Affinity != nil && spec.Affinity.NodeAffinity != nil && spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		parts = append(parts, "required node affinity")
	}
	if len(parts) == 0 {
		return "placement"
	}
	return strings.Join(parts, " and ")
}

// optionalNodeClass matches selectors on kinds of node a cluster adds on
// demand (GPU and accelerator pools, spot or preemptible capacity), for
// which a DaemonSet with no node yet is waiting, not broken.
var optionalNodeClass = regexp.MustCompile(`(?i)(^|[^a-z])(gpu|nvidia|accelerator|neuron|tpu|habana|fpga|interruptible|spot|preemptible)([^a-z]|$)`)
