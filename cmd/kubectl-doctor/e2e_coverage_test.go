package main_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// clusterInfoDumpKinds are what `kubectl cluster-info dump --all-namespaces
// --output-directory DIR` writes: nodes.json, and per namespace the
// events, replicationcontrollers, services, daemonsets, deployments,
// replicasets and pods as typed lists (no StatefulSets, Jobs, CronJobs,
// ControllerRevisions or EndpointSlices).
var clusterInfoDumpKinds = []schema.GroupVersionResource{
	{Version: "v1", Resource: "events"}, {Version: "v1", Resource: "services"},
	{Group: "apps", Version: "v1", Resource: "daemonsets"}, {Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "replicasets"}, {Version: "v1", Resource: "pods"},
}

// writeList writes items as a typed JSON list, as kubectl does.
func writeList(t *testing.T, path, apiVersion, kind string, items []unstructured.Unstructured) {
	t.Helper()
	list := map[string]any{"apiVersion": apiVersion, "kind": kind + "List", "metadata": map[string]any{}, "items": []any{}}
	var out []any
	for _, it := range items {
		out = append(out, it.Object)
	}
	if out != nil {
		list["items"] = out
	}
	b, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCapturesReportTheLiveWorkloadCauses: the scenario cluster
// captured as `kubectl cluster-info dump` lays it out, and as `kubectl get
// pods,replicasets,deployments -A -o json`, reports the workload causes
// the live admin scan reports for Deployments, DaemonSets and bare pods —
// though the captures lack StatefulSets, Jobs, ControllerRevisions and
// EndpointSlices — and says which checks did not run.
// maskDigits hides what moves between two reads of a live cluster (ages,
// restart and pod counts), as findingKeys does.
func maskDigits(s string) string {
	return digitsRE.ReplaceAllString(durationsRE.ReplaceAllString(s, "D"), "N")
}

var durationsRE, digitsRE = regexp.MustCompile(`\b(\d+[hms])+\b`), regexp.MustCompile(`\d+`)

func TestCapturesReportTheLiveWorkloadCauses(t *testing.T) {
	needCluster(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", scenarios.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	live := decodeReport(t, runDoctor(t, scenarios.Kubeconfig, "-o", "json", "--fail-on", "never").stdout)

	dumpDir := filepath.Join(t.TempDir(), "cluster-info")
	var getAll []unstructured.Unstructured
	nodes, err := dc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "nodes"}).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writeList(t, filepath.Join(dumpDir, "nodes.json"), "v1", "Node", nodes.Items)
	for _, gvr := range clusterInfoDumpKinds {
		list, err := dc.Resource(gvr).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		byNS := map[string][]unstructured.Unstructured{}
		for _, it := range list.Items {
			byNS[it.GetNamespace()] = append(byNS[it.GetNamespace()], it)
		}
		kind := strings.TrimSuffix(list.GetKind(), "List")
		for ns, items := range byNS {
			writeList(t, filepath.Join(dumpDir, ns, gvr.Resource+".json"), gvr.GroupVersion().String(), kind, items)
		}
		if gvr.Resource == "pods" || gvr.Resource == "replicasets" || gvr.Resource == "deployments" {
			for _, it := range list.Items {
				it.SetAPIVersion(gvr.GroupVersion().String())
				it.SetKind(kind)
				getAll = append(getAll, it)
			}
		}
	}
	getFile := filepath.Join(t.TempDir(), "get.json")
	writeList(t, getFile, "v1", "", getAll) // kind "List", as kubectl get of several kinds writes

	// And with our own dump, which holds every read: the same causes for
	// every workload kind, with full coverage.
	ownDump := filepath.Join(t.TempDir(), "snapshot.yaml.gz")
	if d := runDoctor(t, scenarios.Kubeconfig, "dump", "-o", ownDump); d.code != 0 {
		t.Fatalf("dump: exit %d: %s", d.code, d.stderr)
	}

	for name, input := range map[string]string{"cluster-info dump": dumpDir, "kubectl get -o json": getFile, "kubectl doctor dump": ownDump} {
		t.Run(name, func(t *testing.T) {
			full := name == "kubectl doctor dump"
			r := runDoctor(t, "/nonexistent", "--from", input, "-o", "json", "--fail-on", "never")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			rep := decodeReport(t, r.stdout)
			// A capture without events cannot tell a liveness kill from
			// another SIGKILL, or name the volume a pod waits for: the
			// object is still reported, with the cause the capture holds.
			noEvents := name == "kubectl get -o json"
			keyOf := func(f doctor.Finding) string {
				k := f.Check + " " + f.Object.Kind + " " + f.Object.Namespace + "/" + f.Object.Name
				if noEvents {
					return k
				}
				return k + " " + f.Cause
			}
			got := map[string]doctor.Finding{}
			for _, f := range rep.Findings {
				got[keyOf(f)] = f
			}
			compared := 0
			for _, f := range live.Findings {
				if f.Check != "workload-pods" || !full && (f.Object.Kind != "Deployment" && f.Object.Kind != "DaemonSet" && f.Object.Kind != "Pod") {
					continue
				}
				if name == "kubectl get -o json" && f.Object.Kind == "DaemonSet" {
					continue // not in this capture: its pods' finding names the DaemonSet by their ownerReference
				}
				compared++
				key := keyOf(f)
				if g, ok := got[key]; !ok {
					t.Errorf("live finding missing from the capture: %s %s: %s", key, f.Cause, f.Message)
				} else if g.Severity != f.Severity && !noEvents {
					t.Errorf("%s: %s from the capture, %s live", key, g.Severity, f.Severity)
				} else if full && maskDigits(g.Message) != maskDigits(f.Message) {
					t.Errorf("%s: from the dump %q, live %q", key, g.Message, f.Message)
				}
			}
			if full {
				// Nothing the live scan does not report either.
				for _, f := range rep.Findings {
					if f.Check == "workload-pods" && !slices.ContainsFunc(live.Findings, func(l doctor.Finding) bool { return keyOf(l) == keyOf(f) }) {
						t.Errorf("a finding of the dump the live scan does not make: %s: %s", keyOf(f), f.Message)
					}
				}
			}
			if compared == 0 {
				t.Fatal("the live scan has no workload-pods finding on a Deployment: the scenario changed")
			}
			status := map[string]doctor.CheckResult{}
			for _, c := range rep.Checks {
				status[c.Name] = c
			}
			if full {
				if c := status["workload-pods"]; c.Coverage != doctor.CoverageFull {
					t.Errorf("workload-pods from the dump: %+v, want full coverage", c)
				}
				t.Logf("%d live workload-pods findings found in the dump", compared)
				return
			}
			if c := status["workload-pods"]; c.Coverage != doctor.CoveragePartial || len(c.Missing) == 0 {
				t.Errorf("workload-pods: %+v, want partial coverage naming what it ran without", c)
			}
			text := runDoctor(t, "/nonexistent", "--from", input)
			lines := strings.Split(strings.TrimSpace(text.stdout), "\n")
			if last := lines[len(lines)-1]; !strings.Contains(last, " not run, the input lacks their data: ") || !strings.Contains(last, "ran without some data") {
				t.Errorf("last line %q does not state coverage", last)
			}
			t.Logf("%d live workload findings found in the capture; %s", compared, lines[len(lines)-1])
		})
	}
}

