package main_test

import (
	"regexp"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// Argo CD's Application and Flux's Kustomization as CRDs that keep every
// field, namespaced like the real ones.
var argoCRD = testCRD("argoproj.io", "v1alpha1", "Application", "applications", "Namespaced")

var fluxCRD = testCRD("kustomize.toolkit.fluxcd.io", "v1", "Kustomization", "kustomizations", "Namespaced")

// An Application whose manifests do not render for two hours and one that
// is healthy; a Kustomization whose build fails and one that waits for it.
// In namespace default, so deleting the CRDs removes every trace.
const argoObjects = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: e2e-shop, namespace: default}
spec:
  destination: {server: https://kubernetes.default.svc, namespace: shop}
status:
  sync: {status: Unknown}
  health: {status: Healthy}
  conditions:
  - {type: ComparisonError, message: 'Failed to load target state: repository not found', lastTransitionTime: "${NOW-2h}"}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: e2e-healthy, namespace: default}
spec:
  destination: {server: https://kubernetes.default.svc, namespace: healthy}
status:
  sync: {status: Synced}
  health: {status: Healthy}
`

const fluxObjects = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: e2e-infra, namespace: default}
spec: {interval: 10m, path: ./infra}
status:
  lastAppliedRevision: main@sha1:aaa
  lastAttemptedRevision: main@sha1:bbb
  conditions:
  - {type: Ready, status: "False", reason: BuildFailed, message: 'kustomize build failed: missing resource', lastTransitionTime: "${NOW-1h}"}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: e2e-apps, namespace: default}
spec: {interval: 10m, path: ./apps}
status:
  conditions:
  - {type: Ready, status: "False", reason: DependencyNotReady, message: "dependency 'default/e2e-infra' is not ready", lastTransitionTime: "${NOW-1h}"}
`

// TestGitOpsLive: where the API server serves Argo CD's and Flux's kinds,
// the live scan reads them and reports the Application that cannot render
// and the Kustomization whose build fails, with the one waiting for it
// folded in; a dump says the same. Elsewhere the check passes.
func TestGitOpsLive(t *testing.T) {
	needCluster(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", scenarios.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	before := decodeReport(t, runDoctor(t, scenarios.Kubeconfig, "--check", "gitops-sync", "-o", "json", "--fail-on", "never").stdout)
	if c := checkResult(before, "gitops-sync"); c.Status != doctor.StatusPassed || c.Coverage != doctor.CoverageFull {
		t.Fatalf("gitops-sync on a cluster without Argo CD or Flux: %+v", c)
	}
	serveExtension(t, cfg, "argoproj.io/v1alpha1", map[string]string{"Application": "applications"}, argoCRD, argoObjects)
	serveExtension(t, cfg, "kustomize.toolkit.fluxcd.io/v1", map[string]string{"Kustomization": "kustomizations"}, fluxCRD, fluxObjects)

	rep := decodeReport(t, runDoctor(t, scenarios.Kubeconfig, "--check", "gitops-sync", "-o", "json", "--fail-on", "never").stdout)
	if c := checkResult(rep, "gitops-sync"); c.Status != doctor.StatusFailed || c.Coverage != doctor.CoverageFull {
		t.Errorf("gitops-sync with Argo CD and Flux: %+v", c)
	}
	want := []struct{ object, re string }{
		{"Application/default/e2e-shop", `^application e2e-shop cannot render or compare its manifests \(ComparisonError\) for 120m: "Failed to load target state: repository not found"$`},
		{"Kustomization/default/e2e-infra", `^kustomization e2e-infra is not ready for 60m \(BuildFailed\): "kustomize build failed: missing resource"; the cluster still runs revision main@sha1:aaa, not main@sha1:bbb; 1 kustomization waits for it: default/e2e-apps$`},
	}
	if len(rep.Findings) != len(want) {
		t.Fatalf("%d findings, want %d: %+v", len(rep.Findings), len(want), rep.Findings)
	}
	got := map[string]doctor.Finding{}
	for _, f := range rep.Findings {
		got[f.Object.Kind+"/"+f.Object.Namespace+"/"+f.Object.Name] = f
	}
	for _, w := range want {
		f, ok := got[w.object]
		if !ok || f.Severity != doctor.Warning || !regexp.MustCompile(w.re).MatchString(f.Message) {
			t.Errorf("%s: %s %q\nwant warning: %s", w.object, f.Severity, f.Message, w.re)
		}
	}
	sameFromDump(t, "gitops-sync", rep)
}
