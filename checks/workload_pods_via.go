package checks

import "github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"

// stuckRolloutCauses report on a Deployment why its new pods do not exist
// or do not run: pods the scheduler cannot place (unschedulable,
// pending-taints), claims that do not bind (pvc-pending) or pods the API
// server refuses to create (replica-failure). A rollout stuck with no pod
// problem of its own is their finding.
var stuckRolloutCauses = []string{"unschedulable", "pending-taints", "pvc-pending", "replica-failure"}

// unavailableCauses are the checks whose finding can be why a workload's
// pods are missing or not ready (its claims, nodes, placement, admission,
// the controllers): an unavailable workload folds (Via) only into theirs,
// never into advice that merely names the same workload (rollout-history,
// hygiene) or a consequence of it (service-endpoints, ingress-backends).
var unavailableCauses = []string{"pod-storm", "replica-failure", "admission-webhooks", "apiservice-unavailable",
	"missing-references", "rbac-missing-role", "pvc-pending", "unschedulable", "pending-taints", "node-health",
	"node-taints", "node-pod-capacity", "sandbox-failures", "runtime-socket", "daemonset-no-nodes", "pods-stuck",
	"network-policies", "kube-controller-manager", "external-secrets", "certificates"}

// chainedOwnerVia are the checks whose findings name a workload as the broken
// backend of an APIService or admission webhook: workload-pods' finding on
// that workload folds into theirs, without raising their severity (they
// weigh the impact: a webhook that fails open stays a warning).
var chainedOwnerVia = []string{"apiservice-unavailable", "admission-webhooks"}

// chain makes f a consequence of the APIServices or webhooks it breaks.
func chain(f *doctor.Finding, chained []doctor.ObjectRef) {
	if len(chained) > 0 {
		f.Via, f.ViaChecks, f.ViaKeepsSeverity = chained, chainedOwnerVia, true
	}
}
