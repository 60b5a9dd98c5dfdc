package main_test

import (
	"encoding/json"
	"encoding/xml"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// renamedKubeconfig writes the kubeconfig at src with its cluster, user and
// context renamed to name, into its own file: what a team has when each
// cluster's admin kubeconfig is a file in KUBECONFIG.
func renamedKubeconfig(t *testing.T, dir, src, name string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(src)
	if err != nil {
		t.Fatal(err)
	}
	old := cfg.Contexts[cfg.CurrentContext]
	out := clientcmdapi.NewConfig()
	out.Clusters[name] = cfg.Clusters[old.Cluster]
	out.AuthInfos[name] = cfg.AuthInfos[old.AuthInfo]
	out.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	out.CurrentContext = name
	p := filepath.Join(dir, name+".kubeconfig")
	if err := clientcmd.WriteToFile(*out, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// fleetKubeconfig is KUBECONFIG naming three files: the two real control
// planes ("healthy", "scenarios") and "stopped", an API server that is no
// longer listening (its port is closed: what a stopped control plane
// answers).
func fleetKubeconfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dead := filepath.Join(dir, "stopped.kubeconfig")
	kc := `apiVersion: v1
kind: Config
clusters: [{name: stopped, cluster: {server: "https://` + addr + `", insecure-skip-tls-verify: true}}]
users: [{name: stopped, user: {token: t}}]
contexts: [{name: stopped, context: {cluster: stopped, user: stopped}}]
current-context: stopped
`
	if err := os.WriteFile(dead, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return strings.Join([]string{
		renamedKubeconfig(t, dir, healthy.Kubeconfig, "healthy"),
		renamedKubeconfig(t, dir, scenarios.Kubeconfig, "scenarios"),
		dead,
	}, string(os.PathListSeparator))
}

func decodeFleet(t *testing.T, out string) doctor.FleetReport {
	t.Helper()
	var f doctor.FleetReport
	if err := json.Unmarshal([]byte(out), &f); err != nil {
		t.Fatalf("output is not a JSON fleet report: %v\n%s", err, out)
	}
	if f.Kind != doctor.FleetKind || f.APIVersion != doctor.APIVersion {
		t.Fatalf("kind/apiVersion = %s/%s", f.Kind, f.APIVersion)
	}
	return f
}

func clusterOf(f doctor.FleetReport, name string) *doctor.FleetCluster {
	for i := range f.Clusters {
		if f.Clusters[i].Name == name {
			return &f.Clusters[i]
		}
	}
	return nil
}

// TestFleetTwoControlPlanes scans two real control planes in one run, from
// a KUBECONFIG list merged the kubectl way.
func TestFleetTwoControlPlanes(t *testing.T) {
	needCluster(t)
	kc := fleetKubeconfig(t)

	singleRun := runDoctor(t, scenarios.Kubeconfig, "-o", "json", "--fail-on", "never")
	single := decodeReport(t, singleRun.stdout)
	healthyRun := runDoctor(t, healthy.Kubeconfig, "-o", "json", "--fail-on", "never")

	r := runDoctor(t, kc, "--context", "healthy,scenarios", "-o", "json", "--fail-on", "warning")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (scenarios has warnings)\n%s", r.code, r.stderr)
	}
	f := decodeFleet(t, r.stdout)
	t.Logf("wall time: fleet of 2 %s; alone: scenarios %s, healthy %s", r.elapsed.Round(time.Millisecond),
		singleRun.elapsed.Round(time.Millisecond), healthyRun.elapsed.Round(time.Millisecond))
	if len(f.Clusters) != 2 || f.Clusters[0].Name != "healthy" || f.Clusters[1].Name != "scenarios" {
		t.Fatalf("clusters = %+v", f.Clusters)
	}
	if !f.Complete {
		t.Errorf("both clusters reachable, fleet incomplete: %+v", f.Clusters)
	}
	h, s := clusterOf(f, "healthy"), clusterOf(f, "scenarios")
	if h.Cluster.Server != healthy.URL || s.Cluster.Server != scenarios.URL {
		t.Errorf("servers = %s, %s; want %s, %s", h.Cluster.Server, s.Cluster.Server, healthy.URL, scenarios.URL)
	}
	if h.Summary.Critical+h.Summary.Warning != 0 {
		t.Errorf("the healthy cluster adds findings: %+v", h.Summary)
	}
	// The scenarios cluster's part is its own scan's findings, each named.
	var got int
	for _, fd := range f.Findings {
		switch fd.Cluster {
		case "scenarios":
			got++
		case "healthy":
			if fd.Severity >= doctor.Warning {
				t.Errorf("healthy finding: %+v", fd)
			}
		default:
			t.Errorf("finding without its cluster: %+v", fd)
		}
	}
	if got != len(single.Findings) || got == 0 {
		t.Errorf("scenarios has %d findings in the fleet, %d alone", got, len(single.Findings))
	}

	// --all-contexts takes every file of KUBECONFIG; the stopped cluster is
	// incomplete, the others' findings still come, the exit is the worst.
	all := runDoctor(t, kc, "--all-contexts", "-o", "json", "--fail-on", "warning", "--timeout", "20s")
	if all.code != 1 {
		t.Errorf("--all-contexts exit %d, want 1 (findings beat incomplete)\n%s", all.code, all.stderr)
	}
	fa := decodeFleet(t, all.stdout)
	if len(fa.Clusters) != 3 || fa.Complete {
		t.Fatalf("clusters = %+v complete=%v", fa.Clusters, fa.Complete)
	}
	st := clusterOf(fa, "stopped")
	if st == nil || st.Error == "" || st.Complete || !strings.Contains(st.Error, "cannot reach the API server") {
		t.Errorf("stopped cluster = %+v", st)
	}
	if n := clusterOf(fa, "scenarios").Summary; n.Critical+n.Warning == 0 {
		t.Errorf("scenarios findings lost beside a stopped cluster: %+v", n)
	}
	if !strings.Contains(all.stderr, "1 cluster of 3 incomplete") || !strings.Contains(all.stderr, "stopped: scan failed") {
		t.Errorf("stderr should name the incomplete cluster:\n%s", all.stderr)
	}
	// Without a finding at the gate, the incomplete cluster makes it 2.
	healthyAndStopped := runDoctor(t, kc, "--context", "healthy,stopped", "--fail-on", "warning")
	if healthyAndStopped.code != 2 {
		t.Errorf("healthy+stopped exit %d, want 2\n%s\n%s", healthyAndStopped.code, healthyAndStopped.stdout, healthyAndStopped.stderr)
	}
	for _, want := range []string{`(?m)^CLUSTER\s+VERDICT\s+DETAIL$`, `(?m)^healthy\s+OK\s+0 critical, 0 warning, 0 info$`,
		`(?m)^stopped\s+INCOMPLETE\s+scan failed: cannot reach the API server`, `== cluster healthy \(` + regexp.QuoteMeta(healthy.URL), "No problems found."} {
		if !regexp.MustCompile(want).MatchString(healthyAndStopped.stdout) {
			t.Errorf("table lacks %q:\n%s", want, healthyAndStopped.stdout)
		}
	}
	// Healthy alone: the fleet run exits 0.
	if ok := runDoctor(t, kc, "--context", "healthy,healthy", "--fail-on", "warning"); ok.code != 0 {
		t.Errorf("healthy fleet exit %d\n%s", ok.code, ok.stderr)
	}

	// JUnit: a testsuite per cluster; SARIF: a run per cluster, each result
	// naming its cluster.
	ju := runDoctor(t, kc, "--context", "healthy,scenarios", "-o", "junit", "--fail-on", "never")
	var suites struct {
		Suites []struct {
			Name string `xml:"name,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(ju.stdout), &suites); err != nil || len(suites.Suites) != 2 || suites.Suites[1].Name != "scenarios" {
		t.Errorf("junit suites = %+v (%v)", suites, err)
	}
	sa := runDoctor(t, kc, "--context", "healthy,scenarios", "-o", "sarif", "--fail-on", "never")
	var log struct {
		Runs []struct {
			Results []struct {
				Properties          map[string]any    `json:"properties"`
				PartialFingerprints map[string]string `json:"partialFingerprints"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(sa.stdout), &log); err != nil || len(log.Runs) != 2 {
		t.Fatalf("sarif runs: %v %d", err, len(log.Runs))
	}
	if len(log.Runs[1].Results) != len(single.Findings) {
		t.Errorf("sarif scenarios results %d, want %d", len(log.Runs[1].Results), len(single.Findings))
	}
	for _, res := range log.Runs[1].Results {
		if res.Properties["cluster"] != "scenarios" || res.PartialFingerprints["kubectlDoctorFleetFingerprint/v1"] == "" {
			t.Errorf("sarif result without cluster: %+v", res)
			break
		}
	}
}

// TestOfflineFleetFromDumps is the central job: each cluster's dump in one
// directory, scanned as a fleet named after the files, finding what the
// live fleet run finds.
func TestOfflineFleetFromDumps(t *testing.T) {
	needCluster(t)
	dir := t.TempDir()
	for name, c := range map[string]string{"healthy": healthy.Kubeconfig, "scenarios": scenarios.Kubeconfig} {
		if r := runDoctor(t, c, "dump", "-o", filepath.Join(dir, name+".yaml.gz")); r.code != 0 {
			t.Fatalf("dump %s: exit %d\n%s", name, r.code, r.stderr)
		}
	}
	live := decodeFleet(t, runDoctor(t, fleetKubeconfig(t), "--context", "healthy,scenarios", "-o", "json", "--fail-on", "never").stdout)
	r := runDoctor(t, "", "--from", dir, "-o", "json", "--fail-on", "warning")
	if r.code != 1 {
		t.Errorf("offline fleet exit %d, want 1\n%s", r.code, r.stderr)
	}
	off := decodeFleet(t, r.stdout)
	if len(off.Clusters) != 2 || off.Clusters[0].Name != "healthy" || off.Clusters[1].Name != "scenarios" || !off.Complete {
		t.Fatalf("clusters %+v", off.Clusters)
	}
	key := func(f doctor.FleetReport) map[string]bool {
		m := map[string]bool{}
		for _, x := range f.Findings {
			m[x.Cluster+" "+x.Fingerprint] = true
		}
		return m
	}
	l, o := key(live), key(off)
	if len(o) == 0 || len(l) != len(o) {
		t.Errorf("offline fleet %d findings, live %d", len(o), len(l))
	}
	for k := range l {
		if !o[k] {
			t.Errorf("live finding %s missing offline", k)
		}
	}
}
