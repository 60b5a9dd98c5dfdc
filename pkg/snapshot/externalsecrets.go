package snapshot

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The External Secrets Operator's verdicts (external-secrets.io/v1, served
// since ESO 0.16.2 and alone since 0.17): an ExternalSecret says whether it
// could copy its provider's values into its target Secret (Ready, with the
// provider's error), a SecretStore or ClusterSecretStore whether it can
// reach its provider. Custom resources of an Extension group: a cluster
// without ESO answers 404 and the loader files an empty list. Only the
// fields checks read are declared.
var (
	ExternalSecrets     = Resource{Group: ExternalSecretsGroup, Version: "v1", Resource: "externalsecrets", Kind: "ExternalSecret", Namespaced: true}
	SecretStores        = Resource{Group: ExternalSecretsGroup, Version: "v1", Resource: "secretstores", Kind: "SecretStore", Namespaced: true}
	ClusterSecretStores = Resource{Group: ExternalSecretsGroup, Version: "v1", Resource: "clustersecretstores", Kind: "ClusterSecretStore"}
)

// ExternalSecretsGroup is the External Secrets Operator's API group.
const ExternalSecretsGroup = "external-secrets.io"

func addExternalSecretsTypes(s *runtime.Scheme) error {
	gv := schema.GroupVersion{Group: ExternalSecretsGroup, Version: "v1"}
	s.AddKnownTypes(gv, &ExternalSecret{}, &ExternalSecretList{}, &SecretStore{}, &SecretStoreList{}, &ClusterSecretStore{}, &ClusterSecretStoreList{})
	metav1.AddToGroupVersion(s, gv)
	return nil
}

// ExternalSecret copies values from a secret store into a Secret.
type ExternalSecret struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ExternalSecretSpec `json:"spec,omitempty"`
	Status            struct {
		Conditions  []PlatformCondition `json:"conditions,omitempty"`
		RefreshTime metav1.Time         `json:"refreshTime,omitempty"`
	} `json:"status,omitempty"`
}

// ExternalSecretSpec names the store and the target Secret.
type ExternalSecretSpec struct {
	SecretStoreRef struct {
		Name string `json:"name,omitempty"`
		Kind string `json:"kind,omitempty"`
	} `json:"secretStoreRef,omitempty"`
	Target struct {
		Name           string `json:"name,omitempty"`
		CreationPolicy string `json:"creationPolicy,omitempty"`
	} `json:"target,omitempty"`
}

// TargetName is the Secret the ExternalSecret writes: spec.target.name, or
// its own name.
func (e *ExternalSecret) TargetName() string {
	if e.Spec.Target.Name != "" {
		return e.Spec.Target.Name
	}
	return e.Name
}

// ExternalSecretList is a list of ExternalSecrets.
type ExternalSecretList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ExternalSecret `json:"items"`
}

// SecretStore is a namespaced store; ClusterSecretStore the cluster-wide
// one. Checks read only their conditions.
type SecretStore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            struct {
		Conditions []PlatformCondition `json:"conditions,omitempty"`
	} `json:"status,omitempty"`
}

// ClusterSecretStore is a SecretStore every namespace may use.
type ClusterSecretStore SecretStore

// SecretStoreList is a list of SecretStores.
type SecretStoreList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SecretStore `json:"items"`
}

// ClusterSecretStoreList is a list of ClusterSecretStores.
type ClusterSecretStoreList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterSecretStore `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (in *ExternalSecret) DeepCopyObject() runtime.Object {
	out := &ExternalSecret{TypeMeta: in.TypeMeta, Spec: in.Spec, Status: in.Status}
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = append([]PlatformCondition(nil), in.Status.Conditions...)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *ExternalSecretList) DeepCopyObject() runtime.Object {
	out := &ExternalSecretList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	for i := range in.Items {
		out.Items = append(out.Items, *in.Items[i].DeepCopyObject().(*ExternalSecret))
	}
	return out
}

func (in *SecretStore) deepCopy() *SecretStore {
	out := &SecretStore{TypeMeta: in.TypeMeta, Status: in.Status}
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = append([]PlatformCondition(nil), in.Status.Conditions...)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *SecretStore) DeepCopyObject() runtime.Object { return in.deepCopy() }

// DeepCopyObject implements runtime.Object.
func (in *ClusterSecretStore) DeepCopyObject() runtime.Object {
	return (*ClusterSecretStore)((*SecretStore)(in).deepCopy())
}

// DeepCopyObject implements runtime.Object.
func (in *SecretStoreList) DeepCopyObject() runtime.Object {
	out := &SecretStoreList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	for i := range in.Items {
		out.Items = append(out.Items, *in.Items[i].deepCopy())
	}
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *ClusterSecretStoreList) DeepCopyObject() runtime.Object {
	out := &ClusterSecretStoreList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	for i := range in.Items {
		out.Items = append(out.Items, ClusterSecretStore(*(*SecretStore)(&in.Items[i]).deepCopy()))
	}
	return out
}

// ExternalSecrets returns the listed ExternalSecrets.
func (s *Snapshot) ExternalSecrets() []ExternalSecret {
	if l := typed[*ExternalSecretList](s, ExternalSecrets); l != nil {
		return l.Items
	}
	return nil
}

// SecretStores returns the listed SecretStores.
func (s *Snapshot) SecretStores() []SecretStore {
	if l := typed[*SecretStoreList](s, SecretStores); l != nil {
		return l.Items
	}
	return nil
}

// ClusterSecretStores returns the listed ClusterSecretStores.
func (s *Snapshot) ClusterSecretStores() []ClusterSecretStore {
	if l := typed[*ClusterSecretStoreList](s, ClusterSecretStores); l != nil {
		return l.Items
	}
	return nil
}
