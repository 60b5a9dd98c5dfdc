package snapshot

import (
	"fmt"
	"sort"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	dto "github.com/prometheus/client_model/go"
)

// Snapshot holds the lists of one scan. It is read-only once built, so checks
// may read it concurrently.
type Snapshot struct {
	lists   map[Resource]runtime.Object
	errs    map[Resource]error
	metrics map[string]*dto.MetricFamily
	// pods are kept as the decoder's own objects: at tens of thousands of
	// pods, copying each into one array would double the largest list.
	pods []*corev1.Pod
	// Namespace is the scope of namespaced lists; "" is the whole cluster.
	Namespace string
	// memo holds values derived from the lists (see Memo).
	memo sync.Map
	// ServerVersion is the API server's gitVersion ("v1.37.2") from GET
	// /version, for version-skew checks; "" when unknown.
	ServerVersion string
	// absent, when set, is why a resource that was not read is missing
	// ("not in the dump"): offline snapshots (see Builder) hold only what
	// their input held.
	absent string
}

func newSnapshot() *Snapshot {
	return &Snapshot{lists: map[Resource]runtime.Object{}, errs: map[Resource]error{}}
}

// FromObjects builds a snapshot from objects in memory (fixtures, dumps).
// Every known resource is present, possibly empty, as if listed successfully.
// Objects are trimmed and shared exactly as a live scan keeps them.
func FromObjects(objs ...runtime.Object) (*Snapshot, error) {
	return fromObjects(NewTrimmer(), objs)
}

// Untrimmed is FromObjects without trimming or sharing: every field as
// given. It exists for the test that proves no check reads what Trim drops
// (the same fixtures give byte-identical reports both ways).
func Untrimmed(objs ...runtime.Object) (*Snapshot, error) {
	return fromObjects(nil, objs)
}

func fromObjects(trim *Trimmer, objs []runtime.Object) (*Snapshot, error) {
	s := newSnapshot()
	byKind := map[string]Resource{}
	s.metrics = map[string]*dto.MetricFamily{}
	for _, r := range known {
		byKind[r.Kind] = r
		l, err := Scheme().New(r.GVR().GroupVersion().WithKind(r.Kind + "List"))
		if err != nil {
			return nil, fmt.Errorf("no list type for %s: %w", r, err)
		}
		s.lists[r] = l
	}
	items := map[Resource][]runtime.Object{}
	for _, o := range objs {
		kind := o.GetObjectKind().GroupVersionKind().Kind
		if kind == "" {
			if gvks, _, err := Scheme().ObjectKinds(o); err == nil {
				kind = gvks[0].Kind
			}
		}
		r, ok := byKind[kind]
		if !ok {
			return nil, fmt.Errorf("snapshot does not hold %q objects", kind)
		}
		items[r] = append(items[r], o.DeepCopyObject()) // trimming must not touch the caller's objects
	}
	for r, objs := range items {
		if err := meta.SetList(s.lists[r], objs); err != nil {
			return nil, fmt.Errorf("filing %s: %w", r, err)
		}
		if trim != nil {
			trim.trimList(s.lists[r]) // exactly what a live scan keeps
		}
	}
	s.pods = podPointers(s.lists[Pods])
	return s, nil
}

// Err is the error that kept r from being listed, nil when it was listed.
func (s *Snapshot) Err(r Resource) error {
	if err, ok := s.errs[r]; ok {
		return err
	}
	if r.Kind == "Event" {
		// An input that failed to hold its events (a bundle's
		// events-errors.json, an unreadable events file) failed every
		// event read, whatever its field selector.
		if err, ok := s.errs[allEvents]; ok {
			return err
		}
	}
	if r.Path != "" {
		if s.metrics == nil {
			return &ListError{Resource: r, Reason: s.absentReason(r, "not read by this scan"), Skip: true, Cause: CauseAbsent}
		}
		return nil
	}
	if s.list(r) == nil {
		return &ListError{Resource: r, Reason: s.absentReason(r, "not listed by this scan"), Skip: true, Cause: CauseAbsent}
	}
	return nil
}

// PriorityLevels returns the listed API Priority and Fairness priority levels.
func (s *Snapshot) PriorityLevels() []flowcontrolv1.PriorityLevelConfiguration {
	if l := typed[*flowcontrolv1.PriorityLevelConfigurationList](s, PriorityLevels); l != nil {
		return l.Items
	}
	return nil
}

