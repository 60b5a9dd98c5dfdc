package checks

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// PDBBlocksDrain reports PodDisruptionBudgets that allow no disruption at all:
// every `kubectl drain`, cluster-autoscaler scale-down and node upgrade that
// meets one of their pods waits forever.
var PDBBlocksDrain = &doctor.Check{
	Name:     "pdb-blocks-drain",
	Severity: doctor.Warning,
	Origin:   "everyday",
	// Deployments and StatefulSets tell a PDB of a workload scaled to zero
	// (quiet) from one that selects nothing; the other owners only name.
	Reads:    []snapshot.Resource{snapshot.PodDisruptionBudgets, snapshot.Pods, snapshot.Deployments, snapshot.StatefulSets},
	Optional: []snapshot.Resource{snapshot.ReplicaSets, snapshot.DaemonSets, snapshot.Jobs, snapshot.CronJobs},
	Run:      runPDBBlocksDrain,
	Doc: `PodDisruptionBudgets that allow no disruption and will hang every node drain

## Why it matters
` + "`kubectl drain`" + `, node upgrades (managed node groups, GKE surge upgrades) and the
cluster-autoscaler evict pods through the Eviction API, which refuses while a
PodDisruptionBudget's ` + "`disruptionsAllowed`" + ` is 0. A budget written so that it
can never allow one — ` + "`maxUnavailable: 0`" + `, or ` + "`minAvailable`" + ` equal to the
workload's replicas — or one whose pods are unhealthy, turns every drain of
their nodes into an endless retry loop, and upgrades stall without an error.

## How it is detected
For every PDB whose status (observed for its current generation) has
` + "`disruptionsAllowed: 0`" + `, the pods its selector matches are resolved to their
top owner (Deployment, StatefulSet, ...) and the reason is named:
` + "`maxUnavailable`" + ` 0 (or 0%); ` + "`minAvailable`" + ` at or above the number of pods it
expects (the workload's replicas); or fewer healthy pods than it requires
(` + "`currentHealthy < desiredHealthy`" + `: unhealthy pods it protects). A PDB that
selects no pod blocks nothing but protects nothing either: info — unless
pods one label away exist (` + "`app=payments`" + ` for ` + "`app=payment`" + `) and no other budget
covers them: a selector typo that leaves them unprotected, a warning with
the patch that points the budget at them. A PDB that
allows disruptions is never reported.

A budget whose pods (or which itself) an operator controls (a custom
resource such as Longhorn's InstanceManager) is most likely written by that
operator, which reverts a patch: the finding says so and points at the
operator's own setting instead of patching.

## How to fix
Allow at least one disruption: ` + "`maxUnavailable: 1`" + `, or ` + "`minAvailable`" + ` one below the
replicas (or scale the workload up by one). For unhealthy pods, fix them, or
let evictions of unhealthy pods through with
` + "`unhealthyPodEvictionPolicy: AlwaysAllow`" + `.

## References
- https://kubernetes.io/docs/tasks/run-application/configure-pdb/#think-about-how-your-application-reacts-to-disruptions
- https://kubernetes.io/docs/concepts/workloads/pods/disruptions/#pod-disruption-budgets
- https://kubernetes.io/docs/tasks/run-application/configure-pdb/#unhealthy-pod-eviction-policy
- https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/FAQ.md#what-types-of-pods-can-prevent-ca-from-removing-a-node`,
}

