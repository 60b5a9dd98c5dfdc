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

// TestVolumeTopologyRemedies: a volume pinned to a zone without nodes is
// fixed where the volume or the class is, never by an uncordon, room on a
// node the volume cannot reach, or the pod's node selector.
func TestVolumeTopologyRemedies(t *testing.T) {
	set, err := fixture.Load(filepath.Join("..", "testdata", "checks", "unschedulable"))
	if err != nil {
		t.Fatal(err)
	}
	c := checks.Unschedulable
	snap, err := set.SnapshotWith(append(append(c.Reads[:0:0], c.Reads...), c.Optional...))
	if err != nil {
		t.Fatal(err)
	}
	r := doctor.Run(context.Background(), snap, []*doctor.Check{c}, fixture.Now())
	got := map[string]doctor.Finding{}
	for _, f := range r.Findings {
		got[f.Object.String()] = f
	}
	for obj, want := range map[string]string{
		"data/statefulset/db": "kubectl get pv pv-db-0 -o yaml",
		"data/pod/uploader":   "kubectl get storageclass zonal-c -o yaml",
	} {
		f := got[obj]
		if !hasCommand(f, want) || !hasCommand(f, "kubectl get nodes -L topology.kubernetes.io/zone") {
			t.Errorf("%s: remediation lacks %q: %+v", obj, want, f.Remediation)
		}
		for _, r := range f.Remediation {
			if strings.HasPrefix(r.Command, "kubectl uncordon") || strings.HasPrefix(r.Command, "kubectl describe node") || strings.Contains(r.Text, "node selector") {
				t.Errorf("%s: remediation %q does not apply to a volume in a zone without nodes", obj, r.Command+" "+r.Text)
			}
		}
	}
	// The local volume on the cordoned node: uncordoning it is the fix.
	if f := got["data/pod/reports"]; !hasCommand(f, "kubectl uncordon node-5") {
		t.Errorf("reports: %+v", f.Remediation)
	}
}
