package kube

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// LostClaim is what the snapshot says about a claim in phase Lost: the
// PersistentVolume controller sets Lost when the volume a bound claim names
// (spec.volumeName) is gone (event ClaimLost), or is bound to another claim
// (event ClaimMisbound).
type LostClaim struct {
	Volume string // spec.volumeName, "" when the claim names none
	// Checked: PersistentVolumes were read, so Exists, Phase and BoundTo
	// are known; false leaves them unknown.
	Checked bool
	Exists  bool
	Phase   corev1.PersistentVolumePhase
	// BoundTo is "namespace/name" of the other claim the volume is bound
	// to, "" when it is bound to this claim or to none.
	BoundTo string
	// Since dates the loss: the first time of the newest ClaimLost or
	// ClaimMisbound Warning event about the claim; zero when none was read.
	// The claim's own creationTimestamp says nothing about when it was lost.
	Since  time.Time
	Reason string // that event's reason
}

// LostClaimOf reads the facts about a Lost claim: its volume (when
// PersistentVolumes were read) and the event that dates the loss (when
// Warning events were read).
func LostClaimOf(s *snapshot.Snapshot, pvc *corev1.PersistentVolumeClaim) LostClaim {
	lc := LostClaim{Volume: pvc.Spec.VolumeName, Checked: s.Err(snapshot.PersistentVolumes) == nil}
	if lc.Checked && lc.Volume != "" {
		pvs := s.PersistentVolumes()
		for i := range pvs {
			pv := &pvs[i]
			if pv.Name != lc.Volume {
				continue
			}
			lc.Exists, lc.Phase = true, pv.Status.Phase
			if r := pv.Spec.ClaimRef; r != nil && (r.Namespace != pvc.Namespace || r.Name != pvc.Name) {
				lc.BoundTo = r.Namespace + "/" + r.Name
			}
			break
		}
	}
	if s.Err(WarningEventReads) == nil {
		for _, w := range WarningEventsOf(s).About("PersistentVolumeClaim", pvc.Namespace, pvc.Name, pvc.UID) { // newest first
			if w.Reason != "ClaimLost" && w.Reason != "ClaimMisbound" {
				continue
			}
			lc.Since, lc.Reason = w.First, w.Reason
			if lc.Since.IsZero() {
				lc.Since = w.Last
			}
			break
		}
	}
	return lc
}
