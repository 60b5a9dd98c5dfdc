package snapshot

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: fmt.Sprintf("10.0.0.%d", i)}}
		switch template {
		case "db": // a StatefulSet's pods: a hostname each
			p.Spec.Hostname, p.Spec.Subdomain = p.Name, "db"
		case "odd": // a ConfigMap volume named like a token volume
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: fmt.Sprintf("%s-%05d", tokenVolume, 90000+i),
				VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}})
		case "notoken": // no token volume at all
			p.Spec.Volumes, p.Spec.Containers[0].VolumeMounts = nil, nil
		}
		return p
	}
	n := 0
	for _, template := range []string{"web", "db", "odd", "notoken"} {
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
	// web and notoken: one spec each; db: one per pod (hostnames); odd:
	// never cached (a masked name that is not the token volume's).
	if want := 2 + 6; len(tr.specs) != want {
		t.Errorf("%d specs cached for %d pods, want %d", len(tr.specs), n, want)
	}
}