func runPDBBlocksDrain(p *doctor.Pass) error {
	pdbs := p.Snapshot.PodDisruptionBudgets()
	for i := range pdbs {
		pdb := &pdbs[i]
		st := pdb.Status
		if st.DisruptionsAllowed > 0 || st.ObservedGeneration < pdb.Generation {
			continue
		}
		ref := kube.Ref("policy/v1", "PodDisruptionBudget", pdb)
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil {
			continue
		}
		// In policy/v1 an empty selector ({}) selects every pod of the
		// namespace (a nil one selects none).
		candidates := kube.Selected(p.Snapshot, pdb.Namespace, sel)
		if pdb.Spec.Selector != nil && sel.Empty() {
			candidates = kube.PodsIn(p.Snapshot, pdb.Namespace)
		}
		var pods []*corev1.Pod
		for _, pod := range candidates {
			if !kube.Terminal(pod) && pod.DeletionTimestamp == nil {
				pods = append(pods, pod)
			}
		}
		selStr := metav1.FormatLabelSelector(pdb.Spec.Selector)
		if len(pods) == 0 {
			if kube.ScaledToZero(p.Snapshot, pdb.Namespace, sel) != nil {
				continue // its workload is scaled to zero on purpose
			}
			// Pods one label away (app=payments for app=payment): a typo
			// that leaves them unprotected, not a leftover.
			if s := pdb.Spec.Selector; s != nil && len(s.MatchExpressions) == 0 {
				if misses := kube.NearMisses(p.Snapshot, pdb.Namespace, s.MatchLabels); len(misses) > 0 && !budgeted(p.Snapshot, misses[0].Pods[0]) {
					m := misses[0]
					fixed := maps.Clone(s.MatchLabels)
					fixed[m.Key] = m.Have
					patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"selector": map[string]any{"matchLabels": fixed}}})
					p.Report(doctor.Finding{Severity: doctor.Warning, Object: ref,
						Message: fmt.Sprintf("pdb %s selects no pod (%s), but %s of %s %s: a selector typo? Those pods have no disruption budget: drains, upgrades and the autoscaler evict them all at once",
							pdb.Name, selStr, doctor.Plural(len(m.Pods), "pod", "pods"), strings.Join(ownerNames(p.Snapshot, m.Pods), "; "), nearMissHave(m)),
						Remediation: []doctor.Remediation{{Text: "point the budget at those pods (a PDB's selector can be changed in policy/v1)",
							Command: fmt.Sprintf("kubectl patch pdb %s -n %s --type=merge -p '%s'", pdb.Name, pdb.Namespace, patch)}}})
					continue
				}
			}
			p.Report(doctor.Finding{Severity: doctor.Info, Object: ref,
				Message:     fmt.Sprintf("pdb %s selects no pod (%s): it protects nothing; a leftover of a removed or relabelled workload?", pdb.Name, selStr),
				Remediation: []doctor.Remediation{{Text: "delete it if its workload is gone", Command: fmt.Sprintf("kubectl delete pdb %s -n %s", pdb.Name, pdb.Namespace)}}})
			continue
		}
		owners := strings.Join(ownerNames(p.Snapshot, pods), "; ")
		expected := int(st.ExpectedPods)
		if expected == 0 {
			expected = len(pods)
		}
		head := fmt.Sprintf("pdb %s allows no disruption: draining the nodes of its %s (%s) waits forever, because ", pdb.Name, doctor.Plural(len(pods), "pod", "pods"), owners)
		var why string
		var rem []doctor.Remediation
		patch := func(text, body string) {
			rem = append(rem, doctor.Remediation{Text: text, Command: fmt.Sprintf("kubectl patch pdb %s -n %s --type=merge -p '%s'", pdb.Name, pdb.Namespace, body)})
		}
		scaleTarget := ""
		if w, ok := kube.OwnersOf(p.Snapshot).Top(pods[0]); ok && (w.Ref.Kind == "Deployment" || w.Ref.Kind == "StatefulSet") {
			scaleTarget = w.KindName()
		}
		switch mu, ma := pdb.Spec.MaxUnavailable, pdb.Spec.MinAvailable; {
		case mu != nil && isZero(*mu):
			why = fmt.Sprintf("its maxUnavailable is %s: it never lets a single pod be evicted", mu.String())
			patch("allow one pod at a time to be evicted", `{"spec":{"maxUnavailable":1}}`)
		case ma != nil && minAvailable(*ma, expected) >= expected:
			why = fmt.Sprintf("its minAvailable %s requires all %d pods it expects to stay up", ma.String(), expected)
			if expected > 1 {
				patch("leave room for one eviction", fmt.Sprintf(`{"spec":{"minAvailable":%d}}`, expected-1))
			} else {
				patch("a single replica cannot be both always available and evictable: allow the eviction", `{"spec":{"minAvailable":null,"maxUnavailable":1}}`)
			}
			if scaleTarget != "" {
				rem = append(rem, doctor.Remediation{Text: "or run one more replica than the budget requires",
					Command: fmt.Sprintf("kubectl scale %s -n %s --replicas=%d", scaleTarget, pdb.Namespace, expected+1)})
			}
		case st.CurrentHealthy < st.DesiredHealthy:
			why = fmt.Sprintf("only %d of its %d pods are healthy and it requires %d: it protects unhealthy pods", st.CurrentHealthy, expected, st.DesiredHealthy)
			cmd := fmt.Sprintf("kubectl get pods -n %s", pdb.Namespace)
			if selStr != "" && selStr != "<none>" {
				cmd += fmt.Sprintf(" -l '%s'", selStr)
			}
			rem = append(rem, doctor.Remediation{Text: "find why the pods are not ready", Command: cmd})
			if pdb.Spec.UnhealthyPodEvictionPolicy == nil || *pdb.Spec.UnhealthyPodEvictionPolicy != policyv1.AlwaysAllow {
				patch("let drains evict pods that are not ready anyway", `{"spec":{"unhealthyPodEvictionPolicy":"AlwaysAllow"}}`)
			}
		default:
			why = fmt.Sprintf("%d of its %d pods are healthy and it requires %d", st.CurrentHealthy, expected, st.DesiredHealthy)
			rem = append(rem, doctor.Remediation{Text: "read the disruption controller's verdict", Command: fmt.Sprintf("kubectl describe pdb %s -n %s", pdb.Name, pdb.Namespace)})
		}
		if op := operatorOwned(pods[0], pdb); op != "" {
			// An operator that runs the pods usually writes their budget
			// too, and puts back what a patch changes.
			if metav1.GetControllerOfNoCopy(pdb) != nil {
				why += fmt.Sprintf("; it belongs to %s, whose operator writes it and reverts a patch: change it through the operator's own setting", op)
			} else {
				why += fmt.Sprintf("; its pods belong to %s: if that operator writes this budget too, it reverts a patch, and the operator's own setting is the place to change it", op)
			}
			if strings.Contains(op, "longhorn.io") {
				why += " (Longhorn: node-drain-policy)"
			}
			rem = append([]doctor.Remediation{{Text: "see who manages the budget and its pods before patching it", Command: fmt.Sprintf("kubectl get pdb %s -n %s -o jsonpath='{.metadata.ownerReferences}{\"\\n\"}{.metadata.labels}'", pdb.Name, pdb.Namespace)}}, rem...)
		}
		p.Report(doctor.Finding{Object: ref, Message: head + why, Remediation: rem})
	}
	return nil
}

