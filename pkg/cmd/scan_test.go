package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// A server that serves /version, forbids nodes and fails everything else:
// the scan must go on, skip or error the affected checks, and exit 0.
func partlyBrokenServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/version":
			_, _ = w.Write([]byte(`{"gitVersion":"v1.37.2","major":"1","minor":"37"}`))
		case r.URL.Path == "/api/v1/nodes":
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"nodes is forbidden"}`))
		default:
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"InternalError","code":500,"message":"etcd is sad"}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestScanOptionsRunDegradesPerResource(t *testing.T) {
	srv := partlyBrokenServer(t)
	var out, errOut bytes.Buffer
	o := NewScanOptions(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut})
	o.cluster.Config = &rest.Config{Host: srv.URL}
	o.Output = "json"
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v (stderr %s)", err, errOut.String())
	}
	var r doctor.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	got := map[string]doctor.CheckResult{}
	for _, c := range r.Checks {
		got[c.Name] = c
	}
	if c := got["node-taints"]; c.Status != doctor.StatusSkipped || c.Reason != "forbidden: cannot list nodes at cluster scope" {
		t.Errorf("node-taints: %+v", c)
	}
	if c := got["rollout-history"]; c.Status != doctor.StatusError || !strings.Contains(c.Reason, "etcd is sad") {
		t.Errorf("rollout-history: %+v", c)
	}
	if r.Cluster.Version != "v1.37.2" || r.Cluster.Server != srv.URL || r.Requests < 2 {
		t.Errorf("cluster %+v, %d requests", r.Cluster, r.Requests)
	}
}

func TestScanOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		mutate func(*ScanOptions)
		want   string
	}{
		{func(o *ScanOptions) { o.Output = "xml" }, "--output"},
		{func(o *ScanOptions) { o.FailOn = "often" }, "--fail-on"},
		{func(o *ScanOptions) { o.Only = []string{"nope"} }, `unknown check "nope"`},
		{func(o *ScanOptions) { o.Only, o.Skip = []string{"node-taints"}, []string{"node-taints"} }, "no checks selected"},
	} {
		o := NewScanOptions(genericiooptions.NewTestIOStreamsDiscard())
		tc.mutate(o)
		err := o.Validate()
		var ee *exitError
		if !errors.As(err, &ee) || ee.Code != ExitError || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate() = %v, want exit-2 error containing %q", err, tc.want)
		}
	}
}

func TestExecuteExitCodes(t *testing.T) {
	srv := partlyBrokenServer(t)
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	if code := Execute(context.Background(), streams, []string{"--server", srv.URL, "--fail-on", "info"}); code != ExitOK {
		t.Errorf("exit %d with only skipped/errored checks, want 0; stderr %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "skipped node-taints: forbidden") {
		t.Errorf("table does not name the skipped check:\n%s", out.String())
	}
	errOut.Reset()
	if code := Execute(context.Background(), streams, []string{"--server", srv.URL, "--nope"}); code != ExitError || !strings.HasPrefix(errOut.String(), "error: unknown flag") {
		t.Errorf("bad flag: exit %d, stderr %q", code, errOut.String())
	}
}
