package cmd

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

var podsAndReplicaSets = filepath.Join("..", "..", "testdata", "offline", "coverage", "pods-replicasets.yaml")

// TestCoverageOfPartialInput is `kubectl get pods,replicasets -o yaml`
// scanned: the crash loop is reported (exit 1), and the last line says
// what the verdict rests on; with --fail-on never the scan passes, unless
// --require-complete asks for every check's data (exit 3).
func TestCoverageOfPartialInput(t *testing.T) {
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	code := Execute(context.Background(), streams, []string{"--from", podsAndReplicaSets})
	if code != ExitFindings {
		t.Fatalf("exit %d, want 1:\n%s\n%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(out.String(), "crash-looping") || !strings.Contains(out.String(), "(partial: owner chain stops at ReplicaSet shop/web-5d8f (controlled by Deployment web): not in the") {
		t.Errorf("no crash loop with its partial note:\n%s", out)
	}
	// Every check but the three that ran on pods and ReplicaSets (pods-stuck
	// needs only pods; nodes only tell it why a kubelet holds a pod).
	// The input says nothing of when it was captured: its ages are lower
	// bounds, and the report says so.
	if !strings.Contains(out.String(), "\nages are lower bounds: the input does not say when it was captured; they are measured from its newest timestamp, ") {
		t.Errorf("no lower-bound note on ages:\n%s", out)
	}
	if !strings.HasPrefix(last, "1 problem found by ") || !strings.Contains(last, fmt.Sprintf("; %d not run, the input lacks their data: admission-webhooks, ", len(checks.All())-3)) ||
		!strings.Contains(last, "; 3 ran without some data, the input lacks it: pod-storm, pods-stuck, workload-pods.") {
		t.Errorf("last line %q does not state coverage", last)
	}

	streams, _, _, errOut = genericiooptions.NewTestIOStreams()
	if code := Execute(context.Background(), streams, []string{"--from", podsAndReplicaSets, "--fail-on", "never"}); code != ExitOK {
		t.Errorf("--fail-on never: exit %d, want 0: %s", code, errOut)
	}
	streams, _, _, errOut = genericiooptions.NewTestIOStreams()
	if code := Execute(context.Background(), streams, []string{"--from", podsAndReplicaSets, "--fail-on", "never", "--require-complete"}); code != ExitInputLacksData ||
		!strings.Contains(errOut.String(), "\nerror: --require-complete: the input lacks data: 1 problem found by ") {
		t.Errorf("--require-complete: exit %d, want 3: %s", code, errOut)
	}

	streams, _, out, _ = genericiooptions.NewTestIOStreams()
	Execute(context.Background(), streams, []string{"--from", podsAndReplicaSets, "-o", "json", "--skip", "node-drift"})
	var r doctor.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if _, err := time.Parse(time.RFC3339, r.Cluster.AgesAsOf); err != nil {
		t.Errorf("cluster.agesAsOf %q: %v", r.Cluster.AgesAsOf, err)
	}
	status := map[string]doctor.CheckResult{}
	for _, c := range r.Checks {
		status[c.Name] = c
	}
	if c := status["workload-pods"]; c.Status != doctor.StatusFailed || c.Coverage != doctor.CoveragePartial || len(c.Missing) == 0 || !c.Missing[0].Optional {
		t.Errorf("workload-pods: %+v", c)
	}
	if c := status["node-health"]; c.Status != doctor.StatusSkipped || c.Coverage != doctor.CoverageNone || c.Missing[0].Cause != "absent" {
		t.Errorf("node-health: %+v", c)
	}
	if c := status["node-drift"]; c.Status != doctor.StatusDisabled || c.Reason != "disabled by --skip" || r.Summary.Disabled != 1 {
		t.Errorf("node-drift: %+v, summary %+v", c, r.Summary)
	}
}

// TestCIFormatsWhenTheScanCannotRun: exit 2 still writes the SARIF or
// JUnit asked for, saying why.
func TestCIFormatsWhenTheScanCannotRun(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.tar.gz")
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	if code := Execute(context.Background(), streams, []string{"--from", missing, "-o", "sarif"}); code != ExitError {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var sarif struct {
		Runs []struct {
			Invocations []struct {
				ExecutionSuccessful        bool `json:"executionSuccessful"`
				ToolExecutionNotifications []struct {
					Message struct{ Text string } `json:"message"`
				} `json:"toolExecutionNotifications"`
			} `json:"invocations"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(out.Bytes(), &sarif); err != nil {
		t.Fatalf("no SARIF on exit 2: %v\n%s", err, out)
	}
	inv := sarif.Runs[0].Invocations[0]
	if inv.ExecutionSuccessful || !strings.Contains(inv.ToolExecutionNotifications[0].Message.Text, "nope.tar.gz") {
		t.Errorf("invocation %+v", inv)
	}

	streams, _, out, _ = genericiooptions.NewTestIOStreams()
	if code := Execute(context.Background(), streams, []string{"--from", missing, "-o", "junit"}); code != ExitError {
		t.Fatalf("exit %d", code)
	}
	var junit struct {
		Errors int `xml:"errors,attr"`
		Suites []struct {
			Cases []struct {
				Error *struct {
					Message string `xml:"message,attr"`
				} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(out.Bytes(), &junit); err != nil || junit.Errors != 1 || junit.Suites[0].Cases[0].Error == nil {
		t.Errorf("no JUnit error testcase on exit 2 (%v):\n%s", err, out)
	}

	// A bad flag value too.
	streams, _, out, _ = genericiooptions.NewTestIOStreams()
	if code := Execute(context.Background(), streams, []string{"--from", podsAndReplicaSets, "-o", "junit", "--fail-on", "bogus"}); code != ExitError ||
		!strings.Contains(out.String(), "--fail-on") {
		t.Errorf("exit %d, JUnit:\n%s", code, out)
	}
	// Table output stays empty on stdout: the error is on stderr.
	streams, _, out, _ = genericiooptions.NewTestIOStreams()
	if Execute(context.Background(), streams, []string{"--from", missing}); out.Len() != 0 {
		t.Errorf("table output on exit 2: %s", out)
	}
}

// TestWriteBaselineThenGate: --write-baseline records the scan's problems;
// the next scan with --baseline passes the gate, saying none is new.
func TestWriteBaselineThenGate(t *testing.T) {
	file := filepath.Join(t.TempDir(), "baseline.yaml")
	streams, _, _, errOut := genericiooptions.NewTestIOStreams()
	if code := Execute(context.Background(), streams, []string{"--from", podsAndReplicaSets, "--write-baseline", file}); code != ExitFindings {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	if code := Execute(context.Background(), streams, []string{"--from", podsAndReplicaSets, "--baseline", file}); code != ExitOK {
		t.Fatalf("with the baseline: exit %d: %s\n%s", code, errOut, out)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "No new problems (1 problem known from the baseline) found by 3 checks;") {
		t.Errorf("last line %q", last)
	}
}

// TestCoverageExit: --require-complete's exit code by the cause of the
// gaps of a report (decide, with nothing at --fail-on and the scan's
// incompleteness left to the verdict's own test): denied reads (a namespaced Role, -n) 4, an input lacking data 3,
// failed reads 2; an API the cluster does not serve is no gap.
func TestCoverageExit(t *testing.T) {
	set, err := fixture.Load(filepath.Join("..", "..", "testdata", "checks", "workload-pods"))
	if err != nil {
		t.Fatal(err)
	}
	full, err := set.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "", errors.New("RBAC"))
	unserved := apierrors.NewNotFound(schema.GroupResource{Group: "apiregistration.k8s.io", Resource: "apiservices"}, "")
	for name, c := range map[string]struct {
		snap *snapshot.Snapshot
		code int
		line string
	}{
		"complete":      {full, ExitOK, "every check ran with all its data."},
		"nodes denied":  {snapshot.WithError(full, snapshot.Nodes, forbidden), ExitReadsDenied, "1 not run, reads denied: node-health; 1 ran without some data, reads denied: workload-pods."},
		"owners denied": {snapshot.WithError(full, snapshot.Deployments, forbidden), ExitReadsDenied, "2 ran without some data, reads denied: node-health, workload-pods."},
		"not served":    {snapshot.WithError(full, snapshot.APIServices, unserved), ExitOK, "1 ran without some data, API not served by the cluster: workload-pods."},
		"reads failed":  {snapshot.WithError(full, snapshot.Pods, errors.New("etcd is sad")), ExitError, "by 1 check; 1 not run, reads failed or the check errored: workload-pods; 1 ran without some data, reads failed or the check errored: node-health."},
		"owners not read": {func() *snapshot.Snapshot {
			s, err := set.SnapshotWith([]snapshot.Resource{snapshot.Pods, snapshot.Nodes})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}(), ExitInputLacksData, "2 ran without some data, the input lacks it: node-health, workload-pods."},
	} {
		t.Run(name, func(t *testing.T) {
			r := doctor.Run(context.Background(), c.snap, []*doctor.Check{checks.NodeHealth, checks.WorkloadPods}, fixture.Now())
			v := decide(outcome{Gaps: r.GapCauses(), Coverage: r.CoverageLine(), RequireComplete: true})
			code, err := v.Code, v.Err
			if code != c.code || !strings.HasSuffix(r.CoverageLine(), c.line) {
				t.Errorf("exit %d (%v), line %q; want %d and a line ending %q", code, err, r.CoverageLine(), c.code, c.line)
			}
		})
	}
}
