package checks

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// PDBOverlap reports pods selected by more than one PodDisruptionBudget:
// the Eviction API refuses to evict them at all, whatever the budgets
// allow, so every drain of their nodes hangs.
var PDBOverlap = &doctor.Check{
	Name:     "pdb-overlap",
	Severity: doctor.Warning,
	Origin:   "peer coverage map",
	Reads:    append([]snapshot.Resource{snapshot.PodDisruptionBudgets, snapshot.Pods}, kube.WorkloadReads...),
	Run:      runPDBOverlap,
	Doc: `Pods covered by more than one PodDisruptionBudget, which the Eviction API refuses to evict

## Why it matters
The Eviction API supports one budget per pod. When two PodDisruptionBudgets
select the same pod — a chart's budget plus one written by hand, a broad
` + "`app.kubernetes.io/part-of`" + ` selector over several components — every eviction
of that pod fails with ` + "`500 This pod has more than one PodDisruptionBudget, which the eviction subresource does not support`" + `,
however many disruptions each budget allows. ` + "`kubectl drain`" + `, node upgrades
and the cluster-autoscaler retry forever; each budget on its own looks
healthy, so pdb-blocks-drain cannot see it.

## How it is detected
Every budget's selector is matched against the live pods of its namespace,
as the disruption controller does (an empty selector selects every pod).
Pods selected by two or more budgets are grouped by the set of budgets and
their top owner; one finding per set of budgets, on the first by name,
names the others, the owners and the pod count. Budgets that select
disjoint pods are never reported.

## How to fix
Keep one budget per pod: delete the redundant budget, or narrow the
selectors so that they no longer overlap (add a label that tells the
components apart).

## References
- https://kubernetes.io/docs/tasks/run-application/configure-pdb/#arbitrary-controllers-and-selectors
- https://kubernetes.io/docs/concepts/scheduling-eviction/api-eviction/#how-api-initiated-eviction-works`,
}

func runPDBOverlap(p *doctor.Pass) error {
	type budget struct {
		name string
		sel  string
	}
	byPod := map[*corev1.Pod][]budget{}
	var podOrder []*corev1.Pod
	pdbs := p.Snapshot.PodDisruptionBudgets()
	for i := range pdbs {
		pdb := &pdbs[i]
		if pdb.Spec.Selector == nil {
			continue // selects nothing in policy/v1
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil {
			continue
		}
		pods := kube.Selected(p.Snapshot, pdb.Namespace, sel)
		if sel.Empty() {
			pods = kube.PodsIn(p.Snapshot, pdb.Namespace)
		}
		for _, pod := range pods {
			if kube.Terminal(pod) || pod.DeletionTimestamp != nil {
				continue
			}
			if _, seen := byPod[pod]; !seen {
				podOrder = append(podOrder, pod)
			}
			byPod[pod] = append(byPod[pod], budget{pdb.Name, metav1.FormatLabelSelector(pdb.Spec.Selector)})
		}
	}
	type group struct {
		ns      string
		budgets []budget
		pods    []*corev1.Pod
	}
	groups := map[string]*group{}
	var keys []string
	for _, pod := range podOrder {
		bs := byPod[pod]
		if len(bs) < 2 {
			continue
		}
		sort.Slice(bs, func(i, j int) bool { return bs[i].name < bs[j].name })
		var names []string
		for _, b := range bs {
			names = append(names, b.name)
		}
		key := pod.Namespace + "/" + strings.Join(names, ",")
		if groups[key] == nil {
			groups[key] = &group{ns: pod.Namespace, budgets: bs}
			keys = append(keys, key)
		}
		groups[key].pods = append(groups[key].pods, pod)
	}
	sort.Strings(keys)
	for _, key := range keys {
		g := groups[key]
		var desc, podNames []string
		for _, b := range g.budgets {
			desc = append(desc, fmt.Sprintf("%s (%s)", b.name, b.sel))
		}
		for _, pod := range g.pods {
			podNames = append(podNames, pod.Name)
		}
		first := g.budgets[0].name
		ref := doctor.ObjectRef{APIVersion: "policy/v1", Kind: "PodDisruptionBudget", Namespace: g.ns, Name: first}
		rem := []doctor.Remediation{{Text: "compare the budgets' selectors", Command: fmt.Sprintf("kubectl get pdb -n %s -o wide", g.ns)}}
		for _, b := range g.budgets[1:] {
			rem = append(rem, doctor.Remediation{Text: "delete the redundant budget, or narrow its selector so it no longer overlaps", Command: fmt.Sprintf("kubectl delete pdb %s -n %s", b.name, g.ns)})
		}
		verb := "are"
		if len(g.pods) == 1 {
			verb = "is"
		}
		p.Report(doctor.Finding{Object: ref, Count: len(g.pods), Examples: doctor.Examples(podNames),
			Message: fmt.Sprintf("%s of %s %s selected by %d disruption budgets: %s; the Eviction API refuses to evict a pod with more than one budget, so every drain of their nodes hangs",
				doctor.Plural(len(g.pods), "pod", "pods"), strings.Join(ownerNames(p.Snapshot, g.pods), "; "), verb, len(g.budgets), strings.Join(desc, ", ")),
			Remediation: rem})
	}
	return nil
}
