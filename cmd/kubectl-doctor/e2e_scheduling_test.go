package main_test

import "github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"

// schedulingWant holds what the scenarios must produce for pending-taints, node-pod-capacity
// (see scenarioWant). Findings of a check are listed in report order:
// severity (critical first), then namespace, then name.
var schedulingWant = map[string][]wantFinding{
	// testdata/scenarios/pending-taints: three bare pods select the GPU pool
	// without its toleration; big-trainer (tolerates it, waits for GPUs) and
	// trainer-new (unschedulable for a minute) stay quiet.
	"pending-taints": {
		{doctor.Warning, "pt-ml/pod/trainer-0", `^3 bare pods in namespace pt-ml pending for [23]\dm: every node they may use has a taint they do not tolerate: dedicated=gpu:NoSchedule \(2 nodes: pt-gpu-1, pt-gpu-2\)$`, 3},
	},
	// testdata/scenarios/node-pod-capacity: pc-full is full while queued-0
	// waits for it; pc-busy is at 90%; pc-ok has room.
	"node-pod-capacity": {
		{doctor.Critical, "node/pc-full", `^node pc-full runs 4 of its 4 allocatable pods \(100%\): the scheduler places no new pod there, whatever CPU and memory are left; 1 pending pod is waiting for room: pc-apps/queued-0 \(the scheduler reports Too many pods\)$`, 1},
		{doctor.Warning, "node/pc-busy", `^node pc-busy runs 9 of its 10 allocatable pods \(90%\)$`, 1},
	},
}
