package main_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// nodeHealthWant holds what the scenarios must produce for node-health, node-drift
// (see scenarioWant). Findings of a check are listed in report order:
// severity (critical first), then namespace, then name.
//
// node-health also reports the taints scenario's sick nodes (worker-b lost,
// worker-c and worker-d under memory pressure), from the condition behind the
// taint node-taints reports; node-drift also reports the node-health
// scenario's pool, whose two NotReady nodes run the new kernel.
var nodeHealthWant = map[string][]wantFinding{
	"node-health": {
		{doctor.Critical, "node/nh-cni-1", `^node nh-cni-1 has been NotReady for [12]\dm: the kubelet reports "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized": the runtime's pod network is not ready.*; no new pods are scheduled there, and pods without a longer not-ready toleration are evicted after the default 300s`, 1},
		{doctor.Critical, "node/nh-pleg-1", `^node nh-pleg-1 has been NotReady for [4-9]m(\d+s)?: the kubelet reports "PLEG is not healthy: pleg was last seen active 3m0s ago; threshold is 3m0s": the kubelet's pod lifecycle event generator could not relist`, 1},
		{doctor.Critical, "node/nh-runtime-1", `^2 nodes have been NotReady for [4-5]\dm: the kubelet reports "container runtime is down": the kubelet's CRI Status call to the container runtime fails or times out.*; all run kernel 6\.8\.0-1021-aws, which no other node runs; no new pods are scheduled there`, 2},
		{doctor.Critical, "node/worker-b", `^node worker-b has been unreachable for (119m|1[2-9]\dm|2h): the kubelet stopped posting node status \(Ready is Unknown: NodeStatusUnknown\): the machine is down, cut off from the API server, or its kubelet is stopped; .*unreachable toleration`, 1},
		{doctor.Warning, "node/worker-c", `^2 nodes have been under MemoryPressure for [23]\dm \(KubeletHasInsufficientMemory\); the kubelet evicts pods to reclaim memory`, 2},
	},
	"node-drift": {
		{doctor.Critical, "node/nd-legacy-1", `^2 nodes of pool legacy-pool run kubelet v1\.33\.5-eks-113cf36, 4 minor versions older than the API server v1\.37\.2, beyond the version-skew policy \(at most 3 older\)`, 2},
		{doctor.Warning, "node/nd-drift-4", `^pool drift-pool \(4 nodes\) mixes kernel 6\.1\.102-111\.182\.amzn2023\.x86_64 on 3 nodes, 6\.8\.0-1015-aws on 1 node \(nd-drift-4\): a bug or feature that depends on the node's software shows only on some of its nodes`, 1},
		{doctor.Warning, "node/nh-runtime-1", `^pool nh-workers \(5 nodes\) mixes kernel 5\.15\.0-1071-aws on 3 nodes, 6\.8\.0-1021-aws on 2 nodes \(nh-runtime-1, nh-runtime-2\):`, 2},
	},
}

// TestNodesCommand: `kubectl doctor nodes` groups the fleet by pool, one row
// per distinct set of versions, the odd values marked.
func TestNodesCommand(t *testing.T) {
	needCluster(t)
	r := runDoctor(t, scenarios.Kubeconfig, "nodes")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	// The rows of the node-drift and node-health scenarios, in order; other
	// scenarios' nodes (no nodeInfo) are in the <none> pool.
	want := []string{
		`^POOL\s+NODES\s+KUBELET\s+KERNEL\s+OS\s+RUNTIME\s+ARCH$`,
		`^<none>\s+\d+\s+-\s+-\s+-\s+-\s+-$`,
		`^drift-pool\s+3\s+v1\.37\.2-eks-a737599\s+6\.1\.102-111\.182\.amzn2023\.x86_64\s+Amazon Linux 2023\.5\.20240819\s+containerd://1\.7\.20\s+amd64$`,
		`^drift-pool\s+1\s+v1\.37\.2-eks-a737599\s+6\.8\.0-1015-aws\*\s+Amazon Linux 2023\.5\.20240819\s+containerd://1\.7\.20\s+amd64$`,
		`^general\s+1\s+v1\.37\.2-eks-a737599\s+6\.1\.102-111\.182\.amzn2023\.aarch64\s+Amazon Linux 2023\.5\.20240819\s+containerd://1\.7\.20\s+arm64$`,
		`^general\s+1\s+v1\.37\.2-eks-a737599\s+6\.1\.102-111\.182\.amzn2023\.x86_64\s+Amazon Linux 2023\.5\.20240819\s+containerd://1\.7\.20\s+amd64$`,
		`^legacy-pool\s+2\s+v1\.33\.5-eks-113cf36\s+5\.10\.225-213\.878\.amzn2\.x86_64\s+Amazon Linux 2\s+containerd://1\.7\.22\s+amd64$`,
		`^nh-workers\s+3\s+v1\.37\.2\s+5\.15\.0-1071-aws\s+Ubuntu 22\.04\.5 LTS\s+containerd://2\.1\.4\s+amd64$`,
		`^nh-workers\s+2\s+v1\.37\.2\s+6\.8\.0-1021-aws\*\s+Ubuntu 22\.04\.5 LTS\s+containerd://2\.1\.4\s+amd64$`,
		`^system-pool\s+2\s+v1\.37\.2-eks-a737599\s+6\.1\.102-111\.182\.amzn2023\.x86_64\s+Amazon Linux 2023\.5\.20240819\s+containerd://1\.7\.20\s+amd64$`,
	}
	next := 0
	for _, l := range lines {
		if next < len(want) && regexp.MustCompile(want[next]).MatchString(l) {
			next++
		}
	}
	if next < len(want) {
		t.Errorf("no line matches /%s/ (in order) in:\n%s", want[next], r.stdout)
	}

	var doc struct {
		Nodes []struct {
			Pool, PoolLabel, Kernel string
			Count                   int
			Nodes, Odd              []string
		}
	}
	if err := json.Unmarshal([]byte(runDoctor(t, scenarios.Kubeconfig, "nodes", "-o", "json").stdout), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range doc.Nodes {
		if n.Pool == "drift-pool" && len(n.Odd) > 0 {
			found = true
			if n.PoolLabel != "eks.amazonaws.com/nodegroup" || n.Count != 1 || strings.Join(n.Nodes, ",") != "nd-drift-4" ||
				strings.Join(n.Odd, ",") != "kernel" || n.Kernel != "6.8.0-1015-aws" {
				t.Errorf("odd drift-pool row = %+v", n)
			}
		}
	}
	if !found {
		t.Errorf("json has no odd drift-pool row: %+v", doc.Nodes)
	}
	if r := runDoctor(t, scenarios.Kubeconfig, "nodes", "-o", "bogus"); r.code != 2 {
		t.Errorf("-o bogus: exit %d, want 2", r.code)
	}
}
