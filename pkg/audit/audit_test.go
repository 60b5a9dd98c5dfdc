package audit

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

func genLog(t testing.TB, window time.Duration, stages ...string) []byte {
	var b bytes.Buffer
	if err := writeLog(&b, generate(1, window), stages...); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func analyze(t *testing.T, inputs ...Input) *Analysis {
	t.Helper()
	a, err := Analyze(inputs)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSeedCulpritRankedFirst: the service account of seed 003 — parallel
// label-selector LISTs of pods and nodes without resourceVersion — is ranked
// first and is the only finding; the informers are not blamed.
func TestSeedCulpritRankedFirst(t *testing.T) {
	a := analyze(t, Input{Name: "audit.log", R: bytes.NewReader(genLog(t, 10*time.Minute))})
	if a.Corrupt != 0 || a.Stage != "ResponseComplete" {
		t.Errorf("corrupt %d, stage %s", a.Corrupt, a.Stage)
	}
	top := a.Clients[0]
	if top.User != culprit || top.Resource != "pods" || top.Scope != "cluster" {
		t.Fatalf("top client %+v", top.Key)
	}
	if top.WithoutRV != top.Lists || top.WithSelector != top.Lists || top.Watches != 0 || top.PeakConcurrency < 6 {
		t.Errorf("culprit's pod LISTs: %+v", top)
	}
	if top.P95 < 3*time.Second || top.P95 > 7*time.Second {
		t.Errorf("p95 %s, generated latencies are 2-6s", top.P95)
	}
	fs := a.Findings()
	if len(fs) != 1 {
		t.Fatalf("findings: %+v", fs)
	}
	f := fs[0]
	if f.Severity != doctor.Critical || f.Object != (doctor.ObjectRef{APIVersion: "v1", Kind: "ServiceAccount", Namespace: "platform", Name: "inventory-controller"}) {
		t.Errorf("finding %s %+v", f.Severity, f.Object)
	}
	for _, want := range []string{"480 LISTs (nodes, pods)", "100% of its LISTs carry no resourceVersion", "use a label selector on", "it lists pods across the whole cluster",
		"it never watches", "of its LISTs were in flight at once"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
	if !strings.Contains(f.Remediation[2].Command, `"serviceAccount":{"namespace":"platform","name":"inventory-controller"}`) {
		t.Errorf("FlowSchema remediation: %s", f.Remediation[2].Command)
	}
	for _, c := range a.Clients {
		if c.User == "system:kube-controller-manager" && (c.WithoutRV != 0 || c.Watches == 0) {
			t.Errorf("controller manager looks like an informer: %+v", c)
		}
	}
}

func TestCorruptAndTruncatedLinesAreCounted(t *testing.T) {
	log := genLog(t, 2*time.Minute)
	lines := bytes.SplitAfter(log, []byte("\n"))
	var b bytes.Buffer
	for i, l := range lines {
		b.Write(l)
		if i == 10 {
			b.WriteString("{not json\n")
			b.Write(l[:len(l)/2]) // a line cut in the middle
			b.WriteString("\n\n")
		}
	}
	b.Write(lines[5][:40]) // the log itself ends mid-line
	a := analyze(t, Input{Name: "x", R: &b})
	clean := analyze(t, Input{Name: "x", R: bytes.NewReader(log)})
	if a.Corrupt != 3 || a.Events != clean.Events || a.Clients[0].Key != clean.Clients[0].Key {
		t.Errorf("corrupt %d (want 3), events %d vs %d", a.Corrupt, a.Events, clean.Events)
	}
}

func TestGzipAndSeveralInputs(t *testing.T) {
	log := genLog(t, 4*time.Minute)
	half := bytes.LastIndex(log[:len(log)/2], []byte("\n")) + 1
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(log[:half])
	zw.Close()
	a := analyze(t, Input{Name: "a.log.gz", R: &gz}, Input{Name: "b.log", R: bytes.NewReader(log[half:])})
	whole := analyze(t, Input{Name: "all", R: bytes.NewReader(log)})
	if a.Events != whole.Events || a.TotalList != whole.TotalList || len(a.Clients) != len(whole.Clients) {
		t.Errorf("split+gzip: %d events %s; whole: %d events %s", a.Events, a.TotalList, whole.Events, whole.TotalList)
	}
}

func TestNotAnAuditLog(t *testing.T) {
	for name, in := range map[string]string{
		"json lines": strings.Repeat(`{"level":"info","msg":"hello"}`+"\n", 150),
		"text":       strings.Repeat("Nov 22 15:00:00 host kubelet[123]: I1122 started\n", 150),
		"short":      "hello\n",
		"empty":      "",
	} {
		if _, err := Analyze([]Input{{Name: name, R: strings.NewReader(in)}}); !errors.Is(err, ErrNotAuditLog) {
			t.Errorf("%s: err %v, want ErrNotAuditLog", name, err)
		}
	}
}

func TestFallsBackWithoutResponseComplete(t *testing.T) {
	a := analyze(t, Input{Name: "x", R: bytes.NewReader(genLog(t, 2*time.Minute, "RequestReceived", "ResponseStarted"))})
	if !strings.HasPrefix(a.Stage, "ResponseStarted") || a.Events == 0 || a.Clients[0].User != culprit {
		t.Errorf("stage %q, %d events, top %v", a.Stage, a.Events, a.Clients[0].Key)
	}
}

// TestConstantMemory analyses a day of log (~150k lines, ~100 MB of JSON)
// from a file and samples the heap: memory must not grow with the input.
func TestConstantMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads ~100 MB")
	}
	f, err := os.CreateTemp(t.TempDir(), "audit-*.log")
	if err != nil {
		t.Fatal(err)
	}
	if err := writeLog(f, generate(7, 24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	size, _ := f.Seek(0, io.SeekCurrent)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	runtime.GC() // drop the generator's copy before measuring
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	a := analyze(t, Input{Name: f.Name(), R: f})
	close(stop)
	<-done
	grew := int64(peak.Load()) - int64(base.HeapInuse)
	t.Logf("%d lines, %d MiB read, heap in use %d MiB before, peak %d MiB (+%d MiB)", a.Lines, size>>20, base.HeapInuse>>20, peak.Load()>>20, grew>>20)
	if grew > 32<<20 {
		t.Errorf("analysing a %d MiB log grew the heap by %d MiB", size>>20, grew>>20)
	}
}

func BenchmarkAnalyze(b *testing.B) {
	log := genLog(b, 10*time.Minute)
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Analyze([]Input{{Name: "x", R: bytes.NewReader(log)}}); err != nil {
			b.Fatal(err)
		}
	}
}

// A just-rotated, empty audit.log next to real ones adds nothing and is no error.
func TestEmptyInputBesideRealOnes(t *testing.T) {
	a := analyze(t, Input{Name: "audit.log", R: strings.NewReader("")}, Input{Name: "audit-1.log", R: bytes.NewReader(genLog(t, time.Minute))})
	if a.Events == 0 || a.Corrupt != 0 {
		t.Errorf("events %d, corrupt %d", a.Events, a.Corrupt)
	}
}

// Events with missing or absurd timestamps would overflow LIST time: they
// are counted as corrupt instead.
func TestBrokenTimestampsAreCorrupt(t *testing.T) {
	bad := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","stage":"ResponseComplete","verb":"list","requestURI":"/api/v1/pods","user":{"username":"x"},"objectRef":{"resource":"pods"},"stageTimestamp":"2026-06-01T10:00:00Z"}` + "\n"
	log := append(bytes.Repeat([]byte(bad), 3), genLog(t, time.Minute)...)
	a := analyze(t, Input{Name: "x", R: bytes.NewReader(log)})
	if a.Corrupt != 3 || a.TotalList <= 0 {
		t.Errorf("corrupt %d (want 3), total LIST time %s", a.Corrupt, a.TotalList)
	}
	for _, c := range a.Clients {
		if c.User == "x" || c.Share < 0 {
			t.Errorf("broken events were counted: %+v", c.Key)
		}
	}
}
