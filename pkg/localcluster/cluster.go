package localcluster

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Options configure a control plane.
type Options struct {
	// Dir holds certificates, etcd data, kubeconfigs and logs. Required.
	Dir string
	// Detach starts the processes in their own session so they outlive the
	// caller (the demo); otherwise they die with it.
	Detach bool
	// Log receives progress lines; process output goes to Dir/*.log.
	Log io.Writer
}

// Cluster is a running control plane.
type Cluster struct {
	Dir        string
	URL        string // https://127.0.0.1:PORT
	Kubeconfig string // admin (system:masters)
	bins       Binaries
	opts       Options
	procs      []*proc
}

// proc is a started child and a channel closed when it has exited.
type proc struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
}

// Users in the static token file: an admin, and a user with no RBAC
// bindings at all (to prove that forbidden resources only skip checks).
const (
	AdminUser  = "admin"
	NobodyUser = "nobody"
)

// Start runs etcd and kube-apiserver on loopback and waits until the API
// server is ready.
func Start(ctx context.Context, bins Binaries, opts Options) (*Cluster, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	c := &Cluster{Dir: opts.Dir, bins: bins, opts: opts}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	if err := c.spawn("etcd", bins.Etcd,
		"--name=doctor", "--data-dir="+c.path("etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=doctor="+peerURL,
		"--unsafe-no-fsync", "--log-level=warn", "--quota-backend-bytes=8589934592",
	); err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.writeFiles(); err != nil {
		c.Stop()
		return nil, err
	}
	c.URL = fmt.Sprintf("https://127.0.0.1:%d", ports[2])
	if err := c.spawn("kube-apiserver", bins.APIServer,
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port="+strconv.Itoa(ports[2]),
		"--cert-dir="+c.path("pki"),
		// Endpoint reconciliation would publish 127.0.0.1 as the kubernetes
		// Service endpoint, which the API server refuses for loopback.
		"--endpoint-reconciler-type=none",
		// The guard: "cluster" egress (webhooks, aggregated APIs, pod and
		// node proxying) goes to a unix socket that does not exist.
		"--egress-selector-config-file="+c.path("egress.yaml"),
		"--token-auth-file="+c.path("tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+c.path("sa.key"),
		"--service-account-signing-key-file="+c.path("sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
		"--audit-policy-file="+c.path("audit-policy.yaml"),
		"--audit-log-path="+c.AuditLog(),
		"--audit-log-mode=blocking",
		// TaintNodesByCondition taints every new node not-ready until the
		// node lifecycle controller sees its kubelet: there is neither here,
		// so scenarios write the taints they mean themselves.
		"--disable-admission-plugins=TaintNodesByCondition",
		"--profiling=false",
		"--allow-privileged=true",
	); err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.waitReady(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// AuditLog is the API server's audit log: every request at Metadata level,
// which is how tests count what kubectl-doctor really sent.
func (c *Cluster) AuditLog() string { return c.path("audit.log") }

// CAFile is the PEM file that verifies the API server's serving certificate.
func (c *Cluster) CAFile() string { return c.path(filepath.Join("pki", "apiserver.crt")) }

// KubeconfigFor writes (once) and returns a kubeconfig for a token user.
func (c *Cluster) KubeconfigFor(user string) string { return c.path(user + ".kubeconfig") }

// StartControllerManager runs kube-controller-manager with only the named
// controllers (API-made nodes have no kubelet, so e.g. the node lifecycle
// controller would taint and evict them).
func (c *Cluster) StartControllerManager(controllers ...string) error {
	return c.spawn("kube-controller-manager", c.bins.ControllerManager,
		"--kubeconfig="+c.Kubeconfig,
		"--controllers="+strings.Join(controllers, ","),
		"--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port=0",
		"--use-service-account-credentials=false",
		"--concurrent-deployment-syncs=5", "--concurrent-replicaset-syncs=5",
	)
}

// Stop kills the processes of this Cluster value (for a detached cluster
// started by another process, use StopDir).
func (c *Cluster) Stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		_ = os.Remove(c.path(p.name + ".pid"))
	}
	c.procs = nil
}

// StopDir stops a detached cluster from the pid files in dir.
func StopDir(dir string) error {
	pids, _ := filepath.Glob(filepath.Join(dir, "*.pid"))
	if len(pids) == 0 {
		return fmt.Errorf("no local control plane is running in %s", dir)
	}
	var alive []int
	for _, f := range pids {
		b, err := os.ReadFile(f)
		_ = os.Remove(f)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		// The pid may have been reused since: only signal a process that is
		// still the component the file names.
		name := strings.TrimSuffix(filepath.Base(f), ".pid")
		if err != nil || !isProcess(pid, name) {
			continue
		}
		if syscall.Kill(pid, syscall.SIGTERM) == nil {
			alive = append(alive, pid)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range alive {
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if syscall.Kill(pid, 0) == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return nil
}

// isProcess says whether pid runs the binary called name (Linux /proc).
func isProcess(pid int, name string) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	argv0, _, _ := strings.Cut(string(cmdline), "\x00")
	return filepath.Base(argv0) == name
}

func (c *Cluster) path(name string) string { return filepath.Join(c.Dir, name) }

func (c *Cluster) spawn(name, bin string, args ...string) error {
	logf, err := os.OpenFile(c.path(name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = c.Dir
	if c.opts.Detach {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait() // reaps the child; waitReady and Stop watch exited
		close(p.exited)
	}()
	c.procs = append(c.procs, p)
	fmt.Fprintf(c.opts.Log, "started %s (pid %d, log %s)\n", name, cmd.Process.Pid, c.path(name+".log"))
	return os.WriteFile(c.path(name+".pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
}

func (c *Cluster) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // readiness probe of our own loopback server
	}}
	token, _ := c.token(AdminUser)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return c.writeKubeconfigs()
			}
		}
		for _, p := range c.procs {
			select {
			case <-p.exited:
				return fmt.Errorf("%s exited during start-up: see %s", p.name, c.path(p.name+".log"))
			default:
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready after 90s: see %s", c.path("kube-apiserver.log"))
		case <-time.After(300 * time.Millisecond):
		}
	}
}

func (c *Cluster) writeFiles() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	var tokens strings.Builder
	for _, u := range []struct{ name, groups string }{{AdminUser, "system:masters"}, {NobodyUser, ""}} {
		tok := make([]byte, 16)
		if _, err := rand.Read(tok); err != nil {
			return err
		}
		fmt.Fprintf(&tokens, "%s,%s,%s-uid", hex.EncodeToString(tok), u.name, u.name)
		if u.groups != "" {
			fmt.Fprintf(&tokens, ",%q", u.groups)
		}
		tokens.WriteString("\n")
	}
	egress := `apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: ` + c.path("no-such-egress-proxy.sock") + `
`
	audit := `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`
	for name, body := range map[string][]byte{
		"sa.key":            keyPEM,
		"tokens.csv":        []byte(tokens.String()),
		"egress.yaml":       []byte(egress),
		"audit-policy.yaml": []byte(audit),
	} {
		if err := os.WriteFile(c.path(name), body, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) token(user string) (string, error) {
	b, err := os.ReadFile(c.path("tokens.csv"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ",")
		if len(f) >= 2 && f[1] == user {
			return f[0], nil
		}
	}
	return "", fmt.Errorf("no token for %s", user)
}

// writeKubeconfigs writes one kubeconfig per token user, trusting the API
// server's self-signed serving certificate.
func (c *Cluster) writeKubeconfigs() error {
	ca, err := os.ReadFile(c.CAFile())
	if err != nil {
		return fmt.Errorf("reading the serving certificate: %w", err)
	}
	for _, u := range []string{AdminUser, NobodyUser} {
		tok, err := c.token(u)
		if err != nil {
			return err
		}
		kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: doctor-local
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    token: %s
contexts:
- name: doctor-local
  context: {cluster: doctor-local, user: %s}
current-context: doctor-local
`, c.URL, b64(ca), u, tok, u)
		if err := os.WriteFile(c.KubeconfigFor(u), []byte(kc), 0o600); err != nil {
			return err
		}
	}
	c.Kubeconfig = c.KubeconfigFor(AdminUser)
	return nil
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func b64(b []byte) string {
	return base64.StdEncoding.EncodeToString(b)
}
