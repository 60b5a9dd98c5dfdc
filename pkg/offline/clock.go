package offline

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// newest is the latest time an input's objects record. Inputs other than
// kubectl-doctor dumps do not say when they were captured, and checks judge
// ages against "now": the newest timestamp is the best lower bound of the
// capture time (kubelets renew node heartbeats and controllers stamp
// conditions and events continuously, so it is usually minutes off at most).
type newest struct{ t time.Time }

func (n *newest) at(ts ...metav1.Time) {
	for _, t := range ts {
		if t.After(n.t) {
			n.t = t.Time
		}
	}
}

func (n *newest) see(obj runtime.Object) {
	if m, err := meta.Accessor(obj); err == nil {
		n.at(m.GetCreationTimestamp())
		if d := m.GetDeletionTimestamp(); d != nil {
			// A deletion timestamp is the request plus the grace period:
			// in the future for a pod still terminating. The request is
			// what happened before the capture.
			t := d.Time
			if g := m.GetDeletionGracePeriodSeconds(); g != nil {
				t = t.Add(-time.Duration(*g) * time.Second)
			}
			n.at(metav1.NewTime(t))
		}
	}
	switch o := obj.(type) {
	case *corev1.Node:
		for _, c := range o.Status.Conditions {
			n.at(c.LastHeartbeatTime, c.LastTransitionTime)
		}
	case *corev1.Pod:
		for _, c := range o.Status.Conditions {
			n.at(c.LastTransitionTime)
		}
		for _, cs := range [][]corev1.ContainerStatus{o.Status.InitContainerStatuses, o.Status.ContainerStatuses} {
			for _, c := range cs {
				if r := c.State.Running; r != nil {
					n.at(r.StartedAt)
				}
				if t := c.State.Terminated; t != nil {
					n.at(t.StartedAt, t.FinishedAt)
				}
				if t := c.LastTerminationState.Terminated; t != nil {
					n.at(t.StartedAt, t.FinishedAt) // a crash loop's last exit
				}
			}
		}
	case *corev1.Event:
		n.at(o.FirstTimestamp, o.LastTimestamp, metav1.Time(o.EventTime))
		if o.Series != nil {
			n.at(metav1.Time(o.Series.LastObservedTime))
		}
	case *appsv1.Deployment:
		for _, c := range o.Status.Conditions {
			n.at(c.LastUpdateTime, c.LastTransitionTime)
		}
	case *batchv1.Job:
		for _, c := range o.Status.Conditions {
			n.at(c.LastProbeTime, c.LastTransitionTime)
		}
	case *batchv1.CronJob:
		if o.Status.LastScheduleTime != nil {
			n.at(*o.Status.LastScheduleTime)
		}
	case *corev1.Namespace:
		for _, c := range o.Status.Conditions {
			n.at(c.LastTransitionTime)
		}
	case *appsv1.ReplicaSet:
		for _, c := range o.Status.Conditions {
			n.at(c.LastTransitionTime)
		}
	case *appsv1.StatefulSet:
		for _, c := range o.Status.Conditions {
			n.at(c.LastTransitionTime)
		}
	case *appsv1.DaemonSet:
		for _, c := range o.Status.Conditions {
			n.at(c.LastTransitionTime)
		}
	case *autoscalingv2.HorizontalPodAutoscaler:
		for _, c := range o.Status.Conditions {
			n.at(c.LastTransitionTime)
		}
		if o.Status.LastScaleTime != nil {
			n.at(*o.Status.LastScaleTime)
		}
	case *corev1.PersistentVolumeClaim:
		for _, c := range o.Status.Conditions {
			n.at(c.LastProbeTime, c.LastTransitionTime)
		}
	case *apiregistrationv1.APIService:
		for _, c := range o.Status.Conditions {
			n.at(c.LastTransitionTime)
		}
	case *snapshot.ClusterOperator: // operators restamp their conditions as they change
		n.platform(o.Status.Conditions)
	case *snapshot.ClusterVersion:
		n.platform(o.Status.Conditions)
	case *snapshot.Certificate: // cert-manager stamps each failure and transition
		n.platform(o.Status.Conditions)
		n.atPtr(o.Status.LastFailureTime)
	case *snapshot.Issuer:
		n.platform(o.Status.Conditions)
	case *snapshot.ClusterIssuer:
		n.platform(o.Status.Conditions)
	case *snapshot.Application: // Argo CD: conditions, health, the last operation
		for _, c := range o.Status.Conditions {
			n.atPtr(c.LastTransitionTime)
		}
		n.atPtr(o.Status.Health.LastTransitionTime)
		if op := o.Status.OperationState; op != nil {
			n.at(op.StartedAt)
			n.atPtr(op.FinishedAt)
		}
	case *snapshot.ExternalSecret:
		n.platform(o.Status.Conditions)
		n.at(o.Status.RefreshTime)
	case *snapshot.SecretStore:
		n.platform(o.Status.Conditions)
	case *snapshot.ClusterSecretStore:
		n.platform(o.Status.Conditions)
	case *snapshot.Kustomization:
		n.platform(o.Status.Conditions)
	case *snapshot.HelmRelease:
		n.platform(o.Status.Conditions)
	}
}

// platform is at for the transition times of conditions of the shape that
// OpenShift's operators, cert-manager, Flux and ESO write.
func (n *newest) platform(conds []snapshot.PlatformCondition) {
	for _, c := range conds {
		n.at(c.LastTransitionTime)
	}
}

// atPtr is at for an optional time.
func (n *newest) atPtr(t *metav1.Time) {
	if t != nil {
		n.at(*t)
	}
}

func namespaceOf(obj runtime.Object) string {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetNamespace()
	}
	return ""
}
