// Command cluster runs kubectl-doctor's local control plane for the demo:
//
//	go run ./hack/cluster build              # build etcd/kube-apiserver/kube-controller-manager into the cache
//	go run ./hack/cluster up [SCENARIO_DIR]  # start it detached, load scenarios, print KUBECONFIG
//	go run ./hack/cluster down               # stop it and remove its state
//
// State lives in $KUBECTL_DOCTOR_DEMO_DIR (default $TMPDIR/kubectl-doctor-demo).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/localcluster"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func demoDir() string {
	if d := os.Getenv("KUBECTL_DOCTOR_DEMO_DIR"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "kubectl-doctor-demo")
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: cluster build|up [SCENARIO_DIR]|down")
	}
	root, err := localcluster.RepoRoot()
	if err != nil {
		return err
	}
	dir := demoDir()
	switch args[0] {
	case "build":
		_, err := localcluster.Build(ctx, root, os.Stderr)
		return err
	case "down":
		err := localcluster.StopDir(dir) // waits for the processes to exit
		if rmErr := os.RemoveAll(dir); rmErr != nil {
			return rmErr
		}
		if err == nil {
			fmt.Fprintln(os.Stderr, "stopped the local control plane in", dir)
		}
		return nil
	case "up":
		scenarios := filepath.Join(root, "testdata", "scenarios")
		if len(args) > 1 {
			scenarios = args[1]
		}
		bins, err := localcluster.Build(ctx, root, os.Stderr)
		if err != nil {
			return err
		}
		_ = localcluster.StopDir(dir)
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		c, err := localcluster.Start(ctx, bins, localcluster.Options{Dir: dir, Detach: true, Log: os.Stderr})
		if err != nil {
			return err
		}
		if err := c.StartControllerManager(localcluster.ScenarioControllers...); err != nil {
			return err
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
		if err != nil {
			return err
		}
		dirs, _ := filepath.Glob(filepath.Join(scenarios, "*"))
		var scenarioDirs []string
		for _, d := range dirs {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				scenarioDirs = append(scenarioDirs, d)
			}
		}
		if err := localcluster.InstallGatewayAPI(ctx, cfg, root, os.Stderr); err != nil {
			return err
		}
		if err := localcluster.LoadScenarios(ctx, cfg, scenarioDirs, os.Stderr); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "local control plane %s is up at %s\n", localcluster.KubernetesVersion, c.URL)
		fmt.Println(c.Kubeconfig)
		return nil
	}
	return fmt.Errorf("unknown command %q (want build, up or down)", args[0])
}
