package snapshot

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/rest"
)

// A cluster without the Gateway API answers 404 for its lists: an
// Extension read then holds no object (the checks run and find nothing),
// while a built-in read that is not served stays a skip, and a forbidden
// Extension read stays forbidden.
func TestExtensionNotServedIsEmpty(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/apis/gateway.networking.k8s.io/v1/httproutes":
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
		}
	}))
	defer srv.Close()
	s, err := Load(context.Background(), &rest.Config{Host: srv.URL}, []Resource{Gateways, GatewayClasses, HTTPRoutes, PriorityLevels}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []Resource{Gateways, GatewayClasses} {
		if err := s.Err(r); err != nil {
			t.Errorf("%s: %v, want an empty list", r, err)
		}
	}
	if len(s.Gateways()) != 0 || s.Objects(Gateways) != nil {
		t.Errorf("gateways: %v", s.Gateways())
	}
	if err := s.Err(HTTPRoutes); !IsSkippable(err) || err.Error() != "forbidden: needs list on httproutes.gateway.networking.k8s.io in all namespaces" {
		t.Errorf("forbidden extension read: %v", err)
	}
	if err := s.Err(PriorityLevels); !IsSkippable(err) || err.Error() != "not served by this cluster: prioritylevelconfigurations.flowcontrol.apiserver.k8s.io" {
		t.Errorf("built-in read not served: %v", err)
	}
}
