// Package faultproxy is a reverse proxy, on loopback only, that puts the
// failures of a real API server under stress in front of one: 5xx answers,
// 429s with Retry-After, connections reset mid-request, latency and
// requests that never get an answer. The end-to-end tests run
// kubectl-doctor through it against the local control plane, to prove the
// verdicts a CI gate relies on: retried errors change nothing, a hung read
// costs only the checks that needed it, and a scan that could not read
// what it needed never passes.
package faultproxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"hash/fnv"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// Fault is what the proxy does to one request.
type Fault int

// The faults.
const (
	Pass      Fault = iota // forward it
	Status500              // answer 500 InternalError, no Retry-After
	Status503              // answer 503 ServiceUnavailable, no Retry-After
	TooMany                // answer 429 TooManyRequests with Retry-After: 1, as API Priority and Fairness does
	Reset                  // drop the connection with a TCP reset, no answer
	Hang                   // never answer: hold the request until the client gives up
	Forbidden              // answer 403 Forbidden
)

func (f Fault) String() string {
	return [...]string{"pass", "500", "503", "429", "reset", "hang", "403"}[f]
}

// Rule decides the fault for a request; n counts the earlier requests with
// the same method and path (0 for the first), so rules are deterministic
// however the client orders its requests.
type Rule func(r *http.Request, n int) Fault

// Proxy is a running fault-injecting proxy.
type Proxy struct {
	// URL is https://127.0.0.1:PORT.
	URL string
	// Hung receives the path of each request as it starts to hang.
	Hung chan string

	srv      *httptest.Server
	rule     Rule
	latency  time.Duration
	closing  chan struct{}
	mu       sync.Mutex
	counts   map[string]int
	injected map[Fault]int
	total    int
	// forwarded counts the requests the upstream answered, by URL path;
	// answered is closed and replaced each time it grows.
	forwarded map[string]int
	answered  chan struct{}
}

// Options configure a proxy.
type Options struct {
	// Upstream is the API server's URL and CAFile the PEM file of the CA
	// its serving certificate is checked against.
	Upstream string
	CAFile   string
	// Rule picks each request's fault; nil forwards everything.
	Rule Rule
	// Latency delays every forwarded request.
	Latency time.Duration
}

// Start runs a proxy on 127.0.0.1.
func Start(o Options) (*Proxy, error) {
	up, err := url.Parse(o.Upstream)
	if err != nil {
		return nil, err
	}
	if h := up.Hostname(); h != "127.0.0.1" && h != "localhost" && h != "::1" {
		return nil, fmt.Errorf("upstream %s is not on loopback", o.Upstream)
	}
	ca, err := os.ReadFile(o.CAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("no certificate in %s", o.CAFile)
	}
	p := &Proxy{Hung: make(chan string, 64), rule: o.Rule, latency: o.Latency, closing: make(chan struct{}),
		counts: map[string]int{}, injected: map[Fault]int{}, forwarded: map[string]int{}, answered: make(chan struct{})}
	if p.rule == nil {
		p.rule = func(*http.Request, int) Fault { return Pass }
	}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(up); pr.Out.Host = up.Host },
		FlushInterval: -1, // watch streams pass through as they come
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
			Proxy:           nil, // never an environment proxy: loopback only
		},
		ErrorLog: log.New(io.Discard, "", 0), // clients that give up are the point
	}
	// httptest listens on 127.0.0.1 (never a public interface) and serves
	// HTTP/1.1, so that a reset can hijack the connection.
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.serve(w, r, rp)
	}))
	p.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	p.srv.StartTLS()
	p.URL = p.srv.URL
	return p, nil
}

// Close stops the proxy and releases the requests it holds.
func (p *Proxy) Close() {
	close(p.closing)
	p.srv.CloseClientConnections()
	p.srv.Close()
}

// Injected counts the faults injected so far, and all requests seen.
func (p *Proxy) Injected() (byFault map[Fault]int, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[Fault]int{}
	for k, v := range p.injected {
		out[k] = v
	}
	return out, p.total
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	key := r.Method + " " + r.URL.Path
	p.mu.Lock()
	n := p.counts[key]
	p.counts[key]++
	p.total++
	f := p.rule(r, n)
	if f != Pass {
		p.injected[f]++
	}
	p.mu.Unlock()

	if p.latency > 0 {
		select {
		case <-time.After(p.latency):
		case <-r.Context().Done():
			return
		}
	}
	switch f {
	case Status500:
		writeStatus(w, http.StatusInternalServerError, "InternalError", "injected by faultproxy", "")
	case Status503:
		writeStatus(w, http.StatusServiceUnavailable, "ServiceUnavailable", "injected by faultproxy", "")
	case TooMany:
		writeStatus(w, http.StatusTooManyRequests, "TooManyRequests", "too many requests, injected by faultproxy", "1")
	case Forbidden:
		writeStatus(w, http.StatusForbidden, "Forbidden", "forbidden by faultproxy", "")
	case Reset:
		reset(w)
	case Hang:
		select {
		case p.Hung <- r.URL.Path:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-p.closing:
		}
	default:
		// deferred: ReverseProxy aborts a stream the client stopped
		// reading (a watch-list it had enough of) with a panic
		defer p.answer(r.URL.Path)
		next.ServeHTTP(w, r)
	}
}

