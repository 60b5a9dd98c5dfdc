package checks

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// PVReleased reports PersistentVolumes that no claim can use any more:
// Failed ones (their reclaim failed) and Released ones, above all those
// whose claim was recreated under the same name and now sees another (or
// no) volume while the data sits on the released one.
var PVReleased = &doctor.Check{
	Name:     "pv-released",
	Severity: doctor.Warning,
	Origin:   "peer coverage map",
	Reads:    []snapshot.Resource{snapshot.PersistentVolumes, snapshot.PersistentVolumeClaims},
	Run:      runPVReleased,
	Doc: `PersistentVolumes that are Failed, or Released with data a recreated claim no longer sees

## Why it matters
When a claim is deleted, its volume follows its reclaim policy. With
` + "`Delete`" + `, a provisioner that cannot delete the disk leaves the volume
` + "`Failed`" + `: the disk still exists and is billed, and nobody is told. With
` + "`Retain`" + `, the volume becomes ` + "`Released`" + ` and keeps its ` + "`claimRef`" + ` to the deleted
claim: no claim can bind it again until an administrator clears it. The
harmful case is the common one: a StatefulSet's claim (or a Helm release's)
deleted and recreated under the same name — the new claim gets a new,
empty volume (or waits forever when there is no provisioner) while the
data sits on the released one.

## How it is detected
PersistentVolumes and claims are listed. A ` + "`Failed`" + ` volume is a warning, with the
reason and message the PV controller wrote. A ` + "`Released`" + ` volume whose
` + "`claimRef`" + ` names a claim that exists again with another UID is a warning
naming the claim and the volume it now has (or that it is Pending). Other
` + "`Released`" + ` volumes are info: retained data to reuse or clean up. Bound,
Available and Pending volumes are never reported; lost and pending claims
are the pvc-pending check's.

## How to fix
For a recreated claim that should have the old data: scale its workload
down, delete the new claim, clear the old volume's claimRef
(` + "`kubectl patch pv NAME --type=json -p '[{\"op\":\"remove\",\"path\":\"/spec/claimRef\"}]'`" + `)
and recreate the claim with ` + "`spec.volumeName`" + ` set to it. For a Failed volume,
delete the disk in the storage backend, then the PV. For data nobody needs,
delete the Released PV (and its disk, which ` + "`Retain`" + ` keeps).

## References
- https://kubernetes.io/docs/concepts/storage/persistent-volumes/#reclaiming
- https://kubernetes.io/docs/concepts/storage/persistent-volumes/#retain
- https://kubernetes.io/docs/concepts/storage/persistent-volumes/#phase`,
}

func runPVReleased(p *doctor.Pass) error {
	claims := map[string]*corev1.PersistentVolumeClaim{}
	pvcs := p.Snapshot.PersistentVolumeClaims()
	for i := range pvcs {
		claims[pvcs[i].Namespace+"/"+pvcs[i].Name] = &pvcs[i]
	}
	pvs := p.Snapshot.PersistentVolumes()
	for i := range pvs {
		pv := &pvs[i]
		ref := doctor.ObjectRef{APIVersion: "v1", Kind: "PersistentVolume", Name: pv.Name}
		size := ""
		if q, ok := pv.Spec.Capacity[corev1.ResourceStorage]; ok {
			size = " (" + q.String() + ")"
		}
		was := ""
		var claim *corev1.PersistentVolumeClaim
		if c := pv.Spec.ClaimRef; c != nil {
			was = fmt.Sprintf(" of claim %s/%s", c.Namespace, c.Name)
			claim = claims[c.Namespace+"/"+c.Name]
			if claim != nil && c.UID != "" && claim.UID == c.UID {
				claim = nil // the same claim, being released
			}
		}
		del := doctor.Remediation{Text: "delete the volume once its data is saved or not needed (and the disk, which Retain keeps)", Command: "kubectl delete pv " + pv.Name}
		switch pv.Status.Phase {
		case corev1.VolumeFailed:
			why := pv.Status.Message
			if why == "" {
				why = pv.Status.Reason
			}
			if why == "" {
				why = "no reason recorded"
			}
			p.Report(doctor.Finding{Object: ref, Cause: "failed",
				Message: fmt.Sprintf("persistentvolume %s%s%s is Failed: reclaiming it (%s) did not work: %s; its disk may still exist, unused and billed",
					pv.Name, size, was, pv.Spec.PersistentVolumeReclaimPolicy, quote(why)),
				Remediation: []doctor.Remediation{
					{Text: "read the PV controller's events", Command: "kubectl describe pv " + pv.Name},
					{Text: "delete the disk in the storage backend, then the volume", Command: "kubectl delete pv " + pv.Name}}})
		case corev1.VolumeReleased:
			if claim != nil {
				now := "is Pending"
				if claim.Spec.VolumeName != "" {
					now = "is bound to volume " + claim.Spec.VolumeName
				}
				c := pv.Spec.ClaimRef
				p.Report(doctor.Finding{Object: ref, Cause: "claim-recreated",
					Message: fmt.Sprintf("persistentvolume %s%s is Released but claim %s/%s was recreated and %s: whatever %s held is not what the new claim sees",
						pv.Name, size, c.Namespace, c.Name, now, pv.Name),
					Remediation: []doctor.Remediation{
						{Text: "if the new claim should have the old data: stop its workload, delete the new claim, then free this volume for it",
							Command: fmt.Sprintf(`kubectl patch pv %s --type=json -p '[{"op":"remove","path":"/spec/claimRef"}]'`, pv.Name)},
						{Text: "and recreate the claim bound to it by name (spec.volumeName)", Command: fmt.Sprintf("kubectl get pvc %s -n %s -o yaml", c.Name, c.Namespace)},
						del}})
				continue
			}
			p.Report(doctor.Finding{Severity: doctor.Info, Object: ref, Cause: "released",
				Message: fmt.Sprintf("persistentvolume %s%s%s is Released and kept (reclaim policy %s): no claim can bind it until it is cleaned up", pv.Name, size, was, pv.Spec.PersistentVolumeReclaimPolicy),
				Remediation: []doctor.Remediation{del,
					{Text: "or make it bindable again", Command: fmt.Sprintf(`kubectl patch pv %s --type=json -p '[{"op":"remove","path":"/spec/claimRef"}]'`, pv.Name)}}})
		}
	}
	return nil
}
