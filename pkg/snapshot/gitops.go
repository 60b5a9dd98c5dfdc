package snapshot

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The GitOps controllers' own verdicts on what they deploy: Argo CD's
// Applications (argoproj.io/v1alpha1: sync and health status, the last sync
// operation, error conditions, each managed resource's health) and Flux's
// Kustomizations and HelmReleases (Ready, Stalled, the reason and message).
// Custom resources of Extension groups: a cluster without Argo CD or Flux
// answers 404 and the loader files an empty list. Only the fields checks
// read are declared, so the project depends on neither.
var (
	ArgoApplications   = Resource{Group: ArgoGroup, Version: "v1alpha1", Resource: "applications", Kind: "Application", Namespaced: true}
	FluxKustomizations = Resource{Group: FluxKustomizeGroup, Version: "v1", Resource: "kustomizations", Kind: "Kustomization", Namespaced: true}
	FluxHelmReleases   = Resource{Group: FluxHelmGroup, Version: "v2", Resource: "helmreleases", Kind: "HelmRelease", Namespaced: true}
)

// The GitOps API groups.
const (
	ArgoGroup          = "argoproj.io"
	FluxKustomizeGroup = "kustomize.toolkit.fluxcd.io"
	FluxHelmGroup      = "helm.toolkit.fluxcd.io"
)

func addGitOpsTypes(s *runtime.Scheme) error {
	argo := schema.GroupVersion{Group: ArgoGroup, Version: "v1alpha1"}
	s.AddKnownTypes(argo, &Application{}, &ApplicationList{})
	metav1.AddToGroupVersion(s, argo)
	ks := schema.GroupVersion{Group: FluxKustomizeGroup, Version: "v1"}
	s.AddKnownTypes(ks, &Kustomization{}, &KustomizationList{})
	metav1.AddToGroupVersion(s, ks)
	hr := schema.GroupVersion{Group: FluxHelmGroup, Version: "v2"}
	s.AddKnownTypes(hr, &HelmRelease{}, &HelmReleaseList{})
	metav1.AddToGroupVersion(s, hr)
	return nil
}

// Application is an Argo CD Application.
type Application struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ApplicationSpec   `json:"spec,omitempty"`
	Status            ApplicationStatus `json:"status,omitempty"`
}

// ApplicationSpec is where the Application deploys to and how it syncs.
type ApplicationSpec struct {
	Project     string                 `json:"project,omitempty"`
	Destination ApplicationDestination `json:"destination,omitempty"`
	SyncPolicy  *struct {
		Automated *struct{} `json:"automated,omitempty"`
	} `json:"syncPolicy,omitempty"`
}

