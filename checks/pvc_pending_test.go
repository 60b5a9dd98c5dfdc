package checks_test

import (
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// TestPVCPendingWithoutClassesOrNodes: a user limited to a namespace may
// read neither StorageClasses nor nodes (both cluster-scoped). The check
// still runs on claims and pods: every cause it can state from them
// (Lost, the provisioner's own error, a provisioner that never acted, a
// class of "", a claim deleted while mounted) is reported as with full
// reads, and a cause that needs the classes (a missing class, no default,
// binding on first use) is left out rather than guessed.
func TestPVCPendingWithoutClassesOrNodes(t *testing.T) {
	byObject := func(r *doctor.Report) map[string]doctor.Finding {
		out := map[string]doctor.Finding{}
		for _, f := range r.Findings {
			out[f.Object.String()] = f
		}
		return out
	}
	full := byObject(runWithout(t, checks.PVCPending))
	r := runWithout(t, checks.PVCPending, snapshot.StorageClasses, snapshot.Nodes)
	if len(r.Checks) != 1 || r.Checks[0].Status == doctor.StatusSkipped {
		t.Fatalf("skipped without classes and nodes: %+v", r.Checks)
	}
	bare := byObject(r)
	for _, obj := range []string{"lab/persistentvolumeclaim/legacy", "ops/persistentvolumeclaim/reports-data",
		"ops/persistentvolumeclaim/shared-a", "web/persistentvolumeclaim/legacy-data",
		"lab/persistentvolumeclaim/nfs-home", "web/deployment/uploader",
		"resize/persistentvolumeclaim/es-data", "resize/persistentvolumeclaim/pg-data", "resize/persistentvolumeclaim/kafka-data"} {
		f, ok := bare[obj]
		if !ok {
			t.Errorf("%s: no finding without classes and nodes", obj)
			continue
		}
		if f.Message != full[obj].Message {
			t.Errorf("%s: %q, with full reads %q", obj, f.Message, full[obj].Message)
		}
	}
	for _, obj := range []string{"data/statefulset/db", "lab/persistentvolumeclaim/scratch", "lab/persistentvolumeclaim/ml-cache"} {
		if _, ok := full[obj]; !ok {
			t.Fatalf("%s: the fixture no longer has this finding", obj)
		}
		if f, ok := bare[obj]; ok {
			t.Errorf("%s: judged without its class: %s", obj, f.Message)
		}
	}
	if len(bare) != 9 {
		t.Errorf("%d findings without classes and nodes, want 9: %v", len(bare), bare)
	}

	// Without nodes alone, a claim that binds on first use still links to
	// its pod, quoting the scheduler instead of computing the placement.
	f := byObject(runWithout(t, checks.PVCPending, snapshot.Nodes))["lab/persistentvolumeclaim/ml-cache"]
	if !strings.Contains(f.Message, "its pod trainer cannot be scheduled: the scheduler says: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.") {
		t.Errorf("ml-cache without nodes: %q", f.Message)
	}
}

// TestPVCPendingWithoutPods: without pods a StatefulSet's claims are still
// grouped on it, by the name its controller gives them
// (TEMPLATE-SET-ORDINAL).
func TestPVCPendingWithoutPods(t *testing.T) {
	r := runWithout(t, checks.PVCPending, snapshot.Pods)
	found := false
	for _, f := range r.Findings {
		if f.Object.String() == "data/statefulset/db" {
			found = true
		}
		if f.Object.String() == "data/persistentvolumeclaim/data-db-0" {
			t.Errorf("claim of statefulset/db reported on its own: %s", f.Message)
		}
	}
	if !found {
		t.Errorf("no finding on statefulset/db without pods: %+v", r.Findings)
	}
}

// TestNodeResizeErrorPointsAtTheNode: a file system the kubelet cannot
// grow is fixed on the node, not in the class or the CSI resizer.
func TestNodeResizeErrorPointsAtTheNode(t *testing.T) {
	f := fixtureFinding(t, checks.PVCPending, "pvc-pending", "resize/persistentvolumeclaim/kafka-data")
	if !hasCommand(f, "kubectl describe node node-2") {
		t.Errorf("remediation %+v", f.Remediation)
	}
	for _, r := range f.Remediation {
		if strings.Contains(r.Command, "storageclass") {
			t.Errorf("class advice for a node-side failure: %s", r.Command)
		}
	}
}
