package snapshot

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
)

var fastRetry = wait.Backoff{Duration: time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 5}

const nodeList = `{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"n1"}}]}`

func status(code int, reason string) string {
	return `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"` + reason + `","code":` + itoa(code) + `,"message":"injected"}`
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// listServer answers the watch-list with 400 (no WatchList: one request a
// read) and each LIST of a path through answer(n), n counting from 0.
func listServer(t *testing.T, answer func(path string, n int, w http.ResponseWriter) bool) *httptest.Server {
	var mu sync.Mutex
	counts := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(status(400, "BadRequest")))
			return
		}
		mu.Lock()
		n := counts[r.URL.Path]
		counts[r.URL.Path]++
		mu.Unlock()
		if answer(r.URL.Path, n, w) {
			return
		}
		switch r.URL.Path {
		case "/api/v1/nodes":
			_, _ = w.Write([]byte(nodeList))
		default:
			_, _ = w.Write([]byte(`{"kind":"List","apiVersion":"v1","metadata":{},"items":[]}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// 500s without Retry-After are retried by the loader; a 429 with
// Retry-After by client-go itself; the read counts once, with its retries.
func TestLoadRetriesTransientErrors(t *testing.T) {
	srv := listServer(t, func(path string, n int, w http.ResponseWriter) bool {
		if path != "/api/v1/nodes" {
			return false
		}
		switch n {
		case 0, 1:
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(status(500, "InternalError")))
			return true
		case 2:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(status(429, "TooManyRequests")))
			return true
		}
		return false
	})
	stats := &Stats{}
	cfg := &rest.Config{Host: srv.URL}
	cfg.Wrap(stats.Wrap)
	s, err := Load(context.Background(), cfg, []Resource{Nodes}, LoadOptions{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Err(Nodes); err != nil || len(s.Nodes()) != 1 {
		t.Fatalf("nodes: err %v, %d nodes", err, len(s.Nodes()))
	}
	reads := stats.Reads()
	if len(reads) != 1 || reads[0].Name != "nodes" {
		t.Fatalf("reads %+v, want one read of nodes", reads)
	}
	var got []int
	for _, q := range reads[0].Requests {
		got = append(got, q.Status)
	}
	// watch-list refused (400), two 500s, a 429 client-go waited out, the LIST.
	if want := []int{400, 500, 400, 500, 400, 429, 200}; !equalInts(got, want) {
		t.Errorf("attempts %v, want %v", got, want)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A read that keeps failing gives up after its retries and says why; one
// that fails for good (404, 403) is not retried at all.
func TestLoadGivesUp(t *testing.T) {
	var lists atomic.Int32
	srv := listServer(t, func(path string, n int, w http.ResponseWriter) bool {
		lists.Add(1)
		switch path {
		case "/api/v1/nodes":
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(status(500, "InternalError")))
		case "/api/v1/namespaces":
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(status(403, "Forbidden")))
		default:
			return false
		}
		return true
	})
	s, err := Load(context.Background(), &rest.Config{Host: srv.URL}, []Resource{Nodes, Namespaces}, LoadOptions{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Err(Nodes); err == nil || IsSkippable(err) || !strings.Contains(err.Error(), "listing nodes: ") {
		t.Errorf("nodes: %v", err)
	}
	if err := s.Err(Namespaces); err == nil || !IsSkippable(err) || err.Error() != "forbidden: needs list on namespaces" {
		t.Errorf("namespaces: %v", err)
	}
	if n := lists.Load(); n != 1+6 { // one 403, six 500s
		t.Errorf("%d LISTs, want 7", n)
	}
}

// A read that hangs fails alone when its time is up, naming the resource;
// the reads that answered are in the snapshot.
func TestLoadHungReadCostsOnlyItself(t *testing.T) {
	release := make(chan struct{})
	srv := listServer(t, func(path string, _ int, w http.ResponseWriter) bool {
		if path == "/api/v1/pods" {
			<-release
			return true
		}
		return false
	})
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	s, err := Load(ctx, &rest.Config{Host: srv.URL}, []Resource{Pods, Nodes, Namespaces}, LoadOptions{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Err(Pods); err == nil || IsSkippable(err) || !regexp.MustCompile(`^timed out reading pods after [0-9.]+m?s$`).MatchString(err.Error()) {
		t.Errorf("pods: %v", err)
	}
	if s.Err(Nodes) != nil || s.Err(Namespaces) != nil || len(s.Nodes()) != 1 {
		t.Errorf("nodes %v, namespaces %v", s.Err(Nodes), s.Err(Namespaces))
	}

	// Cancelled (Ctrl-C) rather than timed out: the reason says so.
	ctx, cancel = context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	s, _ = Load(ctx, &rest.Config{Host: srv.URL}, []Resource{Pods, Nodes}, LoadOptions{})
	if err := s.Err(Pods); err == nil || err.Error() != "interrupted before reading pods finished" {
		t.Errorf("pods after cancel: %v", err)
	}
	if s.Err(Nodes) != nil {
		t.Errorf("nodes after cancel: %v", s.Err(Nodes))
	}
}

// The access review denies what the rules do not grant, plans a LIST for
// what may be listed but not watched, and the loader sends neither the
// denied reads nor the refused watch-lists.
func TestReviewAccess(t *testing.T) {
	var sent []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent = append(sent, r.Method+" "+r.URL.Path+"?watch="+r.URL.Query().Get("watch"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews":
			var rr authorizationv1.SelfSubjectRulesReview
			_ = json.NewDecoder(r.Body).Decode(&rr)
			if rr.Spec.Namespace != "default" {
				t.Errorf("review of namespace %q, want default", rr.Spec.Namespace)
			}
			rr.Status = authorizationv1.SubjectRulesReviewStatus{
				ResourceRules: []authorizationv1.ResourceRule{
					{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"pods"}},
					{Verbs: []string{"list"}, APIGroups: []string{"apps"}, Resources: []string{"deployments"}},
					{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"nodes"}, ResourceNames: []string{"n1"}},
				},
				NonResourceRules: []authorizationv1.NonResourceRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}},
			}
			_ = json.NewEncoder(w).Encode(rr)
		case "/apis/apps/v1/deployments":
			_, _ = w.Write([]byte(`{"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{},"items":[]}`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	// JSON: client-go would send this built-in type as protobuf.
	cfg := &rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json"}}
	reads := []Resource{Pods, Deployments, Nodes, APIServerMetrics}
	a, err := ReviewAccess(context.Background(), cfg, reads, "")
	if err != nil {
		t.Fatal(err)
	}
	for r, want := range map[Resource]string{Nodes: "list", APIServerMetrics: "get"} {
		if verb, ok := a.Denies(r); !ok || verb != want {
			t.Errorf("%s: denied %v (%q), want %q", r, ok, verb, want)
		}
	}
	for _, r := range []Resource{Pods, Deployments} {
		if _, ok := a.Denies(r); ok {
			t.Errorf("%s denied", r)
		}
	}
	if !a.NoWatch[Deployments] || a.NoWatch[Pods] {
		t.Errorf("NoWatch %v, want deployments only", a.NoWatch)
	}
	mu.Lock()
	sent = nil
	mu.Unlock()
	s, err := Load(context.Background(), cfg, []Resource{Deployments, Nodes, APIServerMetrics}, LoadOptions{Access: a})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Err(Nodes); err == nil || !IsSkippable(err) || err.Error() != "forbidden: needs list on nodes" {
		t.Errorf("nodes: %v", err)
	}
	if err := s.Err(APIServerMetrics); err == nil || !IsSkippable(err) || err.Error() != "forbidden: needs get on /metrics" {
		t.Errorf("/metrics: %v", err)
	}
	if err := s.Err(Deployments); err != nil {
		t.Errorf("deployments: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 1 || sent[0] != "GET /apis/apps/v1/deployments?watch=" {
		t.Errorf("sent %v, want only the LIST of deployments", sent)
	}
}

func TestNeeds(t *testing.T) {
	for _, tc := range []struct {
		r    Resource
		ns   string
		want string
	}{
		{Nodes, "", "needs list on nodes"},
		{Pods, "", "needs list on pods in all namespaces"},
		{Deployments, "shop", "needs list on deployments.apps in namespace shop"},
		{APIServerMetrics, "", "needs get on /metrics"},
	} {
		verb := "list"
		if tc.r.Path != "" {
			verb = "get"
		}
		if got := needs(verb, tc.r, tc.ns); got != tc.want {
			t.Errorf("needs(%s) = %q, want %q", tc.r, got, tc.want)
		}
	}
}
