package snapshot

import (
	"io"
	"net/http"
	"sync"
	"time"
)

// Request is one HTTP request the scan sent, as seen on the wire.
type Request struct {
	Method   string
	Path     string // URL path and query
	Status   int
	Bytes    int64 // response body bytes received
	Duration time.Duration
}

// Stats counts what a scan costs the API server. It observes the wire (a
// RoundTripper), so its figures include retries and discovery, not only
// what the loader meant to send.
type Stats struct {
	mu       sync.Mutex
	requests []Request
}

// Requests returns a copy of the requests seen so far.
func (s *Stats) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Wrap is a rest.Config WrapTransport that records every request into s.
func (s *Stats) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper{next: rt, stats: s}
}

type roundTripper struct {
	next  http.RoundTripper
	stats *Stats
}

func (t roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	rec := Request{Method: req.Method, Path: req.URL.RequestURI()}
	if err != nil {
		rec.Duration = time.Since(start)
		t.stats.add(rec)
		return nil, err
	}
	rec.Status = resp.StatusCode
	resp.Body = &countingBody{ReadCloser: resp.Body, done: func(n int64) {
		rec.Bytes = n
		rec.Duration = time.Since(start)
		t.stats.add(rec)
	}}
	return resp, nil
}

func (s *Stats) add(r Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.mu.Unlock()
}

type countingBody struct {
	io.ReadCloser
	n    int64
	once sync.Once
	done func(int64)
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

func (b *countingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() { b.done(b.n) })
	return err
}
