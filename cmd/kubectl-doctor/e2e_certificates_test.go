package main_test

import (
	"regexp"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// cert-manager's three kinds, served as CRDs that keep every field (as
// cert-manager's own CRDs do for status), namespaced like the real ones.
var certManagerCRDs = testCRD("cert-manager.io", "v1", "Certificate", "certificates", "Namespaced") + "---\n" +
	testCRD("cert-manager.io", "v1", "Issuer", "issuers", "Namespaced") + "---\n" +
	testCRD("cert-manager.io", "v1", "ClusterIssuer", "clusterissuers", "Cluster")

// An ACME ClusterIssuer that cannot register holds back a certificate that
// expires in three days; a certificate of a healthy CA issuer has expired;
// a certificate created a moment ago has no status yet (quiet). They live in
// namespace default, so deleting the CRDs removes every trace.
const certManagerObjects = `apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: e2e-acme}
spec:
  acme: {server: https://acme.invalid/directory}
status:
  conditions:
  - {type: Ready, status: "False", reason: ErrRegisterACMEAccount, message: 'Failed to register ACME account: Get "https://acme.invalid/directory": dial tcp: lookup acme.invalid: no such host', lastTransitionTime: "${NOW-2h}"}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: e2e-ca, namespace: default}
spec:
  ca: {secretName: e2e-ca-key-pair}
status:
  conditions:
  - {type: Ready, status: "True", reason: KeyPairVerified, lastTransitionTime: "${NOW-2h}"}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: e2e-shop-tls, namespace: default}
spec:
  secretName: e2e-shop-tls
  dnsNames: [shop.example.com]
  issuerRef: {name: e2e-acme, kind: ClusterIssuer, group: cert-manager.io}
status:
  notAfter: "${NOW+72h}"
  renewalTime: "${NOW-648h}"
  failedIssuanceAttempts: 3
  lastFailureTime: "${NOW-1h}"
  conditions:
  - {type: Ready, status: "True", reason: Ready, lastTransitionTime: "${NOW-2h}"}
  - {type: Issuing, status: "False", reason: Failed, message: 'The certificate request has failed to complete and will be retried: issuer e2e-acme is not ready', lastTransitionTime: "${NOW-1h}"}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: e2e-expired-tls, namespace: default}
spec:
  secretName: e2e-expired-tls
  issuerRef: {name: e2e-ca}
status:
  notAfter: "${NOW-24h}"
  conditions:
  - {type: Ready, status: "False", reason: Expired, message: Certificate has expired, lastTransitionTime: "${NOW-24h}"}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: e2e-fresh-tls, namespace: default}
spec:
  secretName: e2e-fresh-tls
  issuerRef: {name: e2e-ca}
`

// TestCertificatesLive: where the API server serves cert-manager.io, the
// live scan reads Certificates, Issuers and ClusterIssuers, folds the
// certificate an issuer holds back into that issuer's finding, reports the
// expired one with its dates, and says the same from a dump; where it does
// not (every other test), the check passes with nothing to judge.
func TestCertificatesLive(t *testing.T) {
	needCluster(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", scenarios.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	before := decodeReport(t, runDoctor(t, scenarios.Kubeconfig, "--check", "certificates", "-o", "json", "--fail-on", "never").stdout)
	if c := checkResult(before, "certificates"); c.Status != doctor.StatusPassed || c.Coverage != doctor.CoverageFull {
		t.Fatalf("certificates on a cluster without cert-manager: %+v", c)
	}

	serveExtension(t, cfg, "cert-manager.io/v1", map[string]string{"Certificate": "certificates", "Issuer": "issuers", "ClusterIssuer": "clusterissuers"}, certManagerCRDs, certManagerObjects)

	r := runDoctor(t, scenarios.Kubeconfig, "--check", "certificates", "-o", "json", "--fail-on", "critical")
	if r.code != 1 {
		t.Errorf("exit %d, want 1 (critical findings)\n%s", r.code, r.stderr)
	}
	rep := decodeReport(t, r.stdout)
	if c := checkResult(rep, "certificates"); c.Status != doctor.StatusFailed || c.Coverage != doctor.CoverageFull {
		t.Errorf("certificates with cert-manager: %+v", c)
	}
	want := []struct {
		sev    doctor.Severity
		object string
		re     string
	}{
		{doctor.Critical, "ClusterIssuer//e2e-acme", `^clusterissuer e2e-acme is not ready for 120m \(ErrRegisterACMEAccount\): "Failed to register ACME account: .*no such host": it holds back 1 certificate \(default/e2e-shop-tls\); default/e2e-shop-tls fails to renew: renewal was due 27d ago and the certificate expires in (71h|2d23h|3d)`},
		{doctor.Critical, "Certificate/default/e2e-expired-tls", `^certificate e2e-expired-tls \(secret e2e-expired-tls\) expired 24h ago \(notAfter \S+\) \(Expired\): "Certificate has expired"$`},
	}
	if len(rep.Findings) != len(want) {
		t.Fatalf("%d findings, want %d: %+v", len(rep.Findings), len(want), rep.Findings)
	}
	for i, w := range want {
		f := rep.Findings[i]
		if f.Severity != w.sev || f.Object.Kind+"/"+f.Object.Namespace+"/"+f.Object.Name != w.object || !regexp.MustCompile(w.re).MatchString(f.Message) {
			t.Errorf("finding %d: %s %s/%s/%s: %s\nwant %s %s: %s", i, f.Severity, f.Object.Kind, f.Object.Namespace, f.Object.Name, f.Message, w.sev, w.object, w.re)
		}
	}
	if m := rep.Findings[0].Members; len(m) != 1 || m[0].Name != "e2e-shop-tls" {
		t.Errorf("the issuer's members: %+v", m)
	}
	// The same from a dump of the cluster.
	sameFromDump(t, "certificates", rep)
}
