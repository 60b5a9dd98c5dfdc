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

// TestUnschedulableWithoutStorage: without PersistentVolumeClaims and
// StorageClasses (a kubectl cluster-info dump holds neither) the check
// still runs: the pending pods without claims get their findings as with
// them, and a pod with claims says its claims could not be judged instead
// of calling them missing.
func TestUnschedulableWithoutStorage(t *testing.T) {
	full := runWithout(t, checks.Unschedulable)
	bare := runWithout(t, checks.Unschedulable, snapshot.PersistentVolumeClaims, snapshot.StorageClasses, snapshot.PersistentVolumes)
	if len(bare.Checks) != 1 || bare.Checks[0].Status == doctor.StatusSkipped {
		t.Fatalf("skipped without its optional reads: %+v", bare.Checks)
	}
	set, err := fixture.Load(filepath.Join("..", "testdata", "checks", "unschedulable"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := set.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string]bool{}
	for _, pod := range snap.Pods() {
		for _, v := range pod.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				claims[pod.Namespace+"/"+pod.Name] = true
			}
		}
	}
	byObject := map[string]doctor.Finding{}
	for _, f := range bare.Findings {
		byObject[f.Object.String()] = f
	}
	judged, partial := 0, 0
	for _, f := range full.Findings {
		withClaims := false
		for _, e := range append([]string{f.Object.Name}, f.Examples...) {
			withClaims = withClaims || claims[f.Object.Namespace+"/"+e] || claims[e]
		}
		g, ok := byObject[f.Object.String()]
		switch {
		case withClaims:
			if ok && (g.Partial == "" || strings.Contains(g.Message, "does not exist") || strings.Contains(g.Message, "soonest fix")) {
				t.Errorf("%s: claims unread, yet %q (partial %q)", f.Object, g.Message, g.Partial)
			}
			if ok {
				partial++
			}
		case !ok:
			t.Errorf("%s: no finding without the storage reads (with them: %q)", f.Object, f.Message)
		case g.Message != f.Message || g.Partial != "":
			t.Errorf("%s: %q (partial %q), with the storage reads %q", f.Object, g.Message, g.Partial, f.Message)
		default:
			judged++
		}
	}
	if judged == 0 || partial == 0 {
		t.Errorf("judged %d findings of pods without claims and %d partial ones of pods with claims, want some of each", judged, partial)
	}
}
