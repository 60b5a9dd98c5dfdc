package main_test

import (
	"regexp"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// The External Secrets Operator's three kinds (external-secrets.io/v1) as
// CRDs that keep every field, scoped like the real ones.
var esoCRDs = testCRD("external-secrets.io", "v1", "ExternalSecret", "externalsecrets", "Namespaced") + "---\n" +
	testCRD("external-secrets.io", "v1", "SecretStore", "secretstores", "Namespaced") + "---\n" +
	testCRD("external-secrets.io", "v1", "ClusterSecretStore", "clustersecretstores", "Cluster")

// A ClusterSecretStore whose role lost its permission holds back an
// ExternalSecret; another names a SecretStore nobody created; a synced one
// is quiet. In namespace default, so deleting the CRDs removes every trace.
const esoObjects = `apiVersion: external-secrets.io/v1
kind: ClusterSecretStore
metadata: {name: e2e-aws}
status:
  conditions:
  - {type: Ready, status: "False", reason: InvalidProviderConfig, message: 'unable to validate store: AccessDeniedException: not authorized to perform: secretsmanager:ListSecrets', lastTransitionTime: "${NOW-2h}"}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: e2e-db, namespace: default}
spec:
  secretStoreRef: {name: e2e-aws, kind: ClusterSecretStore}
status:
  refreshTime: "${NOW-3h}"
  conditions:
  - {type: Ready, status: "False", reason: SecretSyncedError, message: could not get secret data from provider, lastTransitionTime: "${NOW-2h}"}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: e2e-lost, namespace: default}
spec:
  secretStoreRef: {name: e2e-nowhere}
status:
  conditions:
  - {type: Ready, status: "False", reason: SecretSyncedError, message: 'could not get SecretStore "e2e-nowhere"', lastTransitionTime: "${NOW-1h}"}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: e2e-synced, namespace: default}
spec:
  secretStoreRef: {name: e2e-aws, kind: ClusterSecretStore}
status:
  refreshTime: "${NOW-5m}"
  conditions:
  - {type: Ready, status: "True", reason: SecretSynced, lastTransitionTime: "${NOW-3h}"}
`

// TestExternalSecretsLive: where the API server serves external-secrets.io,
// the live scan reads ExternalSecrets and both kinds of store, reports the
// store that holds an ExternalSecret back (folding it in) and the one that
// names a missing store, and says the same from a dump; elsewhere the
// check passes.
func TestExternalSecretsLive(t *testing.T) {
	needCluster(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", scenarios.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	before := decodeReport(t, runDoctor(t, scenarios.Kubeconfig, "--check", "external-secrets", "-o", "json", "--fail-on", "never").stdout)
	if c := checkResult(before, "external-secrets"); c.Status != doctor.StatusPassed || c.Coverage != doctor.CoverageFull {
		t.Fatalf("external-secrets on a cluster without ESO: %+v", c)
	}
	serveExtension(t, cfg, "external-secrets.io/v1", map[string]string{"ExternalSecret": "externalsecrets", "SecretStore": "secretstores", "ClusterSecretStore": "clustersecretstores"}, esoCRDs, esoObjects)

	rep := decodeReport(t, runDoctor(t, scenarios.Kubeconfig, "--check", "external-secrets", "-o", "json", "--fail-on", "never").stdout)
	if c := checkResult(rep, "external-secrets"); c.Status != doctor.StatusFailed || c.Coverage != doctor.CoverageFull {
		t.Errorf("external-secrets with ESO: %+v", c)
	}
	want := map[string]string{
		"ClusterSecretStore//e2e-aws":     `^clustersecretstore e2e-aws cannot reach its provider for 120m \(InvalidProviderConfig\): "unable to validate store: AccessDeniedException: not authorized to perform: secretsmanager:ListSecrets": 1 externalsecret is no longer synced \(default/e2e-db\)$`,
		"ExternalSecret/default/e2e-lost": `^externalsecret e2e-lost \(secret e2e-lost\) fails to sync for 60m \(SecretSyncedError\): "could not get SecretStore \\"e2e-nowhere\\""; its SecretStore e2e-nowhere does not exist; the Secret has never been written, so pods that use it do not start$`,
	}
	if len(rep.Findings) != len(want) {
		t.Fatalf("%d findings, want %d: %+v", len(rep.Findings), len(want), rep.Findings)
	}
	for _, f := range rep.Findings {
		k := f.Object.Kind + "/" + f.Object.Namespace + "/" + f.Object.Name
		if re, ok := want[k]; !ok || f.Severity != doctor.Warning || !regexp.MustCompile(re).MatchString(f.Message) {
			t.Errorf("%s: %s %q\nwant warning: %s", k, f.Severity, f.Message, want[k])
		}
	}
	sameFromDump(t, "external-secrets", rep)
}
