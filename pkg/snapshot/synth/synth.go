// Package synth builds the synthetic cluster of the footprint benchmark
// (hack/bench) in memory, objects as the API server returns them (defaults,
// managedFields, status), for Go benchmarks of loading and checks at 30,000
// and 150,000 pods without a control plane.
package synth

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Shape is the size of a synthetic cluster; For scales the benchmark's
// default (30,600 pods on 1,000 nodes) keeping its proportions, as
// hack/bench -pods -nodes does.
type Shape struct {
	Nodes, Running, Failed, Pending, ReplicaSets, Jobs, Services, Events int
}

// Pods is the number of pods of the shape.
func (s Shape) Pods() int { return s.Running + s.Failed + s.Pending }

// For returns the shape of a cluster of pods pods on nodes nodes.
func For(pods, nodes int) Shape {
	scale := func(x int) int { return max(1, int(int64(x)*int64(pods)/30600)) }
	s := Shape{Nodes: nodes, Running: scale(25000), Failed: scale(5000), ReplicaSets: scale(1500),
		Jobs: scale(600), Services: scale(2000), Events: scale(5000)}
	s.Pending = max(0, pods-s.Running-s.Failed)
	return s
}

const namespaces = 50

// Now is the synthetic cluster's clock.
var Now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func ns(i int) string { return fmt.Sprintf("team-%02d", i%namespaces) }

// managed is what the API server writes in managedFields for a create by
// one manager and a status update by another: decoded, then trimmed.
func managed(t metav1.Time) []metav1.ManagedFieldsEntry {
	spec := `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:automountServiceAccountToken":{},"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:env":{".":{},"k:{\"name\":\"LOG_LEVEL\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"REGION\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:resources":{".":{},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}`
	status := `{"f:status":{"f:conditions":{".":{},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.244.0.1\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`
	return []metav1.ManagedFieldsEntry{
		{Manager: "bench", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &t, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(spec)},
		{Manager: "bench", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &t, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(status), Subresource: "status"},
	}
}

func uid(kind string, i int) types.UID {
	return types.UID(fmt.Sprintf("%08x-%04x-4000-8000-%012x", i, len(kind), i*7919))
}

// PodSpec is the pod template of app, with the defaults the API server sets.
func PodSpec(app string) corev1.PodSpec {
	return corev1.PodSpec{
		Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/app:1.0",
			Env:                      []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "REGION", Value: "eu-west-1"}},
			Resources:                corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")}},
			Ports:                    []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			TerminationMessagePath:   corev1.TerminationMessagePathDefault,
			TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy:          corev1.PullIfNotPresent,
		}},
		RestartPolicy:                 corev1.RestartPolicyAlways,
		TerminationGracePeriodSeconds: ptr.To(int64(30)),
		DNSPolicy:                     corev1.DNSClusterFirst,
		ServiceAccountName:            "default",
		DeprecatedServiceAccount:      "default",
		SecurityContext:               &corev1.PodSecurityContext{},
		SchedulerName:                 corev1.DefaultSchedulerName,
		Tolerations: []corev1.Toleration{
			{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(300))},
			{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(300))},
		},
		Priority:           ptr.To(int32(0)),
		EnableServiceLinks: ptr.To(true),
		PreemptionPolicy:   ptr.To(corev1.PreemptLowerPriority),
	}
}

// Pod is pod i of the shape: Running on node i%Nodes, Failed OutOfcpu on
// node-0000 (the storm), or Pending unschedulable, as hack/bench makes them.
func (s Shape) Pod(i int) *corev1.Pod {
	now := metav1.NewTime(Now)
	created := metav1.NewTime(Now.Add(-time.Hour)) // pending for an hour: past every grace period
	app := i % s.ReplicaSets
	p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%04d-5d8f7c-%06d", app, i), Namespace: ns(app),
			UID: uid("pod", i), ResourceVersion: fmt.Sprint(100000 + i), CreationTimestamp: now, ManagedFields: managed(now),
			Labels: map[string]string{"app": fmt.Sprintf("app-%04d", app)}},
		Spec: PodSpec(fmt.Sprintf("app-%04d", app))}
	p.Spec.NodeName = fmt.Sprintf("node-%04d", i%s.Nodes)
	addToken(&p.Spec, i)
	switch {
	case i >= s.Running+s.Failed:
		p.Spec.NodeName = ""
		p.Namespace, p.Labels = "pending", map[string]string{"app": "pending"}
		p.Name = fmt.Sprintf("pending-%04d", i)
		p.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBurstable, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: "Unschedulable", Message: fmt.Sprintf("0/%d nodes are available: %d Insufficient cpu.", s.Nodes, s.Nodes), LastTransitionTime: created}}}
	case i >= s.Running:
		p.Namespace, p.Labels = "storm", map[string]string{"app": "kube-cert-agent"}
		p.Name = fmt.Sprintf("kube-cert-agent-%05d", i)
		p.Spec.NodeName = "node-0000"
		p.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "OutOfcpu", QOSClass: corev1.PodQOSBurstable,
			Message: "Pod was rejected: Node didn't have enough resource: cpu, requested: 500, used: 7900, capacity: 7910"}
	default:
		p.Status = RunningStatus(p, fmt.Sprintf("10.244.%d.%d", i/250%250, i%250+1), now)
		p.Status.QOSClass, p.Status.HostIP, p.Status.HostIPs = corev1.PodQOSBurstable, "10.1.0.1", []corev1.HostIP{{IP: "10.1.0.1"}}
		p.Status.ContainerStatuses[0].ContainerID = fmt.Sprintf("containerd://%064x", i)
	}
	return p
}

