package checks_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// TestWorkloadPodsRemediation: each cause's remediation carries the real
// names and the computed values (the doubled memory limit, the previous
// revision), not placeholders for what the snapshot knows.
func TestWorkloadPodsRemediation(t *testing.T) {
	snap := fixtureSnapshot(t, "workload-pods")
	r := doctor.Run(context.Background(), snap, []*doctor.Check{checks.WorkloadPods}, fixture.Now())
	byObject := map[string]doctor.Finding{}
	for _, f := range r.Findings {
		byObject[f.Object.String()] = f
	}
	for obj, cmd := range map[string]string{
		"shop/deployment/web":          "kubectl logs -n shop deploy/web -c app --previous",
		"shop/deployment/worker":       "kubectl set resources deployment/worker -n shop -c worker --limits=memory=512Mi",
		"shop/deployment/checkout":     "kubectl rollout undo deployment/checkout -n shop --to-revision=1",
		"shop/deployment/legacy":       "kubectl rollout undo deployment/legacy -n shop --to-revision=2",
		"shop/statefulset/db":          "kubectl create secret docker-registry regcred -n shop --docker-server=private.example.com --docker-username=<user> --docker-password=<token>",
		"shop/deployment/api":          "kubectl create secret generic api-db -n shop --from-literal=<key>=<value>",
		"shop/pod/debug-shell":         "kubectl edit secret db-creds -n shop",
		"shop/deployment/migrate":      "kubectl logs -n shop deploy/migrate -c db-migrate --previous",
		"ops/daemonset/log-agent":      "kubectl logs -n ops pod/log-agent-2 -c agent --previous",
		"shop/deployment/search":       "kubectl describe pod -n shop search-1-0",
		"data/statefulset/ledgerdb":    "kubectl delete pod -n data ledgerdb-2",
		"ops/daemonset/logship":        "kubectl rollout undo daemonset/logship -n ops",
		"items/deployment/reporter":    `kubectl get deployment/reporter -n items -o jsonpath='{.spec.template.spec.volumes[?(@.name=="report-cfg")]}'`,
		"shop/deployment/samples":      `kubectl get deployment/samples -n shop -o jsonpath='{.spec.template.spec.containers[?(@.name=="app")].command}'`,
		"arch/deployment/scanner":      `kubectl patch deployment/scanner -n arch -p '{"spec":{"template":{"spec":{"nodeSelector":{"kubernetes.io/arch":"amd64"}}}}}'`,
		"arch/deployment/exporter-arm": "docker buildx imagetools inspect example.com/node-exporter:1.8-amd64",
		"shop/deployment/typo":         `kubectl get deployment/typo -n shop -o jsonpath='{.spec.template.spec.containers[?(@.name=="app")].command}'`,
	} {
		f, ok := byObject[obj]
		if !ok {
			t.Errorf("%s: no finding", obj)
			continue
		}
		if !hasRemediation(f, cmd) {
			t.Errorf("%s: remediation lacks %q: %+v", obj, cmd, f.Remediation)
		}
	}
	if f := byObject["arch/deployment/viewer"]; hasRemediation(f, `kubectl patch deployment/viewer -n arch -p '{"spec":{"template":{"spec":{"nodeSelector":{"kubernetes.io/arch":"amd64"}}}}}'`) {
		t.Errorf("viewer (tag not found): an architecture fix offered: %+v", f.Remediation)
	}
	if f := byObject["ops/daemonset/netmon"]; hasRemediation(f, "kubectl rollout undo daemonset/netmon -n ops") {
		t.Errorf("netmon (failing on its only revision): a rollback offered: %+v", f.Remediation)
	}
	if f := byObject["data/statefulset/auditdb"]; hasRemediation(f, "kubectl delete pod -n data auditdb-2") {
		t.Errorf("auditdb (OnDelete): a forced rollback offered: %+v", f.Remediation)
	}
	if f := byObject["shop/deployment/checkout"]; f.Count != 1 {
		t.Errorf("checkout: count %d, want the 1 new pod", f.Count)
	}
	if f := byObject["ops/daemonset/log-agent"]; f.Count != 2 {
		t.Errorf("log-agent: count %d, want 2 crash-looping pods", f.Count)
	}
}

