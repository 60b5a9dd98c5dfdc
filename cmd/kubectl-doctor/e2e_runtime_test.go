package main_test

import "github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"

// runtimeWant holds what the scenarios must produce for sandbox-failures, runtime-socket
// (see scenarioWant). Findings of a check are listed in report order:
// severity (critical first), then namespace, then name.
var runtimeWant = map[string][]wantFinding{
	"sandbox-failures": {
		{doctor.Warning, "node/sb-worker-1", `^3 pods on node sb-worker-1 cannot start: creating the pod sandbox fails because the CNI has no IP address left to assign \(FailedCreatePodSandBox ×36, first [23]\dm ago, last [\dms]+ ago\): rpc error: code = Unknown desc = failed to setup network for sandbox "5f2\w+": plugin type="aws-cni" name="aws-cni" failed \(add\): add cmd: failed to assign an IP address to container; node sb-worker-1 ran out of pod IPs at 14 pods while max-pods is 29: the kubelet admits more pods than the CNI can address`, 3},
		{doctor.Warning, "node/sb-worker-2", `^2 pods on node sb-worker-2 cannot start: creating the pod sandbox fails because the node's CNI plugin is not installed or not initialised \(FailedCreatePodSandBox ×8, first \d+m ago, last [\dms]+ ago\): .*cni plugin not initialized$`, 2},
	},
	"runtime-socket": {
		{doctor.Warning, "rs-agents/daemonset/log-shipper", `^daemonset/log-shipper mounts the Docker Engine socket /var/run/docker\.sock, but the 2 nodes it targets run containerd://1\.7\.20 ×2: the socket is missing there or belongs to another runtime, so it cannot see or manage their containers \(dockershim was removed in Kubernetes 1\.24\)$`, 2},
		{doctor.Info, "namespace/rs-agents", `^2 workloads in namespace rs-agents have host-level access to the container runtime through a hostPath socket: daemonset/cri-metrics \(/run/containerd/containerd\.sock\), daemonset/log-shipper \(/var/run/docker\.sock\); whoever controls them controls every container on their nodes$`, 2},
	},
}
