package snapshot

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The in-place decoders give exactly what client-go's decoders give, for
// every kind a scan reads and for watch events; and they hand what they do
// not recognise to client-go's decoders.
func TestInPlaceProtobufDecodingMatchesClientGo(t *testing.T) {
	info, ok := runtime.SerializerInfoForMediaType(Codecs().SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	fast, _ := runtime.SerializerInfoForMediaType(streamCodecs(nil).SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok || fast.StreamSerializer == nil {
		t.Fatal("no protobuf serializer")
	}
	objs := []runtime.Object{
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "a", Labels: map[string]string{"app": "x"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:x":{}}`)}}},
			Spec:   corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "c", Image: "i"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Message: "ok"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}},
		&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old"},
	}
	for _, o := range objs {
		gvks, _, err := Scheme().ObjectKinds(o)
		if err != nil {
			t.Fatal(err)
		}
		data, err := runtime.Encode(Codecs().EncoderForVersion(info.Serializer, gvks[0].GroupVersion()), o)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := parseEnvelope(data[len(protoMagic):]); !ok {
			t.Fatalf("%T: the envelope is not read in place", o)
		}
		want, _, err := info.Serializer.Decode(data, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, gvk, err := fast.Serializer.Decode(data, nil, nil)
		if err != nil || gvk == nil || *gvk != gvks[0] {
			t.Fatalf("%T: %v, %v", o, gvk, err)
		}
		if m, ok := want.(metav1.Object); ok {
			m.SetManagedFields(nil) // never decoded in place: Trim drops them
		}
		if !equality.Semantic.DeepEqual(want, got) {
			t.Errorf("%T decoded differently:\n%+v\n%+v", o, want, got)
		}
		// The frame of a watch event: its object is the same bytes.
		frame, err := (&metav1.WatchEvent{Type: "ADDED", Object: runtime.RawExtension{Raw: data}}).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if typ, raw, ok := parseWatchEvent(frame); !ok || typ != "ADDED" || &raw[0] != &frame[len(frame)-len(data)] {
			t.Errorf("watch event not read in place")
		}
		var ev metav1.WatchEvent
		if _, _, err := fast.StreamSerializer.Serializer.Decode(frame, nil, &ev); err != nil || ev.Type != "ADDED" || string(ev.Object.Raw) != string(data) {
			t.Errorf("watch event: %q %v", ev.Type, err)
		}
	}
	// managedFields are skipped, the rest of the metadata kept.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "a", Annotations: map[string]string{"a": "b"}, Finalizers: []string{"f"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}, Spec: corev1.PodSpec{NodeName: "n"}}
	b, _ := pod.Marshal()
	var back corev1.Pod
	if err := back.Unmarshal(must(withoutManagedFields(nil, b))); err != nil || back.ManagedFields != nil || back.Name != "p" ||
		back.Annotations["a"] != "b" || back.Finalizers[0] != "f" || back.Spec.NodeName != "n" {
		t.Errorf("withoutManagedFields: %+v, %v", back, err)
	}
	// Not an envelope: client-go's decoder answers (here, an error).
	if _, _, err := fast.Serializer.Decode([]byte("k8s\x00\xff"), nil, nil); err == nil {
		t.Error("a malformed envelope decoded")
	}
}

func must(b []byte, ok bool) []byte {
	if !ok {
		return nil
	}
	return b
}
