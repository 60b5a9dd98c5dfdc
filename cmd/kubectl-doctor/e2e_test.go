package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/localcluster"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

func decodeReport(t *testing.T, out string) doctor.Report {
	t.Helper()
	var r doctor.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("output is not a JSON report: %v\n%s", err, out)
	}
	return r
}

// TestJSONContract pins the field names CI jobs consume.
func TestJSONContract(t *testing.T) {
	needCluster(t)
	r := runDoctor(t, scenarios.Kubeconfig, "-o", "json", "--fail-on", "never")
	if r.code != 0 {
		t.Fatalf("exit %d with --fail-on never: %s", r.code, r.stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["apiVersion"] != "doctor.kubectl.io/v1alpha1" || doc["kind"] != "Report" {
		t.Errorf("apiVersion/kind = %v/%v", doc["apiVersion"], doc["kind"])
	}
	cluster := doc["cluster"].(map[string]any)
	if cluster["server"] != scenarios.URL || cluster["version"] != localcluster.KubernetesVersion {
		t.Errorf("cluster = %v, want server %s version %s", cluster, scenarios.URL, localcluster.KubernetesVersion)
	}
	for _, k := range []string{"critical", "warning", "info"} {
		if _, ok := doc["summary"].(map[string]any)[k]; !ok {
			t.Errorf("summary lacks %q", k)
		}
	}
	for _, c := range doc["checks"].([]any) {
		for _, k := range []string{"name", "status"} {
			if _, ok := c.(map[string]any)[k]; !ok {
				t.Errorf("check entry lacks %q: %v", k, c)
			}
		}
	}
	findings := doc["findings"].([]any)
	if len(findings) == 0 {
		t.Fatal("no findings on the scenario cluster")
	}
	for _, f := range findings {
		m := f.(map[string]any)
		for _, k := range []string{"check", "severity", "object", "message", "count", "remediation"} {
			if _, ok := m[k]; !ok {
				t.Errorf("finding lacks %q: %v", k, m)
			}
		}
		for _, k := range []string{"apiVersion", "kind", "namespace", "name"} {
			if _, ok := m["object"].(map[string]any)[k]; !ok {
				t.Errorf("finding object lacks %q: %v", k, m["object"])
			}
		}
		for _, rem := range m["remediation"].([]any) {
			if _, ok := rem.(map[string]any)["text"]; !ok {
				t.Errorf("remediation lacks text: %v", rem)
			}
		}
	}
	// YAML carries the same document.
	y := runDoctor(t, scenarios.Kubeconfig, "-o", "yaml", "--fail-on", "never")
	var fromYAML doctor.Report
	if err := yaml.Unmarshal([]byte(y.stdout), &fromYAML); err != nil || len(fromYAML.Findings) != len(findings) {
		t.Errorf("yaml report: err=%v, %d findings, want %d", err, len(fromYAML.Findings), len(findings))
	}
}

func TestHealthyClusterPasses(t *testing.T) {
	needCluster(t)
	r := runDoctor(t, healthy.Kubeconfig, "-o", "json", "--fail-on", "warning")
	if r.code != 0 {
		t.Fatalf("exit %d on a healthy cluster, want 0\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	rep := decodeReport(t, r.stdout)
	if rep.Summary.Critical+rep.Summary.Warning != 0 {
		t.Errorf("healthy cluster has findings: %+v", rep.Findings)
	}
	if len(rep.Checks) < 2 {
		t.Fatalf("only %d checks ran", len(rep.Checks))
	}
	for _, c := range rep.Checks {
		if c.Status != doctor.StatusPassed {
			t.Errorf("check %s: %s %s", c.Name, c.Status, c.Reason)
		}
	}
	table := runDoctor(t, healthy.Kubeconfig)
	if table.code != 0 || !strings.Contains(table.stdout, "No problems found by ") ||
		!regexp.MustCompile(`0 critical, 0 warning, 0 info · \d+ checks passed, 0 skipped · \d+ API requests in [0-9.]+s`).MatchString(table.stdout) {
		t.Errorf("table output (exit %d):\n%s", table.code, table.stdout)
	}
}

type wantFinding struct {
	severity doctor.Severity
	object   string // as ObjectRef.String()
	message  string // regexp
	count    int    // 0: any count above zero
}

// scenarioWant is, per check, exactly the findings the scenarios in
// testdata/scenarios must produce on the real control plane, in report order.
// Each area keeps its expectations in its own e2e_*_test.go file.
var scenarioWant = mergeWants(incidentWant, nodeHealthWant, schedulingWant, runtimeWant, schedWant, networkWant, podsWant, podsWantExtra, gapsWant, causesWant)

func mergeWants(sets ...map[string][]wantFinding) map[string][]wantFinding {
	out := map[string][]wantFinding{}
	for _, set := range sets {
		for check, w := range set {
			out[check] = append(out[check], w...)
		}
	}
	// Areas add findings to each other's checks: keep report order
	// (severity, namespace, name, kind), as pkg/doctor sorts findings.
	for _, w := range out {
		sort.SliceStable(w, func(i, j int) bool {
			if w[i].severity != w[j].severity {
				return w[i].severity > w[j].severity
			}
			a, b := splitObject(w[i].object), splitObject(w[j].object)
			if a[0] != b[0] {
				return a[0] < b[0]
			}
			if a[2] != b[2] {
				return a[2] < b[2]
			}
			return a[1] < b[1]
		})
	}
	return out
}

// splitObject splits "ns/kind/name" or "kind/name" into namespace, kind, name.
func splitObject(s string) [3]string {
	parts := strings.SplitN(s, "/", 3)
	if len(parts) == 2 {
		return [3]string{"", parts[0], parts[1]}
	}
	if len(parts) == 3 {
		return [3]string{parts[0], parts[1], parts[2]}
	}
	return [3]string{"", "", s}
}

// incidentWant: the seed incidents of the scenario cluster (failing
// webhooks, an unavailable APIService, a namespace stuck terminating, a job
// backlog, a pod storm, taints, rollout history). Ages are matched as
// "40s", "2m9s" or "12m": the suite may run for minutes before a test.
var incidentWant = map[string][]wantFinding{
	// The API server's webhook counters are the history of webhooks
	// admission-webhooks reports now: folded into its findings (checked
	// below), none of their own.
	"apiserver-metrics": {},
	// The real controller-manager runs: every object is observed.
	"controllers-stalled": {},
	"admission-webhooks": {
		// Failing open is critical once the API server's metrics show it skipped the policy.
		{doctor.Critical, "validatingwebhookconfiguration/pod-policy", `^webhook pod-policy\.example\.io \(failurePolicy Ignore, timeout 30s\): service policy/pod-policy does not exist: every matching CREATE/UPDATE of pods may wait up to 30s, then silently skips the policy; it intercepts pods in every namespace, kube-system included.*; the harm shows: the API server skipped it [\d,]+ times`, 1},
		{doctor.Critical, "mutatingwebhookconfiguration/sidecar-injector", `^webhook sidecar-injector\.example\.io \(failurePolicy Fail, timeout 30s\): service batch/sidecar-injector has no ready endpoint: every matching CREATE of pods is rejected$`, 1},
	},
	"apiservice-unavailable": {
		{doctor.Critical, "apiservice/v1beta1.metrics.k8s.io", `^apiservice v1beta1\.metrics\.k8s\.io \(metrics\.k8s\.io/v1beta1, backed by service kube-system/metrics-server\) has been unavailable for \d+(?:m\d*)?s?: EndpointsNotFound: cannot find endpointslices for service/metrics-server in "kube-system"; HPAs on CPU/memory and kubectl top stop working.*; it blocks the deletion of 1 namespace: team-a$`, 1},
	},
	"namespace-stuck-terminating": {
		{doctor.Critical, "namespace/team-a", `^namespace team-a has been terminating for \d+(?:m\d*)?s?: discovery of metrics\.k8s\.io/v1beta1 fails because apiservice v1beta1\.metrics\.k8s\.io is unavailable \(EndpointsNotFound: cannot find endpointslices for service/metrics-server in "kube-system"\)$`, 1},
	},
	"job-backlog": {
		{doctor.Warning, "batch/cronjob/report-sync", `^pods for [3-9] Jobs of cronjob/report-sync are not being created: admission webhook sidecar-injector\.example\.io fails \(failurePolicy Fail, timeout 30s; service batch/sidecar-injector has no ready endpoint\): failed to call webhook: .*; [3-9] unfinished Jobs, the oldest created \d+(?:m\d*)?s? ago; its Jobs have no activeDeadlineSeconds`, 0},
	},
	"pod-storm": {
		{doctor.Critical, "pinniped-concierge/deployment/kube-cert-agent", `^60 pods rejected by the kubelet \(OutOfcpu ×60\) on node cp-full in \d+(?:m\d*)?s? \(~\d+ pods/min\), newest \d+(?:m\d*)?s? ago: the pod template of deployment/kube-cert-agent pins spec\.nodeName: cp-full, so the scheduler never checks the node's capacity`, 60},
	},
	// worker-b (unreachable) and worker-c/d (MemoryPressure) are tainted for
	// a condition node-health reports: their taints fold into its findings.
	"node-taints": {
		{doctor.Info, "node/worker-e", `^node worker-e is cordoned`, 1},
	},
	"rollout-history": {
		{doctor.Warning, "shop/deployment/api", `^revisionHistoryLimit is 0`, 1},
		{doctor.Info, "namespace/ops", `^1 workload in namespace ops has no kubernetes\.io/change-cause annotation`, 1},
	},
}

// TestScenarioFindings: every incident scenario, made by the real
// controllers, gives exactly its findings, once, at the root-cause object.
func TestScenarioFindings(t *testing.T) {
	needCluster(t)
	r := runDoctor(t, scenarios.Kubeconfig, "-o", "json")
	if r.code != 1 {
		t.Errorf("exit %d with critical findings, want 1", r.code)
	}
	rep := decodeReport(t, r.stdout)
	got := map[string][]doctor.Finding{}
	for _, f := range rep.Findings {
		got[f.Check] = append(got[f.Check], f)
	}
	for _, c := range rep.Checks {
		if _, ok := scenarioWant[c.Name]; !ok {
			t.Errorf("check %s has no expectations in scenarioWant", c.Name)
		}
	}
	for check, want := range scenarioWant {
		fs := got[check]
		if len(fs) != len(want) {
			t.Errorf("%s: %d findings, want %d:", check, len(fs), len(want))
			for _, f := range fs {
				t.Logf("  %s %s: %s", f.Severity, f.Object, f.Message)
			}
			continue
		}
		for i, w := range want {
			f := fs[i]
			if f.Severity != w.severity || f.Object.String() != w.object || !regexp.MustCompile(w.message).MatchString(f.Message) ||
				(w.count > 0 && f.Count != w.count) {
				t.Errorf("%s finding %d = %s %s ×%d: %s\nwant %s %s ×%d: /%s/", check, i, f.Severity, f.Object, f.Count, f.Message,
					w.severity, w.object, w.count, w.message)
			}
			if len(f.Remediation) == 0 {
				t.Errorf("%s finding %d has no remediation", check, i)
			}
		}
	}
	byObject := map[string]doctor.Finding{}
	for _, f := range rep.Findings {
		byObject[f.Object.String()] = f
	}
	// The webhooks' API server counters are folded into admission-webhooks'
	// findings on the same configurations: one finding per webhook.
	for obj, counter := range map[string]string{
		"validatingwebhookconfiguration/pod-policy":     `^apiserver-metrics validatingwebhookconfiguration/pod-policy: webhook pod-policy\.example\.io, since the API server started: failed open [\d,]+ times`,
		"mutatingwebhookconfiguration/sidecar-injector": `^apiserver-metrics mutatingwebhookconfiguration/sidecar-injector: webhook sidecar-injector\.example\.io, since the API server started: [\d,]+ requests were rejected because calling it failed`,
	} {
		f := byObject[obj]
		if f.Check != "admission-webhooks" || !slices.ContainsFunc(f.Explains, regexp.MustCompile(counter).MatchString) {
			t.Errorf("%s: %s finding explains %q, want the API server's counters /%s/", obj, f.Check, f.Explains, counter)
		}
	}
	for obj, cmd := range map[string]string{
		"node/worker-c":                                 "kubectl describe node worker-c worker-d",
		"apiservice/v1beta1.metrics.k8s.io":             "kubectl delete apiservice v1beta1.metrics.k8s.io",
		"pinniped-concierge/deployment/kube-cert-agent": `kubectl patch deployment/kube-cert-agent -n pinniped-concierge --type=merge -p '{"spec":{"template":{"spec":{"nodeName":null,"nodeSelector":{"kubernetes.io/hostname":"cp-full"}}}}}'`,
	} {
		if !hasCommand(byObject[obj], cmd) {
			t.Errorf("%s: remediation lacks %q: %+v", obj, cmd, byObject[obj].Remediation)
		}
	}
	for obj, cmd := range podsCommands {
		if !hasCommand(byObject[obj], cmd) {
			t.Errorf("%s: remediation lacks %q: %+v", obj, cmd, byObject[obj].Remediation)
		}
	}
	if f := byObject["pinniped-concierge/deployment/kube-cert-agent"]; !hasCommand(f, "kubectl delete pods -n pinniped-concierge --field-selector=status.phase=Failed -l 'app=kube-cert-agent'") {
		t.Errorf("storm cleanup command: %+v", f.Remediation)
	}

	checkGolden(t, filepath.Join("..", "..", "testdata", "golden", "scenarios.txt"), scenarioShape(&rep))

	// The table groups by severity, critical first, and ends with the summary.
	table := runDoctor(t, scenarios.Kubeconfig)
	s := rep.Summary
	crit, warn, info := strings.Index(table.stdout, fmt.Sprintf("CRITICAL (%d)", s.Critical)), strings.Index(table.stdout, fmt.Sprintf("WARNING (%d)", s.Warning)), strings.Index(table.stdout, fmt.Sprintf("INFO (%d)", s.Info))
	if crit < 0 || warn < crit || info < warn {
		t.Errorf("table is not grouped critical, warning, info:\n%s", table.stdout)
	}
	// Every check has findings on the scenarios but those whose input a
	// scenario cannot make (deprecated-apis needs a client of an API the
	// server deprecates): they pass.
	quiet := 0
	for _, c := range rep.Checks {
		if len(scenarioWant[c.Name]) == 0 {
			quiet++
		}
	}
	if line := fmt.Sprintf("%d critical, %d warning, %d info · %s passed, %d failed, 0 skipped · ", s.Critical, s.Warning, s.Info, doctor.Plural(quiet, "check", "checks"), len(rep.Checks)-quiet); !strings.Contains(table.stdout, line) {
		t.Errorf("summary line %q missing:\n%s", line, table.stdout)
	}
	// --fail-on thresholds.
	for flag, code := range map[string]int{"critical": 1, "warning": 1, "info": 1, "never": 0} {
		if r := runDoctor(t, scenarios.Kubeconfig, "--fail-on", flag, "-o", "json"); r.code != code {
			t.Errorf("--fail-on %s: exit %d, want %d", flag, r.code, code)
		}
	}
	if r := runDoctor(t, scenarios.Kubeconfig, "--check", "rollout-history", "--fail-on", "critical"); r.code != 0 {
		t.Errorf("rollout-history alone has no critical finding, exit %d", r.code)
	}
	// -n narrows namespaced objects: only shop's rollouts (the stuck one is workload-pods').
	ns := decodeReport(t, runDoctor(t, scenarios.Kubeconfig, "-n", "shop", "-o", "json", "--check", "rollout-history,workload-pods").stdout)
	for _, f := range ns.Findings {
		if f.Object.Namespace != "shop" {
			t.Errorf("-n shop reported %s", f.Object)
		}
	}
	if len(ns.Findings) != 2 {
		t.Errorf("-n shop: %d findings, want 2 (api, checkout)", len(ns.Findings))
	}
}

func hasCommand(f doctor.Finding, cmd string) bool {
	for _, r := range f.Remediation {
		if r.Command == cmd {
			return true
		}
	}
	return false
}

func TestTaintsCommand(t *testing.T) {
	needCluster(t)
	r := runDoctor(t, scenarios.Kubeconfig, "taints")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// The taints scenario's nodes, in order; other scenarios add nodes too.
	want := []string{
		`^NODE\s+KEY\s+VALUE\s+EFFECT\s+SINCE$`,
		`^cp-1\s+node-role\.kubernetes\.io/control-plane\s+-\s+NoSchedule\s+-$`,
		`^cp-full\s+<none>\s+-\s+-\s+-$`,
		`^gpu-1\s+dedicated\s+gpu\s+NoSchedule\s+-$`,
		`^worker-a\s+<none>\s+-\s+-\s+-$`,
		`^worker-b\s+node\.kubernetes\.io/unreachable\s+-\s+NoExecute\s+(119m|1[2-7][0-9]m|2h)$`,
		`^worker-b\s+node\.kubernetes\.io/unreachable\s+-\s+NoSchedule\s+(119m|1[2-7][0-9]m|2h)$`,
		`^worker-c\s+node\.kubernetes\.io/memory-pressure\s+-\s+NoSchedule\s+2\dm$`,
		`^worker-d\s+node\.kubernetes\.io/memory-pressure\s+-\s+NoSchedule\s+1\dm$`,
		`^worker-e\s+node\.kubernetes\.io/unschedulable\s+-\s+NoSchedule\s+-$`,
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if regexp.MustCompile(`^(NODE|cp-1|cp-full|gpu-1|worker-[a-e]) `).MatchString(l) {
			lines = append(lines, l)
		}
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines of the taints scenario, want %d:\n%s", len(lines), len(want), r.stdout)
	}
	for i, w := range want {
		if !regexp.MustCompile(w).MatchString(lines[i]) {
			t.Errorf("line %d = %q, want /%s/", i, lines[i], w)
		}
	}
	rows := 0
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n")[1:] {
		if len(strings.Fields(l)) != 5 {
			t.Errorf("malformed row %q", l)
		}
		rows++
	}
	var doc struct {
		Taints []struct{ Node, Key, Effect, Class string }
	}
	if err := json.Unmarshal([]byte(runDoctor(t, scenarios.Kubeconfig, "taints", "-o", "json").stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Taints) != rows || doc.Taints[0].Class != "control-plane" {
		t.Errorf("taints json: %+v", doc.Taints)
	}
}

func TestHistoryCommand(t *testing.T) {
	needCluster(t)
	r := runDoctor(t, scenarios.Kubeconfig, "history", "-n", "shop", "deployment/web")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	want := []string{
		`^NAMESPACE\s+WORKLOAD\s+REVISION\s+CHANGE-CAUSE\s+AGE\s+IMAGES$`,
		`^shop\s+deployment/web\s+1\s+initial release\s+\d+(?:m\d*)?s?\s+registry\.example\.com/shop/web:1\.0$`,
		`^shop\s+deployment/web\s+2\s+web 1\.1: faster checkout page \(CHG-1042\)\s+\d+(?:m\d*)?s?\s+registry\.example\.com/shop/web:1\.1$`,
		`^shop\s+deployment/web\s+3\s+web 1\.2: roll back the cache TTL \(INC-77\)\s+\d+(?:m\d*)?s?\s+registry\.example\.com/shop/web:1\.2$`,
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), r.stdout)
	}
	for i, w := range want {
		if !regexp.MustCompile(w).MatchString(lines[i]) {
			t.Errorf("line %d = %q, want /%s/", i, lines[i], w)
		}
	}
	// All namespaces: DaemonSet and StatefulSet revisions from ControllerRevisions.
	all := runDoctor(t, scenarios.Kubeconfig, "history")
	for _, w := range []string{
		`(?m)^ops\s+daemonset/node-agent\s+1\s+agent 1\.1\s+\d+(?:m\d*)?s?\s+registry\.example\.com/ops/agent:1\.1$`,
		`(?m)^ops\s+daemonset/node-agent\s+2\s+<none>\s+\d+(?:m\d*)?s?\s+registry\.example\.com/ops/agent:1\.2$`,
		`(?m)^ops\s+statefulset/queue\s+1\s+queue 3\.13\s+\d+(?:m\d*)?s?\s+registry\.example\.com/ops/queue:3\.13$`,
		`(?m)^shop\s+deployment/api\s+1\s+api 4\.0\s+`,
	} {
		if !regexp.MustCompile(w).MatchString(all.stdout) {
			t.Errorf("history lacks /%s/:\n%s", w, all.stdout)
		}
	}
	if r := runDoctor(t, scenarios.Kubeconfig, "history", "-n", "shop", "deployment/nope"); r.code != 2 {
		t.Errorf("unknown workload: exit %d, want 2", r.code)
	}
	// kubectl's TYPE NAME form and short names read the same (ages may
	// have moved on by a second: the lines are matched as above).
	spaced := runDoctor(t, scenarios.Kubeconfig, "history", "-n", "shop", "deploy", "web")
	if sl := strings.Split(strings.TrimSpace(spaced.stdout), "\n"); spaced.code != 0 || len(sl) != len(want) {
		t.Errorf("history deploy web: exit %d, %d lines, want %d:\n%s", spaced.code, len(sl), len(want), spaced.stdout)
	} else {
		for i, w := range want {
			if !regexp.MustCompile(w).MatchString(sl[i]) {
				t.Errorf("history deploy web: line %d = %q, want /%s/", i, sl[i], w)
			}
		}
	}
}

// TestForbiddenUserSkips: a user with no RBAC bindings gets a report whose
// checks are skipped with the verb they need — not a crash — but since no
// check could run, the scan is incomplete: exit 2, never a passing gate.
// The access review says so before the scan, and no read is sent.
func TestForbiddenUserSkips(t *testing.T) {
	needCluster(t)
	r := runDoctor(t, healthy.KubeconfigFor(localcluster.NobodyUser), "-o", "json")
	if r.code != 2 {
		t.Fatalf("exit %d, want 2: %s", r.code, r.stderr)
	}
	rep := decodeReport(t, r.stdout)
	reasons := map[string]string{}
	for _, c := range rep.Checks {
		if c.Status != doctor.StatusSkipped {
			t.Errorf("check %s: status %s, want skipped", c.Name, c.Status)
		}
		reasons[c.Name] = c.Reason
	}
	if reasons["node-taints"] != "forbidden: needs list on nodes" {
		t.Errorf("node-taints reason %q", reasons["node-taints"])
	}
	if !strings.Contains(reasons["rollout-history"], "forbidden: needs list on deployments.apps in all namespaces") {
		t.Errorf("rollout-history reason %q", reasons["rollout-history"])
	}
	if rep.Complete || len(rep.Incomplete) != 1 || !strings.HasPrefix(rep.Incomplete[0].Reason, "no check could run: ") {
		t.Errorf("complete %v, incomplete %+v", rep.Complete, rep.Incomplete)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "warning: this user may not list ") || !strings.Contains(lines[0], " nodes,") ||
		lines[1] != fmt.Sprintf("error: incomplete scan (no check could run: %d of %d skipped, 0 errored); --allow-incomplete accepts partial scans", len(rep.Checks), len(rep.Checks)) {
		t.Errorf("stderr: %q", r.stderr)
	}
	if rep.Requests != 2 { // /version and the access review: every read was denied before it was sent
		t.Errorf("%d requests, want 2", rep.Requests)
	}
	if table := runDoctor(t, healthy.KubeconfigFor(localcluster.NobodyUser)); !strings.Contains(table.stdout, "skipped node-taints: forbidden: needs list on nodes") {
		t.Errorf("table does not say why checks were skipped:\n%s", table.stdout)
	}
	if r := runDoctor(t, healthy.KubeconfigFor(localcluster.NobodyUser), "--allow-incomplete"); r.code != 0 {
		t.Errorf("--allow-incomplete: exit %d, want 0", r.code)
	}
	// A dump of nothing is no capture: exit 2, no file.
	out := filepath.Join(t.TempDir(), "nothing.yaml")
	d := runDoctor(t, healthy.KubeconfigFor(localcluster.NobodyUser), "dump", "-o", out)
	if _, err := os.Stat(out); d.code != 2 || err == nil || !strings.Contains(d.stderr, "error: nothing dumped: ") {
		t.Errorf("dump by a user who may read nothing: exit %d, file %v, stderr %q", d.code, err, d.stderr)
	}
}

type auditEvent struct {
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`
	Stage      string `json:"stage"`
	ObjectRef  *struct {
		Resource string `json:"resource"`
	} `json:"objectRef"`
}

// TestGentleReads counts, from the API server's own audit log, what one scan
// sent: every read from the watch cache (a watch-list with sendInitialEvents,
// or a resourceVersion=0 LIST), each resource once, never a Secret, never an
// unfiltered event list, no write — and as many requests as the report claims.
func TestGentleReads(t *testing.T) {
	needCluster(t)
	before := countLines(t, scenarios.AuditLog())
	r := runDoctor(t, scenarios.Kubeconfig, "-o", "json", "--fail-on", "never")
	rep := decodeReport(t, r.stdout)
	time.Sleep(200 * time.Millisecond)
	var events []auditEvent
	for i, line := range readLines(t, scenarios.AuditLog()) {
		if i < before {
			continue
		}
		var e auditEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(e.UserAgent, "kubectl-doctor/") && e.Stage == "ResponseComplete" {
			events = append(events, e)
		}
	}
	if len(events) != rep.Requests+rep.Retries {
		t.Errorf("audit log shows %d requests, the report claims %d (+%d retried)", len(events), rep.Requests, rep.Retries)
	}
	listed := map[string]int{}
	for _, e := range events {
		u, _ := url.Parse(e.RequestURI)
		switch {
		case e.Verb == "get" && (u.Path == "/version" || u.Path == "/metrics"):
		case e.Verb == "create" && e.ObjectRef != nil && e.ObjectRef.Resource == "selfsubjectrulesreviews":
			// the access review before the scan: no object is stored
		case e.Verb == "watch":
			// A streamed list: the initial state from the watch cache, then stop.
			q := u.Query()
			if q.Get("sendInitialEvents") != "true" || q.Get("resourceVersion") != "0" || q.Get("resourceVersionMatch") != "NotOlderThan" {
				t.Errorf("watch that is not a cache-served watch-list: %s", e.RequestURI)
			}
			listed[u.Path+"?"+q.Get("fieldSelector")]++
		case e.Verb == "list":
			if u.Query().Get("resourceVersion") != "0" {
				t.Errorf("LIST not served from the watch cache: %s", e.RequestURI)
			}
			if u.Query().Get("limit") != "" {
				t.Errorf("paginated LIST goes to etcd: %s", e.RequestURI)
			}
			// Two events LISTs with different field selectors are two reads.
			listed[u.Path+"?"+u.Query().Get("fieldSelector")]++
		default:
			t.Errorf("unexpected %s %s", e.Verb, e.RequestURI)
		}
		if e.ObjectRef != nil && (e.ObjectRef.Resource == "secrets" || e.ObjectRef.Resource == "events" && !strings.Contains(e.RequestURI, "fieldSelector")) {
			t.Errorf("must never read %s", e.RequestURI)
		}
	}
	for path, n := range listed {
		if n != 1 {
			t.Errorf("%s listed %d times in one scan", path, n)
		}
	}
	if len(listed) < 6 {
		t.Errorf("only %d resources listed: %v", len(listed), listed)
	}
	t.Logf("one scan: %d requests (%d LISTs): %v", len(events), len(listed), listed)
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

func countLines(t *testing.T, path string) int { return len(readLines(t, path)) }

// The failure modes below need no cluster and run under -short too.

func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	kc := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "` + server + `", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
	if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestUnreachableServerFailsFast(t *testing.T) {
	// Nothing listens on this port: connection refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r := runDoctor(t, writeKubeconfig(t, "https://"+addr))
	oneErrorLine(t, r, "cannot reach the API server at https://"+addr)

	// A server that accepts connections and never answers must not hang
	// past --request-timeout (the bound is loose: shared CI machines).
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	r = runDoctor(t, writeKubeconfig(t, "https://"+silent.Addr().String()), "--request-timeout=1s")
	oneErrorLine(t, r, "cannot reach the API server")
	if r.elapsed > 6*time.Second {
		t.Errorf("took %s with --request-timeout=1s", r.elapsed)
	}
	// And --timeout bounds the whole scan.
	r = runDoctor(t, writeKubeconfig(t, "https://"+silent.Addr().String()), "--timeout=1s")
	oneErrorLine(t, r, "timed out after 1s")
}

func TestBadInputs(t *testing.T) {
	garbage := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(garbage, []byte("clusters: [\n  - {oops"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := writeKubeconfig(t, "https://127.0.0.1:1")
	cases := []struct {
		name, kubeconfig string
		args             []string
		want             string
	}{
		{"broken kubeconfig", garbage, nil, "reading kubeconfig"},
		{"no kubeconfig", filepath.Join(t.TempDir(), "missing"), nil, "no cluster configured"},
		{"unknown context", good, []string{"--context", "nope"}, "context was not found for specified context: nope"},
		{"unknown flag", good, []string{"--bogus"}, "unknown flag: --bogus"},
		{"bad --fail-on", good, []string{"--fail-on", "sometimes"}, "--fail-on"},
		{"bad --output", good, []string{"-o", "xml"}, "--output"},
		{"unknown check", good, []string{"--check", "nope"}, `unknown check "nope"`},
		{"nothing left", good, []string{"--check", "node-taints", "--skip", "node-taints"}, "no checks selected"},
		{"bad --timeout", good, []string{"--timeout", "soon"}, "invalid argument"},
		{"explain unknown", good, []string{"explain", "nope"}, `unknown check "nope"`},
		{"bad history arg", good, []string{"history", "pod/x"}, "want deployment/NAME"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			oneErrorLine(t, runDoctor(t, c.kubeconfig, c.args...), c.want)
		})
	}
	// A namespace that does not exist is not a clean bill of health.
	t.Run("unknown namespace", func(t *testing.T) {
		needCluster(t)
		oneErrorLine(t, runDoctor(t, scenarios.Kubeconfig, "-n", "no-such-namespace"), `namespace "no-such-namespace" not found`)
		oneErrorLine(t, runDoctor(t, scenarios.Kubeconfig, "dump", "-o", filepath.Join(t.TempDir(), "d.yaml"), "-n", "no-such-namespace"), `namespace "no-such-namespace" not found`)
	})
}

func TestInfoCommands(t *testing.T) {
	r := runDoctor(t, "", "checks")
	if r.code != 0 || !regexp.MustCompile(`(?m)^node-taints\s+warning\s+Nodes tainted`).MatchString(r.stdout) {
		t.Errorf("checks (exit %d):\n%s", r.code, r.stdout)
	}
	r = runDoctor(t, "", "explain", "rollout-history")
	if r.code != 0 || !strings.Contains(r.stdout, "## How to fix") {
		t.Errorf("explain (exit %d):\n%s", r.code, r.stdout)
	}
	if r = runDoctor(t, "", "version"); r.code != 0 || !strings.HasPrefix(r.stdout, "kubectl-doctor v0.0.0-e2e") {
		t.Errorf("version: %q", r.stdout)
	}
	if r = runDoctor(t, "", "--help"); !strings.Contains(r.stdout, "kubectl doctor [flags]") || !strings.Contains(r.stdout, "Exit codes:") {
		t.Errorf("help does not say kubectl doctor or document exit codes:\n%s", r.stdout)
	}
	if r = runDoctor(t, "", "__complete", "--check", ""); !strings.Contains(r.stdout, "rollout-history") {
		t.Errorf("--check completion: %q", r.stdout)
	}
	if r = runDoctor(t, "", "completion", "bash"); r.code != 0 || !strings.Contains(r.stdout, "bash completion") {
		t.Errorf("completion bash: exit %d", r.code)
	}
}

// TestLoadTrims: a read from the real API server (protobuf, watch cache)
// comes back typed, with managedFields trimmed.
func TestLoadTrims(t *testing.T) {
	needCluster(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", healthy.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.Load(context.Background(), cfg, []snapshot.Resource{snapshot.Namespaces}, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ns := range s.Namespaces() {
		names = append(names, ns.Name)
		if ns.ManagedFields != nil {
			t.Errorf("%s: managedFields kept", ns.Name)
		}
	}
	if !strings.Contains(strings.Join(names, ","), "kube-system") || !strings.Contains(strings.Join(names, ","), "shop") {
		t.Errorf("namespaces %v", names)
	}
}

// TestAuditOnRealLog reads the local API server's own audit log.
func TestAuditOnRealLog(t *testing.T) {
	needCluster(t)
	r := runDoctor(t, "", "audit", scenarios.AuditLog(), "-o", "json", "--top", "0")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var doc struct {
		Input struct {
			Events, Corrupt int
			Stage           string
		}
		Clients []struct{ User, UserAgent, Resource string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range doc.Clients {
		seen[c.User] = true
	}
	if doc.Input.Events == 0 || doc.Input.Corrupt != 0 || doc.Input.Stage != "ResponseComplete" || !seen["admin"] {
		t.Errorf("audit of the real log: %+v, users %v", doc.Input, seen)
	}
	if table := runDoctor(t, "", "audit", scenarios.AuditLog()); !strings.Contains(table.stdout, "USER") || !strings.Contains(table.stdout, "LIST-TIME") {
		t.Errorf("table:\n%s", table.stdout)
	}
}

func TestAuditBadInputs(t *testing.T) {
	notAudit := filepath.Join(t.TempDir(), "app.log")
	if err := os.WriteFile(notAudit, []byte(strings.Repeat(`{"msg":"hello"}`+"\n", 200)), 0o600); err != nil {
		t.Fatal(err)
	}
	oneErrorLine(t, runDoctor(t, "", "audit", notAudit), "not a Kubernetes audit log")
	oneErrorLine(t, runDoctor(t, "", "audit", filepath.Join(t.TempDir(), "missing.log")), "no such file")
	oneErrorLine(t, runDoctor(t, "", "audit"), "requires at least 1 arg")
}

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden/scenarios.txt from this run")

// Parts of a live report that differ from run to run: times and ages,
// generated name suffixes, and counts (the real controllers decide how many
// pods a storm has made by the time of the scan).
var (
	liveTime   = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
	liveAge    = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|ms|s|m|h|d)(\d+(\.\d+)?(ms|s|m|h))*\b`)
	liveSuffix = regexp.MustCompile(`-[bcdfghjklmnpqrstvwxz2456789]{5,10}\b`)
	liveNumber = regexp.MustCompile(`\d[\d,.]*`)
	// The CronJob backlog grows while the suite runs, and past five Jobs
	// job-backlog deletes them by pattern instead of by name: both forms
	// are the same remediation.
	liveDeleteJobs = regexp.MustCompile(`^kubectl delete jobs -n (\S+) (\S+)( \S+)*$|^kubectl get jobs -n (\S+) -o name \| grep '\^job\.batch/(\S+)' \| xargs kubectl delete -n \S+$`)
)

func normalizeCommand(c string) string {
	c = normalizeLive(c)
	if m := liveDeleteJobs.FindStringSubmatch(c); m != nil {
		name := strings.TrimSuffix(strings.TrimSuffix(m[2]+m[5], "-N"), "-")
		return "<delete the Jobs of " + name + " in namespace " + m[1] + m[4] + ">"
	}
	return c
}

func normalizeLive(s string) string {
	s = liveTime.ReplaceAllString(s, "<time>")
	s = liveAge.ReplaceAllString(s, "<age>")
	s = liveSuffix.ReplaceAllString(s, "-<hash>")
	s = liveNumber.ReplaceAllString(s, "N")
	// A list of names whose length varies ("report-sync-N report-sync-N
	// ...") becomes one name and "...".
	words := strings.Split(s, " ")
	out := make([]string, 0, len(words))
	for i, w := range words {
		if i > 0 && w == words[i-1] {
			if out[len(out)-1] != "..." {
				out = append(out, "...")
			}
			continue
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// scenarioShape is the scenario report with what varies between runs
// normalised: every check's status, and every finding's severity, check,
// object, message and remediation commands, in report order. A change of
// wording, of the object a cause is reported on, or of a remediation shows
// as a diff against testdata/golden/scenarios.txt.
func scenarioShape(rep *doctor.Report) string {
	var b strings.Builder
	for _, c := range rep.Checks {
		fmt.Fprintf(&b, "check %s %s\n", c.Name, c.Status)
	}
	for _, f := range rep.Findings {
		fmt.Fprintf(&b, "%s %s %s: %s\n", f.Severity, f.Check, normalizeLive(f.Object.String()), normalizeLive(f.Message))
		for _, r := range f.Remediation {
			if r.Command != "" {
				fmt.Fprintf(&b, "  $ %s\n", normalizeCommand(r.Command))
			}
		}
	}
	return b.String()
}

// checkGolden compares got with the file at path, or rewrites it with -update.
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *updateGolden {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run the test with -update", err)
	}
	if got == string(want) {
		return
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		w, g := "", ""
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			t.Errorf("report differs from %s at line %d (rerun with -update after an intended change):\n- %s\n+ %s", path, i+1, w, g)
			return
		}
	}
}

func TestNormalizeCommand(t *testing.T) {
	const want = "<delete the Jobs of report-sync in namespace batch>"
	for _, c := range []string{
		"kubectl delete jobs -n batch report-sync-29123456",
		"kubectl delete jobs -n batch report-sync-29123456 report-sync-29123457 report-sync-29123458",
		"kubectl get jobs -n batch -o name | grep '^job.batch/report-sync-' | xargs kubectl delete -n batch",
		"kubectl get jobs -n batch -o name | grep '^job.batch/report-sync-2912' | xargs kubectl delete -n batch",
	} {
		if got := normalizeCommand(c); got != want {
			t.Errorf("normalizeCommand(%q) = %q, want %q", c, got, want)
		}
	}
	if got := normalizeCommand("kubectl delete pods -n x a-1"); got != "kubectl delete pods -n x a-N" {
		t.Errorf("other commands are only normalised: %q", got)
	}
}
