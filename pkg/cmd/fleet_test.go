package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// An offline fleet of two support bundles and a missing file: both bundles
// are reported under their file's name, the missing one is incomplete with
// the reason, and the run exits 2 (nothing at --fail-on, one cluster
// incomplete).
func TestOfflineFleetRun(t *testing.T) {
	testdata := filepath.Join("..", "..", "testdata", "offline")
	from := strings.Join([]string{filepath.Join(testdata, "troubleshoot-support-bundle.tar.gz"), filepath.Join(testdata, "sbctl-support-bundle"), filepath.Join(t.TempDir(), "gone.yaml")}, ",")
	var out, errOut bytes.Buffer
	code := Execute(context.Background(), genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, []string{"--from", from, "-o", "json"})
	if code != ExitError {
		t.Errorf("exit %d, want 2 (a cluster incomplete)\n%s", code, errOut.String())
	}
	var f doctor.FleetReport
	if err := json.Unmarshal(out.Bytes(), &f); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	var names []string
	for _, c := range f.Clusters {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "gone,sbctl-support-bundle,troubleshoot-support-bundle" || f.Complete {
		t.Fatalf("clusters %v complete %v", names, f.Complete)
	}
	if f.Clusters[0].Error == "" || f.Clusters[1].Error != "" || len(f.Clusters[2].Checks) == 0 {
		t.Errorf("clusters: %+v", f.Clusters)
	}
	if !strings.Contains(errOut.String(), "[troubleshoot-support-bundle] kubectl doctor: read ") || !strings.Contains(errOut.String(), "1 cluster of 3 incomplete (gone: scan failed: --from ") {
		t.Errorf("stderr:\n%s", errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := Execute(context.Background(), genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, []string{"--from", from, "--allow-incomplete"}); code != ExitOK {
		t.Errorf("--allow-incomplete: exit %d", code)
	}
}

// TestFleetRequireComplete: --require-complete judges every cluster of a
// fleet as it judges one scan: two partial captures exit 3 (the input lacks
// data), naming each cluster's coverage; without the flag they pass.
func TestFleetRequireComplete(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile(podsAndReplicaSets)
	if err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	args := []string{"--from", a + "," + b, "--fail-on", "never"}
	if code := Execute(context.Background(), genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, args); code != ExitOK {
		t.Errorf("without --require-complete: exit %d, want 0\n%s", code, errOut.String())
	}
	errOut.Reset()
	code := Execute(context.Background(), genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, append(args, "--require-complete"))
	if code != ExitInputLacksData || !strings.Contains(errOut.String(), "error: --require-complete: the input lacks data: a: 1 problem found by ") ||
		!strings.Contains(errOut.String(), "; b: 1 problem found by ") {
		t.Errorf("--require-complete: exit %d, want 3, stderr:\n%s", code, errOut.String())
	}
}

func TestFleetFlagsValidate(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--all-contexts", "--from", "x,y"}, "--all-contexts: not with --from"},
		{[]string{"--all-contexts", "--context", "a,b"}, "--all-contexts: not with --context"},
		{[]string{"--context", "a,b", "--parallel", "0"}, "--parallel must be at least 1"},
		{[]string{"--from", "-,x"}, "standard input"},
	} {
		var out, errOut bytes.Buffer
		code := Execute(context.Background(), genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, tc.args)
		if code != ExitError || !strings.Contains(errOut.String(), tc.want) || strings.Count(errOut.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q, want one line with %q", tc.args, code, errOut.String(), tc.want)
		}
	}
}

// A context named in --context that the kubeconfig lacks is a usage
// error before any scan (as kubectl --context): a typo must not hide as one
// cluster's row of a run whose gate fails for other reasons.
func TestFleetUnknownContext(t *testing.T) {
	kc := writeFile(t, "kubeconfig", "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n")
	var out, errOut bytes.Buffer
	code := Execute(context.Background(), genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, []string{"--kubeconfig", kc, "--context", "c,nope", "-o", "json", "--timeout", "5s"})
	if code != ExitError || out.Len() != 0 || strings.TrimSpace(errOut.String()) != `error: --context: context "nope" not found in the kubeconfig (it has: c)` {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}
