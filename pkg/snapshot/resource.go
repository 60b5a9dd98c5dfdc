// Package snapshot is one read of a cluster, shared by every check of a scan.
//
// It exists so that kubectl-doctor can never become the incident it diagnoses:
// each resource is listed at most once per scan, from the API server's watch
// cache (resourceVersion=0), as protobuf, trimmed of what no check reads,
// with bounded parallelism; events only with field selectors. The same
// Snapshot is built from in-memory objects for fixture tests and offline use.
package snapshot

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource names one kind of object a check reads, and how to read it.
// It is a comparable value: the loader merges equal reads into one LIST.
type Resource struct {
	Group      string
	Version    string
	Resource   string // plural, as in the URL
	Kind       string
	Namespaced bool
	// FieldSelector narrows the list on the server. Events are only ever
	// listed with one: checks share one read, type=Warning (see
	// kube.WarningEventReads), since Normal events are most of a cluster's
	// events and say nothing went wrong.
	FieldSelector string
	// Path, when set, makes this a plain GET of a non-resource endpoint
	// (the API server's /metrics) instead of a LIST.
	Path string
}

// extensionGroups are the API groups clusters serve only when they are
// installed (custom resources such as the Gateway API's) or only on one
// distribution (OpenShift's config.openshift.io), or with an add-on
// (cert-manager.io, Argo CD, Flux, External Secrets).
var extensionGroups = map[string]bool{"gateway.networking.k8s.io": true, OpenShiftConfigGroup: true, CertManagerGroup: true,
	ArgoGroup: true, FluxKustomizeGroup: true, FluxHelmGroup: true, ExternalSecretsGroup: true}

// Extension says whether r belongs to an API that clusters serve only when
// it is installed: when the server does not serve it, the read holds no
// object instead of failing, because a cluster without the API has none to
// diagnose. A forbidden read still fails (and skips its checks). It is a
// property of the group, not a field, so that a Resource rebuilt from a
// dump record is still equal to the one a check declares.
func (r Resource) Extension() bool { return extensionGroups[r.Group] }

// The resources checks may declare.
var (
	Nodes                    = Resource{Version: "v1", Resource: "nodes", Kind: "Node"}
	Namespaces               = Resource{Version: "v1", Resource: "namespaces", Kind: "Namespace"}
	Pods                     = Resource{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true}
	Services                 = Resource{Version: "v1", Resource: "services", Kind: "Service", Namespaced: true}
	ReplicaSets              = Resource{Group: "apps", Version: "v1", Resource: "replicasets", Kind: "ReplicaSet", Namespaced: true}
	Deployments              = Resource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true}
	DaemonSets               = Resource{Group: "apps", Version: "v1", Resource: "daemonsets", Kind: "DaemonSet", Namespaced: true}
	StatefulSets             = Resource{Group: "apps", Version: "v1", Resource: "statefulsets", Kind: "StatefulSet", Namespaced: true}
	ControllerRevisions      = Resource{Group: "apps", Version: "v1", Resource: "controllerrevisions", Kind: "ControllerRevision", Namespaced: true}
	Jobs                     = Resource{Group: "batch", Version: "v1", Resource: "jobs", Kind: "Job", Namespaced: true}
	CronJobs                 = Resource{Group: "batch", Version: "v1", Resource: "cronjobs", Kind: "CronJob", Namespaced: true}
	EndpointSlices           = Resource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices", Kind: "EndpointSlice", Namespaced: true}
	APIServices              = Resource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices", Kind: "APIService"}
	MutatingWebhooks         = Resource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations", Kind: "MutatingWebhookConfiguration"}
	ValidatingWebhooks       = Resource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations", Kind: "ValidatingWebhookConfiguration"}
	PersistentVolumeClaims   = Resource{Version: "v1", Resource: "persistentvolumeclaims", Kind: "PersistentVolumeClaim", Namespaced: true}
	StorageClasses           = Resource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses", Kind: "StorageClass"}
	HorizontalPodAutoscalers = Resource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler", Namespaced: true}
	PodDisruptionBudgets     = Resource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets", Kind: "PodDisruptionBudget", Namespaced: true}
	Ingresses                = Resource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses", Kind: "Ingress", Namespaced: true}
	IngressClasses           = Resource{Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses", Kind: "IngressClass"}
	NetworkPolicies          = Resource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies", Kind: "NetworkPolicy", Namespaced: true}
	PersistentVolumes        = Resource{Version: "v1", Resource: "persistentvolumes", Kind: "PersistentVolume"}
	// ServiceAccounts are read for their names: a ServiceAccount lists the
	// names of its token Secrets, never their data.
	ServiceAccounts     = Resource{Version: "v1", Resource: "serviceaccounts", Kind: "ServiceAccount", Namespaced: true}
	Roles               = Resource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles", Kind: "Role", Namespaced: true}
	ClusterRoles        = Resource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles", Kind: "ClusterRole"}
	RoleBindings        = Resource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings", Kind: "RoleBinding", Namespaced: true}
	ClusterRoleBindings = Resource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings", Kind: "ClusterRoleBinding"}
)

