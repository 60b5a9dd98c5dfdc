package localcluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// GatewayAPICRDs are the Gateway API kinds the checks read, from the
// standard channel of the sigs.k8s.io/gateway-api module kubectl-doctor
// builds with.
var GatewayAPICRDs = []string{"gatewayclasses", "gateways", "httproutes", "grpcroutes", "referencegrants"}

// InstallGatewayAPI applies the Gateway API CRDs of the module in the Go
// module cache (the version go.mod requires, fetched through the module
// proxy; nothing is copied into the repository) and waits until the API
// server serves them, so that scenarios can create Gateways and routes.
func InstallGatewayAPI(ctx context.Context, cfg *rest.Config, root string, log io.Writer) error {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("locating sigs.k8s.io/gateway-api in the module cache: %w", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
	// LoadScenarios applies every *.yaml of a directory: stage the CRDs
	// the checks read (not the admission policy the directory also holds).
	dir, err := os.MkdirTemp("", "gateway-api-crds-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, name := range GatewayAPICRDs {
		b, err := os.ReadFile(filepath.Join(src, "gateway.networking.k8s.io_"+name+".yaml"))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), b, 0o600); err != nil {
			return err
		}
	}
	if err := LoadScenarios(ctx, cfg, []string{dir}, log); err != nil {
		return fmt.Errorf("applying the Gateway API CRDs: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		rl, err := dc.ServerResourcesForGroupVersion("gateway.networking.k8s.io/v1")
		if err != nil {
			return false, nil // not yet established
		}
		var served []string
		for _, r := range rl.APIResources {
			served = append(served, r.Name)
		}
		for _, name := range GatewayAPICRDs {
			if !slices.Contains(served, name) {
				return false, nil
			}
		}
		return true, nil
	})
}
