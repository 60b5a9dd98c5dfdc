package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// saDir is where client-go's in-cluster config reads the pod's
// ServiceAccount token and CA (rest.InClusterConfig).
const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

const shippedSA = "system:serviceaccount:kubectl-doctor:kubectl-doctor"

// inPod runs the binary as it runs in the shipped Deployment's pod: no
// kubeconfig at all, KUBERNETES_SERVICE_HOST/PORT set, and the
// ServiceAccount's token, ca.crt and namespace at saDir — in a private
// mount namespace whose tmpfs holds them, so nothing is written to the
// host's /var/run. As root that needs only unshare(1); otherwise an
// unprivileged user namespace maps the caller to root in it. When neither
// is permitted the test fails with the reason: skipping would leave the
// in-cluster path untested without anyone noticing.
func inPod(t *testing.T, apiURL, tokenDir string, args ...string) *exec.Cmd {
	t.Helper()
	u, err := url.Parse(apiURL)
	if err != nil {
		t.Fatal(err)
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Fatalf("the in-cluster test needs unshare(1) (util-linux) to give the binary a private %s: %v", saDir, err)
	}
	flags := []string{"--mount", "--propagation", "private"}
	if os.Geteuid() != 0 {
		flags = append([]string{"--user", "--map-root-user"}, flags...)
	}
	if out, err := exec.Command(unshare, append(flags, "true")...).CombinedOutput(); err != nil {
		t.Fatalf("the in-cluster test needs a private mount namespace (unshare %s: %v: %s); run it as root or enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0)",
			strings.Join(flags, " "), err, strings.TrimSpace(string(out)))
	}
	// Mount over the nearest directory that exists: /var/run/secrets in a
	// pod-like host, else /var/run itself (usually a symlink to /run); only
	// this process and its children see the tmpfs.
	script := `set -e
if [ -d /var/run/secrets ]; then m=/var/run/secrets; else m=/var/run; fi
mount -t tmpfs -o mode=0755,size=1m doctor-sa "$m"
mkdir -p ` + saDir + `
cp "$SA_SRC/token" "$SA_SRC/ca.crt" "$SA_SRC/namespace" ` + saDir + `/
exec "$@"`
	cmd := exec.Command(unshare, append(append(flags, "sh", "-c", script, "sh", doctorBin), args...)...)
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "KUBECONFIG" || strings.HasPrefix(k, "KUBERNETES_") {
			continue
		}
		env = append(env, kv)
	}
	// A fresh HOME: no ~/.kube/config either.
	cmd.Env = append(env, "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(), "NO_COLOR=1", "SA_SRC="+tokenDir,
		"KUBERNETES_SERVICE_HOST="+u.Hostname(), "KUBERNETES_SERVICE_PORT="+u.Port())
	return cmd
}

// auditUsers counts, in the audit log written after offset, the requests of
// kubectl-doctor by the user who sent them.
func auditUsers(t *testing.T, path string, offset int64) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	users := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e struct {
			Stage, UserAgent string
			User             struct{ Username string }
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Stage == "ResponseComplete" && strings.HasPrefix(e.UserAgent, "kubectl-doctor/") {
			users[e.User.Username]++
		}
	}
	return users
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func findingPrints(r doctor.Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Fingerprint+" "+f.Check+" "+f.Object.String())
	}
	sort.Strings(out)
	return out
}

