package main_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/localcluster"
)

// The end-to-end tests run the built kubectl-doctor binary: against a real
// kube-apiserver + etcd (and kube-controller-manager where controllers make
// the scenario), and against broken inputs that need no cluster at all.
var (
	doctorBin string
	// healthy holds testdata/e2e/healthy; scenarios holds testdata/scenarios
	// loaded by the real controllers. Nil under -short.
	healthy, scenarios *localcluster.Cluster
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	tmp, err := os.MkdirTemp("", "doctor-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	doctorBin = filepath.Join(tmp, "kubectl-doctor")
	build := exec.Command("go", "build", "-tags="+buildTags, "-ldflags=-X github.com/kubectl-doctor/kubectl-doctor/pkg/cmd.version=v0.0.0-e2e", "-o", doctorBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building kubectl-doctor:", err)
		return 1
	}
	if !testing.Short() {
		stop, err := startClusters(tmp)
		defer stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			return 1
		}
	}
	return m.Run()
}

func startClusters(tmp string) (func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	var stops []func()
	stop := func() {
		for _, s := range stops {
			s()
		}
	}
	root, err := localcluster.RepoRoot()
	if err != nil {
		return stop, err
	}
	bins, err := localcluster.Build(ctx, root, os.Stderr)
	if err != nil {
		return stop, err
	}
	healthy, err = localcluster.Start(ctx, bins, localcluster.Options{Dir: filepath.Join(tmp, "healthy")})
	if err != nil {
		return stop, err
	}
	stops = append(stops, healthy.Stop)
	if err := healthy.StartControllerManager(localcluster.ScenarioControllers...); err != nil {
		return stop, err
	}
	if err := load(ctx, healthy, filepath.Join(root, "testdata", "e2e", "healthy")); err != nil {
		return stop, err
	}
	scenarios, err = localcluster.Start(ctx, bins, localcluster.Options{Dir: filepath.Join(tmp, "scenarios")})
	if err != nil {
		return stop, err
	}
	stops = append(stops, scenarios.Stop)
	if err := scenarios.StartControllerManager(localcluster.ScenarioControllers...); err != nil {
		return stop, err
	}
	// The scenarios cluster serves the Gateway API (the healthy one does
	// not: an API that is not served is no error).
	if err := installGatewayAPI(ctx, scenarios, root); err != nil {
		return stop, err
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "testdata", "scenarios", "*", "01-*.yaml"))
	for i := range dirs {
		dirs[i] = filepath.Dir(dirs[i])
	}
	return stop, load(ctx, scenarios, dirs...)
}

func installGatewayAPI(ctx context.Context, c *localcluster.Cluster, root string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return err
	}
	var log bytes.Buffer
	if err := localcluster.InstallGatewayAPI(ctx, cfg, root, &log); err != nil {
		return fmt.Errorf("%w\n%s", err, log.String())
	}
	return nil
}

func load(ctx context.Context, c *localcluster.Cluster, dirs ...string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return err
	}
	var log bytes.Buffer
	if err := localcluster.LoadScenarios(ctx, cfg, dirs, &log); err != nil {
		return fmt.Errorf("%w\n%s", err, log.String())
	}
	return nil
}

func needCluster(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the local control plane (run without -short)")
	}
}

type result struct {
	stdout, stderr string
	code           int
	elapsed        time.Duration
}

// runDoctor runs the binary with KUBECONFIG=kubeconfig (empty: none at all).
func runDoctor(t *testing.T, kubeconfig string, args ...string) result {
	t.Helper()
	cmd := exec.Command(doctorBin, args...)
	// A fresh HOME and XDG_CONFIG_HOME: no user config file is read.
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "NO_COLOR=1", "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errOut.String(), elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running kubectl-doctor: %v", err)
	}
	if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic:") {
		t.Fatalf("stack trace on stderr:\n%s", r.stderr)
	}
	return r
}

// oneErrorLine asserts the documented failure shape: exit 2, one line on
// stderr starting "error: ", containing want.
func oneErrorLine(t *testing.T, r result, want string) {
	t.Helper()
	if r.code != 2 {
		t.Errorf("exit code %d, want 2 (stdout %q, stderr %q)", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "error: ") || !strings.Contains(lines[0], want) {
		t.Errorf("stderr should be one line \"error: ...%s...\", got:\n%s", want, r.stderr)
	}
}