// TestProbeKillRemediation: a container the kubelet kills after failed
// probes is remediated by the probe's own setting, in the owner's
// template at the container's index: a timeout by timeoutSeconds, a
// startup probe by a wider window. A probe only the pod has (injected by a
// webhook) and a probe that fails on the application's answer (HTTP 503)
// get no patch.
func TestProbeKillRemediation(t *testing.T) {
	snap := fixtureSnapshot(t, "workload-pods")
	r := doctor.Run(context.Background(), snap, []*doctor.Check{checks.WorkloadPods}, fixture.Now())
	byObject := map[string]doctor.Finding{}
	for _, f := range r.Findings {
		byObject[f.Object.String()] = f
	}
	for obj, want := range map[string]string{
		"docs/deployment/gateway": `kubectl patch deployment/gateway -n docs --type=json -p '[{"op":"add","path":"/spec/template/spec/containers/0/livenessProbe/timeoutSeconds","value":5}]'`,
		"docs/deployment/indexer": `kubectl patch deployment/indexer -n docs --type=json -p '[{"op":"add","path":"/spec/template/spec/containers/1/startupProbe/failureThreshold","value":6}]'`,
		"docs/deployment/meshgw":  "",
		"infra/deployment/relay":  "",
	} {
		f, ok := byObject[obj]
		if !ok {
			t.Errorf("%s: no finding", obj)
			continue
		}
		var patches []string
		for _, rem := range f.Remediation {
			if strings.HasPrefix(rem.Command, "kubectl patch") {
				patches = append(patches, rem.Command)
			}
		}
		if want == "" && len(patches) > 0 || want != "" && !slices.Contains(patches, want) {
			t.Errorf("%s: patches %q, want %q", obj, patches, want)
		}
	}
}

func hasRemediation(f doctor.Finding, cmd string) bool {
	for _, r := range f.Remediation {
		if r.Command == cmd {
			return true
		}
	}
	return false
}

// TestWorkloadFoldsIntoTheAPIServiceItBreaks: the crash-looping backend of
// an unavailable APIService is one finding, the APIService's, explaining
// the Deployment; without apiservice-unavailable the Deployment's own
// finding stands (never a silent drop).
func TestWorkloadFoldsIntoTheAPIServiceItBreaks(t *testing.T) {
	snap := fixtureSnapshot(t, "workload-pods")
	find := func(cs ...*doctor.Check) map[string]doctor.Finding {
		out := map[string]doctor.Finding{}
		for _, f := range doctor.Run(context.Background(), snap, cs, fixture.Now()).Findings {
			out[f.Object.String()] = f
		}
		return out
	}
	both := find(checks.WorkloadPods, checks.APIServiceUnavailable)
	if f, ok := both["kube-system/deployment/metrics-server"]; ok {
		t.Errorf("metrics-server reported beside the APIService it breaks: %s", f.Message)
	}
	api := both["apiservice/v1beta1.metrics.k8s.io"]
	if len(api.Explains) != 1 || !strings.HasPrefix(api.Explains[0], "workload-pods kube-system/deployment/metrics-server: ") {
		t.Errorf("APIService explains %q, want the metrics-server Deployment", api.Explains)
	}
	if f, ok := find(checks.WorkloadPods)["kube-system/deployment/metrics-server"]; !ok || f.Severity != doctor.Critical {
		t.Errorf("without apiservice-unavailable the Deployment's finding must stand, critical: %+v", f)
	}
}

