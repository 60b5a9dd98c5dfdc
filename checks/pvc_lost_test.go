package checks_test

import (
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// A Lost claim claims no more than was read: without PersistentVolumes it
// does not say the volume is gone for sure, nor that another claim holds
// it; without Warning events it gives no duration (the claim's age is not
// how long it has been lost). The fix is never the provisioner.
func TestPVCLostWithoutReads(t *testing.T) {
	without := func(drop snapshot.Resource) map[string]doctor.Finding {
		out := map[string]doctor.Finding{}
		for _, f := range runWithout(t, checks.PVCPending, drop).Findings {
			out[f.Object.Namespace+"/"+f.Object.Name] = f
		}
		return out
	}
	for _, tc := range []struct {
		drop  snapshot.Resource
		claim string
		want  string
	}{
		{snapshot.PersistentVolumes, "ops/reports-data", "persistentvolumeclaim reports-data lost for 21m: the claim is Lost: the PersistentVolume controller no longer finds its PersistentVolume pvc-3f1c9a2e (PersistentVolumes could not be read to confirm)"},
		{snapshot.PersistentVolumes, "ops/shared-a", "persistentvolumeclaim shared-a lost for 120m: the claim is Lost: the PersistentVolume controller no longer finds its PersistentVolume pv-shared (PersistentVolumes could not be read to confirm)"},
		{kube.WarningEventReads, "ops/reports-data", "persistentvolumeclaim reports-data lost: the claim is Lost: its PersistentVolume pvc-3f1c9a2e no longer exists; the data on it cannot be recovered from Kubernetes"},
	} {
		f, ok := without(tc.drop)[tc.claim]
		if !ok {
			t.Errorf("without %s: no finding on %s", tc.drop, tc.claim)
			continue
		}
		if f.Message != tc.want {
			t.Errorf("without %s: %s:\n got %s\nwant %s", tc.drop, tc.claim, f.Message, tc.want)
		}
		for _, r := range f.Remediation {
			if strings.Contains(r.Text, "provisioner") || strings.Contains(r.Command, "storageclass") {
				t.Errorf("%s: a Lost claim's remediation points at the provisioner: %+v", tc.claim, r)
			}
		}
	}
}
