// Package kube is what kubectl-doctor knows about Kubernetes objects that
// more than one check needs: which workload owns a pod, every pod template,
// whether a pod may run on a node, when an event happened, node pools,
// which taints mark a node problem, and how an admission webhook's backend
// is doing. Checks import it, so one fact is computed one way.
//
// It returns facts (causes, counts, times, object references, typed
// kinds), never sentences or remediation commands: a check words its own
// finding, and wording several checks share lives in checks/words.go.
// Values derived from a whole snapshot (the owner index, endpoint
// readiness) are built once per scan with snapshot.Memo.
package kube

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// Ref names an object of the given apiVersion and kind.
func Ref(apiVersion, kind string, m metav1.Object) doctor.ObjectRef {
	return doctor.ObjectRef{APIVersion: apiVersion, Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName()}
}

// NodeRef names a node.
func NodeRef(name string) doctor.ObjectRef {
	return doctor.ObjectRef{APIVersion: "v1", Kind: "Node", Name: name}
}

// NamespaceRef names a namespace.
func NamespaceRef(name string) doctor.ObjectRef {
	return doctor.ObjectRef{APIVersion: "v1", Kind: "Namespace", Name: name}
}
