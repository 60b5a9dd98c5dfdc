package audit

import (
	"bytes"
	"compress/gzip"
	"errors"
	"math"
	"testing"
	"time"
)

// FuzzAnalyze feeds arbitrary bytes to the audit-log reader: logs are
// untrusted input (any file a user points it at, gzipped or not). It must
// never panic, and whatever it accepts must add up: corrupt lines and
// events are lines, shares sum to at most one, clients are ranked.
// The seed corpus is in testdata/fuzz/FuzzAnalyze; CI runs it briefly
// (make fuzz).
func FuzzAnalyze(f *testing.F) {
	ok := genReq{user: "admin", agent: "kubectl/v1.37.2", verb: "list", resource: "pods", uri: "/api/v1/pods?limit=500",
		start: genStart, latency: 40 * time.Millisecond}
	f.Add(ok.line("ResponseComplete", 1))
	f.Add(append(ok.line("ResponseStarted", 2), ok.line("ResponseComplete", 3)...))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(ok.line("ResponseComplete", 4))
	_ = zw.Close()
	f.Add(gz.Bytes())
	f.Add(gz.Bytes()[:gz.Len()/2]) // truncated
	f.Add([]byte(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","stage":"ResponseComplete","verb":"list","requestURI":"%zz","requestReceivedTimestamp":"2026-06-01T10:00:00Z","stageTimestamp":"2026-06-01T09:00:00Z"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Analyze([]Input{{Name: "fuzz.log", R: bytes.NewReader(data)}})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if a.Lines == 0 || a.Corrupt > a.Lines || a.Events > a.Lines {
			t.Fatalf("%d lines, %d corrupt, %d events", a.Lines, a.Corrupt, a.Events)
		}
		var share float64
		for i, c := range a.Clients {
			if c.ListTime < 0 || c.Lists < 0 || math.IsNaN(c.Share) || c.Share < 0 {
				t.Fatalf("client %+v", c)
			}
			share += c.Share
			if i > 0 && a.Clients[i-1].ListTime < c.ListTime {
				t.Fatalf("clients not ranked by LIST time")
			}
		}
		if share > 1.0001 {
			t.Fatalf("shares sum to %f", share)
		}
		if errors.Is(err, ErrNotAuditLog) {
			t.Fatal("accepted and rejected")
		}
	})
}
