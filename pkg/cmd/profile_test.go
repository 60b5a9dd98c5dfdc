package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// The hygiene profile is quiet by default: the same capture gives no
// hygiene finding without --profile, and its findings with it; an unknown
// profile is a usage error naming the known ones.
func TestHygieneProfileIsOptIn(t *testing.T) {
	// The hygiene fixture, plus one object of each workload kind it does
	// not hold (in kube-system, which the profile leaves alone), so that
	// the capture holds every kind the checks read.
	fixture, err := os.ReadFile("../../testdata/checks/hygiene/hygiene.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var stubs []string
	for _, kind := range []string{"apps/v1 ReplicaSet", "apps/v1 StatefulSet", "apps/v1 DaemonSet", "batch/v1 Job", "batch/v1 CronJob"} {
		gv, k, _ := strings.Cut(kind, " ")
		stubs = append(stubs, "apiVersion: "+gv+"\nkind: "+k+"\nmetadata: {name: stub, namespace: kube-system}\n")
	}
	input := filepath.Join(t.TempDir(), "capture.yaml")
	if err := os.WriteFile(input, []byte(string(fixture)+"\n---\n"+strings.Join(stubs, "---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	scan := func(args ...string) (int, *doctor.Report, string) {
		streams, _, out, errOut := genericiooptions.NewTestIOStreams()
		code := Execute(context.Background(), streams, append([]string{"--from", input, "-o", "json", "--fail-on", "never", "--allow-incomplete"}, args...))
		var r doctor.Report
		if code != ExitError {
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, out.String())
			}
		}
		return code, &r, errOut.String()
	}
	count := func(r *doctor.Report) (n int, ran bool) {
		for _, f := range r.Findings {
			if f.Check == "hygiene" {
				n++
			}
		}
		for _, c := range r.Checks {
			ran = ran || c.Name == "hygiene"
		}
		return n, ran
	}
	code, r, stderr := scan()
	if n, ran := count(r); code != ExitOK || n != 0 || ran {
		t.Errorf("default scan: exit %d, %d hygiene findings, hygiene ran %v (stderr %q)", code, n, ran, stderr)
	}
	code, r, stderr = scan("--profile", "hygiene")
	if n, ran := count(r); code != ExitOK || n != 5 || !ran {
		t.Errorf("--profile hygiene: exit %d, %d hygiene findings (want 5), ran %v (stderr %q)", code, n, ran, stderr)
	}
	code, _, stderr = scan("--profile", "tidy")
	if code != ExitError || !strings.Contains(stderr, `--profile: unknown profile "tidy" (known: hygiene)`) {
		t.Errorf("unknown profile: exit %d, stderr %q", code, stderr)
	}
}