// roleUser is a service account whose Role in namespace ns grants reads of
// pods, deployments, replicasets, events and services there, and nothing
// else: a developer's access to their team's namespace.
func roleUser(t *testing.T, ns string) string {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", scenarios.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	const name = "doctor-team"
	if _, err := c.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods", "events", "services"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "replicasets"}, Verbs: []string{"get", "list", "watch"}},
	}}
	if _, err := c.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}}
	if _, err := c.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	tok, err := c.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := clientcmd.LoadFromFile(scenarios.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range raw.AuthInfos {
		u.Token = tok.Status.Token
	}
	path := filepath.Join(t.TempDir(), "team.kubeconfig")
	if err := clientcmd.WriteToFile(*raw, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNamespacedRoleUser: a user whose Role in one namespace
// grants pods, deployments, replicasets, events and services runs `-n NS`:
// the workload causes the admin's scan reports in NS are reported, the
// checks that need nodes or cluster-scoped kinds say they were denied, and
// --require-complete exits 4.
func TestNamespacedRoleUser(t *testing.T) {
	needCluster(t)
	live := decodeReport(t, runDoctor(t, scenarios.Kubeconfig, "-o", "json", "--fail-on", "never").stdout)
	ns := ""
	for _, f := range live.Findings {
		if f.Check == "workload-pods" && f.Object.Kind == "Deployment" {
			ns = f.Object.Namespace
			break
		}
	}
	if ns == "" {
		t.Fatal("the live scan has no workload-pods finding on a Deployment: the scenario changed")
	}
	kc := roleUser(t, ns)
	r := runDoctor(t, kc, "-n", ns, "-o", "json", "--fail-on", "never")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	rep := decodeReport(t, r.stdout)
	got := map[string]bool{}
	for _, f := range rep.Findings {
		got[f.Check+" "+f.Object.String()+" "+f.Cause] = true
	}
	compared := 0
	for _, f := range live.Findings {
		if f.Check != "workload-pods" || f.Object.Namespace != ns || (f.Object.Kind != "Deployment" && f.Object.Kind != "Pod") {
			continue
		}
		compared++
		if key := f.Check + " " + f.Object.String() + " " + f.Cause; !got[key] {
			t.Errorf("the admin's finding is missing for the namespaced user: %s: %s", key, f.Message)
		}
	}
	status := map[string]doctor.CheckResult{}
	for _, c := range rep.Checks {
		status[c.Name] = c
	}
	if c := status["workload-pods"]; c.Coverage != doctor.CoveragePartial || len(c.Missing) == 0 || c.Missing[0].Cause != "denied" {
		t.Errorf("workload-pods: %+v, want partial coverage, denied reads", c)
	}
	if c := status["node-health"]; c.Status != doctor.StatusSkipped || c.Missing[0].Cause != "denied" {
		t.Errorf("node-health: %+v, want skipped, denied", c)
	}
	if rc := runDoctor(t, kc, "-n", ns, "--fail-on", "never", "--require-complete"); rc.code != 4 || !strings.Contains(rc.stderr, "--require-complete: reads denied: ") {
		t.Errorf("--require-complete: exit %d, want 4: %s", rc.code, rc.stderr)
	}
	t.Logf("%d admin workload findings in %s found by the namespaced user", compared, ns)
}
