package kube

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// The annotations kubectl and the deployment controller keep revisions in.
const (
	ChangeCauseAnnotation = "kubernetes.io/change-cause"
	RevisionAnnotation    = "deployment.kubernetes.io/revision"
)

// Revision is one entry of a workload's rollout history.
type Revision struct {
	Revision    int64     `json:"revision"`
	ChangeCause string    `json:"changeCause"`
	Created     time.Time `json:"created"`
	Images      []string  `json:"images"`
	// Source is the object the revision lives in: replicaset/NAME or controllerrevision/NAME.
	Source string `json:"source"`
}

// WorkloadHistory is the rollout history of one Deployment, DaemonSet or StatefulSet.
type WorkloadHistory struct {
	Kind                 string     `json:"kind"`
	Namespace            string     `json:"namespace"`
	Name                 string     `json:"name"`
	RevisionHistoryLimit *int32     `json:"revisionHistoryLimit,omitempty"`
	Revisions            []Revision `json:"revisions"`
}

// Ref is the workload as kubectl names it: deployment/NAME.
func (w WorkloadHistory) Ref() string { return strings.ToLower(w.Kind) + "/" + w.Name }

// Newest is the highest revision, nil when there is none.
func (w WorkloadHistory) Newest() *Revision {
	if len(w.Revisions) == 0 {
		return nil
	}
	return &w.Revisions[len(w.Revisions)-1]
}

// Histories rebuilds the rollout history of every workload in the snapshot,
// sorted by namespace, kind and name, revisions ascending (as kubectl prints them).
func Histories(s *snapshot.Snapshot) []WorkloadHistory {
	byOwner := map[types.UID][]Revision{}
	rss := s.ReplicaSets()
	for i := range rss {
		rs := &rss[i]
		owner := metav1.GetControllerOf(rs)
		n, err := strconv.ParseInt(rs.Annotations[RevisionAnnotation], 10, 64)
		if owner == nil || err != nil {
			continue
		}
		byOwner[owner.UID] = append(byOwner[owner.UID], Revision{Revision: n, ChangeCause: rs.Annotations[ChangeCauseAnnotation],
			Created: rs.CreationTimestamp.Time, Images: Images(&rs.Spec.Template.Spec), Source: "replicaset/" + rs.Name})
	}
	crs := s.ControllerRevisions()
	for i := range crs {
		cr := &crs[i]
		owner := metav1.GetControllerOf(cr)
		if owner == nil {
			continue
		}
		byOwner[owner.UID] = append(byOwner[owner.UID], Revision{Revision: cr.Revision, ChangeCause: cr.Annotations[ChangeCauseAnnotation],
			Created: cr.CreationTimestamp.Time, Images: revisionImages(cr), Source: "controllerrevision/" + cr.Name})
	}

	var out []WorkloadHistory
	add := func(kind string, m *metav1.ObjectMeta, limit *int32) {
		revs := byOwner[m.UID]
		sort.Slice(revs, func(i, j int) bool { return revs[i].Revision < revs[j].Revision })
		out = append(out, WorkloadHistory{Kind: kind, Namespace: m.Namespace, Name: m.Name, RevisionHistoryLimit: limit, Revisions: revs})
	}
	deps := s.Deployments()
	if s.Err(snapshot.ReplicaSets) != nil {
		deps = nil // their revisions were not read
	}
	for i := range deps {
		add("Deployment", &deps[i].ObjectMeta, deps[i].Spec.RevisionHistoryLimit)
	}
	if s.Err(snapshot.ControllerRevisions) != nil {
		return out // DaemonSet and StatefulSet revisions were not read
	}
	dss := s.DaemonSets()
	for i := range dss {
		add("DaemonSet", &dss[i].ObjectMeta, dss[i].Spec.RevisionHistoryLimit)
	}
	sts := s.StatefulSets()
	for i := range sts {
		add("StatefulSet", &sts[i].ObjectMeta, sts[i].Spec.RevisionHistoryLimit)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Name < b.Name
	})
	return out
}

// Images are the images of the spec's containers, in order.
func Images(spec *corev1.PodSpec) []string {
	var out []string
	for _, c := range spec.Containers {
		out = append(out, c.Image)
	}
	return out
}

// revisionImages reads the pod template a DaemonSet or StatefulSet revision
// stores as a patch of the workload ({"spec":{"template":...}}).
func revisionImages(cr *appsv1.ControllerRevision) []string {
	raw := cr.Data.Raw
	if raw == nil && cr.Data.Object != nil {
		raw, _ = json.Marshal(cr.Data.Object)
	}
	var patch struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &patch) != nil {
		return nil
	}
	return Images(&patch.Spec.Template.Spec)
}