// APIServerMetrics is the API server's own Prometheus metrics (GET /metrics):
// webhook latencies, APF rejections, object counts, LIST costs.
var APIServerMetrics = Resource{Resource: "metrics", Kind: "Metrics", Path: "/metrics"}

// PriorityLevels are the API Priority and Fairness priority levels.
var PriorityLevels = Resource{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "prioritylevelconfigurations", Kind: "PriorityLevelConfiguration"}

// known is every resource FromObjects can file an object under.
var known = []Resource{Nodes, Namespaces, Pods, Services, ReplicaSets, Deployments, DaemonSets,
	StatefulSets, ControllerRevisions, Jobs, CronJobs, EndpointSlices, APIServices, MutatingWebhooks,
	ValidatingWebhooks, PriorityLevels, PersistentVolumeClaims, StorageClasses, HorizontalPodAutoscalers,
	PodDisruptionBudgets, Ingresses, IngressClasses, allEvents,
	NetworkPolicies, PersistentVolumes, ServiceAccounts, Roles, ClusterRoles, RoleBindings, ClusterRoleBindings,
	GatewayClasses, Gateways, HTTPRoutes, GRPCRoutes, ClusterOperators, ClusterVersions,
	Certificates, Issuers, ClusterIssuers, ArgoApplications, FluxKustomizations, FluxHelmReleases,
	ExternalSecrets, SecretStores, ClusterSecretStores}

var allEvents = Resource{Version: "v1", Resource: "events", Kind: "Event", Namespaced: true}

// Events is the event list narrowed by a field selector such as
// "reason=FailedCreate" (the core/v1 event fields: reason, type,
// involvedObject.kind, involvedObject.name, ...).
func Events(fieldSelector string) Resource {
	r := allEvents
	r.FieldSelector = fieldSelector
	return r
}

// Verb is the verb one read of r needs: get for a path (/metrics), list
// for a resource.
func (r Resource) Verb() string {
	if r.Path != "" {
		return "get"
	}
	return "list"
}

// GVR is the group/version/resource of r.
func (r Resource) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}
}

// String is "replicasets.apps", "pods", "events(reason=FailedCreate)" or "/metrics".
func (r Resource) String() string {
	if r.Path != "" {
		return r.Path
	}
	s := r.Resource
	if r.Group != "" {
		s += "." + r.Group
	}
	if r.FieldSelector != "" {
		s += fmt.Sprintf("(%s)", r.FieldSelector)
	}
	return s
}

// Plan merges reads into the LISTs a scan will make: one per resource and
// field selector, in the order first declared.
func Plan(reads []Resource) []Resource {
	var out []Resource
	index := map[Resource]bool{}
	for _, r := range reads {
		if r.Kind == "Event" && r.FieldSelector == "" {
			continue // never list every event in the cluster
		}
		if _, ok := index[r]; ok {
			continue
		}
		index[r] = true
		out = append(out, r)
	}
	return out
}

// ForKind returns the resource objects of kind are listed as ("Event":
// every event), false for a kind no check reads.
func ForKind(kind string) (Resource, bool) {
	for _, r := range known {
		if r.Kind == kind {
			return r, true
		}
	}
	return Resource{}, false
}

// ForResource returns the resource whose plural is name ("daemonsets"),
// false for a resource no check reads.
func ForResource(name string) (Resource, bool) {
	for _, r := range known {
		if r.Resource == name {
			return r, true
		}
	}
	return Resource{}, false
}

// Readable is every resource a check may read as a whole list, in a stable
// order: what custom checks and config files may name. It is derived from
// the loader's own list, so a resource added there is readable here at once.
// Events are left out: they are only ever read with a field selector.
func Readable() []Resource {
	var out []Resource
	for _, r := range known {
		if r.Kind == "Event" || r.Path != "" {
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Lookup finds a readable resource by the name kubectl-doctor prints for
// it: "deployments.apps", "pods", or the plural alone ("deployments") when
// only one group has it. Unknown names are an error that lists the valid ones.
func Lookup(name string) (Resource, error) {
	var byPlural []Resource
	var names []string
	for _, r := range Readable() {
		if r.String() == name {
			return r, nil
		}
		if r.Resource == name {
			byPlural = append(byPlural, r)
		}
		names = append(names, r.String())
	}
	if len(byPlural) == 1 {
		return byPlural[0], nil
	}
	return Resource{}, fmt.Errorf("unknown resource %q (known: %s)", name, strings.Join(names, ", "))
}

// ResourceFor is the resource that holds objects of kind in group (""
// for the core group), for finding the metadata of a finding's object.
func ResourceFor(group, kind string) (Resource, bool) {
	for _, r := range known {
		if r.Kind == kind && r.Group == group && r.Path == "" {
			return r, true
		}
	}
	return Resource{}, false
}