// TestStuckRolloutFoldsIntoUnschedulable: a rollout past its deadline
// whose pod the scheduler cannot place is one finding, unschedulable's,
// explaining the stuck rollout; without unschedulable the rollout's own
// finding stands.
func TestStuckRolloutFoldsIntoUnschedulable(t *testing.T) {
	snap := fixtureSnapshot(t, "unschedulable")
	find := func(cs ...*doctor.Check) []doctor.Finding {
		var out []doctor.Finding
		for _, f := range doctor.Run(context.Background(), snap, cs, fixture.Now()).Findings {
			if f.Object.String() == "search/deployment/indexer" {
				out = append(out, f)
			}
		}
		return out
	}
	both := find(checks.WorkloadPods, checks.Unschedulable)
	if len(both) != 1 || both[0].Check != "unschedulable" || len(both[0].Explains) != 1 ||
		!strings.Contains(both[0].Explains[0], "ProgressDeadlineExceeded") {
		t.Errorf("got %+v, want one unschedulable finding explaining the stuck rollout", both)
	}
	if alone := find(checks.WorkloadPods); len(alone) != 1 || alone[0].Cause != "stuck-rollout" {
		t.Errorf("without unschedulable the stuck rollout must stand: %+v", alone)
	}
}

// TestUnavailableFoldsOnlyIntoCauses: a workload-pods finding names the
// objects whose finding may be its cause (Via); advice that merely names the
// same workload or node (rollout-history's missing change-cause, hygiene,
// node-drift) must never take it in, or an outage would be printed under
// a hygiene note (found by a break test with pvc-pending skipped).
func TestUnavailableFoldsOnlyIntoCauses(t *testing.T) {
	for _, dir := range []string{"workload-pods", "sandbox-failures", "pvc-pending"} {
		snap := fixtureSnapshot(t, dir)
		withVia := 0
		for _, f := range doctor.Run(context.Background(), snap, []*doctor.Check{checks.WorkloadPods}, fixture.Now()).Findings {
			if len(f.Via) == 0 {
				continue
			}
			withVia++
			if len(f.ViaChecks) == 0 {
				t.Errorf("%s: %s folds into any check's finding on %v", dir, f.Object, f.Via)
			}
			for _, advice := range []string{"rollout-history", "hygiene", "node-drift", "service-endpoints"} {
				if slices.Contains(f.ViaChecks, advice) {
					t.Errorf("%s: %s may fold into %s", dir, f.Object, advice)
				}
			}
		}
		if withVia == 0 {
			t.Errorf("%s: no workload-pods finding names a possible cause: the test checks nothing", dir)
		}
	}
}

// TestStuckRolloutFoldsIntoReplicaFailure: a rollout past its deadline
// because the API server refuses its new pods (a used-up ResourceQuota) is
// one finding at the cause, replica-failure's, which keeps the deadline as
// evidence; without replica-failure, workload-pods says it once, at the
// refusal, with the same evidence.
func TestStuckRolloutFoldsIntoReplicaFailure(t *testing.T) {
	snap := fixtureSnapshot(t, "replica-failure")
	find := func(cs ...*doctor.Check) []doctor.Finding {
		var out []doctor.Finding
		for _, f := range doctor.Run(context.Background(), snap, cs, fixture.Now()).Findings {
			if f.Object.String() == "billing/deployment/orders" {
				out = append(out, f)
			}
		}
		return out
	}
	deadline := func(f doctor.Finding) bool {
		return slices.ContainsFunc(f.Evidence, func(e string) bool { return strings.Contains(e, "ProgressDeadlineExceeded") })
	}
	both := find(checks.WorkloadPods, checks.ReplicaFailure)
	if len(both) != 1 || both[0].Check != "replica-failure" || both[0].Severity != doctor.Critical || !deadline(both[0]) {
		t.Errorf("got %+v, want one critical replica-failure finding with the deadline as evidence", both)
	}
	if len(both) == 1 && slices.ContainsFunc(both[0].Explains, func(e string) bool { return strings.Contains(e, "stuck") && !strings.Contains(e, "exceeded quota") }) {
		t.Errorf("the stuck rollout is explained apart from the quota: %q", both[0].Explains)
	}
	alone := find(checks.WorkloadPods)
	if len(alone) != 1 || alone[0].Cause != "create-failed" || !deadline(alone[0]) {
		t.Errorf("without replica-failure want one create-failed finding with the deadline as evidence: %+v", alone)
	}
}

