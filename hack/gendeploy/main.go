// Command gendeploy writes deploy/base/clusterrole.yaml from the reads the checks
// declare (make deploy, and make docs).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/rbac"
)

func main() {
	out := filepath.Join("deploy", "base", "clusterrole.yaml")
	if len(os.Args) > 1 {
		out = os.Args[1]
	}
	body, err := rbac.ClusterRoleYAML(checks.All())
	if err == nil {
		err = os.WriteFile(out, body, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gendeploy:", err)
		os.Exit(1)
	}
}
