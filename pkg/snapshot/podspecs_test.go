package snapshot

import (
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// TestPodSpecCacheGivesWhatTrimmingGives: pods decoded through the spec
// cache and trimmed are, field for field, what decoding each pod in full
// and trimming it gives: pods of one template on different nodes with
// their own token volume names (cache hits), a StatefulSet's pods with
// their own hostnames (misses), and look-alikes whose other volumes carry a
// name of the token volume's shape, which must keep their own.
func TestPodSpecCacheGivesWhatTrimmingGives(t *testing.T) {
	info, _ := runtime.SerializerInfoForMediaType(Codecs().SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	tr := NewTrimmer()
	fast, _ := runtime.SerializerInfoForMediaType(streamCodecs(tr).SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	mk := func(i int, template string) *corev1.Pod {
		token := fmt.Sprintf("%s-%05d", tokenVolume, i)
		mounts := []corev1.VolumeMount{{Name: token, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}}
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", template, i), Namespace: "ns", Labels: map[string]string{"app": template}},
			Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i%3),
				Containers: []corev1.Container{{Name: "app", Image: template + ":1", VolumeMounts: mounts,
					Env:       []corev1.EnvVar{{Name: "A", Value: "b"}},
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}},
				Volumes: []corev1.Volume{{Name: token, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: fmt.Sprintf("10.0.0.%d", i),
				PodIPs: []corev1.PodIP{{IP: fmt.Sprintf("10.0.0.%d", i)}, {IP: fmt.Sprintf("fd00::%d", i)}}}}
		// What a kubelet reports of each container, the parts the decoder
		// skips (id, mounts, resources, user, stop signal) included.
		status := func(name string, i int) corev1.ContainerStatus {
			id := fmt.Sprintf("containerd://%064d", i)
			sig := corev1.SIGTERM
			return corev1.ContainerStatus{Name: name, Ready: true, RestartCount: int32(i), Image: template + ":1", ImageID: "sha256:abc",
				ContainerID: id, Started: ptr.To(true),
				State:                    corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Unix(int64(1000+i), 0)}},
				LastTerminationState:     corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", ContainerID: id}},
				AllocatedResources:       corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
				Resources:                &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}},
				VolumeMounts:             []corev1.VolumeMountStatus{{Name: token, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}},
				User:                     &corev1.ContainerUser{Linux: &corev1.LinuxContainerUser{UID: 1000, GID: 1000}},
				AllocatedResourcesStatus: []corev1.ResourceStatus{{Name: "claim:gpu"}},
				StopSignal:               &sig}
		}
		// A kubelet's five conditions: ready pods lose four of them, db's
		// (not ready) keep them all.
		ready := corev1.ConditionTrue
		if template == "db" {
			ready = corev1.ConditionFalse
		}
		for j, typ := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled} {
			st := corev1.ConditionTrue
			if typ == corev1.PodReady || typ == corev1.ContainersReady {
				st = ready
			}
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: typ, Status: st, LastTransitionTime: metav1.Unix(int64(2000+10*i+j), 0)})
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{status("app", i)}
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{status("init", i+100)}
		switch template {
		case "db": // a StatefulSet's pods: a hostname each
			p.Spec.Hostname, p.Spec.Subdomain = p.Name, "db"
		case "odd": // a ConfigMap volume named like a token volume
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: fmt.Sprintf("%s-%05d", tokenVolume, 90000+i),
				VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}})
		case "notoken": // no token volume at all
			p.Spec.Volumes, p.Spec.Containers[0].VolumeMounts = nil, nil
		case "claim": // a claim named like a token volume, and an emptyDir named as a renamed one
			p.Spec.Volumes = append(p.Spec.Volumes,
				corev1.Volume{Name: tokenVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
					ClaimName: fmt.Sprintf("%s-%05d", tokenVolume, 70000+i)}}})
		case "custom": // a token volume of another shape, and a ServiceAccount named like a token volume
			p.Spec.Volumes[0].Name = tokenVolume + "-custom1"
			p.Spec.Containers[0].VolumeMounts[0].Name = tokenVolume + "-custom1"
			p.Spec.ServiceAccountName = fmt.Sprintf("%s-%05d", tokenVolume, 60000+i)
		}
		return p
	}
	n := 0
	for _, template := range []string{"web", "db", "odd", "notoken", "claim", "custom"} {
		for i := range 6 {
			p := mk(i, template)
			data, err := runtime.Encode(Codecs().EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion), p)
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := info.Serializer.Decode(data, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			NewTrimmer().Trim(want)
			got, _, err := fast.Serializer.Decode(data, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			tr.Trim(got)
			if !equality.Semantic.DeepEqual(want, got) {
				t.Errorf("%s: the cached decode differs:\n%+v\n%+v", p.Name, want.(*corev1.Pod).Spec, got.(*corev1.Pod).Spec)
			}
			n++
		}
	}
	if len(tr.marks) != 0 {
		t.Errorf("%d pods left marked after trimming", len(tr.marks))
	}
	// web and notoken: one spec each; db: one per pod (hostnames); odd,
	// claim and custom: never cached (a masked name that is not the token
	// volume's).
	if want := 2 + 6; len(tr.specs) != want {
		t.Errorf("%d specs cached for %d pods, want %d", len(tr.specs), n, want)
	}
}

// TestPodSpecCacheConcurrentDecoders: the list goroutines of a scan share
// one Trimmer; pods of the same templates decoded and trimmed at once give
// what each pod's own decode gives, and leave no mark behind (run with
// -race by make test: a hit pod's spec, shared with the cache, must never be
// written).
func TestPodSpecCacheConcurrentDecoders(t *testing.T) {
	info, _ := runtime.SerializerInfoForMediaType(Codecs().SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	tr := NewTrimmer()
	fast, _ := runtime.SerializerInfoForMediaType(streamCodecs(tr).SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	var frames [][]byte
	for i := range 40 {
		token := fmt.Sprintf("%s-%05d", tokenVolume, i)
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", i), Namespace: "ns"},
			Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i%5), Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
				Containers: []corev1.Container{{Name: "app", Image: fmt.Sprintf("img:%d", i%2), VolumeMounts: []corev1.VolumeMount{{Name: token, MountPath: "/t"}},
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}},
				Volumes: []corev1.Volume{{Name: token, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}}}}}
		data, err := runtime.Encode(Codecs().EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion), p)
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, data)
	}
	got := make([]runtime.Object, len(frames))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < len(frames); i += 4 {
				o, _, err := fast.Serializer.Decode(frames[i], nil, nil)
				if err != nil {
					t.Error(err)
					return
				}
				tr.Trim(o)
				got[i] = o
			}
		})
	}
	wg.Wait()
	for i, data := range frames {
		want, _, _ := info.Serializer.Decode(data, nil, nil)
		NewTrimmer().Trim(want)
		if !equality.Semantic.DeepEqual(want, got[i]) {
			t.Errorf("pod %d decoded concurrently differs", i)
		}
	}
	if len(tr.marks) != 0 || len(tr.specs) != 2 {
		t.Errorf("%d marks left, %d specs cached (want 0 and 2)", len(tr.marks), len(tr.specs))
	}
}
