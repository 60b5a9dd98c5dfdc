package snapshot

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// cert-manager's own verdicts on the certificates it issues
// (cert-manager.io/v1): a Certificate says whether its Secret holds a valid
// certificate (Ready), whether an issuance is under way or failed (Issuing),
// when it expires and when it is due for renewal; an Issuer or ClusterIssuer
// says whether it can sign (Ready). They are custom resources of an
// Extension group: a cluster without cert-manager answers 404 and the
// loader files an empty list. Only the fields checks read are declared, so
// the project does not depend on cert-manager's module for three kinds.
var (
	Certificates   = Resource{Group: CertManagerGroup, Version: "v1", Resource: "certificates", Kind: "Certificate", Namespaced: true}
	Issuers        = Resource{Group: CertManagerGroup, Version: "v1", Resource: "issuers", Kind: "Issuer", Namespaced: true}
	ClusterIssuers = Resource{Group: CertManagerGroup, Version: "v1", Resource: "clusterissuers", Kind: "ClusterIssuer"}
)

// CertManagerGroup is cert-manager's API group.
const CertManagerGroup = "cert-manager.io"

var certManagerV1 = schema.GroupVersion{Group: CertManagerGroup, Version: "v1"}

func addCertManagerTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(certManagerV1, &Certificate{}, &CertificateList{}, &Issuer{}, &IssuerList{}, &ClusterIssuer{}, &ClusterIssuerList{})
	metav1.AddToGroupVersion(s, certManagerV1)
	return nil
}

// Certificate is a certificate cert-manager keeps issued into a Secret.
type Certificate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              CertificateSpec   `json:"spec,omitempty"`
	Status            CertificateStatus `json:"status,omitempty"`
}

// CertificateSpec is the part of a Certificate's spec checks read.
type CertificateSpec struct {
	SecretName string           `json:"secretName,omitempty"`
	IssuerRef  IssuerReference  `json:"issuerRef,omitempty"`
	DNSNames   []string         `json:"dnsNames,omitempty"`
	CommonName string           `json:"commonName,omitempty"`
	Duration   *metav1.Duration `json:"duration,omitempty"`
}

// IssuerReference names the issuer of a Certificate: an Issuer in the
// Certificate's namespace (the default kind), a ClusterIssuer, or an external
// issuer of another group.
type IssuerReference struct {
	Name  string `json:"name"`
	Kind  string `json:"kind,omitempty"`
	Group string `json:"group,omitempty"`
}

// CertificateStatus is what cert-manager says of a Certificate. Its
// conditions have the shape of PlatformCondition (type, status, reason,
// message, lastTransitionTime).
type CertificateStatus struct {
	Conditions             []PlatformCondition `json:"conditions,omitempty"`
	NotBefore              *metav1.Time        `json:"notBefore,omitempty"`
	NotAfter               *metav1.Time        `json:"notAfter,omitempty"`
	RenewalTime            *metav1.Time        `json:"renewalTime,omitempty"`
	LastFailureTime        *metav1.Time        `json:"lastFailureTime,omitempty"`
	FailedIssuanceAttempts *int                `json:"failedIssuanceAttempts,omitempty"`
}

// CertificateList is a list of Certificates.
type CertificateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Certificate `json:"items"`
}

// Issuer is a namespaced cert-manager issuer; ClusterIssuer the
// cluster-wide one. Both have the same spec and status.
type Issuer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              IssuerSpec   `json:"spec,omitempty"`
	Status            IssuerStatus `json:"status,omitempty"`
}

// ClusterIssuer is an Issuer every namespace may use.
type ClusterIssuer Issuer

// IssuerSpec says what kind of issuer it is (only its kind is read).
type IssuerSpec struct {
	ACME       *ACMEIssuer `json:"acme,omitempty"`
	CA         *CAIssuer   `json:"ca,omitempty"`
	Vault      *struct{}   `json:"vault,omitempty"`
	Venafi     *struct{}   `json:"venafi,omitempty"`
	SelfSigned *struct{}   `json:"selfSigned,omitempty"`
}