// operatorOwned names the custom resource that controls the pod ("InstanceManager
// instance-manager-e-5708ef52 (longhorn.io)"), or the PDB's own controller,
// when it is not a built-in workload: an operator's, "" otherwise.
func operatorOwned(pod *corev1.Pod, pdb *policyv1.PodDisruptionBudget) string {
	for _, c := range []*metav1.OwnerReference{metav1.GetControllerOfNoCopy(pdb), metav1.GetControllerOfNoCopy(pod)} {
		if c == nil {
			continue
		}
		group, _, _ := strings.Cut(c.APIVersion, "/")
		if !strings.Contains(c.APIVersion, "/") {
			group = ""
		}
		switch group {
		case "", "apps", "batch":
			continue
		}
		return fmt.Sprintf("%s %s (%s)", c.Kind, c.Name, group)
	}
	return ""
}

func isZero(v intstr.IntOrString) bool {
	if v.Type == intstr.Int {
		return v.IntVal == 0
	}
	return strings.TrimSuffix(v.StrVal, "%") == "0"
}

// minAvailable resolves minAvailable against the expected pods, rounding a
// percentage up as the disruption controller does.
func minAvailable(v intstr.IntOrString, expected int) int {
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, expected, true)
	if err != nil {
		return 0
	}
	return n
}

// nearMissHave is "have app=payments" or "lack label app".
func nearMissHave(m kube.NearMiss) string {
	if m.Have == "" {
		return "lack label " + m.Key
	}
	return "have " + m.Key + "=" + m.Have
}

// budgeted: another PodDisruptionBudget of the pod's namespace selects it.
func budgeted(s *snapshot.Snapshot, pod *corev1.Pod) bool {
	for _, pdb := range s.PodDisruptionBudgets() {
		if pdb.Namespace != pod.Namespace || pdb.Spec.Selector == nil {
			continue
		}
		if sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil && sel.Matches(labels.Set(pod.Labels)) {
			return true
		}
	}
	return false
}
