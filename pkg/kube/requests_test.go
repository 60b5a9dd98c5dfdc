package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestPodRequests(t *testing.T) {
	req := func(cpu string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
	}
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init", Resources: req("3")}},
		Containers: []corev1.Container{{Name: "a", Resources: req("1")}, {Name: "b", Resources: req("500m")},
			{Name: "gpu", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}}}},
	}}
	got := PodRequests(pod)
	if cpu := got[corev1.ResourceCPU]; cpu.MilliValue() != 3000 {
		t.Errorf("cpu = %s, want 3 (the init container's request beats the sum 1.5)", cpu.String())
	}
	if gpu := got["nvidia.com/gpu"]; gpu.Value() != 2 {
		t.Errorf("gpu = %s, want 2 (a limit without a request counts as the request)", gpu.String())
	}
	if _, ok := pod.Spec.Containers[2].Resources.Requests["nvidia.com/gpu"]; ok {
		t.Error("PodRequests changed the caller's pod")
	}
}
