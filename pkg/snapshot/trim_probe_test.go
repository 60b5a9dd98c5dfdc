package snapshot

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestTrimKeepsProbesWithoutCredentials: a probe kill is named by its
// kind, port, path and timing, which the trimmer keeps; HTTP headers and
// exec arguments, which may carry tokens, are dropped; equal probes are
// shared between pods.
func TestTrimKeepsProbesWithoutCredentials(t *testing.T) {
	mk := func() *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app",
			LivenessProbe: &corev1.Probe{TimeoutSeconds: 2, ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/healthz", Port: intstr.FromInt32(8080), HTTPHeaders: []corev1.HTTPHeader{{Name: "Authorization", Value: "Bearer s3cr3t"}}}}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"check", "--token=s3cr3t"}}}},
		}}}}
	}
	tr := NewTrimmer()
	a, b := mk(), mk()
	tr.Trim(a)
	tr.Trim(b)
	c := a.Spec.Containers[0]
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.LivenessProbe.HTTPGet.Port.IntVal != 8080 || c.LivenessProbe.TimeoutSeconds != 2 {
		t.Fatalf("liveness probe not kept: %+v", c.LivenessProbe)
	}
	if len(c.LivenessProbe.HTTPGet.HTTPHeaders) != 0 {
		t.Errorf("HTTP headers kept: %+v", c.LivenessProbe.HTTPGet.HTTPHeaders)
	}
	if got := c.ReadinessProbe.Exec.Command; len(got) != 1 || got[0] != "check" {
		t.Errorf("exec probe = %q, want its program only", got)
	}
	if b.Spec.Containers[0].LivenessProbe != c.LivenessProbe {
		t.Error("equal probes are not shared")
	}
}

// TestTrimKeepsContainerPorts: a Service's targetPort is judged by the
// ports the containers declare: name, number and protocol are kept, and
// the host port and IP the scheduler's NodePorts filter compares; equal
// lists are shared between pods.
func TestTrimKeepsContainerPorts(t *testing.T) {
	mk := func() *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP, HostPort: 80, HostIP: "10.0.0.1"}}}}}}
	}
	tr := NewTrimmer()
	a, b := mk(), mk()
	tr.Trim(a)
	tr.Trim(b)
	got := a.Spec.Containers[0].Ports
	if len(got) != 1 || got[0] != (corev1.ContainerPort{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP, HostPort: 80, HostIP: "10.0.0.1"}) {
		t.Fatalf("ports = %+v, want http 8080/TCP with host port 80 on 10.0.0.1", got)
	}
	if &b.Spec.Containers[0].Ports[0] != &got[0] {
		t.Error("equal port lists are not shared")
	}
}