func (p *Proxy) answer(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.forwarded[path]++
	close(p.answered)
	p.answered = make(chan struct{})
}

// WaitForwarded blocks until the upstream has answered, through the proxy,
// at least want[path] requests for each path, or ctx ends.
func (p *Proxy) WaitForwarded(ctx context.Context, want map[string]int) error {
	for {
		p.mu.Lock()
		var missing []string
		for path, n := range want {
			if p.forwarded[path] < n {
				missing = append(missing, path)
			}
		}
		answered := p.answered
		p.mu.Unlock()
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-answered:
		case <-ctx.Done():
			sort.Strings(missing)
			return fmt.Errorf("%w: no answer yet for %s", ctx.Err(), strings.Join(missing, ", "))
		}
	}
}

func writeStatus(w http.ResponseWriter, code int, reason, message, retryAfter string) {
	w.Header().Set("Content-Type", "application/json")
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.WriteHeader(code)
	details := ""
	if retryAfter != "" {
		details = `,"details":{"retryAfterSeconds":` + retryAfter + `}`
	}
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"reason":%q,"code":%d%s}`,
		message, reason, code, details)
}

// reset drops the connection with a TCP RST (SO_LINGER 0), under TLS, the
// way a crashing load balancer or API server does.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "faultproxy: cannot reset an HTTP/2 connection", http.StatusInternalServerError)
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	raw := conn
	if tc, ok := conn.(*tls.Conn); ok {
		raw = tc.NetConn()
	}
	if tcp, ok := raw.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = raw.Close()
}

// Kubeconfig writes a copy of the kubeconfig at from, its server replaced
// by the proxy (trusted through the proxy's own certificate), to dir, and
// returns its path.
func (p *Proxy) Kubeconfig(from, dir string) (string, error) {
	cfg, err := clientcmd.LoadFromFile(from)
	if err != nil {
		return "", err
	}
	for _, c := range cfg.Clusters {
		c.Server = p.URL
		c.CertificateAuthority = ""
		c.CertificateAuthorityData = p.CA()
	}
	path := filepath.Join(dir, "proxy.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", err
	}
	return path, nil
}

// CA is the PEM of the proxy's own serving certificate, for clients to trust.
func (p *Proxy) CA() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
}

// Reads is true for the requests a scan reads with (GET), but not
// /version: the rules below spare the reachability probe unless asked.
func Reads(r *http.Request) bool { return r.Method == http.MethodGet && r.URL.Path != "/version" }

// Always injects f into every request that match selects.
func Always(f Fault, match func(*http.Request) bool) Rule {
	return func(r *http.Request, _ int) Fault {
		if match(r) {
			return f
		}
		return Pass
	}
}

// Flaky fails percent of all requests (the reachability probe and the
// access review included), picked by a hash of their arrival number, but
// never more than three times in a row for one method and path, so that a
// client with retries gets every answer. The failures cycle through 500,
// 429 (with Retry-After), reset and 503.
func Flaky(percent int) Rule {
	faults := []Fault{Status500, TooMany, Reset, Status503}
	// A Rule is called under the proxy's lock.
	arrived, failed := 0, 0
	inARow := map[string]int{}
	return func(r *http.Request, _ int) Fault {
		key := r.Method + " " + r.URL.Path
		h := fnv.New32a()
		fmt.Fprintf(h, "request %d", arrived)
		arrived++
		if int(h.Sum32()%100) >= percent || inARow[key] >= 3 {
			inARow[key] = 0
			return Pass
		}
		inARow[key]++
		failed++
		return faults[(failed-1)%len(faults)]
	}
}

// Path matches requests for one URL path.
func Path(path string) func(*http.Request) bool {
	return func(r *http.Request) bool { return r.URL.Path == path }
}

// Wait blocks until a request hangs, or ctx ends.
func (p *Proxy) Wait(ctx context.Context) (string, error) {
	select {
	case path := <-p.Hung:
		return path, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