// ApplicationDestination is the cluster and namespace an Application
// deploys to.
type ApplicationDestination struct {
	Server    string `json:"server,omitempty"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// ApplicationStatus is what Argo CD says of an Application.
type ApplicationStatus struct {
	Health         ApplicationHealth      `json:"health,omitempty"`
	Sync           SyncStatus             `json:"sync,omitempty"`
	Conditions     []ApplicationCondition `json:"conditions,omitempty"`
	OperationState *OperationState        `json:"operationState,omitempty"`
	Resources      []ApplicationResource  `json:"resources,omitempty"`
	// ResourceHealthSource is "appTree" when Argo CD (3.x by default)
	// keeps each resource's health out of the Application.
	ResourceHealthSource string `json:"resourceHealthSource,omitempty"`
}

// SyncStatus is whether the live objects match Git: Synced, OutOfSync or
// Unknown.
type SyncStatus struct {
	Status string `json:"status,omitempty"`
}

// ApplicationHealth is a health verdict: Healthy, Progressing, Degraded,
// Suspended, Missing or Unknown, with Argo CD's message.
type ApplicationHealth struct {
	Status             string       `json:"status,omitempty"`
	Message            string       `json:"message,omitempty"`
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// ApplicationCondition is an Application's condition (ComparisonError,
// SyncError, InvalidSpecError, DeletionError, ...).
type ApplicationCondition struct {
	Type               string       `json:"type"`
	Message            string       `json:"message,omitempty"`
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// OperationState is the Application's last (or running) sync.
type OperationState struct {
	Phase      string       `json:"phase,omitempty"`
	Message    string       `json:"message,omitempty"`
	StartedAt  metav1.Time  `json:"startedAt,omitempty"`
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	RetryCount int64        `json:"retryCount,omitempty"`
	SyncResult *struct {
		Resources []SyncResourceResult `json:"resources,omitempty"`
	} `json:"syncResult,omitempty"`
}

// SyncResourceResult is one resource's outcome in a sync.
type SyncResourceResult struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Status    string `json:"status,omitempty"`
	Message   string `json:"message,omitempty"`
	HookPhase string `json:"hookPhase,omitempty"`
}

// ApplicationResource is a resource the Application manages, with its
// sync status and health.
type ApplicationResource struct {
	Group     string             `json:"group,omitempty"`
	Kind      string             `json:"kind"`
	Namespace string             `json:"namespace,omitempty"`
	Name      string             `json:"name"`
	Status    string             `json:"status,omitempty"`
	Health    *ApplicationHealth `json:"health,omitempty"`
}

// ApplicationList is a list of Applications.
type ApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Application `json:"items"`
}

// FluxObject is a Flux Kustomization or HelmRelease: what checks read of
// both is the same (suspend, the conditions, the revisions).
type FluxObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Suspend bool `json:"suspend,omitempty"`
	} `json:"spec,omitempty"`
	Status FluxStatus `json:"status,omitempty"`
}

// FluxStatus is what a Flux controller says of its object.
type FluxStatus struct {
	Conditions            []PlatformCondition `json:"conditions,omitempty"`
	LastAppliedRevision   string              `json:"lastAppliedRevision,omitempty"`
	LastAttemptedRevision string              `json:"lastAttemptedRevision,omitempty"`
	// History is a HelmRelease's releases, newest first (v2: the revision
	// it runs is History[0].ChartVersion).
	History []struct {
		ChartVersion string `json:"chartVersion,omitempty"`
	} `json:"history,omitempty"`
}

// Kustomization is a Flux Kustomization, HelmRelease a Flux HelmRelease:
// distinct kinds with what checks read in common (FluxObject).
type (
	Kustomization FluxObject
	HelmRelease   FluxObject
)

// KustomizationList is a list of Kustomizations.
type KustomizationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Kustomization `json:"items"`
}

// HelmReleaseList is a list of HelmReleases.
type HelmReleaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HelmRelease `json:"items"`
}

// copyPtr copies a pointer to a plain value (nil stays nil).
func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// DeepCopyObject implements runtime.Object.
func (in *Application) DeepCopyObject() runtime.Object {
	out := &Application{TypeMeta: in.TypeMeta, Spec: in.Spec}
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if in.Spec.SyncPolicy != nil {
		sp := *in.Spec.SyncPolicy
		sp.Automated = copyPtr(sp.Automated)
		out.Spec.SyncPolicy = &sp
	}
	out.Status = in.Status
	out.Status.Health.LastTransitionTime = in.Status.Health.LastTransitionTime.DeepCopy()
	out.Status.Conditions = nil
	for _, c := range in.Status.Conditions {
		c.LastTransitionTime = c.LastTransitionTime.DeepCopy()
		out.Status.Conditions = append(out.Status.Conditions, c)
	}
	out.Status.Resources = nil
	for _, r := range in.Status.Resources {
		if r.Health != nil {
			h := *r.Health
			h.LastTransitionTime = h.LastTransitionTime.DeepCopy()
			r.Health = &h
		}
		out.Status.Resources = append(out.Status.Resources, r)
	}
	if in.Status.OperationState != nil {
		op := *in.Status.OperationState
		op.FinishedAt = op.FinishedAt.DeepCopy()
		if op.SyncResult != nil {
			sr := *op.SyncResult
			sr.Resources = append([]SyncResourceResult(nil), sr.Resources...)
			op.SyncResult = &sr
		}
		out.Status.OperationState = &op
	}
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *ApplicationList) DeepCopyObject() runtime.Object {
	out := &ApplicationList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Application, len(in.Items))
		for i := range in.Items {
			out.Items[i] = *in.Items[i].DeepCopyObject().(*Application)
		}
	}
	return out
}

func (in *FluxObject) deepCopy() *FluxObject {
	out := &FluxObject{TypeMeta: in.TypeMeta, Spec: in.Spec, Status: in.Status}
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = append([]PlatformCondition(nil), in.Status.Conditions...)
	out.Status.History = append(out.Status.History[:0:0], in.Status.History...)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *Kustomization) DeepCopyObject() runtime.Object {
	return (*Kustomization)((*FluxObject)(in).deepCopy())
}

// DeepCopyObject implements runtime.Object.
func (in *HelmRelease) DeepCopyObject() runtime.Object {
	return (*HelmRelease)((*FluxObject)(in).deepCopy())
}

// DeepCopyObject implements runtime.Object.
func (in *KustomizationList) DeepCopyObject() runtime.Object {
	out := &KustomizationList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	for i := range in.Items {
		out.Items = append(out.Items, Kustomization(*(*FluxObject)(&in.Items[i]).deepCopy()))
	}
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *HelmReleaseList) DeepCopyObject() runtime.Object {
	out := &HelmReleaseList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	for i := range in.Items {
		out.Items = append(out.Items, HelmRelease(*(*FluxObject)(&in.Items[i]).deepCopy()))
	}
	return out
}

// ArgoApplications returns the listed Argo CD Applications.
func (s *Snapshot) ArgoApplications() []Application {
	if l := typed[*ApplicationList](s, ArgoApplications); l != nil {
		return l.Items
	}
	return nil
}

// FluxKustomizations returns the listed Flux Kustomizations.
func (s *Snapshot) FluxKustomizations() []*FluxObject {
	var out []*FluxObject
	if l := typed[*KustomizationList](s, FluxKustomizations); l != nil {
		for i := range l.Items {
			out = append(out, (*FluxObject)(&l.Items[i]))
		}
	}
	return out
}

// FluxHelmReleases returns the listed Flux HelmReleases.
func (s *Snapshot) FluxHelmReleases() []*FluxObject {
	var out []*FluxObject
	if l := typed[*HelmReleaseList](s, FluxHelmReleases); l != nil {
		for i := range l.Items {
			out = append(out, (*FluxObject)(&l.Items[i]))
		}
	}
	return out
}