// TestRollbackTargetServes: a stuck rollout is rolled back to the newest
// older revision whose ReplicaSet still has available pods: after 1
// (serving), 2 (crash-looped, replaced) and 3 (image not found), that is 1.
func TestRollbackTargetServes(t *testing.T) {
	for _, f := range runWithout(t, checks.WorkloadPods).Findings {
		if f.Object.String() != "shop/deployment/tickets" {
			continue
		}
		for _, r := range f.Remediation {
			if strings.Contains(r.Command, "rollout undo") {
				if !strings.HasSuffix(r.Command, "--to-revision=1") {
					t.Errorf("rollback: %s", r.Command)
				}
				return
			}
		}
		t.Fatalf("no rollback offered: %+v", f.Remediation)
	}
	t.Fatal("no finding on shop/deployment/tickets")
}

// TestFailedJobNeverStarted: a Job whose command was never run is remediated
// by fixing the command, not by reading logs that do not exist.
func TestFailedJobNeverStarted(t *testing.T) {
	for _, f := range runWithout(t, checks.JobFailed).Findings {
		if f.Object.String() != "tools/job/migrate-v43" {
			continue
		}
		if len(f.Remediation) == 0 || strings.Contains(f.Remediation[0].Command, "kubectl logs") ||
			!strings.Contains(f.Remediation[0].Command, `containers[?(@.name=="migrate")].command`) {
			t.Errorf("remediation %+v, want the command to fix first and no logs", f.Remediation)
		}
		return
	}
	t.Fatal("no finding on tools/job/migrate-v43")
}

// TestNodeDownRemediation: pods on a node whose kubelet stopped reporting
// are moved by the out-of-service taint once it is shut down; on a node
// whose kubelet reports a fault (its CNI), the fix is that fault, never the
// taint.
func TestNodeDownRemediation(t *testing.T) {
	taint := func(f doctor.Finding) bool {
		return slices.ContainsFunc(f.Remediation, func(r doctor.Remediation) bool { return strings.Contains(r.Command, "out-of-service") })
	}
	got := map[string]doctor.Finding{}
	for _, f := range runWithout(t, checks.WorkloadPods).Findings {
		got[f.Object.String()] = f
	}
	if f, ok := got["bank/statefulset/ledger"]; !ok || !taint(f) {
		t.Errorf("unreachable node: %+v", f.Remediation)
	}
	if f, ok := got["bank/deployment/cashier"]; !ok || taint(f) {
		t.Errorf("kubelet reporting a CNI fault: %+v", f.Remediation)
	}
}

// TestArchRemediationWithoutNodes: when the architecture to pin to is not
// known (nodes not read), the remediation lists the nodes' architectures
// instead of a patch with a placeholder that cannot be applied.
func TestArchRemediationWithoutNodes(t *testing.T) {
	r := runWithout(t, checks.WorkloadPods, snapshot.Nodes)
	for _, f := range r.Findings {
		if f.Object.String() != "arch/deployment/scanner" {
			continue
		}
		if !hasRemediation(f, "kubectl get nodes -L kubernetes.io/arch") {
			t.Errorf("remediation %+v", f.Remediation)
		}
		for _, rem := range f.Remediation {
			if strings.Contains(rem.Command, "kubectl patch") {
				t.Errorf("a patch without a known architecture: %s", rem.Command)
			}
		}
		return
	}
	t.Fatal("no finding on arch/deployment/scanner")
}
