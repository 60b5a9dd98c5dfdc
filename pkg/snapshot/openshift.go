package snapshot

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// OpenShift's own verdicts on its platform (config.openshift.io/v1): every
// ClusterOperator reports whether its component is Available, Degraded,
// Progressing and Upgradeable, and the ClusterVersion whether the cluster
// version operator is Failing. They are custom resources of an Extension
// group: a cluster that is not OpenShift answers 404 and the loader files
// an empty list, so the checks that read them pass there instead of being
// skipped. Only the fields checks read are declared (decoding ignores the
// rest), so the project does not depend on openshift/api for two kinds.
var (
	ClusterOperators = Resource{Group: OpenShiftConfigGroup, Version: "v1", Resource: "clusteroperators", Kind: "ClusterOperator"}
	ClusterVersions  = Resource{Group: OpenShiftConfigGroup, Version: "v1", Resource: "clusterversions", Kind: "ClusterVersion"}
)

// OpenShiftConfigGroup is the API group of OpenShift's cluster configuration.
const OpenShiftConfigGroup = "config.openshift.io"

var openShiftConfigV1 = schema.GroupVersion{Group: OpenShiftConfigGroup, Version: "v1"}

func addOpenShiftTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(openShiftConfigV1, &ClusterOperator{}, &ClusterOperatorList{}, &ClusterVersion{}, &ClusterVersionList{})
	metav1.AddToGroupVersion(s, openShiftConfigV1)
	return nil
}

// PlatformCondition is a condition of a ClusterOperator or ClusterVersion.
type PlatformCondition struct {
	Type               string      `json:"type"`
	Status             string      `json:"status"`
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	Reason             string      `json:"reason,omitempty"`
	Message            string      `json:"message,omitempty"`
}

// RelatedObject is an object a ClusterOperator names as its own: its
// namespaces, deployments, custom resources.
type RelatedObject struct {
	Group     string `json:"group"`
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// OperandVersion is a version a ClusterOperator reports ("operator": 4.14.3).
type OperandVersion struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ClusterOperator is one OpenShift platform component's status.
type ClusterOperator struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            ClusterOperatorStatus `json:"status,omitempty"`
}

// ClusterOperatorStatus is what the operator says of its component.
type ClusterOperatorStatus struct {
	Conditions     []PlatformCondition `json:"conditions,omitempty"`
	Versions       []OperandVersion    `json:"versions,omitempty"`
	RelatedObjects []RelatedObject     `json:"relatedObjects,omitempty"`
}

// ClusterOperatorList is a list of ClusterOperators.
type ClusterOperatorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterOperator `json:"items"`
}

// ClusterVersion is the cluster version operator's status: the version
// the cluster runs or is updating to, and whether applying it fails.
type ClusterVersion struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            ClusterVersionStatus `json:"status,omitempty"`
}

// ClusterVersionStatus is the part of a ClusterVersion's status checks read.
type ClusterVersionStatus struct {
	Desired    Release             `json:"desired,omitempty"`
	History    []UpdateHistory     `json:"history,omitempty"`
	Conditions []PlatformCondition `json:"conditions,omitempty"`
}

// Release is a version of the platform.
type Release struct {
	Version string `json:"version,omitempty"`
}

// UpdateHistory is one update the cluster went through (state Completed or
// Partial).
type UpdateHistory struct {
	State   string `json:"state"`
	Version string `json:"version"`
}

// ClusterVersionList is a list of ClusterVersions.
type ClusterVersionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterVersion `json:"items"`
}

// DeepCopyInto copies the status; its slices hold plain values.
func (in *ClusterOperatorStatus) DeepCopyInto(out *ClusterOperatorStatus) {
	*out = *in
	out.Conditions = append([]PlatformCondition(nil), in.Conditions...)
	out.Versions = append([]OperandVersion(nil), in.Versions...)
	out.RelatedObjects = append([]RelatedObject(nil), in.RelatedObjects...)
}

// DeepCopyObject implements runtime.Object.
func (in *ClusterOperator) DeepCopyObject() runtime.Object {
	out := &ClusterOperator{TypeMeta: in.TypeMeta}
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Status.DeepCopyInto(&out.Status)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *ClusterOperatorList) DeepCopyObject() runtime.Object {
	out := &ClusterOperatorList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]ClusterOperator, len(in.Items))
		for i := range in.Items {
			out.Items[i] = *in.Items[i].DeepCopyObject().(*ClusterOperator)
		}
	}
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *ClusterVersion) DeepCopyObject() runtime.Object {
	out := &ClusterVersion{TypeMeta: in.TypeMeta, Status: in.Status}
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status.History = append([]UpdateHistory(nil), in.Status.History...)
	out.Status.Conditions = append([]PlatformCondition(nil), in.Status.Conditions...)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *ClusterVersionList) DeepCopyObject() runtime.Object {
	out := &ClusterVersionList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]ClusterVersion, len(in.Items))
		for i := range in.Items {
			out.Items[i] = *in.Items[i].DeepCopyObject().(*ClusterVersion)
		}
	}
	return out
}

// ClusterOperators returns the listed ClusterOperators.
func (s *Snapshot) ClusterOperators() []ClusterOperator {
	if l := typed[*ClusterOperatorList](s, ClusterOperators); l != nil {
		return l.Items
	}
	return nil
}

// ClusterVersions returns the listed ClusterVersions (one, "version", on
// OpenShift).
func (s *Snapshot) ClusterVersions() []ClusterVersion {
	if l := typed[*ClusterVersionList](s, ClusterVersions); l != nil {
		return l.Items
	}
	return nil
}
