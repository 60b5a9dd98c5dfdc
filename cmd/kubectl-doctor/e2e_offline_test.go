package main_test

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/localcluster"
)

// TestOfflineDumpMatchesLiveScan: `kubectl doctor dump` of the
// scenario cluster, scanned with --from and no kubeconfig at all, gives the
// findings and check verdicts of the live scan.
func TestOfflineDumpMatchesLiveScan(t *testing.T) {
	needCluster(t)
	dump := filepath.Join(t.TempDir(), "snapshot.yaml.gz")
	d := runDoctor(t, scenarios.Kubeconfig, "dump", "-o", dump)
	if d.code != 0 || d.stdout != "" {
		t.Fatalf("dump: exit %d, stdout %q, stderr %s", d.code, d.stdout, d.stderr)
	}
	if !regexp.MustCompile(`^kubectl doctor: dumped \d+ reads, [\d,]+ objects, from ` + regexp.QuoteMeta(scenarios.URL) + ` to .*snapshot\.yaml\.gz in `).MatchString(d.stderr) {
		t.Errorf("dump summary on stderr: %q", d.stderr)
	}
	live := decodeReport(t, runDoctor(t, scenarios.Kubeconfig, "-o", "json", "--fail-on", "never").stdout)

	off := runDoctor(t, "/nonexistent", "--from", dump, "-o", "json", "--fail-on", "never")
	if off.code != 0 {
		t.Fatalf("--from: exit %d: %s", off.code, off.stderr)
	}
	rep := decodeReport(t, off.stdout)
	if rep.Requests != 0 || rep.Cluster.Server != scenarios.URL || rep.Cluster.Version != localcluster.KubernetesVersion {
		t.Errorf("offline report: %d requests, cluster %+v", rep.Requests, rep.Cluster)
	}
	if !strings.Contains(off.stderr, "ages are as of the capture") {
		t.Errorf("stderr does not say what the clock is: %s", off.stderr)
	}
	// The cluster keeps moving (controllers recreate rejected pods), and
	// ages differ by the seconds between the two reads: compare findings
	// by check, severity and object, and messages with numbers masked.
	if got, want := findingKeys(rep), findingKeys(live); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings differ:\n--from dump:\n  %s\nlive:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	status := map[string]string{}
	for _, c := range live.Checks {
		status[c.Name] = c.Status
	}
	for _, c := range rep.Checks {
		if status[c.Name] != c.Status {
			t.Errorf("check %s: %s from the dump (%s), %s live", c.Name, c.Status, c.Reason, status[c.Name])
		}
	}
	if len(rep.Findings) == 0 {
		t.Fatal("no findings from the dump of the scenario cluster")
	}
	// --fail-on and --check work the same.
	if r := runDoctor(t, "/nonexistent", "--from", dump); r.code != 1 {
		t.Errorf("--from with critical findings: exit %d, want 1", r.code)
	}
	if r := runDoctor(t, "/nonexistent", "--from", dump, "--check", "rollout-history", "-o", "json"); r.code != 0 || decodeReport(t, r.stdout).Summary.Disabled != len(checks.All())-1 {
		t.Errorf("--from --check rollout-history: exit %d: %s", r.code, r.stderr)
	}
	// The dump never holds a Secret, and ends with its end record.
	text := gunzip(t, dump)
	if strings.Contains(text, "\nkind: Secret\n") {
		t.Error("the dump holds a Secret")
	}
	if !regexp.MustCompile(`(?s)---\napiVersion: doctor.kubectl.io/v1alpha1\nfinishedAt: "[^"]+"\nkind: DumpEnd\nobjects: \d+\nreads: ` + fmt.Sprint(strings.Count(text, "kind: DumpRead\n")) + `\n$`).MatchString(text) {
		t.Errorf("the dump does not end with its DumpEnd record: ...%s", text[max(0, len(text)-200):])
	}
	// To stdout, then from stdin.
	out := runDoctor(t, scenarios.Kubeconfig, "dump", "-o", "-", "-n", "shop")
	if out.code != 0 || !strings.HasPrefix(out.stdout, "# kubectl-doctor dump") {
		t.Fatalf("dump -o -: exit %d: %s", out.code, out.stderr)
	}
	p := filepath.Join(t.TempDir(), "shop.yaml")
	if err := os.WriteFile(p, []byte(out.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	// The stuck rollout of checkout is workload-pods' finding.
	ns := decodeReport(t, runDoctor(t, "/nonexistent", "--from", p, "-o", "json", "--check", "rollout-history,workload-pods").stdout)
	if len(ns.Findings) != 2 || ns.Cluster.Namespace != "" && ns.Cluster.Namespace != "shop" {
		t.Errorf("dump -n shop: %d rollout-history and workload-pods findings, want 2 (api, checkout): %+v", len(ns.Findings), ns.Findings)
	}
}

func findingKeys(r doctor.Report) []string {
	durations, digits := regexp.MustCompile(`\b(\d+[hms])+\b`), regexp.MustCompile(`\d+`)
	var out []string
	for _, f := range r.Findings {
		msg := digits.ReplaceAllString(durations.ReplaceAllString(f.Message, "D"), "N")
		out = append(out, fmt.Sprintf("%s %s %s: %s", f.Check, f.Severity, f.Object, msg))
	}
	sort.Strings(out)
	return out
}

func gunzip(t *testing.T, p string) string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("the dump is not gzip: %v", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOfflineBrokenInput needs no cluster: broken --from input is one line
// naming the file, exit 2, and no kubeconfig is read.
func TestOfflineBrokenInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "pods.json")
	if err := os.WriteFile(bad, []byte(`{"kind":"PodList","apiVersion":"v1","items":[{"metadata":`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runDoctor(t, "/nonexistent", "--from", bad)
	if r.code != 2 || r.stderr != "error: --from "+bad+": document 1: not valid JSON: unexpected end of input (truncated?)\n" {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	good := filepath.Join(dir, "nodes.yaml")
	if err := os.WriteFile(good, []byte("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runDoctor(t, "/nonexistent", "--from", good, "-o", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	rep := decodeReport(t, r.stdout)
	skipped := 0
	for _, c := range rep.Checks {
		if c.Status == doctor.StatusSkipped && strings.HasPrefix(c.Reason, "not in the dump: ") {
			skipped++
		}
	}
	if skipped == 0 || rep.Summary.Passed == 0 || !strings.Contains(r.stderr, "1 Secret dropped unread") {
		t.Errorf("skipped %d, summary %+v, stderr %s", skipped, rep.Summary, r.stderr)
	}
	if r := runDoctor(t, "/nonexistent", "dump"); r.code != 2 || !strings.Contains(r.stderr, "--output is required") {
		t.Errorf("dump without -o: exit %d %q", r.code, r.stderr)
	}
}
