package main_test

import "github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"

// gapsWant holds what testdata/scenarios/peer-gaps must produce for the
// checks that close popeye's and k8sgpt's rules kubectl-doctor did not
// cover (docs/coverage.md), in report order. Every look-alike of the
// scenario stays quiet: web's existing account, front's budget and its
// egress policy that allows DNS, a binding to an existing role, a free
// volume, a healthy Gateway and route.
var gapsWant = map[string][]wantFinding{
	"missing-references": {
		{doctor.Critical, "gaps/deployment/api", `^deployment/api runs as serviceaccount api-sa, which does not exist in namespace gaps: the API server refuses every pod it creates`, 1},
		{doctor.Warning, "gaps/statefulset/kafka", `^statefulset/kafka names serviceName kafka-headless, which does not exist in namespace gaps: its pods get no stable DNS names \(kafka-0\.kafka-headless\)`, 1},
	},
	"rbac-missing-role": {
		{doctor.Warning, "clusterrolebinding/gaps-backup-operator", `^clusterrolebinding gaps-backup-operator binds clusterrole gaps-backup-operator, which does not exist in the cluster: it grants serviceaccount gaps/backup nothing$`, 1},
	},
	"pv-released": {
		{doctor.Warning, "persistentvolume/gaps-pv-failed", `^persistentvolume gaps-pv-failed \(2Gi\) is Failed: reclaiming it \(Delete\) did not work: "host_path deleter only supports`, 1},
		{doctor.Warning, "persistentvolume/gaps-pv-old", `^persistentvolume gaps-pv-old \(1Gi\) is Released but claim gaps/data-db-0 was recreated and is bound to volume gaps-pv-new`, 1},
	},
	"daemonset-no-nodes": {
		{doctor.Info, "gaps/daemonset/gpu-agent", `^daemonset gpu-agent runs on no node: none of the \d+ nodes has the labels its nodeSelector gaps\.example\.com/accelerator=nvidia asks for, a kind of node \(GPU, accelerator, spot\) pools add on demand: it starts when one joins$`, 1},
	},
	"pdb-overlap": {
		{doctor.Warning, "gaps/poddisruptionbudget/cache", `^2 pods of bare pods cache-0, cache-1 are selected by 2 disruption budgets: cache \(app=cache\), data-tier \(tier=data\); the Eviction API refuses`, 2},
	},
	"network-policies": {
		{doctor.Warning, "gaps/networkpolicy/cache-egress", `^network policy cache-egress isolates the egress of 2 pods \(bare pods cache-0, cache-1\) and no egress rule allows DNS`, 2},
		{doctor.Info, "gaps/networkpolicy/protect-frnt", `^networkpolicy protect-frnt selects no pod \(app=frnt\)`, 1},
	},
	"gateway-api": {
		{doctor.Critical, "gatewayclass/gaps-rejected", `^gatewayclass gaps-rejected is rejected by its controller example\.com/gaps-controller \(InvalidParameters: "parametersRef gaps/proxy-config not found"\): its gateway gaps/legacy gets no address and serves nothing$`, 1},
		{doctor.Critical, "gaps/httproute/checkout", `^httproute checkout: its backend service gaps/checkout does not exist$`, 1},
		{doctor.Critical, "gaps/gateway/internal", `^gateway internal is not programmed \(AddressNotAssigned: "no free address in pool internal-lb"\)$`, 1},
		{doctor.Critical, "gaps-other/httproute/blog", `^httproute blog: gateway gaps/public rejects it \(NotAllowedByListeners: "no listener allows routes from namespace gaps-other"\)$`, 1},
	},
	"pods-stuck": {
		{doctor.Info, "gaps/pod/train-0", `^pod/train-0 has been held by scheduling gate example\.com/queue for \d+m: the scheduler does not consider it`, 1},
	},
	"service-target-port": {
		{doctor.Critical, "gaps/service/cache-metrics", `^service cache-metrics: port 9090 \(metrics\) targets the container port named "metrics", which none of its 2 ready pods \(bare pods cache-0, cache-1\) declares`, 1},
	},
	"replica-failure": {
		{doctor.Critical, "gaps-quota/deployment/batch", `^deployment/batch has 0 of 1 pods: a ResourceQuota of the namespace is used up \(ReplicaFailure FailedCreate since .*exceeded quota: pods`, 1},
	},
	// No scenario calls an API the server deprecates.
	"deprecated-apis": {},
	// The scenario cluster is not OpenShift: config.openshift.io is not
	// served, and the check passes with nothing to judge
	// (TestClusterOperatorsLive serves it for itself, then removes it).
	"cluster-operators": {},
	// Nor does it run cert-manager (TestCertificatesLive serves its API
	// for itself, then removes it).
	"certificates": {},
	// Nor Argo CD or Flux (TestGitOpsLive).
	"gitops-sync": {},
	// Nor the External Secrets Operator (TestExternalSecretsLive).
	"external-secrets": {},
}
