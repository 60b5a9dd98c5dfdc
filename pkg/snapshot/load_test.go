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
