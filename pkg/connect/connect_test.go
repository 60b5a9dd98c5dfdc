package connect

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// Validate names the flag at fault; ReadDeadline leaves a tenth of
// --timeout to the checks and the report.
func TestValidateAndReadDeadline(t *testing.T) {
	o := New("test")
	if err := o.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	o.Timeout = 0
	if err := o.Validate(); err == nil || err.Error() != "--timeout must be positive, got 0s" {
		t.Errorf("--timeout 0: %v", err)
	}
	o.Timeout, o.LogLevel = time.Minute, -1
	if err := o.Validate(); err == nil || err.Error() != "-v must be 0 or more, got -1" {
		t.Errorf("-v -1: %v", err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := o.ReadDeadline(start); !got.Equal(start.Add(54 * time.Second)) {
		t.Errorf("read deadline %s after start, want 54s", got.Sub(start))
	}
}

// deniedLine names the denied reads by verb and the checks they skip, from
// what the snapshot holds: the review's denials and the server's refusals
// of reads the review allowed, so that its count is the report's.
func TestDeniedLine(t *testing.T) {
	checks := []*doctor.Check{
		{Name: "node-taints", Reads: []snapshot.Resource{snapshot.Nodes}},
		{Name: "rollout-history", Reads: []snapshot.Resource{snapshot.Deployments, snapshot.ReplicaSets}},
		{Name: "pod-storm", Reads: []snapshot.Resource{snapshot.Pods}},
		{Name: "namespaces", Reads: []snapshot.Resource{snapshot.Namespaces}},
		{Name: "storage", Reads: []snapshot.Resource{snapshot.Pods}, Optional: []snapshot.Resource{snapshot.StorageClasses}},
		{Name: "quotas", Reads: []snapshot.Resource{snapshot.Nodes, snapshot.PersistentVolumeClaims}},
	}
	build := func(fail ...snapshot.Resource) *snapshot.Snapshot {
		b := snapshot.NewBuilder("not read")
		for _, r := range []snapshot.Resource{snapshot.Nodes, snapshot.Deployments, snapshot.ReplicaSets, snapshot.Pods, snapshot.Namespaces, snapshot.StorageClasses} {
			b.Present(r)
		}
		// A read that failed (not denied): the check that needs it is an
		// error in the report, not a skipped check, even with a denied read.
		b.Fail(snapshot.PersistentVolumeClaims, "listing persistentvolumeclaims: etcd is sad", false)
		for _, r := range fail {
			b.Fail(r, "forbidden: User \"jane\" cannot list resource", true)
		}
		s, err := b.Build("shop", "")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got := deniedLine(build(), &snapshot.Access{}, checks, ""); got != "" {
		t.Errorf("nothing denied: %q", got)
	}
	// The review denied nodes and deployments; the server refused
	// namespaces, which the review allowed; storage classes are optional.
	a := &snapshot.Access{Denied: map[snapshot.Resource]string{snapshot.Nodes: "list", snapshot.Deployments: "watch"}}
	got := deniedLine(build(snapshot.Nodes, snapshot.Deployments, snapshot.Namespaces, snapshot.StorageClasses), a, checks, "shop")
	want := "this user may not list nodes, namespaces, storageclasses.storage.k8s.io; nor watch deployments.apps (in namespace shop): 3 checks skipped: node-taints, rollout-history, namespaces"
	if got != want {
		t.Errorf("deniedLine:\n got %q\nwant %q", got, want)
	}
}

// LoadAll fails on any read that fails (a listing cannot do without it);
// an unreachable server is one line naming it.
func TestLoadAll(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/version" {
			_, _ = w.Write([]byte(`{"gitVersion":"v1.37.2"}`))
			return
		}
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"nodes is forbidden"}`))
	}))
	defer srv.Close()
	o := New("test")
	o.Config = &rest.Config{Host: srv.URL}
	var errOut strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := o.LoadAll(ctx, &errOut, snapshot.Nodes); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("LoadAll with nodes forbidden: %v", err)
	}
	if reads, _ := o.Requests(); reads != 2 {
		t.Errorf("%d reads counted, want 2 (/version, nodes)", reads)
	}

	srv.Close()
	if _, err := o.LoadAll(ctx, &errOut, snapshot.Nodes); err == nil || !strings.HasPrefix(err.Error(), "cannot reach the API server at "+srv.URL+": ") {
		t.Errorf("LoadAll with the server gone: %v", err)
	}
}

// TestUnauthorizedIsNotUnreachable: a server that answers 401 was reached;
// the one line blames the credentials, not the network.
func TestUnauthorizedIsNotUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401,"message":"Unauthorized"}`))
	}))
	defer srv.Close()
	o := New("test")
	o.Config = &rest.Config{Host: srv.URL, BearerToken: "expired"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := o.LoadAll(ctx, io.Discard, snapshot.Nodes)
	if err == nil || !strings.Contains(err.Error(), "rejected the credentials (401 Unauthorized)") || strings.Contains(err.Error(), "cannot reach") {
		t.Errorf("LoadAll with the credentials rejected: %v", err)
	}
}

// TestCostCountsNotFoundAsAnswered: the 404 of an add-on kind the cluster
// does not serve is an answer, not an error; a 403 or a 500 is.
func TestCostCountsNotFoundAsAnswered(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/version":
			_, _ = w.Write([]byte(`{"gitVersion":"v1.37.2"}`))
		case "/apis/cert-manager.io/v1/certificates":
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
		default:
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`))
		}
	}))
	defer srv.Close()
	o := New("test")
	o.Config = &rest.Config{Host: srv.URL}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = o.LoadAll(ctx, io.Discard, snapshot.Certificates, snapshot.Nodes)
	// The nodes read is a watch-list, then a LIST: both refused.
	if c := o.Cost(); c.Requests != 4 || c.Errors != 2 {
		t.Errorf("cost %+v: want 4 requests (/version, certificates 404, nodes 403 twice), 2 errors", c)
	}

	// A check of an add-on the cluster does not serve passes on nothing,
	// and says so.
	snap, err := o.LoadAll(ctx, io.Discard, snapshot.Certificates)
	if err != nil || !snap.NotServed(snapshot.Certificates) || snap.NotServed(snapshot.Nodes) {
		t.Fatalf("LoadAll: %v; not served: certificates %v", err, snap != nil && snap.NotServed(snapshot.Certificates))
	}
	c := &doctor.Check{Name: "certs", Reads: []snapshot.Resource{snapshot.Certificates}, Run: func(*doctor.Pass) error { return nil }}
	r := doctor.Run(ctx, snap, []*doctor.Check{c}, time.Now())
	want := "nothing to judge: the cluster does not serve certificates.cert-manager.io at the version read (not installed, or an older release)"
	if got := r.Checks[0]; got.Status != doctor.StatusPassed || got.Reason != want {
		t.Errorf("check %+v, want passed: %s", got, want)
	}
	if line := r.CoverageLine(); line != "No problems found by 1 check; 1 had nothing to judge, the cluster does not serve what it reads: certs." {
		t.Errorf("coverage line %q", line)
	}
}