// addToken adds what the ServiceAccount admission adds to pod i: its token
// volume, named kube-api-access-<5 random characters>, mounted in every
// container.
func addToken(s *corev1.PodSpec, i int) {
	const letters = "bcdfghjklmnpqrstvwxz2456789" // the API server's random-name alphabet
	name := []byte("kube-api-access-")
	for x, k := uint32(i)*2654435761, 0; k < 5; k++ {
		name = append(name, letters[x%uint32(len(letters))])
		x /= uint32(len(letters))
	}
	s.Volumes = append(s.Volumes, corev1.Volume{Name: string(name), VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To(int32(420)), Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To(int64(3607))}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}}}}}})
	for c := range s.Containers {
		s.Containers[c].VolumeMounts = append(s.Containers[c].VolumeMounts, corev1.VolumeMount{Name: string(name), ReadOnly: true,
			MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"})
	}
}

// RunningStatus is the status a v1.37 kubelet writes for a running pod p
// (its spec as the API server returns it): five conditions, and for each
// container its state, the volumes it mounts, its resources and its user.
func RunningStatus(p *corev1.Pod, ip string, now metav1.Time) corev1.PodStatus {
	st := corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, StartTime: &now, ObservedGeneration: 1}
	for _, t := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled} {
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now, ObservedGeneration: 1})
	}
	for _, c := range p.Spec.Containers {
		cs := corev1.ContainerStatus{Name: c.Name, Ready: true, Started: ptr.To(true), Image: c.Image,
			ImageID:     "registry.example.com/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			ContainerID: "containerd://0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			Resources:   &corev1.ResourceRequirements{Requests: c.Resources.Requests, Limits: c.Resources.Limits}, AllocatedResources: c.Resources.Requests,
			User: &corev1.ContainerUser{Linux: &corev1.LinuxContainerUser{UID: 0, GID: 0, SupplementalGroups: []int64{0}}}}
		for _, m := range c.VolumeMounts {
			cs.VolumeMounts = append(cs.VolumeMounts, corev1.VolumeMountStatus{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly,
				RecursiveReadOnly: ptr.To(corev1.RecursiveReadOnlyDisabled)})
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	return st
}

// Node is node i: Ready, with capacity and nodeInfo.
func (s Shape) Node(i int) *corev1.Node {
	now := metav1.NewTime(Now)
	name := fmt.Sprintf("node-%04d", i)
	return &corev1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: uid("node", i), CreationTimestamp: metav1.NewTime(Now.Add(-720 * time.Hour)), Labels: map[string]string{
			"kubernetes.io/hostname": name, "eks.amazonaws.com/nodegroup": fmt.Sprintf("pool-%d", i%10),
			"node.kubernetes.io/instance-type": "m6i.2xlarge"}},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("58")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("7910m"), corev1.ResourceMemory: resource.MustParse("31Gi"), corev1.ResourcePods: resource.MustParse("58")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status",
				LastHeartbeatTime: now, LastTransitionTime: metav1.NewTime(Now.Add(-720 * time.Hour))}},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", KernelVersion: "6.1.102-111.182.amzn2023.x86_64",
				OSImage: "Amazon Linux 2023.5.20240805", ContainerRuntimeVersion: "containerd://1.7.20", Architecture: "amd64", OperatingSystem: "linux"},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)}},
		}}
}

// Objects returns every object of the shape: namespaces (each with its
// default ServiceAccount), nodes, pods,
// ReplicaSets, Jobs, Services, EndpointSlices and events.
func (s Shape) Objects() []runtime.Object {
	now := metav1.NewTime(Now)
	var out []runtime.Object
	names := []string{"storm", "pending"}
	for i := range namespaces {
		names = append(names, ns(i))
	}
	for _, n := range names {
		out = append(out, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: n}})
	}
	for i := range s.Nodes {
		out = append(out, s.Node(i))
	}
	for i := range s.Pods() {
		out = append(out, s.Pod(i))
	}
	for i := range s.ReplicaSets {
		app := fmt.Sprintf("app-%04d", i)
		out = append(out, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: app + "-5d8f7c", Namespace: ns(i), UID: uid("rs", i), CreationTimestamp: now,
			Labels: map[string]string{"app": app}, Annotations: map[string]string{"deployment.kubernetes.io/revision": "1"}},
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(0)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}}, Spec: PodSpec(app)}}})
	}
	for i := range s.Jobs {
		spec := PodSpec("report")
		spec.RestartPolicy = corev1.RestartPolicyNever
		out = append(out, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("report-%04d", i), Namespace: ns(i), UID: uid("job", i), CreationTimestamp: now},
			Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: spec}}})
	}
	for i := range s.Services {
		name := fmt.Sprintf("svc-%04d", i)
		out = append(out, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns(i), UID: uid("svc", i), CreationTimestamp: now},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: fmt.Sprintf("10.96.%d.%d", i/250, i%250+1),
				Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}})
		out = append(out, &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: name + "-abcde", Namespace: ns(i), Labels: map[string]string{"kubernetes.io/service-name": name}},
			AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(8080))}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{fmt.Sprintf("10.244.%d.%d", i/250, i%250+1)}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		})
	}
	for i := range s.Events {
		reason, kind := "Scheduled", "Pod"
		if i%5 == 0 {
			reason, kind = "FailedCreate", "ReplicaSet"
		}
		out = append(out, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ev-%05d", i), Namespace: ns(i)},
			InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: ns(i), Name: fmt.Sprintf("app-%04d", i%s.ReplicaSets)},
			Reason:         reason, Message: "Successfully assigned pod to node", Type: "Normal", FirstTimestamp: now, LastTimestamp: now, Count: 1})
	}
	return out
}