// TestInClusterAsServiceAccount creates the shipped Namespace,
// ServiceAccount and RBAC on the scenarios control plane, gets the
// ServiceAccount a token through the TokenRequest API, and runs the binary
// the way the Deployment's pod does (in-cluster config, no kubeconfig): the
// one-shot scan runs every check as the ServiceAccount and finds what the
// admin finds, and `serve` becomes ready and serves the same findings.
func TestInClusterAsServiceAccount(t *testing.T) {
	needCluster(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", scenarios.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kube := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	admin := decodeReport(t, runDoctor(t, scenarios.Kubeconfig, "-o", "json", "--fail-on", "never").stdout)
	if len(admin.Findings) == 0 {
		t.Fatal("the admin scan of the scenarios cluster finds nothing: the comparison would be vacuous")
	}

	// The shipped Namespace, ServiceAccount, ClusterRole and binding, as
	// deploy/ renders them. Not the Deployment: no kubelet runs it here.
	var objs []string
	for _, doc := range strings.Split(string(render(t, "deploy")), "\n---\n") {
		if regexp.MustCompile(`(?m)^kind: (Namespace|ServiceAccount|ClusterRole|ClusterRoleBinding)$`).MatchString(doc) {
			objs = append(objs, doc)
		}
	}
	if len(objs) != 4 {
		t.Fatalf("%d objects rendered, want the Namespace, ServiceAccount, ClusterRole and ClusterRoleBinding", len(objs))
	}
	// The namespace stays: on this cluster an unavailable APIService blocks
	// namespace deletion (a scenario), and a namespace stuck terminating
	// would be a finding for the tests that follow. An empty one is none
	// (asserted at the end).
	cleanup := func() {
		_ = kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), "kubectl-doctor", metav1.DeleteOptions{})
		_ = kube.RbacV1().ClusterRoles().Delete(context.Background(), "kubectl-doctor", metav1.DeleteOptions{})
		_ = kube.CoreV1().ServiceAccounts("kubectl-doctor").Delete(context.Background(), "kubectl-doctor", metav1.DeleteOptions{})
	}
	t.Cleanup(cleanup)
	applyRendered(t, scenarios, []byte(strings.Join(objs, "\n---\n")))

	tr, err := kube.CoreV1().ServiceAccounts("kubectl-doctor").CreateToken(ctx, "kubectl-doctor",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for the shipped ServiceAccount: %v", err)
	}
	ca, err := os.ReadFile(scenarios.CAFile())
	if err != nil {
		t.Fatal(err)
	}
	tokenDir := t.TempDir()
	for name, body := range map[string][]byte{"token": []byte(tr.Status.Token), "ca.crt": ca, "namespace": []byte("kubectl-doctor")} {
		if err := os.WriteFile(filepath.Join(tokenDir, name), body, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// The one-shot scan.
	offset := fileSize(scenarios.AuditLog())
	cmd := inPod(t, scenarios.URL, tokenDir, "-o", "json", "--fail-on", "never")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("in-cluster scan: %v\n%s", err, errOut.String())
	}
	sa := decodeReport(t, out.String())
	if !sa.Complete {
		t.Errorf("the in-cluster scan is incomplete:\n%s", errOut.String())
	}
	for _, c := range sa.Checks {
		if c.Status == doctor.StatusSkipped || c.Status == doctor.StatusError {
			t.Errorf("check %s %s in-cluster: %s", c.Name, c.Status, c.Reason)
		}
	}
	if a, s := findingPrints(admin), findingPrints(sa); strings.Join(a, "\n") != strings.Join(s, "\n") {
		t.Errorf("in-cluster as the ServiceAccount the scan finds\n%s\nthe admin finds\n%s", strings.Join(s, "\n"), strings.Join(a, "\n"))
	}
	time.Sleep(500 * time.Millisecond) // the audit backend writes in blocking mode; be safe
	users := auditUsers(t, scenarios.AuditLog(), offset)
	if users[shippedSA] == 0 || len(users) != 1 {
		t.Errorf("the API server saw kubectl-doctor's requests from %v, want only %s", users, shippedSA)
	}

	// serve, the Deployment's command.
	port := freePort(t)
	offset = fileSize(scenarios.AuditLog())
	srv := inPod(t, scenarios.URL, tokenDir, "serve", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--interval", "1h")
	var srvLog lockedLog
	srv.Stdout, srv.Stderr = &srvLog, &srvLog
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	stopped := false
	stopServe := func() {
		if stopped {
			return
		}
		stopped = true
		_ = srv.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("serve did not exit cleanly on SIGTERM: %v\n%s", err, srvLog.String())
			}
		case <-time.After(30 * time.Second):
			_ = srv.Process.Kill()
			t.Errorf("serve still running 30s after SIGTERM\n%s", srvLog.String())
		}
	}
	defer stopServe()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if code, _, _ := httpGet(base + "/readyz"); code == 200 {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("serve exited before it was ready: %v\n%s", err, srvLog.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve not ready after 2m\n%s", srvLog.String())
		}
		time.Sleep(250 * time.Millisecond)
	}
	code, body, err := httpGet(base + "/report")
	if err != nil || code != 200 {
		t.Fatalf("/report: %d %v", code, err)
	}
	served := decodeReport(t, body)
	if a, s := findingPrints(admin), findingPrints(served); strings.Join(a, "\n") != strings.Join(s, "\n") {
		t.Errorf("serve in-cluster reports\n%s\nthe admin finds\n%s", strings.Join(s, "\n"), strings.Join(a, "\n"))
	}
	for _, c := range served.Checks {
		if c.Status == doctor.StatusSkipped || c.Status == doctor.StatusError {
			t.Errorf("check %s %s in serve: %s", c.Name, c.Status, c.Reason)
		}
	}
	_, metrics, _ := httpGet(base + "/metrics")
	if !strings.Contains(metrics, `kubectl_doctor_last_scan_complete{cluster=""} 1`) {
		t.Errorf("serve's metrics do not say the in-cluster scan was complete:\n%s", grepLines(metrics, "kubectl_doctor_last_scan"))
	}
	time.Sleep(500 * time.Millisecond)
	if users := auditUsers(t, scenarios.AuditLog(), offset); users[shippedSA] == 0 || len(users) != 1 {
		t.Errorf("serve's requests came from %v, want only %s", users, shippedSA)
	}

	stopServe()
	t.Logf("serve in-cluster: %s", grepLines(srvLog.String(), "API requests"))

	// What stays behind (the empty namespace) changes nothing for the
	// admin scan, so the tests that follow see the cluster as before.
	cleanup()
	after := decodeReport(t, runDoctor(t, scenarios.Kubeconfig, "-o", "json", "--fail-on", "never").stdout)
	if a, b := findingPrints(admin), findingPrints(after); strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("the namespace left behind changed the admin's findings:\nbefore\n%s\nafter\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
}

type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
