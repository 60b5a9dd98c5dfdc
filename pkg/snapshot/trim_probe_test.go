package snapshot

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
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
