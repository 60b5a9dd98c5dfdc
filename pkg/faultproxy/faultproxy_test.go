package faultproxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// upstream is a loopback TLS server answering "ok", with its CA in a file.
func upstream(t *testing.T) (*httptest.Server, string) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok "+r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return srv, ca
}

func client(p *Proxy) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.CA())
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

func TestFaults(t *testing.T) {
	up, ca := upstream(t)
	p, err := Start(Options{Upstream: up.URL, CAFile: ca, Rule: func(r *http.Request, _ int) Fault {
		for f := Pass; f <= Forbidden; f++ {
			if r.URL.Path == "/"+f.String() {
				return f
			}
		}
		return Pass
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !strings.HasPrefix(p.URL, "https://127.0.0.1:") {
		t.Fatalf("proxy at %s, want loopback", p.URL)
	}
	c := client(p)
	for path, want := range map[string]int{"/pass": 200, "/500": 500, "/503": 503, "/429": 429, "/403": 403} {
		resp, err := c.Get(p.URL + path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: status %d, want %d (%s)", path, resp.StatusCode, want, body)
		}
		if path == "/pass" && string(body) != "ok /pass" {
			t.Errorf("forwarded body %q", body)
		}
		if path == "/429" && resp.Header.Get("Retry-After") != "1" {
			t.Errorf("429 without Retry-After: %v", resp.Header)
		}
	}
	if _, err := c.Get(p.URL + "/reset"); err == nil {
		t.Error("reset: got an answer")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+"/hang", nil)
		_, err := c.Do(req)
		done <- err
	}()
	if path, err := p.Wait(context.Background()); err != nil || path != "/hang" {
		t.Fatalf("Wait: %q %v", path, err)
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("hang: got an answer")
	}
	// net/http retries a GET once on a reused connection that was reset.
	byFault, total := p.Injected()
	if total < 7 || byFault[Status500] != 1 || byFault[Reset] < 1 || byFault[Hang] != 1 {
		t.Errorf("injected %v of %d", byFault, total)
	}
}

func TestFlakyIsBounded(t *testing.T) {
	rule := Flaky(30)
	kinds := map[Fault]bool{}
	failed, total := 0, 0
	run := map[string]int{}
	paths := []string{"/api/v1/pods", "/api/v1/nodes", "/apis/apps/v1/deployments", "/version", "/metrics", "/api/v1/events"}
	for n := range 200 {
		for _, path := range paths {
			// the same path over and over is where long runs of failures would be
			for range 1 + n%3 {
				f := rule(httptest.NewRequest(http.MethodGet, path, nil), 0)
				total++
				if f == Pass {
					run[path] = 0
					continue
				}
				kinds[f] = true
				failed++
				if run[path]++; run[path] > 3 {
					t.Fatalf("%s: more than three failures in a row", path)
				}
			}
		}
	}
	if rate := float64(failed) / float64(total); rate < 0.25 || rate > 0.32 {
		t.Errorf("failure rate %.2f, want about 0.3", rate)
	}
	if len(kinds) != 4 {
		t.Errorf("fault kinds %v, want 500, 503, 429 and reset", kinds)
	}
}

func TestRefusesRemoteUpstream(t *testing.T) {
	if _, err := Start(Options{Upstream: "https://203.0.113.1:6443", CAFile: "x"}); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("err = %v", err)
	}
}

// A stream the client stops reading (a watch-list after its bookmark) is
// answered once the client lets go: the upstream request is cancelled and
// WaitForwarded counts it.
func TestWaitForwardedCountsStoppedStreams(t *testing.T) {
	upDone := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("first\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(upDone)
	}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Start(Options{Upstream: srv.URL, CAFile: ca})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := client(p)
	resp, err := c.Get(p.URL + "/watch")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.WaitForwarded(ctx, map[string]int{"/watch": 1}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-upDone:
	case <-ctx.Done():
		t.Error("the upstream request was not cancelled")
	}
}
