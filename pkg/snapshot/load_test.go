package snapshot

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"
)

// A server without WatchList answers the streamed read with 400: the loader
// must fall back to a resourceVersion=0 LIST and still trim what it keeps.
func TestLoadFallsBackToListWithoutWatchList(t *testing.T) {
	var watches, lists atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Query().Get("watch") == "true":
			watches.Add(1)
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"BadRequest","code":400,"message":"sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"}`))
		case r.URL.Path == "/api/v1/pods" && r.URL.Query().Get("resourceVersion") == "0":
			lists.Add(1)
			_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"42"},"items":[
				{"metadata":{"name":"p1","namespace":"a","managedFields":[{"manager":"kubectl"}]},
				 "spec":{"nodeName":"n1","containers":[{"name":"c","image":"x","env":[{"name":"SECRET_LOOKING","value":"v"}]}]},
				 "status":{"phase":"Running"}}]}`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	s, err := Load(context.Background(), &rest.Config{Host: srv.URL}, []Resource{Pods}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Err(Pods); err != nil {
		t.Fatal(err)
	}
	pods := s.Pods()
	if watches.Load() != 1 || lists.Load() != 1 || len(pods) != 1 || pods[0].Spec.NodeName != "n1" {
		t.Fatalf("watches %d, lists %d, pods %+v", watches.Load(), lists.Load(), pods)
	}
	if pods[0].ManagedFields != nil || pods[0].Spec.Containers[0].Env != nil {
		t.Errorf("LIST fallback kept what Trim drops: %+v", pods[0])
	}
}

func watchServer(t *testing.T, path string, events ...string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path || r.URL.Query().Get("sendInitialEvents") != "true" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		for _, e := range events {
			_, _ = w.Write([]byte(e + "\n"))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

const bookmark = `{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"9","annotations":{"k8s.io/initial-events-end":"true"}}}}`

// Live events that arrive before the initial-events bookmark are applied:
// the snapshot holds the latest state and nothing deleted.
func TestWatchListAppliesEventsBeforeTheBookmark(t *testing.T) {
	pod := func(typ, name, phase string) string {
		return `{"type":"` + typ + `","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"` + name + `","namespace":"a"},"status":{"phase":"` + phase + `"}}}`
	}
	srv := watchServer(t, "/api/v1/pods",
		pod("ADDED", "p1", "Pending"), pod("ADDED", "p2", "Pending"), pod("MODIFIED", "p2", "Running"), pod("DELETED", "p1", "Pending"), bookmark)
	s, err := Load(context.Background(), &rest.Config{Host: srv.URL}, []Resource{Pods}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods := s.Pods()
	if len(pods) != 1 || pods[0].Name != "p2" || pods[0].Status.Phase != "Running" {
		t.Fatalf("pods after ADDED p1, ADDED p2, MODIFIED p2, DELETED p1: %+v", pods)
	}
}

// A stream of the wrong kind is an error for that resource, not a panic.
func TestWatchListOfTheWrongKindIsAnError(t *testing.T) {
	srv := watchServer(t, "/apis/apps/v1/replicasets",
		`{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"x","namespace":"a"}}}`, bookmark)
	s, err := Load(context.Background(), &rest.Config{Host: srv.URL}, []Resource{ReplicaSets}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Err(ReplicaSets); err == nil || IsSkippable(err) {
		t.Fatalf("err = %v, want a non-skippable error", err)
	}
}