func (s *Snapshot) list(r Resource) runtime.Object {
	if r.Kind == "Event" {
		if l, ok := s.lists[r]; ok {
			return l
		}
		return s.lists[allEvents] // fixtures: filtered by Events()
	}
	return s.lists[r]
}

func typed[L runtime.Object](s *Snapshot, r Resource) L {
	l, _ := s.list(r).(L)
	return l
}

// Nodes returns the listed nodes.
func (s *Snapshot) Nodes() []corev1.Node {
	if l := typed[*corev1.NodeList](s, Nodes); l != nil {
		return l.Items
	}
	return nil
}

// Namespaces returns the listed namespaces.
func (s *Snapshot) Namespaces() []corev1.Namespace {
	if l := typed[*corev1.NamespaceList](s, Namespaces); l != nil {
		return l.Items
	}
	return nil
}

// Pods returns the listed pods. Unlike the other accessors it returns
// pointers: pods are the one list large enough for a copy to matter.
func (s *Snapshot) Pods() []*corev1.Pod { return s.pods }

// podPointers points into a PodList's items.
func podPointers(list runtime.Object) []*corev1.Pod {
	l, _ := list.(*corev1.PodList)
	if l == nil {
		return nil
	}
	out := make([]*corev1.Pod, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out
}

// Services returns the listed services.
func (s *Snapshot) Services() []corev1.Service {
	if l := typed[*corev1.ServiceList](s, Services); l != nil {
		return l.Items
	}
	return nil
}

// ReplicaSets returns the listed ReplicaSets.
func (s *Snapshot) ReplicaSets() []appsv1.ReplicaSet {
	if l := typed[*appsv1.ReplicaSetList](s, ReplicaSets); l != nil {
		return l.Items
	}
	return nil
}

// Deployments returns the listed Deployments.
func (s *Snapshot) Deployments() []appsv1.Deployment {
	if l := typed[*appsv1.DeploymentList](s, Deployments); l != nil {
		return l.Items
	}
	return nil
}

// DaemonSets returns the listed DaemonSets.
func (s *Snapshot) DaemonSets() []appsv1.DaemonSet {
	if l := typed[*appsv1.DaemonSetList](s, DaemonSets); l != nil {
		return l.Items
	}
	return nil
}

// StatefulSets returns the listed StatefulSets.
func (s *Snapshot) StatefulSets() []appsv1.StatefulSet {
	if l := typed[*appsv1.StatefulSetList](s, StatefulSets); l != nil {
		return l.Items
	}
	return nil
}

// ControllerRevisions returns the listed ControllerRevisions.
func (s *Snapshot) ControllerRevisions() []appsv1.ControllerRevision {
	if l := typed[*appsv1.ControllerRevisionList](s, ControllerRevisions); l != nil {
		return l.Items
	}
	return nil
}

// Jobs returns the listed Jobs.
func (s *Snapshot) Jobs() []batchv1.Job {
	if l := typed[*batchv1.JobList](s, Jobs); l != nil {
		return l.Items
	}
	return nil
}

// CronJobs returns the listed CronJobs.
func (s *Snapshot) CronJobs() []batchv1.CronJob {
	if l := typed[*batchv1.CronJobList](s, CronJobs); l != nil {
		return l.Items
	}
	return nil
}

// EndpointSlices returns the listed EndpointSlices.
func (s *Snapshot) EndpointSlices() []discoveryv1.EndpointSlice {
	if l := typed[*discoveryv1.EndpointSliceList](s, EndpointSlices); l != nil {
		return l.Items
	}
	return nil
}

// APIServices returns the listed aggregated-API registrations.
func (s *Snapshot) APIServices() []apiregistrationv1.APIService {
	if l := typed[*apiregistrationv1.APIServiceList](s, APIServices); l != nil {
		return l.Items
	}
	return nil
}

// MutatingWebhookConfigurations returns the listed mutating webhook configurations.
func (s *Snapshot) MutatingWebhookConfigurations() []admissionregistrationv1.MutatingWebhookConfiguration {
	if l := typed[*admissionregistrationv1.MutatingWebhookConfigurationList](s, MutatingWebhooks); l != nil {
		return l.Items
	}
	return nil
}

// ValidatingWebhookConfigurations returns the listed validating webhook configurations.
func (s *Snapshot) ValidatingWebhookConfigurations() []admissionregistrationv1.ValidatingWebhookConfiguration {
	if l := typed[*admissionregistrationv1.ValidatingWebhookConfigurationList](s, ValidatingWebhooks); l != nil {
		return l.Items
	}
	return nil
}

// Events returns the events matching the field selector a check declared
// with Events(selector); in-memory snapshots are filtered here the way the
// API server would filter them.
func (s *Snapshot) Events(fieldSelector string) []corev1.Event {
	r := Events(fieldSelector)
	l, _ := s.list(r).(*corev1.EventList)
	if l == nil {
		return nil
	}
	if _, exact := s.lists[r]; exact {
		return l.Items
	}
	sel, err := fields.ParseSelector(fieldSelector)
	if err != nil {
		return nil
	}
	var out []corev1.Event
	for _, e := range l.Items {
		if sel.Matches(eventFields(&e)) {
			out = append(out, e)
		}
	}
	return out
}

func eventFields(e *corev1.Event) fields.Set {
	return fields.Set{
		"metadata.name":                  e.Name,
		"metadata.namespace":             e.Namespace,
		"reason":                         e.Reason,
		"type":                           e.Type,
		"source":                         e.Source.Component,
		"involvedObject.kind":            e.InvolvedObject.Kind,
		"involvedObject.name":            e.InvolvedObject.Name,
		"involvedObject.namespace":       e.InvolvedObject.Namespace,
		"involvedObject.uid":             string(e.InvolvedObject.UID),
		"involvedObject.apiVersion":      e.InvolvedObject.APIVersion,
		"involvedObject.fieldPath":       e.InvolvedObject.FieldPath,
		"involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
		"reportingComponent":             e.ReportingController,
	}
}

// Metadata returns the object metadata of r's objects, sorted by namespace
// and name: for code that needs only names, labels and annotations of any
// kind (suppressions, custom checks).
func (s *Snapshot) Metadata(r Resource) []metav1.Object {
	l := s.list(r)
	if l == nil {
		return nil
	}
	var out []metav1.Object
	if _, ok := l.(*podPointerList); ok {
		for _, p := range s.pods {
			out = append(out, p)
		}
	} else {
		_ = meta.EachListItem(l, func(o runtime.Object) error {
			if m, err := meta.Accessor(o); err == nil {
				out = append(out, m)
			}
			return nil
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].GetNamespace() != out[j].GetNamespace() {
			return out[i].GetNamespace() < out[j].GetNamespace()
		}
		return out[i].GetName() < out[j].GetName()
	})
	return out
}

// WithError returns a copy of s in which r failed to list with err, as the
// loader records it: for tests of how checks degrade.
func WithError(s *Snapshot, r Resource, err error) *Snapshot {
	c := &Snapshot{lists: map[Resource]runtime.Object{}, errs: map[Resource]error{}, Namespace: s.Namespace, ServerVersion: s.ServerVersion, metrics: s.metrics, pods: s.pods, absent: s.absent}
	for k, v := range s.lists {
		c.lists[k] = v
	}
	for k, v := range s.errs {
		c.errs[k] = v
	}
	delete(c.lists, r)
	if r.Path != "" {
		c.metrics = nil
	}
	if r == Pods {
		c.pods = nil
	}
	c.errs[r] = classifyAPIError(r, s.Namespace, err)
	return c
}

// WithoutMemo returns a snapshot sharing s's lists without the indexes
// checks derived from them (Memo): for benchmarks that measure a check's
// whole cost, indexes included, on one loaded snapshot.
func WithoutMemo(s *Snapshot) *Snapshot {
	return &Snapshot{lists: s.lists, errs: s.errs, metrics: s.metrics, pods: s.pods, Namespace: s.Namespace,
		ServerVersion: s.ServerVersion, absent: s.absent}
}

// podPointerList stands in the lists map for pods streamed as pointers, so
// that Err and Metadata see them as listed.
type podPointerList struct{ corev1.PodList }

// PersistentVolumeClaims returns the listed PersistentVolumeClaims.
func (s *Snapshot) PersistentVolumeClaims() []corev1.PersistentVolumeClaim {
	if l := typed[*corev1.PersistentVolumeClaimList](s, PersistentVolumeClaims); l != nil {
		return l.Items
	}
	return nil
}

// StorageClasses returns the listed StorageClasses.
func (s *Snapshot) StorageClasses() []storagev1.StorageClass {
	if l := typed[*storagev1.StorageClassList](s, StorageClasses); l != nil {
		return l.Items
	}
	return nil
}

// HorizontalPodAutoscalers returns the listed autoscaling/v2 HPAs.
func (s *Snapshot) HorizontalPodAutoscalers() []autoscalingv2.HorizontalPodAutoscaler {
	if l := typed[*autoscalingv2.HorizontalPodAutoscalerList](s, HorizontalPodAutoscalers); l != nil {
		return l.Items
	}
	return nil
}

// PodDisruptionBudgets returns the listed PodDisruptionBudgets.
func (s *Snapshot) PodDisruptionBudgets() []policyv1.PodDisruptionBudget {
	if l := typed[*policyv1.PodDisruptionBudgetList](s, PodDisruptionBudgets); l != nil {
		return l.Items
	}
	return nil
}

// Ingresses returns the listed Ingresses.
func (s *Snapshot) Ingresses() []networkingv1.Ingress {
	if l := typed[*networkingv1.IngressList](s, Ingresses); l != nil {
		return l.Items
	}
	return nil
}

// IngressClasses returns the listed IngressClasses.
func (s *Snapshot) IngressClasses() []networkingv1.IngressClass {
	if l := typed[*networkingv1.IngressClassList](s, IngressClasses); l != nil {
		return l.Items
	}
	return nil
}

// Memo returns the value build computes from s, computing it once per
// snapshot and key however many checks ask, concurrently or not: derived
// indexes (owners, endpoint readiness) are built once per scan. build must
// only read s. Keys should be values of an unexported type of the caller's
// package, as with context keys.
func Memo[T any](s *Snapshot, key any, build func() T) T {
	e, _ := s.memo.LoadOrStore(key, &memoEntry{})
	m := e.(*memoEntry)
	m.once.Do(func() { m.v = build() })
	return m.v.(T)
}

type memoEntry struct {
	once sync.Once
	v    any
}

// NetworkPolicies returns the listed NetworkPolicies.
func (s *Snapshot) NetworkPolicies() []networkingv1.NetworkPolicy {
	if l := typed[*networkingv1.NetworkPolicyList](s, NetworkPolicies); l != nil {
		return l.Items
	}
	return nil
}

// PersistentVolumes returns the listed PersistentVolumes.
func (s *Snapshot) PersistentVolumes() []corev1.PersistentVolume {
	if l := typed[*corev1.PersistentVolumeList](s, PersistentVolumes); l != nil {
		return l.Items
	}
	return nil
}

// ServiceAccounts returns the listed ServiceAccounts.
func (s *Snapshot) ServiceAccounts() []corev1.ServiceAccount {
	if l := typed[*corev1.ServiceAccountList](s, ServiceAccounts); l != nil {
		return l.Items
	}
	return nil
}

// Roles returns the listed RBAC Roles.
func (s *Snapshot) Roles() []rbacv1.Role {
	if l := typed[*rbacv1.RoleList](s, Roles); l != nil {
		return l.Items
	}
	return nil
}

// ClusterRoles returns the listed RBAC ClusterRoles.
func (s *Snapshot) ClusterRoles() []rbacv1.ClusterRole {
	if l := typed[*rbacv1.ClusterRoleList](s, ClusterRoles); l != nil {
		return l.Items
	}
	return nil
}

// RoleBindings returns the listed RBAC RoleBindings.
func (s *Snapshot) RoleBindings() []rbacv1.RoleBinding {
	if l := typed[*rbacv1.RoleBindingList](s, RoleBindings); l != nil {
		return l.Items
	}
	return nil
}

// ClusterRoleBindings returns the listed RBAC ClusterRoleBindings.
func (s *Snapshot) ClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	if l := typed[*rbacv1.ClusterRoleBindingList](s, ClusterRoleBindings); l != nil {
		return l.Items
	}
	return nil
}
