package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/localcluster"
)

// render is `kubectl kustomize dir` (what `kubectl apply -k` applies),
// through kustomize's own library.
func render(t *testing.T, dir string) []byte {
	t.Helper()
	root, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(root, dir))
	if err != nil {
		t.Fatalf("kustomize %s: %v", dir, err)
	}
	out, err := m.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// warnings collects the API server's warnings (Pod Security's among them).
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	w.list = append(w.list, text)
	w.mu.Unlock()
}

// applyRendered server-side applies rendered manifests, as `kubectl apply
// -k` would, and returns the warnings the API server sent.
func applyRendered(t *testing.T, c *localcluster.Cluster, manifests []byte) []string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "01-rendered.yaml"), manifests, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	w := &warnings{}
	cfg.WarningHandler = w
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var log strings.Builder
	if err := localcluster.LoadScenarios(ctx, cfg, []string{dir}, &log); err != nil {
		t.Fatalf("applying the rendered manifests: %v\n%s", err, log.String())
	}
	return w.list
}

// removeDeploy deletes what deploy/ creates and waits until the namespace
// is gone, so the shared cluster's other tests see it as before.
func removeDeploy(t *testing.T, c *localcluster.Cluster) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kube := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_ = kube.RbacV1().ClusterRoleBindings().Delete(ctx, "kubectl-doctor", metav1.DeleteOptions{})
	_ = kube.RbacV1().ClusterRoles().Delete(ctx, "kubectl-doctor", metav1.DeleteOptions{})
	_ = kube.CoreV1().Namespaces().Delete(ctx, "kubectl-doctor", metav1.DeleteOptions{})
	for ctx.Err() == nil {
		if _, err := kube.CoreV1().Namespaces().Get(ctx, "kubectl-doctor", metav1.GetOptions{}); err != nil {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Errorf("namespace kubectl-doctor still there after 2m")
}

// TestDeployAppliesAndPassesRestricted is `kubectl apply -k deploy` on a
// real API server: every object is accepted and Pod Security (the namespace
// enforces and warns on restricted) has nothing to say about the pod.
func TestDeployAppliesAndPassesRestricted(t *testing.T) {
	needCluster(t)
	out := render(t, "deploy")
	kinds := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^kind: (\w+)$`).FindAllStringSubmatch(string(out), -1) {
		kinds[m[1]]++
	}
	for _, k := range []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Deployment", "Service"} {
		if kinds[k] != 1 {
			t.Errorf("deploy renders %d %s, want 1 (%v)", kinds[k], k, kinds)
		}
	}
	if strings.Contains(string(out), "monitoring.coreos.com") {
		t.Error("the base must apply without the prometheus-operator CRDs")
	}
	op := string(render(t, "deploy/prometheus-operator"))
	if !strings.Contains(op, "kind: ServiceMonitor") || !strings.Contains(op, "kind: PrometheusRule") || !strings.Contains(op, "kind: Deployment") {
		t.Errorf("the operator overlay lacks its objects:\n%s", op)
	}
	t.Cleanup(func() { removeDeploy(t, healthy) })
	warns := applyRendered(t, healthy, out)
	for _, w := range warns {
		t.Errorf("API server warning on apply: %s", w)
	}
	cfg, _ := clientcmd.BuildConfigFromFlags("", healthy.Kubeconfig)
	kube := kubernetes.NewForConfigOrDie(cfg)
	d, err := kube.AppsV1().Deployments("kubectl-doctor").Get(context.Background(), "kubectl-doctor", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe.HTTPGet.Path != "/healthz" ||
		c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("container: probes %v %v, resources %v", c.LivenessProbe, c.ReadinessProbe, c.Resources)
	}
	// The restricted profile is enforced in the namespace: a pod that
	// breaks it is refused, so the check above is not vacuous.
	ns, err := kube.CoreV1().Namespaces().Get(context.Background(), "kubectl-doctor", metav1.GetOptions{})
	if err != nil || ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Fatalf("namespace labels %v (%v)", ns.Labels, err)
	}
	bad := d.Spec.Template.DeepCopy()
	bad.Spec.Containers[0].SecurityContext.Capabilities = nil
	_, err = kube.CoreV1().Pods("kubectl-doctor").Create(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "breaks-restricted"}, Spec: bad.Spec}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err == nil || !strings.Contains(err.Error(), "restricted") {
		t.Errorf("a pod without drop ALL was not refused by Pod Security: %v", err)
	}
}

// TestScanAsShippedServiceAccount runs the scan as the ServiceAccount of
// deploy/ (impersonated from the admin kubeconfig): every check runs, none
// is skipped for permissions, and it finds exactly what the admin finds.
func TestScanAsShippedServiceAccount(t *testing.T) {
	needCluster(t)
	// Only the shipped ClusterRole and its binding: the scenarios
	// cluster's findings are pinned by other tests, a Deployment would add
	// its own, and a namespace could not be deleted there (its unavailable
	// APIService blocks namespace deletion, by design). Impersonating the
	// ServiceAccount needs neither it nor its namespace to exist.
	var rbac []string
	for _, doc := range strings.Split(string(render(t, "deploy")), "\n---\n") {
		if regexp.MustCompile(`(?m)^kind: (ClusterRole|ClusterRoleBinding)$`).MatchString(doc) {
			rbac = append(rbac, doc)
		}
	}
	if len(rbac) != 2 {
		t.Fatalf("%d RBAC objects rendered, want 2", len(rbac))
	}
	t.Cleanup(func() {
		cfg, _ := clientcmd.BuildConfigFromFlags("", scenarios.Kubeconfig)
		kube := kubernetes.NewForConfigOrDie(cfg)
		_ = kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), "kubectl-doctor", metav1.DeleteOptions{})
		_ = kube.RbacV1().ClusterRoles().Delete(context.Background(), "kubectl-doctor", metav1.DeleteOptions{})
	})
	applyRendered(t, scenarios, []byte(strings.Join(rbac, "\n---\n")))

	admin := decodeReport(t, runDoctor(t, scenarios.Kubeconfig, "-o", "json", "--fail-on", "never").stdout)
	r := runDoctor(t, scenarios.Kubeconfig, "-o", "json", "--fail-on", "never", "--as", "system:serviceaccount:kubectl-doctor:kubectl-doctor")
	if r.code != 0 || strings.Contains(r.stderr, "may not") {
		t.Fatalf("scan as the ServiceAccount: exit %d\n%s", r.code, r.stderr)
	}
	sa := decodeReport(t, r.stdout)
	for _, c := range sa.Checks {
		if c.Status == doctor.StatusSkipped || c.Status == doctor.StatusError {
			t.Errorf("check %s %s as the ServiceAccount: %s", c.Name, c.Status, c.Reason)
		}
	}
	prints := func(r doctor.Report) []string {
		var out []string
		for _, f := range r.Findings {
			out = append(out, f.Fingerprint+" "+f.Check+" "+f.Object.String())
		}
		sort.Strings(out)
		return out
	}
	if a, s := prints(admin), prints(sa); strings.Join(a, "\n") != strings.Join(s, "\n") || len(a) == 0 {
		t.Errorf("the ServiceAccount finds\n%s\nthe admin finds\n%s", strings.Join(s, "\n"), strings.Join(a, "\n"))
	}
	// Without the binding the same user is refused: the grant is what
	// makes the difference.
	cfg, _ := clientcmd.BuildConfigFromFlags("", scenarios.Kubeconfig)
	kube := kubernetes.NewForConfigOrDie(cfg)
	if err := kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), "kubectl-doctor", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	denied := runDoctor(t, scenarios.Kubeconfig, "-o", "json", "--fail-on", "never", "--as", "system:serviceaccount:kubectl-doctor:kubectl-doctor")
	if rep := decodeReport(t, denied.stdout); rep.Summary.Skipped == 0 {
		t.Errorf("without the binding nothing was skipped: %+v", rep.Summary)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// needPrometheus returns the paths of prometheus and promtool (Debian's
// prometheus package, installed by make prometheus, a dependency of make
// test); without them the test is skipped, or fails when
// KUBECTL_DOCTOR_REQUIRE_PROMETHEUS is set (make test sets it).
func needPrometheus(t *testing.T) (prom, promtool string) {
	t.Helper()
	prom, err1 := exec.LookPath("prometheus")
	promtool, err2 := exec.LookPath("promtool")
	if err1 != nil || err2 != nil {
		if os.Getenv("KUBECTL_DOCTOR_REQUIRE_PROMETHEUS") != "" {
			t.Fatalf("prometheus/promtool not installed: run make prometheus")
		}
		t.Skip("prometheus/promtool not installed (make prometheus)")
	}
	return prom, promtool
}

func httpGet(url string) (int, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func waitFor(t *testing.T, what string, timeout time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if ok() {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s", timeout, what)
}

// TestAlertRulesPromtool: the shipped rules load and their unit tests pass.
func TestAlertRulesPromtool(t *testing.T) {
	_, promtool := needPrometheus(t)
	root, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "rules_test.yaml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = filepath.Join(root, "deploy", "prometheus")
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "SUCCESS") {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestServeScrapedByPrometheus runs `kubectl doctor serve` on the scenarios
// control plane and a real Prometheus scraping it: a PromQL query through
// Prometheus's HTTP API returns the findings' series, the same as /report.
func TestServeScrapedByPrometheus(t *testing.T) {
	needCluster(t)
	prom, _ := needPrometheus(t)
	servePort, promPort := freePort(t), freePort(t)

	cmd := exec.Command(doctorBin, "serve", "--listen", fmt.Sprintf("127.0.0.1:%d", servePort), "--interval", "3s")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+scenarios.Kubeconfig, "NO_COLOR=1", "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logMu sync.Mutex
	var log []string
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logMu.Lock()
			log = append(log, sc.Text())
			logMu.Unlock()
		}
	}()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", servePort)
	waitFor(t, "/readyz", 2*time.Minute, func() bool { code, _, _ := httpGet(base + "/readyz"); return code == 200 })
	if code, _, _ := httpGet(base + "/healthz"); code != 200 {
		t.Errorf("/healthz %d", code)
	}
	_, body, err := httpGet(base + "/report")
	if err != nil {
		t.Fatal(err)
	}
	rep := decodeReport(t, body)
	if len(rep.Findings) == 0 || !rep.Complete {
		t.Fatalf("/report: %d findings, complete %v", len(rep.Findings), rep.Complete)
	}
	want := map[string]bool{}
	for _, f := range rep.Findings {
		want[f.Check+"|"+f.Object.Namespace+"|"+f.Object.Kind+"|"+f.Object.Name+"|"+f.Cause] = true
	}

	dir := t.TempDir()
	promCfg := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: kubectl-doctor\n    static_configs:\n      - targets: ['127.0.0.1:%d']\n", servePort)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(promCfg), 0o600); err != nil {
		t.Fatal(err)
	}
	pcmd := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", promPort))
	plog, _ := os.Create(filepath.Join(dir, "prometheus.log"))
	pcmd.Stdout, pcmd.Stderr = plog, plog
	if err := pcmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pcmd.Process.Signal(syscall.SIGTERM); _ = pcmd.Wait() })
	papi := fmt.Sprintf("http://127.0.0.1:%d", promPort)
	query := func(q string) []map[string]string {
		_, body, err := httpGet(papi + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return nil
		}
		var res struct {
			Status string `json:"status"`
			Data   struct {
				Result []struct {
					Metric map[string]string `json:"metric"`
					Value  []any             `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(body), &res) != nil || res.Status != "success" {
			return nil
		}
		var out []map[string]string
		for _, r := range res.Data.Result {
			m := r.Metric
			m["__value__"] = fmt.Sprint(r.Value[1])
			out = append(out, m)
		}
		return out
	}
	var series []map[string]string
	waitFor(t, "Prometheus to scrape the findings", 90*time.Second, func() bool {
		series = query("kubectl_doctor_finding")
		return len(series) > 0
	})
	got := map[string]bool{}
	for _, s := range series {
		got[s["check"]+"|"+s["namespace"]+"|"+s["kind"]+"|"+s["name"]+"|"+s["cause"]] = true
		if s["job"] != "kubectl-doctor" {
			t.Errorf("series not from the scrape: %v", s)
		}
	}
	for k := range want {
		if !got[k] {
			t.Errorf("/report finding %s has no series in Prometheus", k)
		}
	}
	if len(got) != len(want) {
		t.Errorf("Prometheus has %d finding series, /report %d findings", len(got), len(want))
	}
	for _, q := range []string{`kubectl_doctor_last_scan_complete == 1`, `kubectl_doctor_report_stale == 0`, `kubectl_doctor_last_scan_apiserver_requests > 0`,
		`kubectl_doctor_scan_duration_seconds_count > 0`, `kubectl_doctor_check_status{status="failed"}`, `go_goroutines{job="kubectl-doctor"}`, `process_resident_memory_bytes{job="kubectl-doctor"}`} {
		if len(query(q)) == 0 {
			t.Errorf("PromQL %s: no result", q)
		}
	}

	// The apiserver load of a scan, from the log: for docs/fleet.md.
	logMu.Lock()
	re := regexp.MustCompile(`complete scan, .*; (\d+) API requests \((\d+) errors\), ([0-9.]+ [KMG]?i?B) received, (\S+)`)
	var costs []string
	for _, l := range log {
		if m := re.FindStringSubmatch(l); m != nil {
			costs = append(costs, m[0])
		}
	}
	logMu.Unlock()
	if len(costs) == 0 {
		t.Errorf("no scan line in the log")
	} else {
		t.Logf("serve's scans of the scenarios cluster: %s", costs[len(costs)-1])
		if n, _ := strconv.Atoi(re.FindStringSubmatch(costs[0])[1]); n == 0 {
			t.Errorf("no API request counted")
		}
	}

	// SIGTERM: a graceful stop, exit 0.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { <-logDone; done <- cmd.Wait() }()
	select {
	case err := <-done:
		stopped = true
		if err != nil {
			t.Errorf("serve exit after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop within 30s of SIGTERM")
	}
	logMu.Lock()
	defer logMu.Unlock()
	if last := log[len(log)-1]; last != "kubectl doctor: stopped" {
		t.Errorf("last log line %q", last)
	}
}