// ACMEIssuer is an ACME issuer's server (Let's Encrypt's directory URL).
type ACMEIssuer struct {
	Server string `json:"server,omitempty"`
}

// CAIssuer signs with the key pair in a Secret.
type CAIssuer struct {
	SecretName string `json:"secretName,omitempty"`
}

// IssuerStatus is whether the issuer can sign.
type IssuerStatus struct {
	Conditions []PlatformCondition `json:"conditions,omitempty"`
}

// IssuerList is a list of Issuers.
type IssuerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Issuer `json:"items"`
}

// ClusterIssuerList is a list of ClusterIssuers.
type ClusterIssuerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterIssuer `json:"items"`
}

// DeepCopyInto copies the status.
func (in *CertificateStatus) DeepCopyInto(out *CertificateStatus) {
	*out = *in
	out.Conditions = append([]PlatformCondition(nil), in.Conditions...)
	out.NotBefore, out.NotAfter, out.RenewalTime, out.LastFailureTime = in.NotBefore.DeepCopy(), in.NotAfter.DeepCopy(), in.RenewalTime.DeepCopy(), in.LastFailureTime.DeepCopy()
	out.FailedIssuanceAttempts = copyPtr(in.FailedIssuanceAttempts)
}

// DeepCopyObject implements runtime.Object.
func (in *Certificate) DeepCopyObject() runtime.Object {
	out := &Certificate{TypeMeta: in.TypeMeta, Spec: in.Spec}
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.DNSNames = append([]string(nil), in.Spec.DNSNames...)
	out.Spec.Duration = copyPtr(in.Spec.Duration)
	in.Status.DeepCopyInto(&out.Status)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *CertificateList) DeepCopyObject() runtime.Object {
	out := &CertificateList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Certificate, len(in.Items))
		for i := range in.Items {
			out.Items[i] = *in.Items[i].DeepCopyObject().(*Certificate)
		}
	}
	return out
}

func (in *Issuer) deepCopy() *Issuer {
	out := &Issuer{TypeMeta: in.TypeMeta, Spec: in.Spec}
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.ACME, out.Spec.CA = copyPtr(in.Spec.ACME), copyPtr(in.Spec.CA)
	out.Status.Conditions = append([]PlatformCondition(nil), in.Status.Conditions...)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *Issuer) DeepCopyObject() runtime.Object { return in.deepCopy() }

// DeepCopyObject implements runtime.Object.
func (in *ClusterIssuer) DeepCopyObject() runtime.Object {
	return (*ClusterIssuer)((*Issuer)(in).deepCopy())
}

// DeepCopyObject implements runtime.Object.
func (in *IssuerList) DeepCopyObject() runtime.Object {
	out := &IssuerList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Issuer, len(in.Items))
		for i := range in.Items {
			out.Items[i] = *in.Items[i].deepCopy()
		}
	}
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *ClusterIssuerList) DeepCopyObject() runtime.Object {
	out := &ClusterIssuerList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]ClusterIssuer, len(in.Items))
		for i := range in.Items {
			out.Items[i] = ClusterIssuer(*(*Issuer)(&in.Items[i]).deepCopy())
		}
	}
	return out
}

// Certificates returns the listed cert-manager Certificates.
func (s *Snapshot) Certificates() []Certificate {
	if l := typed[*CertificateList](s, Certificates); l != nil {
		return l.Items
	}
	return nil
}

// Issuers returns the listed cert-manager Issuers.
func (s *Snapshot) Issuers() []Issuer {
	if l := typed[*IssuerList](s, Issuers); l != nil {
		return l.Items
	}
	return nil
}

// ClusterIssuers returns the listed cert-manager ClusterIssuers.
func (s *Snapshot) ClusterIssuers() []ClusterIssuer {
	if l := typed[*ClusterIssuerList](s, ClusterIssuers); l != nil {
		return l.Items
	}
	return nil
}
