package main_test

import (
	"regexp"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// The two OpenShift kinds cluster-operators reads, as CRDs that keep every
// field (OpenShift installs them with full schemas; the API server serves
// them the same way: JSON, a status subresource, cluster-scoped).
var openShiftCRDs = testCRD("config.openshift.io", "v1", "ClusterOperator", "clusteroperators", "Cluster") + "---\n" +
	testCRD("config.openshift.io", "v1", "ClusterVersion", "clusterversions", "Cluster")

const openShiftObjects = `apiVersion: config.openshift.io/v1
kind: ClusterOperator
metadata: {name: e2e-ingress}
status:
  conditions:
  - {type: Available, status: "False", reason: IngressUnavailable, message: 'The "default" ingress controller reports Available=False', lastTransitionTime: "${NOW-2h}"}
  - {type: Degraded, status: "True", reason: IngressDegraded, message: 'PodsScheduled=False', lastTransitionTime: "${NOW-2h}"}
  relatedObjects:
  - {group: "", resource: namespaces, name: openshift-ingress-operator}
  versions:
  - {name: operator, version: 4.14.3}
---
apiVersion: config.openshift.io/v1
kind: ClusterOperator
metadata: {name: e2e-dns}
status:
  conditions:
  - {type: Available, status: "True", reason: AsExpected, lastTransitionTime: "${NOW-2h}"}
  - {type: Degraded, status: "False", reason: AsExpected, lastTransitionTime: "${NOW-2h}"}
---
apiVersion: config.openshift.io/v1
kind: ClusterVersion
metadata: {name: version}
status:
  desired: {version: 4.14.3}
  history:
  - {state: Partial, version: 4.14.3}
  conditions:
  - {type: Failing, status: "True", reason: ClusterOperatorNotAvailable, message: Cluster operator e2e-ingress is not available, lastTransitionTime: "${NOW-1h}"}
  - {type: Available, status: "True", lastTransitionTime: "${NOW-2h}"}
`

// TestClusterOperatorsLive: where the API server serves config.openshift.io
// (installed here as CRDs), the live scan reads ClusterOperators and the
// ClusterVersion and reports the unavailable operator in its own words, as
// a dump of the cluster does; where it does not (every other test), the
// check passes with nothing to judge.
func TestClusterOperatorsLive(t *testing.T) {
	needCluster(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", scenarios.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	// Not served yet: passes, nothing missing.
	before := decodeReport(t, runDoctor(t, scenarios.Kubeconfig, "--check", "cluster-operators", "-o", "json", "--fail-on", "never").stdout)
	if c := checkResult(before, "cluster-operators"); c.Status != doctor.StatusPassed || c.Coverage != doctor.CoverageFull {
		t.Fatalf("cluster-operators on a cluster that is not OpenShift: %+v", c)
	}

	serveExtension(t, cfg, "config.openshift.io/v1", map[string]string{"ClusterOperator": "clusteroperators", "ClusterVersion": "clusterversions"}, openShiftCRDs, openShiftObjects)

	r := runDoctor(t, scenarios.Kubeconfig, "--check", "cluster-operators", "-o", "json", "--fail-on", "never")
	rep := decodeReport(t, r.stdout)
	if c := checkResult(rep, "cluster-operators"); c.Status != doctor.StatusFailed || c.Coverage != doctor.CoverageFull {
		t.Errorf("cluster-operators on OpenShift: %+v", c)
	}
	want := []struct {
		sev    doctor.Severity
		object string
		re     string
	}{
		{doctor.Critical, "ClusterOperator/e2e-ingress", `^cluster operator e2e-ingress is not available for 120m \(IngressUnavailable\): "The \\"default\\" ingress controller reports Available=False"; is degraded for 120m \(IngressDegraded\): "PodsScheduled=False" \(operator version 4\.14\.3\)$`},
		{doctor.Info, "ClusterVersion/version", `^the cluster version operator updating to 4\.14\.3 fails to apply the release for 60m \(ClusterOperatorNotAvailable\): "Cluster operator e2e-ingress is not available"; the cause is the cluster operator reported here: e2e-ingress$`},
	}
	if len(rep.Findings) != len(want) {
		t.Fatalf("%d findings, want %d: %+v", len(rep.Findings), len(want), rep.Findings)
	}
	for i, w := range want {
		f := rep.Findings[i]
		if f.Severity != w.sev || f.Object.Kind+"/"+f.Object.Name != w.object || !regexp.MustCompile(w.re).MatchString(f.Message) {
			t.Errorf("finding %d: %s %s/%s: %s\nwant %s %s: %s", i, f.Severity, f.Object.Kind, f.Object.Name, f.Message, w.sev, w.object, w.re)
		}
	}
	// The same from a dump of the cluster.
	sameFromDump(t, "cluster-operators", rep)
}

func checkResult(r doctor.Report, name string) doctor.CheckResult {
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	return doctor.CheckResult{}
}
