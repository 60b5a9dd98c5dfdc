package snapshot

import (
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
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// PriorityLevels returns the listed API Priority and Fairness priority levels.
func (s *Snapshot) PriorityLevels() []flowcontrolv1.PriorityLevelConfiguration {
	if l := typed[*flowcontrolv1.PriorityLevelConfigurationList](s, PriorityLevels); l != nil {
		return l.Items
	}
	return nil
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
