package kube

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// StorageReads are what StorageOf reads.
var StorageReads = []snapshot.Resource{snapshot.PersistentVolumeClaims, snapshot.StorageClasses}

// The annotations that mark the default StorageClass (the beta one is still
// honoured by the DefaultStorageClass admission plugin).
const (
	DefaultClassAnnotation     = "storageclass.kubernetes.io/is-default-class"
	betaDefaultClassAnnotation = "storageclass.beta.kubernetes.io/is-default-class"
)

// Storage indexes PersistentVolumeClaims and StorageClasses.
type Storage struct {
	claims   map[string]*corev1.PersistentVolumeClaim // "ns/name"
	classes  map[string]*storagev1.StorageClass
	defaults []string // names of the default classes, sorted
}

type storageKey struct{}

// StorageOf returns the snapshot's claim and class index, built once per snapshot.
func StorageOf(s *snapshot.Snapshot) *Storage {
	return snapshot.Memo(s, storageKey{}, func() *Storage {
		st := &Storage{claims: map[string]*corev1.PersistentVolumeClaim{}, classes: map[string]*storagev1.StorageClass{}}
		pvcs := s.PersistentVolumeClaims()
		for i := range pvcs {
			st.claims[pvcs[i].Namespace+"/"+pvcs[i].Name] = &pvcs[i]
		}
		scs := s.StorageClasses()
		for i := range scs {
			st.classes[scs[i].Name] = &scs[i]
			if scs[i].Annotations[DefaultClassAnnotation] == "true" || scs[i].Annotations[betaDefaultClassAnnotation] == "true" {
				st.defaults = append(st.defaults, scs[i].Name)
			}
		}
		sort.Strings(st.defaults)
		return st
	})
}

// Claim returns the claim, or nil.
func (st *Storage) Claim(namespace, name string) *corev1.PersistentVolumeClaim {
	return st.claims[namespace+"/"+name]
}

// Class returns a StorageClass by name, or nil.
func (st *Storage) Class(name string) *storagev1.StorageClass { return st.classes[name] }

// Defaults are the names of the classes marked default.
func (st *Storage) Defaults() []string { return st.defaults }

// ClassProblem says why a claim has no StorageClass: Missing names a class
// that does not exist; with Missing empty, the claim names none and the
// cluster has no default class (it can then bind only to a pre-created
// volume of no class).
type ClassProblem struct {
	Missing string
}

// ClassOf resolves the class a claim is provisioned by, or says why there
// is none. An explicit storageClassName "" asks for no class: static
// binding only, and no problem is reported here.
func (st *Storage) ClassOf(pvc *corev1.PersistentVolumeClaim) (*storagev1.StorageClass, *ClassProblem) {
	name := pvc.Spec.StorageClassName
	switch {
	case name == nil:
		// The admission plugin (and, since 1.28, the PV controller) fills in
		// the default; a claim still without a class found none.
		if len(st.defaults) == 0 {
			return nil, &ClassProblem{}
		}
		return st.classes[st.defaults[0]], nil
	case *name == "":
		return nil, nil
	}
	if sc := st.classes[*name]; sc != nil {
		return sc, nil
	}
	return nil, &ClassProblem{Missing: *name}
}

// WaitsForConsumer says whether the claim's class binds only once a pod
// that uses it is scheduled (volumeBindingMode WaitForFirstConsumer).
func (st *Storage) WaitsForConsumer(pvc *corev1.PersistentVolumeClaim) bool {
	sc, _ := st.ClassOf(pvc)
	return sc != nil && sc.VolumeBindingMode != nil && *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
}

// ClaimNames are the PersistentVolumeClaims a pod spec mounts, in volume order.
func ClaimNames(spec *corev1.PodSpec) []string {
	var out []string
	for _, v := range spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName != "" {
			out = append(out, v.PersistentVolumeClaim.ClaimName)
		}
	}
	return out
}