// TestTrimSharesContainersAcrossTokenVolumes: every pod that mounts a
// ServiceAccount token has its own kube-api-access-<random> volume, mounted
// in each container; without the suffix the containers of one template's
// pods are one copy. What a kubelet reports per container besides its
// state (mounts, resources, user) is dropped.
func TestTrimSharesContainersAcrossTokenVolumes(t *testing.T) {
	mk := func(suffix string) *corev1.Pod {
		name := "kube-api-access-" + suffix
		mount := corev1.VolumeMount{Name: name, ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}
		return &corev1.Pod{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox", VolumeMounts: []corev1.VolumeMount{mount}}},
			Containers: []corev1.Container{{Name: "app", Image: "app:1", VolumeMounts: []corev1.VolumeMount{
				{Name: "data", MountPath: "/data"}, mount}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: name, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}}}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true,
				VolumeMounts: []corev1.VolumeMountStatus{{Name: name, MountPath: mount.MountPath}},
				User:         &corev1.ContainerUser{Linux: &corev1.LinuxContainerUser{UID: 1000}},
				Resources:    &corev1.ResourceRequirements{}, AllocatedResources: corev1.ResourceList{}}}}}
	}
	tr := NewTrimmer()
	a, b := mk("x7k2p"), mk("q9m4z")
	tr.Trim(a)
	tr.Trim(b)
	if &a.Spec.Containers[0] != &b.Spec.Containers[0] || &a.Spec.InitContainers[0] != &b.Spec.InitContainers[0] || &a.Spec.Volumes[0] != &b.Spec.Volumes[0] {
		t.Error("the containers and volumes of two pods that differ only in their token volume's name are not shared")
	}
	if got := a.Spec.Containers[0].VolumeMounts; len(got) != 2 || got[0].Name != "data" || got[1].Name != "kube-api-access" || a.Spec.Volumes[1].Name != "kube-api-access" {
		t.Errorf("mounts %+v, volumes %+v: want the data mount kept and the token volume renamed in both", got, a.Spec.Volumes)
	}
	if cs := a.Status.ContainerStatuses[0]; cs.VolumeMounts != nil || cs.User != nil || cs.Resources != nil || cs.AllocatedResources != nil || !cs.Ready {
		t.Errorf("container status %+v: want its state kept, mounts, user and resources dropped", cs)
	}
	// A volume that only looks like it is kept: not projected.
	c := mk("abcde")
	c.Spec.Volumes[1].VolumeSource = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	tr.Trim(c)
	if c.Spec.Volumes[1].Name != "kube-api-access-abcde" {
		t.Errorf("an emptyDir volume named like a token volume was renamed: %q", c.Spec.Volumes[1].Name)
	}
}

// TestTrimDropsConditionsReadyImplies: a ready pod keeps its Ready
// condition (and its time), a readiness gate and a DisruptionTarget, and
// loses the True conditions Ready implies; a pod that is not ready, or
// whose implied condition is not True, keeps every condition.
func TestTrimDropsConditionsReadyImplies(t *testing.T) {
	cond := func(typ corev1.PodConditionType, st corev1.ConditionStatus) corev1.PodCondition {
		return corev1.PodCondition{Type: typ, Status: st}
	}
	types := func(p *corev1.Pod) []string {
		var out []string
		for _, c := range p.Status.Conditions {
			s := string(c.Type) + "=" + string(c.Status)
			if !c.LastTransitionTime.IsZero() {
				s += "@" + c.LastTransitionTime.UTC().Format("15:04:05")
			}
			out = append(out, s)
		}
		return out
	}
	kubelet := func(ready corev1.ConditionStatus, extra ...corev1.PodCondition) *corev1.Pod {
		readyAt := cond(corev1.PodReady, ready)
		readyAt.LastTransitionTime = metav1.NewTime(time.Date(2026, 11, 27, 1, 2, 3, 0, time.UTC))
		return &corev1.Pod{Status: corev1.PodStatus{Conditions: append([]corev1.PodCondition{
			cond(corev1.PodReadyToStartContainers, corev1.ConditionTrue), cond(corev1.PodInitialized, corev1.ConditionTrue),
			readyAt, cond(corev1.ContainersReady, ready), cond(corev1.PodScheduled, corev1.ConditionTrue)}, extra...)}}
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"ready", kubelet(corev1.ConditionTrue), "[Ready=True@01:02:03]"},
		{"ready with a gate and a disruption", kubelet(corev1.ConditionTrue, cond("example.com/lb", corev1.ConditionTrue), cond(corev1.DisruptionTarget, corev1.ConditionTrue)),
			"[Ready=True@01:02:03 example.com/lb=True DisruptionTarget=True]"},
		{"not ready", kubelet(corev1.ConditionFalse), "[PodReadyToStartContainers=True Initialized=True Ready=False@01:02:03 ContainersReady=False PodScheduled=True]"},
		{"ready, an implied condition False", &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
			cond(corev1.PodReady, corev1.ConditionTrue), cond(corev1.PodInitialized, corev1.ConditionFalse)}}}, "[Ready=True Initialized=False]"},
	} {
		Trim(tc.pod)
		if got := fmt.Sprint(types(tc.pod)); got != tc.want {
			t.Errorf("%s: conditions %s, want %s", tc.name, got, tc.want)
		}
	}
}
