package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

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
		case strings.HasSuffix(r.URL.Path, "/selfsubjectrulesreviews"): // a server without access reviews
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"not found"}`))
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

// fastRetry keeps the unit tests' retries of 500s short.
var fastRetry = wait.Backoff{Duration: time.Millisecond, Factor: 2, Steps: 2}

// A scan whose reads fail is incomplete: the report is still printed in
// full, with complete:false and the reasons, and Run exits 2 saying so.
func TestScanOptionsRunDegradesPerResource(t *testing.T) {
	srv := partlyBrokenServer(t)
	var out, errOut bytes.Buffer
	o := NewScanOptions(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut})
	o.cluster.Config = &rest.Config{Host: srv.URL}
	o.cluster.Retry = fastRetry
	o.Output = "json"
	if err := o.Complete(nil); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	err := o.Run(context.Background())
	var ee *exitError
	if !errors.As(err, &ee) || ee.Code != ExitError || !strings.HasPrefix(err.Error(), "incomplete scan: ") || !strings.Contains(err.Error(), "etcd is sad") {
		t.Fatalf("Run: %v, want exit 2 naming the incomplete scan and why (stderr %s)", err, errOut.String())
	}
	var r doctor.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if r.Complete || len(r.Incomplete) == 0 || r.Incomplete[0].Check == "" || !strings.Contains(r.Incomplete[0].Reason, "etcd is sad") {
		t.Errorf("complete %v, incomplete %+v", r.Complete, r.Incomplete)
	}
	got := map[string]doctor.CheckResult{}
	for _, c := range r.Checks {
		got[c.Name] = c
	}
	if c := got["node-taints"]; c.Status != doctor.StatusSkipped || c.Reason != "forbidden: needs list on nodes" {
		t.Errorf("node-taints: %+v", c)
	}
	if c := got["rollout-history"]; c.Status != doctor.StatusError || !strings.Contains(c.Reason, "etcd is sad") {
		t.Errorf("rollout-history: %+v", c)
	}
	if r.Cluster.Version != "v1.37.2" || r.Cluster.Server != srv.URL || r.Requests < 2 {
		t.Errorf("cluster %+v, %d requests", r.Cluster, r.Requests)
	}
}

// Complete derives the gate and the checks from the flags; Validate
// rejects what cannot scan and changes nothing; neither reads a kubeconfig.
func TestScanOptionsCompleteValidate(t *testing.T) {
	for _, tc := range []struct {
		mutate func(*ScanOptions)
		want   string
	}{
		{func(o *ScanOptions) { o.Output = "xml" }, "--output"},
		{func(o *ScanOptions) { o.FailOn = "often" }, "--fail-on"},
		{func(o *ScanOptions) { o.Only = []string{"nope"} }, `unknown check "nope"`},
		{func(o *ScanOptions) { o.Only, o.Skip = []string{"node-taints"}, []string{"node-taints"} }, "no checks selected"},
		{func(o *ScanOptions) { o.cluster.Timeout = -time.Second }, "--timeout"},
		{func(o *ScanOptions) { o.cluster.LogLevel = -1 }, "-v"},
	} {
		o := NewScanOptions(genericiooptions.NewTestIOStreamsDiscard())
		tc.mutate(o)
		err := o.Complete(nil)
		if err == nil {
			err = o.Validate()
		}
		var ee *exitError
		if !errors.As(err, &ee) || ee.Code != ExitError || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Complete+Validate = %v, want exit-2 error containing %q", err, tc.want)
		}
	}

	o := NewScanOptions(genericiooptions.NewTestIOStreamsDiscard())
	o.FailOn, o.Only = "warning", []string{"node-taints", "rollout-history"}
	if err := o.Complete(nil); err != nil {
		t.Fatal(err)
	}
	if o.failOn != doctor.Warning || len(o.checks) != 2 || o.checks[0].Name != "node-taints" {
		t.Fatalf("Complete derived failOn %v, checks %v", o.failOn, o.checks)
	}
	before := *o
	clusterBefore := *o.cluster
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, *o) || !reflect.DeepEqual(clusterBefore, *o.cluster) {
		t.Error("Validate changed the options")
	}
}

func TestExecuteExitCodes(t *testing.T) {
	srv := partlyBrokenServer(t)
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	// --timeout 2s: retries of the 500s stop when the next could not end in time.
	if code := Execute(context.Background(), streams, []string{"--server", srv.URL, "--fail-on", "info", "--timeout", "2s"}); code != ExitError ||
		!strings.HasPrefix(errOut.String(), "error: incomplete scan: ") || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("exit %d with errored checks, want 2 and one line on stderr; stderr %q", code, errOut.String())
	}
	if !strings.Contains(out.String(), "skipped node-taints: forbidden: needs list on nodes") || !strings.Contains(out.String(), "error rollout-history: ") {
		t.Errorf("table does not name the skipped and errored checks:\n%s", out.String())
	}
	out.Reset()
	errOut.Reset()
	if code := Execute(context.Background(), streams, []string{"--server", srv.URL, "--fail-on", "info", "--timeout", "2s", "--allow-incomplete"}); code != ExitOK ||
		!strings.HasPrefix(errOut.String(), "warning: incomplete scan: ") || !strings.Contains(out.String(), "INCOMPLETE") {
		t.Errorf("--allow-incomplete: exit %d, want 0 with a warning; stderr %q\n%s", code, errOut.String(), out.String())
	}
	errOut.Reset()
	if code := Execute(context.Background(), streams, []string{"--server", srv.URL, "--nope"}); code != ExitError || !strings.HasPrefix(errOut.String(), "error: unknown flag") {
		t.Errorf("bad flag: exit %d, stderr %q", code, errOut.String())
	}
}

// -v is kubectl's log level (client-go logs each request at 6), not --stats.
func TestVerbosityIsTheLogLevel(t *testing.T) {
	t.Cleanup(klog.CaptureState().Restore)
	srv := partlyBrokenServer(t)
	streams, _, _, errOut := genericiooptions.NewTestIOStreams()
	Execute(context.Background(), streams, []string{"--server", srv.URL, "--check", "node-taints", "-v", "6"})
	if !strings.Contains(errOut.String(), srv.URL+"/api/v1/nodes") || strings.Contains(errOut.String(), "API requests,") {
		t.Errorf("-v 6 should log client-go's requests, not print --stats:\n%s", errOut.String())
	}
	errOut.Reset()
	Execute(context.Background(), streams, []string{"--server", srv.URL, "--check", "node-taints", "--stats"})
	// One line a read: the nodes LIST after its refused watch-list.
	if !regexp.MustCompile(`(?m)^3 API requests, .* received:\n\s+GET\s+200 .* /version\n\s+POST\s+404 .*selfsubjectrulesreviews\n\s+GET\s+403 .*/api/v1/nodes\?resourceVersion=0  \(after 403\)\n\s+1 request retried: 1 more attempt\n`).MatchString(errOut.String()) {
		t.Errorf("--stats:\n%s", errOut.String())
	}
}
