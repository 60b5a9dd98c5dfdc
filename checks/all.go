// Package checks holds kubectl-doctor's diagnoses, one file per check, and
// the registry that lists them. Adding a check is one file, one fixture
// directory under testdata/checks/<name>, and one line in All.
package checks

import "github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"

// All returns the registry: every check, in the order `kubectl doctor checks`
// lists them. It returns a fresh slice so callers cannot change the registry.
func All() []*doctor.Check {
	return []*doctor.Check{
		PodStorm,
		JobBacklog,
		AdmissionWebhooks,
		APIServiceUnavailable,
		NamespaceStuckTerminating,
		NodeTaints,
		NodeHealth,
		NodeDrift,
		PendingTaints,
		Unschedulable,
		PVCPending,
		JobFailed,
		NodePodCapacity,
		RolloutHistory,
		WorkloadPods,
		ControllersStalled,
		Certificates,
		GitOpsSync,
		ExternalSecretsSync,
		SandboxFailures,
		RuntimeSocket,
		APIServerMetrics,
		ServiceEndpoints,
		IngressBackends,
		HPAScaling,
		PDBBlocksDrain,
		MissingReferences,
		RBACMissingRole,
		PVReleased,
		DaemonSetNoNodes,
		PDBOverlap,
		NetworkPolicies,
		GatewayAPI,
		PodsStuck,
		ServiceTargetPort,
		DeprecatedAPIs,
		ReplicaFailure,
		ClusterOperators,
	}
}
