package snapshot

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Scheme knows every type a snapshot holds: client-go's built-in types plus
// the aggregator's APIService, the Gateway API's kinds, OpenShift's
// ClusterOperator and ClusterVersion, cert-manager's Certificate, Issuer
// and ClusterIssuer, Argo CD's Application and Flux's Kustomization and
// HelmRelease, and the External Secrets Operator's ExternalSecret and
// secret stores. Built once, never changed afterwards.
var Scheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiregistrationv1.AddToScheme, gatewayv1.Install, addOpenShiftTypes, addCertManagerTypes, addGitOpsTypes, addExternalSecretsTypes} {
		if err := add(s); err != nil {
			panic(err) // programming error: conflicting registrations
		}
	}
	return s
})

// Codecs decode what Scheme knows, as protobuf, JSON or YAML.
var Codecs = sync.OnceValue(func() serializer.CodecFactory { return serializer.NewCodecFactory(Scheme()) })
