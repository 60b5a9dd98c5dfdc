package checks_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// TestNodeConditionFolds: a node condition seen by node-health and the
// taint node-taints sees for it are one finding, at node-health's cause,
// listing the taint it explains; with node-health disabled the taint's
// finding stands on its own. A taint that outlived its condition (worker-8)
// and taints with no condition behind them never fold.
func TestNodeConditionFolds(t *testing.T) {
	set, err := fixture.Load(filepath.Join("..", "testdata", "checks", "node-taints"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := set.SnapshotWith([]snapshot.Resource{snapshot.Nodes})
	if err != nil {
		t.Fatal(err)
	}
	run := func(cs ...*doctor.Check) map[string][]doctor.Finding {
		r := doctor.Run(context.Background(), snap, cs, fixture.Now())
		out := map[string][]doctor.Finding{}
		for _, f := range r.Findings {
			out[f.Check] = append(out[f.Check], f)
		}
		return out
	}
	alone := run(checks.NodeTaints)
	both := run(checks.NodeHealth, checks.NodeTaints)
	// By node: a grouped finding stands for each of its members.
	objects := func(fs []doctor.Finding) map[string]doctor.Finding {
		m := map[string]doctor.Finding{}
		for _, f := range fs {
			m[f.Object.Name] = f
			for _, o := range f.Members {
				m[o.Name] = f
			}
		}
		return m
	}
	a, b, h := objects(alone["node-taints"]), objects(both["node-taints"]), objects(both["node-health"])
	// worker-2 (unreachable), worker-3/4 (DiskPressure), worker-9 (NotReady).
	for _, node := range []string{"worker-2", "worker-3", "worker-9"} {
		if _, ok := a[node]; !ok {
			t.Errorf("node-taints alone: no finding on %s", node)
		}
		if f, ok := b[node]; ok {
			t.Errorf("node-taints beside node-health still reports %s: %s", node, f.Message)
		}
		hf, ok := h[node]
		if !ok {
			t.Errorf("node-health: no finding on %s", node)
			continue
		}
		if len(hf.Explains) != 1 || !strings.HasPrefix(hf.Explains[0], "node-taints node/") || !strings.Contains(hf.Explains[0], node) {
			t.Errorf("node-health %s explains %q, want the node-taints finding", node, hf.Explains)
		}
	}
	// Never folded: the stale taint, the cloud provider's, the cordon.
	for _, node := range []string{"worker-8", "worker-6", "worker-5"} {
		if _, ok := b[node]; !ok {
			t.Errorf("node-taints beside node-health lost its finding on %s", node)
		}
	}
	if len(both["node-taints"])+len(both["node-health"]) >= len(alone["node-taints"])+len(run(checks.NodeHealth)["node-health"]) {
		t.Errorf("nothing folded: %d + %d findings", len(both["node-taints"]), len(both["node-health"]))
	}
}
