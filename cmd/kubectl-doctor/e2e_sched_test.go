package main_test

import "github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"

// schedWant holds what the scenarios must produce for unschedulable,
// pvc-pending and job-failed (see scenarioWant). Findings of a check are
// listed in report order: severity (critical first), then namespace, then name.
var schedWant = map[string][]wantFinding{
	// testdata/scenarios/everyday-scheduling: checkout-0/1 are refused by
	// four tainted nodes, the cordoned worker-e and es-busy (1 CPU of 4
	// free); big-report asks for more CPU than any node has; checkout-2 has
	// waited a minute only. testdata/scenarios/pending-taints: big-trainer
	// (a look-alike there) asks for 8 GPUs where nodes have 4.
	"unschedulable": {
		{doctor.Warning, "es-apps/pod/big-report", `^pod big-report in namespace es-apps pending for [23]\dm: it requests 512 CPU, more than any node's allocatable \(the largest has \d+ CPU\): it can never fit as the cluster is$`, 1},
		{doctor.Warning, "es-apps/pod/checkout-0", `^2 bare pods in namespace es-apps pending for [23]\dm: 0/\d+ nodes can take it: \d+ not matching its node selector/affinity, 1 cordoned \(worker-e\), 4 tainted \(dedicated=gpu:NoSchedule\), 1 short of 1 CPU \(es-busy: 1 CPU of 4 CPU free\); soonest fix: uncordon worker-e \(the cordon is its only obstacle\)$`, 2},
		{doctor.Warning, "pt-ml/pod/big-trainer", `^pod big-trainer in namespace pt-ml pending for [23]\dm: it requests 8 nvidia\.com/gpu, more than any node's allocatable \(the largest has 4 nvidia\.com/gpu\): it can never fit as the cluster is$`, 1},
	},
	// The StatefulSet's class was never created, scratch names no class and
	// there is no default, the CSI driver refuses uploads; the
	// WaitForFirstConsumer claim with no pod and the Bound claim stay quiet.
	"pvc-pending": {
		{doctor.Warning, "es-data/statefulset/ledger", `^1 claim of statefulset/ledger pending for \d+(?:m\d+s|[sm]) \(data-ledger-0\): storageclass "fast-ssd" does not exist; 1 pod waits on it: ledger-0$`, 1},
		{doctor.Warning, "es-data/persistentvolumeclaim/scratch", `^persistentvolumeclaim scratch pending for \d+(?:m\d+s|[sm]): it names no StorageClass and the cluster has no default StorageClass$`, 1},
		{doctor.Warning, "es-data/persistentvolumeclaim/uploads", `^persistentvolumeclaim uploads pending for [23]\dm: provisioning fails: failed to provision volume with StorageClass "es-standard": .*UnauthorizedOperation`, 1},
	},
	// nightly-export ran past its deadline (the real job controller failed
	// it); the suspended warmup Job stays quiet.
	"job-failed": {
		{doctor.Warning, "es-batch/job/nightly-export", `^job nightly-export failed \d+(?:m\d+s|[sm]) ago \(DeadlineExceeded: Job was active longer than specified deadline\); its activeDeadlineSeconds is 1s; none of its pods is left$`, 1},
	},
}
