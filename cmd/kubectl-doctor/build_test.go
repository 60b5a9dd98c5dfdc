package main_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// buildTags are the tags every build of kubectl-doctor uses: the Makefile,
// the release (.goreleaser.yaml) and these tests. Without
// kustomize_disable_go_plugin_support, cli-runtime's kustomize support
// imports Go's plugin package and the linker then exports every symbol and
// keeps every exported method: a third more binary, twice the resident
// memory before the first request.
const buildTags = "kustomize_disable_go_plugin_support"

func TestBuildsWithoutGoPlugins(t *testing.T) {
	for file, want := range map[string]string{
		"../../Makefile":         "TAGS    := " + buildTags,
		"../../.goreleaser.yaml": "-tags=" + buildTags,
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s does not build with %q", file, want)
		}
	}
	out, err := exec.Command("go", "list", "-deps", "-tags="+buildTags, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if slices.Contains(deps, "plugin") {
		t.Errorf("with -tags=%s the binary still imports the plugin package", buildTags)
	}
	if !slices.Contains(deps, "k8s.io/cli-runtime/pkg/genericclioptions") {
		t.Errorf("go list -deps does not list cli-runtime: %d packages", len(deps))
	}
}
