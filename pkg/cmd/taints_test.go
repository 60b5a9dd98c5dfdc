package cmd

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
)

// TestTaintRows: every taint of every node of the node-taints fixture, by
// node then key, with since and class; untainted nodes are a row too.
func TestTaintRows(t *testing.T) {
	set, err := fixture.Load(filepath.Join("..", "..", "testdata", "checks", "node-taints"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := set.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range taintRows(snap.Nodes()) {
		since := "-"
		if r.Since != nil {
			since = r.Since.UTC().Format("15:04")
		}
		got = append(got, fmt.Sprintf("%s %s=%s:%s %s %s", r.Node, r.Key, r.Value, r.Effect, since, r.Class))
	}
	want := []string{
		"cp-1 node-role.kubernetes.io/control-plane=:NoSchedule - control-plane",
		"fresh-1 node.kubernetes.io/not-ready=:NoSchedule 11:58 problem",
		"gpu-1 dedicated=gpu:NoSchedule - intended",
		"mco-1 node.kubernetes.io/unschedulable=:NoSchedule 10:00 cordon",
		"reboot-1 node.kubernetes.io/unschedulable=:NoSchedule 11:50 cordon",
		"silent-1 node.kubernetes.io/not-ready=:NoSchedule 11:40 problem",
		"worker-1 =: - ",
		"worker-2 node.kubernetes.io/unreachable=:NoExecute 09:00 problem",
		"worker-2 node.kubernetes.io/unreachable=:NoSchedule 09:00 problem",
		"worker-3 node.kubernetes.io/disk-pressure=:NoSchedule 11:15 problem",
		"worker-4 node.kubernetes.io/disk-pressure=:NoSchedule 11:40 problem",
		"worker-5 node.kubernetes.io/unschedulable=:NoSchedule 12:00 cordon",
		"worker-6 node.cloudprovider.kubernetes.io/uninitialized=true:NoSchedule - problem",
		"worker-7 =: - ",
		"worker-8 node.kubernetes.io/memory-pressure=:NoSchedule - problem",
		"worker-9 node.kubernetes.io/not-ready=:NoExecute 11:40 problem",
		"worker-9 node.kubernetes.io/not-ready=:NoSchedule 11:40 problem",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
