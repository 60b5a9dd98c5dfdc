package snapshot

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// Request is one HTTP request the scan sent, as seen on the wire.
type Request struct {
	Method   string
	Path     string // URL path and query
	Status   int    // 0 when no response came (reset, timeout)
	Err      string // the transport error when no response came
	Bytes    int64  // response body bytes received
	Duration time.Duration
	// Read names the read this request was made for (WithRead): retries of
	// a read share it. Requests made outside any read have none.
	Read string
}

// Read is one read of the scan and the requests it took: one, or more
// when it was retried or fell back from a watch-list to a LIST.
type Read struct {
	Name     string
	Requests []Request
}

// Last is the request whose answer the read kept.
func (r Read) Last() Request { return r.Requests[len(r.Requests)-1] }

// Retries is how many requests the read needed beyond one.
func (r Read) Retries() int { return len(r.Requests) - 1 }

// Stats counts what a scan costs the API server. It observes the wire (a
// RoundTripper), so its figures include client-go's own retries and
// discovery, not only what the loader meant to send.
type Stats struct {
	mu       sync.Mutex
	requests []Request
}

type readKey struct{}

// WithRead tags the requests made with ctx as attempts of the read name,
// so Stats counts a retried read once, with its retries.
func WithRead(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, readKey{}, name)
}

// Requests returns a copy of the requests seen so far.
func (s *Stats) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Reads groups the requests by read, in the order reads first reached the
// wire; each untagged request is a read of its own.
func (s *Stats) Reads() []Read {
	var out []Read
	index := map[string]int{}
	for _, r := range s.Requests() {
		if i, ok := index[r.Read]; ok && r.Read != "" {
			out[i].Requests = append(out[i].Requests, r)
			continue
		}
		index[r.Read] = len(out)
		out = append(out, Read{Name: r.Read, Requests: []Request{r}})
	}
	return out
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
	rec := Request{Method: req.Method, Path: req.URL.RequestURI()}
	rec.Read, _ = req.Context().Value(readKey{}).(string)
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		rec.Duration = time.Since(start)
		rec.Err = err.Error()
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
