package snapshot_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/client-go/rest"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot/synth"
)

// protoWatchList encodes objs as the API server streams a watch-list in
// protobuf: length-delimited WatchEvents, each holding one object, then the
// bookmark that ends the initial events.
func protoWatchList(tb testing.TB, objs []kruntime.Object) []byte {
	tb.Helper()
	info, ok := kruntime.SerializerInfoForMediaType(snapshot.Codecs().SupportedMediaTypes(), kruntime.ContentTypeProtobuf)
	if !ok || info.StreamSerializer == nil {
		tb.Fatal("no protobuf stream serializer")
	}
	objEnc := snapshot.Codecs().EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)
	var buf bytes.Buffer
	enc := streaming.NewEncoder(info.StreamSerializer.Framer.NewFrameWriter(&buf), info.StreamSerializer.Serializer)
	emit := func(typ string, o kruntime.Object) {
		raw, err := kruntime.Encode(objEnc, o)
		if err != nil {
			tb.Fatal(err)
		}
		if err := enc.Encode(&metav1.WatchEvent{Type: typ, Object: kruntime.RawExtension{Raw: raw}}); err != nil {
			tb.Fatal(err)
		}
	}
	for _, o := range objs {
		emit("ADDED", o)
	}
	emit("BOOKMARK", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "999999",
		Annotations: map[string]string{"k8s.io/initial-events-end": "true"}}})
	return buf.Bytes()
}

// podStream serves the pods of a synthetic cluster as a protobuf watch-list.
func podStream(tb testing.TB, pods int) *httptest.Server {
	sh := synth.For(pods, max(1000, pods/30))
	objs := make([]kruntime.Object, sh.Pods())
	for i := range objs {
		objs[i] = sh.Pod(i)
	}
	body := protoWatchList(tb, objs)
	objs = nil
	runtime.GC()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/pods" || r.URL.Query().Get("sendInitialEvents") != "true" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf;stream=watch")
		_, _ = w.Write(body)
	}))
}

// benchmarkLoadPods reads n pods through the real decode path (client-go,
// protobuf watch-list, trimming) and reports the heap the snapshot keeps
// per pod after a GC (kept-B/pod) besides -benchmem's allocations.
func benchmarkLoadPods(b *testing.B, n int) {
	if testing.Short() && n > 50000 {
		b.Skip("150k pods: not in -short runs")
	}
	srv := podStream(b, n)
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL, QPS: -1}
	b.ReportAllocs()
	b.ResetTimer()
	var kept uint64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s, err := snapshot.Load(context.Background(), cfg, []snapshot.Resource{snapshot.Pods}, snapshot.LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Err(snapshot.Pods); err != nil || len(s.Pods()) != n {
			b.Fatalf("loaded %d pods of %d: %v", len(s.Pods()), n, err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		kept = after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(s)
	}
	b.ReportMetric(float64(kept)/float64(n), "kept-B/pod")
}

func BenchmarkLoadPods30k(b *testing.B)  { benchmarkLoadPods(b, 30600) }
func BenchmarkLoadPods150k(b *testing.B) { benchmarkLoadPods(b, 150000) }

// TestProtoWatchListLoads proves the benchmark's stream is what the loader
// reads: every pod arrives, trimmed.
func TestProtoWatchListLoads(t *testing.T) {
	srv := podStream(t, 100)
	defer srv.Close()
	s, err := snapshot.Load(context.Background(), &rest.Config{Host: srv.URL}, []snapshot.Resource{snapshot.Pods}, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Err(snapshot.Pods); err != nil {
		t.Fatal(err)
	}
	pods := s.Pods()
	if len(pods) != 100 {
		t.Fatalf("%d pods, want 100", len(pods))
	}
	if p := pods[0]; p.ManagedFields != nil || p.Spec.Containers[0].Env != nil || p.Spec.NodeName == "" {
		t.Errorf("pod not decoded and trimmed: %+v", p)
	}
	if got := fmt.Sprint(pods[99].Status.Phase); got == "" {
		t.Errorf("status lost")
	}
}
