package checks_test

import (
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// A user limited to one namespace cannot list Nodes (cluster scoped):
// pods-stuck still runs, finalizers and scheduling gates are reported as
// with every read, and a pod its kubelet has not let go is reported without
// claiming whether its node is down.
func TestPodsStuckWithoutNodes(t *testing.T) {
	r := runWithout(t, checks.PodsStuck, snapshot.Nodes)
	if got := r.Checks[0]; got.Status != doctor.StatusFailed || got.Coverage != doctor.CoveragePartial ||
		len(got.Missing) != 1 || got.Missing[0].Read != snapshot.Nodes.String() || !got.Missing[0].Optional {
		t.Fatalf("without Nodes: status %s, coverage %s, missing %+v; want failed, partial, missing nodes", got.Status, got.Coverage, got.Missing)
	}
	got := map[string]string{}
	for _, f := range r.Findings {
		got[f.Object.Kind+"/"+f.Object.Name] = f.Message
	}
	want := map[string]string{
		"StatefulSet/db": "1 pod of statefulset/db is stuck Terminating on node-down for 60m past the grace period: its kubelet has not confirmed the deletion (the nodes could not be read to tell a node that is down from a kubelet that has not finished); the StatefulSet does not create a replacement while it exists",
		"Pod/legacy-job": "pod/legacy-job is stuck Terminating on node-up for 3h past the grace period: finalizer example.com/cleanup is still on it: the controller that owns it has not removed it",
		"Pod/nfs-client": "pod/nfs-client is stuck Terminating on node-up for 30m past the grace period: its kubelet has not confirmed the deletion (the nodes could not be read to tell a node that is down from a kubelet that has not finished)",
		"Pod/train-1":    "",
	}
	if len(got) != len(want) {
		t.Errorf("without Nodes: findings %v, want one on each of %d objects", got, len(want))
	}
	for obj, msg := range want {
		m, ok := got[obj]
		if !ok {
			t.Errorf("without Nodes: no finding on %s", obj)
			continue
		}
		if msg != "" && m != msg {
			t.Errorf("without Nodes: %s:\n got %s\nwant %s", obj, m, msg)
		}
	}
}
