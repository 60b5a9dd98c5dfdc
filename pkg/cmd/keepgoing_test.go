package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// TestKeepGoing: a capture file that does not parse stops the scan with one
// line naming it (exit 2); with --keep-going the rest is scanned, the file
// is listed as unreadable input in the INCOMPLETE banner, the coverage and
// the JSON, the checks of the resource it holds error, and the exit code is
// 2 (the scan is incomplete) unless --allow-incomplete, then by findings.
func TestKeepGoing(t *testing.T) {
	src, err := os.ReadFile(podsAndReplicaSets)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, body := range map[string]string{
		"capture/namespaces/shop/core/pods.yaml":   string(src),
		"capture/namespaces/shop/core/events.yaml": "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Event, metadata: {name: e\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	capture := filepath.Join(dir, "capture")
	broken := filepath.Join(capture, "namespaces", "shop", "core", "events.yaml")

	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	if code := Execute(context.Background(), streams, []string{"--from", capture}); code != ExitError || out.Len() != 0 ||
		strings.TrimSpace(errOut.String()) != "error: --from "+broken+": document 1: not valid YAML: yaml: line 4: did not find expected ',' or '}'" {
		t.Errorf("without --keep-going: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	streams, _, out, errOut = genericiooptions.NewTestIOStreams()
	code := Execute(context.Background(), streams, []string{"--from", capture, "--keep-going", "--fail-on", "never"})
	text := out.String()
	if code != ExitError || !strings.Contains(errOut.String(), "1 file unreadable, passed over (--keep-going)") ||
		!strings.Contains(errOut.String(), "kubectl doctor: unreadable, passed over: "+broken+" (events): document 1: not valid YAML") {
		t.Errorf("--keep-going: exit %d, want 2; stderr:\n%s", code, errOut)
	}
	if !strings.HasPrefix(text, "INCOMPLETE: ") || !strings.Contains(strings.SplitN(text, "\n", 2)[0], "unreadable input: "+broken+" (events)") {
		t.Errorf("no INCOMPLETE banner naming the file first:\n%s", text)
	}
	if !strings.Contains(text, "crash-looping") {
		t.Errorf("the readable file's crash loop is not reported:\n%s", text)
	}

	streams, _, out, _ = genericiooptions.NewTestIOStreams()
	if code := Execute(context.Background(), streams, []string{"--from", capture, "--keep-going", "--allow-incomplete", "-o", "json"}); code != ExitFindings {
		t.Errorf("--keep-going --allow-incomplete with a crash loop: exit %d, want 1", code)
	}
	var r doctor.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if r.Complete || len(r.Unreadable) != 1 || !strings.HasPrefix(r.Unreadable[0], broken+" (events): document 1: not valid YAML") {
		t.Errorf("JSON: complete %v, unreadable %q", r.Complete, r.Unreadable)
	}
	listed := false
	for _, m := range r.Incomplete {
		listed = listed || m.Check == "" && strings.HasPrefix(m.Reason, "unreadable input: "+broken)
	}
	if !listed {
		t.Errorf("JSON incomplete does not list the file: %+v", r.Incomplete)
	}
	// Checks that need events error (failed, not absent); those that only
	// enrich with them run with partial coverage, cause "failed".
	for _, c := range r.Checks {
		for _, m := range c.Missing {
			if strings.HasPrefix(m.Read, "events") && m.Cause != "failed" {
				t.Errorf("%s: events %s, want failed", c.Name, m.Cause)
			}
		}
		if c.Name == "workload-pods" && (c.Status != doctor.StatusFailed || c.Coverage != doctor.CoveragePartial) {
			t.Errorf("workload-pods: %s %s", c.Status, c.Coverage)
		}
	}

	streams, _, _, errOut = genericiooptions.NewTestIOStreams()
	if code := Execute(context.Background(), streams, []string{"--keep-going"}); code != ExitError || !strings.Contains(errOut.String(), "--keep-going: only with --from") {
		t.Errorf("--keep-going without --from: exit %d: %s", code, errOut)
	}
}

// TestFromMissingNamespace: -n naming a namespace the capture does not
// hold is exit 2 with the namespaces it does hold, as a live scan exits 2
// on a namespace the server does not have; a namespace the capture holds
// (even one with nothing else in it) is scanned.
func TestFromMissingNamespace(t *testing.T) {
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	code := Execute(context.Background(), streams, []string{"--from", podsAndReplicaSets, "-n", "shpo"})
	if code != ExitError || out.Len() != 0 || strings.TrimSpace(errOut.String()) != `error: --from `+podsAndReplicaSets+`: holds nothing in namespace "shpo": its objects are in shop` {
		t.Errorf("a -n typo: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	streams, _, out, errOut = genericiooptions.NewTestIOStreams()
	if code := Execute(context.Background(), streams, []string{"--from", podsAndReplicaSets, "-n", "shop", "--fail-on", "never"}); code != ExitOK || !strings.Contains(out.String(), "crash-looping") {
		t.Errorf("-n shop: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// A capture with cluster-scoped objects too: they are kept, and -n's
	// namespace still has to be in it.
	mixed := filepath.Join(t.TempDir(), "mixed.yaml")
	src, err := os.ReadFile(podsAndReplicaSets)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mixed, append(append(src, "\n---\n"...), "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	streams, _, out, errOut = genericiooptions.NewTestIOStreams()
	if code := Execute(context.Background(), streams, []string{"--from", mixed, "-n", "shpo"}); code != ExitError || out.Len() != 0 ||
		!strings.HasPrefix(errOut.String(), `error: namespace "shpo" is not in --from `+mixed+`: nothing in it to check (it holds objects of 1 namespace: shop)`) {
		t.Errorf("a -n typo, with a Node in the capture: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	empty := filepath.Join(t.TempDir(), "ns.yaml")
	if err := os.WriteFile(empty, []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: quiet}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	streams, _, out, errOut = genericiooptions.NewTestIOStreams()
	code = Execute(context.Background(), streams, []string{"--from", empty, "-n", "quiet"})
	if strings.Contains(errOut.String(), "is not in --from") || !strings.Contains(out.String(), "namespace-stuck-terminating") {
		t.Errorf("an empty namespace the capture holds: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestOutputPathsCheckedFirst: --write-baseline and dump -o naming a path
// that cannot be written are usage errors before anything is read.
func TestOutputPathsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--from", podsAndReplicaSets, "--write-baseline", filepath.Join(dir, "missing", "b.yaml")},
		{"--from", podsAndReplicaSets, "--write-baseline", dir},
		{"dump", "-o", dir},
		{"dump", "-o", filepath.Join(dir, "missing", "d.yaml")},
	} {
		streams, _, out, errOut := genericiooptions.NewTestIOStreams()
		code := Execute(context.Background(), streams, args)
		if code != ExitError || out.Len() != 0 || strings.Count(errOut.String(), "\n") != 1 || !strings.Contains(errOut.String(), dir) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// TestChecksJSON: `checks -o json` lists every registered check with its
// reads, for tooling; an unknown -o is a usage error.
func TestChecksJSON(t *testing.T) {
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	if code := Execute(context.Background(), streams, []string{"checks", "-o", "json"}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Kind   string `json:"kind"`
		Checks []struct {
			Name  string   `json:"name"`
			Reads []string `json:"reads"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Kind != "CheckList" || len(doc.Checks) != len(checks.All()) {
		t.Fatalf("kind %q, %d checks, want %d", doc.Kind, len(doc.Checks), len(checks.All()))
	}
	for _, c := range doc.Checks {
		if len(c.Reads) == 0 {
			t.Errorf("%s lists no reads", c.Name)
		}
	}
	streams, _, _, errOut = genericiooptions.NewTestIOStreams()
	if code := Execute(context.Background(), streams, []string{"checks", "-o", "xml"}); code != ExitError || !strings.Contains(errOut.String(), `unknown format "xml"`) {
		t.Errorf("checks -o xml: exit %d, %q", code, errOut)
	}
}

// TestFromGivenTwice: a second --from is a usage error, never a silent
// replacement of the first.
func TestFromGivenTwice(t *testing.T) {
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	code := Execute(context.Background(), streams, []string{"--from", podsAndReplicaSets, "--from", "other.yaml"})
	if code != ExitError || out.Len() != 0 || !strings.Contains(errOut.String(), "given twice") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestReportStamped: a report says when it was made and by which
// kubectl-doctor (a kept or served report says how old it is).
func TestReportStamped(t *testing.T) {
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	if code := Execute(context.Background(), streams, []string{"--from", podsAndReplicaSets, "-o", "json", "--fail-on", "never"}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r doctor.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	at, err := time.Parse(time.RFC3339, r.GeneratedAt)
	if err != nil || time.Since(at) > time.Minute || time.Since(at) < -time.Minute || r.DoctorVersion == "" || r.Cluster.Context != "" {
		t.Errorf("generatedAt %q (%v), doctorVersion %q, context %q (none offline)", r.GeneratedAt, err, r.DoctorVersion, r.Cluster.Context)
	}
}
