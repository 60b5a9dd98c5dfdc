package checks_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
)

// TestEvictionRemedies: each kind of eviction gets the fix for its cause,
// with real names, and quotes the kubelet's newest message as evidence.
func TestEvictionRemedies(t *testing.T) {
	set, err := fixture.Load(filepath.Join("..", "testdata", "checks", "pod-storm"))
	if err != nil {
		t.Fatal(err)
	}
	c := checks.PodStorm
	snap, err := set.SnapshotWith(append(append(c.Reads[:0:0], c.Reads...), c.Optional...))
	if err != nil {
		t.Fatal(err)
	}
	r := doctor.Run(context.Background(), snap, []*doctor.Check{c}, fixture.Now())
	got := map[string]doctor.Finding{}
	for _, f := range r.Findings {
		got[f.Object.String()] = f
	}
	for obj, want := range map[string]struct{ cmd, evidence string }{
		"shop/deployment/cart":     {"kubectl set resources deployment/cart -n shop --requests=memory=<usage>", "Evicted shop/cart-5f7d9-e00 (10m ago): The node was low on resource: memory."},
		"stream/statefulset/kafka": {"kubectl set resources statefulset/kafka -n stream -c broker --limits=ephemeral-storage=<more>", `Evicted stream/kafka-0 (0s ago): Container broker exceeded its local ephemeral storage limit "2Gi".`},
		"namespace/lab":            {"kubectl delete pods -n lab --field-selector=status.phase=Failed", "Evicted lab/notebook-c"},
	} {
		f, ok := got[obj]
		if !ok {
			t.Errorf("%s: no finding", obj)
			continue
		}
		if !hasCommand(f, want.cmd) {
			t.Errorf("%s: no remediation %q in %+v", obj, want.cmd, f.Remediation)
		}
		if len(f.Evidence) != 1 || !strings.HasPrefix(f.Evidence[0], want.evidence) {
			t.Errorf("%s: evidence %q, want it to start %q", obj, f.Evidence, want.evidence)
		}
		if f.Cause != "evicted" {
			t.Errorf("%s: cause %q", obj, f.Cause)
		}
	}
}
