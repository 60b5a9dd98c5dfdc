package doctor_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

const doc = "A test check\n\nWhy it matters, how it is detected and how to fix it, in enough words to pass validation."

func check(name string, run func(*doctor.Pass) error) *doctor.Check {
	return &doctor.Check{Name: name, Doc: doc, Severity: doctor.Warning, Reads: []snapshot.Resource{snapshot.Nodes}, Run: run}
}

func emptySnapshot(t *testing.T) *snapshot.Snapshot {
	s, err := snapshot.FromObjects()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRunIsolatesFailingChecks(t *testing.T) {
	checks := []*doctor.Check{
		check("panics", func(*doctor.Pass) error { panic("boom") }),
		check("errors", func(*doctor.Pass) error { return errors.New("bad data") }),
		check("finds", func(p *doctor.Pass) error {
			p.Report(doctor.Finding{Object: doctor.ObjectRef{Kind: "Node", Name: "b"}, Message: "second"})
			p.Report(doctor.Finding{Severity: doctor.Critical, Object: doctor.ObjectRef{Kind: "Node", Name: "a"}, Message: "first"})
			return nil
		}),
		check("quiet", func(*doctor.Pass) error { return nil }),
	}
	r := doctor.Run(context.Background(), emptySnapshot(t), checks, time.Now())
	status := map[string]string{}
	for _, c := range r.Checks {
		status[c.Name] = c.Status + ":" + c.Reason
	}
	want := map[string]string{"panics": "error:check panicked: boom", "errors": "error:bad data", "finds": "failed:", "quiet": "passed:"}
	for k, v := range want {
		if status[k] != v {
			t.Errorf("%s = %q, want %q", k, status[k], v)
		}
	}
	if len(r.Findings) != 2 || r.Findings[0].Message != "first" || r.Findings[1].Severity != doctor.Warning || r.Findings[1].Count != 1 || r.Findings[1].Check != "finds" {
		t.Errorf("findings not defaulted and sorted: %+v", r.Findings)
	}
	if r.Summary != (doctor.Summary{Critical: 1, Warning: 1, Passed: 1, Failed: 1, Errors: 2}) {
		t.Errorf("summary %+v", r.Summary)
	}
	if !r.Fails(doctor.Critical) || !r.Fails(doctor.Warning) || r.Fails(doctor.Never) {
		t.Error("Fails thresholds wrong")
	}
}

func TestRunSkipsChecksWhoseReadsFailed(t *testing.T) {
	s := emptySnapshot(t)
	forbidden := snapshot.WithError(s, snapshot.Nodes, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "", errors.New("no")))
	ran := false
	r := doctor.Run(context.Background(), forbidden, []*doctor.Check{check("needs-nodes", func(*doctor.Pass) error { ran = true; return nil })}, time.Now())
	if ran {
		t.Error("check ran without its data")
	}
	if c := r.Checks[0]; c.Status != doctor.StatusSkipped || c.Reason != "forbidden: needs list on nodes" {
		t.Errorf("got %+v", c)
	}
	broken := snapshot.WithError(s, snapshot.Nodes, errors.New("connection reset"))
	r = doctor.Run(context.Background(), broken, []*doctor.Check{check("needs-nodes", func(*doctor.Pass) error { return nil })}, time.Now())
	if c := r.Checks[0]; c.Status != doctor.StatusError || !strings.Contains(c.Reason, "connection reset") {
		t.Errorf("got %+v", c)
	}
}

// An optional read that failed neither skips nor errors the check: it runs
// on its required reads and sees the optional one as not listed.
func TestRunOptionalReads(t *testing.T) {
	s := emptySnapshot(t)
	for _, err := range []error{
		apierrors.NewForbidden(schema.GroupResource{Resource: "apiservices"}, "", errors.New("no")),
		errors.New("connection reset"),
	} {
		failed := snapshot.WithError(s, snapshot.APIServices, err)
		var sawErr error
		c := check("links-apiservices", func(p *doctor.Pass) error { sawErr = p.Snapshot.Err(snapshot.APIServices); return nil })
		c.Optional = []snapshot.Resource{snapshot.APIServices}
		r := doctor.Run(context.Background(), failed, []*doctor.Check{c}, time.Now())
		if got := r.Checks[0]; got.Status != doctor.StatusPassed || !r.Complete {
			t.Errorf("%v: check %+v, complete %v", err, got, r.Complete)
		}
		if sawErr == nil {
			t.Errorf("%v: the check must be able to tell the optional read is missing", err)
		}
	}
	if reads := doctor.Reads([]*doctor.Check{{Reads: []snapshot.Resource{snapshot.Nodes}, Optional: []snapshot.Resource{snapshot.APIServices}}}); len(reads) != 2 {
		t.Errorf("the loader must read optional resources too: %v", reads)
	}
}

// A gate never passes a scan that checked nothing or lost a read; a check
// skipped for RBAC is fine as long as another ran.
func TestRunCompleteness(t *testing.T) {
	s := emptySnapshot(t)
	forbidden := snapshot.WithError(s, snapshot.Nodes, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "", errors.New("no")))
	broken := snapshot.WithError(s, snapshot.Nodes, apierrors.NewInternalError(errors.New("etcd is sad")))
	ok := func(*doctor.Pass) error { return nil }
	onNodes := check("needs-nodes", ok)
	onNodes2 := check("needs-nodes-too", ok)
	onPods := check("needs-pods", ok)
	onPods.Reads = []snapshot.Resource{snapshot.Pods}
	for _, tc := range []struct {
		name     string
		snap     *snapshot.Snapshot
		checks   []*doctor.Check
		complete bool
		summary  string // regexp of IncompleteSummary
	}{
		{"all ran", s, []*doctor.Check{onNodes, onPods}, true, `^$`},
		{"one skipped for RBAC, one ran", forbidden, []*doctor.Check{onNodes, onPods}, true, `^$`},
		{"every check skipped", forbidden, []*doctor.Check{onNodes}, false, `^incomplete scan \(no check could run: 1 of 1 skipped, 0 errored\)$`},
		{"a read failed", broken, []*doctor.Check{onNodes, onNodes2, onPods}, false,
			`^incomplete scan: 2 checks of 3 could not run \(needs-nodes, needs-nodes-too: listing nodes: Internal error occurred: etcd is sad\)$`},
		{"a check broke", s, []*doctor.Check{check("broken", func(*doctor.Pass) error { return errors.New("bug") }), onPods}, false,
			`^incomplete scan: 1 check of 2 could not run \(broken: bug\)$`},
	} {
		r := doctor.Run(context.Background(), tc.snap, tc.checks, time.Now())
		if r.Complete != tc.complete || (len(r.Incomplete) == 0) != tc.complete {
			t.Errorf("%s: complete %v, incomplete %+v", tc.name, r.Complete, r.Incomplete)
		}
		if got := r.IncompleteSummary(); !regexp.MustCompile(tc.summary).MatchString(got) {
			t.Errorf("%s: summary %q, want /%s/", tc.name, got, tc.summary)
		}
	}
}

func TestValidate(t *testing.T) {
	good := check("good-one", func(*doctor.Pass) error { return nil })
	bad := []struct {
		name   string
		checks []*doctor.Check
	}{
		{"not kebab", []*doctor.Check{check("Bad_Name", good.Run)}},
		{"duplicate", []*doctor.Check{good, good}},
		{"no doc", []*doctor.Check{{Name: "x", Severity: doctor.Info, Reads: good.Reads, Run: good.Run}}},
		{"no reads", []*doctor.Check{{Name: "x", Doc: doc, Severity: doctor.Info, Run: good.Run}}},
		{"no run", []*doctor.Check{{Name: "x", Doc: doc, Severity: doctor.Info, Reads: good.Reads}}},
		{"no severity", []*doctor.Check{{Name: "x", Doc: doc, Reads: good.Reads, Run: good.Run}}},
	}
	for _, b := range bad {
		if err := doctor.Validate(b.checks); err == nil {
			t.Errorf("%s: accepted", b.name)
		}
	}
	if err := doctor.Validate([]*doctor.Check{good}); err != nil {
		t.Error(err)
	}
}

func TestSelect(t *testing.T) {
	all := []*doctor.Check{check("a", nil), check("b", nil), check("c", nil)}
	names := func(cs []*doctor.Check) string {
		var s []string
		for _, c := range cs {
			s = append(s, c.Name)
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct {
		only, skip []string
		want       string
	}{
		{nil, nil, "a,b,c"}, {[]string{"c", "a"}, nil, "a,c"}, {nil, []string{"b"}, "a,c"}, {[]string{"a", "b"}, []string{"a"}, "b"},
	} {
		got, err := doctor.Select(all, tc.only, tc.skip)
		if err != nil || names(got) != tc.want {
			t.Errorf("Select(%v, %v) = %s, %v; want %s", tc.only, tc.skip, names(got), err, tc.want)
		}
	}
	if _, err := doctor.Select(all, []string{"zz"}, nil); err == nil || !strings.Contains(err.Error(), "known: a, b, c") {
		t.Errorf("unknown check: %v", err)
	}
}

func TestSeverityJSON(t *testing.T) {
	b, _ := json.Marshal(doctor.Finding{Severity: doctor.Critical})
	if !strings.Contains(string(b), `"severity":"critical"`) {
		t.Error(string(b))
	}
	var f doctor.Finding
	if err := json.Unmarshal(b, &f); err != nil || f.Severity != doctor.Critical {
		t.Errorf("%v %v", f.Severity, err)
	}
	if _, err := doctor.ParseSeverity("sometimes"); err == nil {
		t.Error("accepted a bad severity")
	}
}

func TestHelpers(t *testing.T) {
	if got := doctor.Thousands(12500); got != "12,500" {
		t.Error(got)
	}
	if got := doctor.Plural(1, "pod", "pods") + "|" + doctor.Plural(5000, "pod", "pods"); got != "1 pod|5,000 pods" {
		t.Error(got)
	}
	if got := doctor.Examples([]string{"d", "b", "a", "c"}); strings.Join(got, ",") != "a,b,c" {
		t.Error(got)
	}
}

func TestFoldExplainsVia(t *testing.T) {
	dep := doctor.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	pvc := doctor.ObjectRef{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: "shop", Name: "data"}
	node := doctor.ObjectRef{APIVersion: "v1", Kind: "Node", Name: "n1"}
	fs := []doctor.Finding{
		{Check: "workload-pods", Severity: doctor.Critical, Object: dep, Message: "0 of 2 replicas available", Via: []doctor.ObjectRef{dep, pvc}},
		{Check: "pvc-pending", Severity: doctor.Warning, Object: pvc, Message: "claim pending: no default class"},
		{Check: "node-taints", Severity: doctor.Warning, Object: node, Message: "tainted", Via: []doctor.ObjectRef{node}},
		{Check: "node-health", Severity: doctor.Warning, Object: node, Message: "NotReady"},
		// A finding of the same check on a Via object does not fold it.
		{Check: "workload-pods", Severity: doctor.Warning, Object: doctor.ObjectRef{Kind: "Service", Namespace: "shop", Name: "web"}, Message: "alone", Via: []doctor.ObjectRef{dep}},
	}
	got := doctor.Fold(fs)
	if len(got) != 3 {
		t.Fatalf("%d findings after folding, want 3: %+v", len(got), got)
	}
	if got[0].Check != "pvc-pending" || got[0].Severity != doctor.Critical || len(got[0].Explains) != 1 ||
		got[0].Explains[0] != "workload-pods shop/deployment/web: 0 of 2 replicas available" {
		t.Errorf("pvc finding = %+v, want it to explain the outage, critical", got[0])
	}
	if got[1].Check != "node-health" || len(got[1].Explains) != 1 {
		t.Errorf("node finding = %+v", got[1])
	}
	// Without the cause's check, the symptom stands.
	if got := doctor.Fold([]doctor.Finding{fs[0]}); len(got) != 1 || len(got[0].Explains) != 0 {
		t.Errorf("lone symptom folded: %+v", got)
	}
}

// TestFoldViaChecks: a refusal narrowed to the checks that report the same
// refusal folds into theirs, never into an unrelated finding on the object.
func TestFoldViaChecks(t *testing.T) {
	dep := doctor.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "q", Name: "batch"}
	refusal := doctor.Finding{Check: "workload-pods", Severity: doctor.Critical, Object: dep, Message: "quota exhausted",
		Via: []doctor.ObjectRef{dep}, ViaChecks: []string{"replica-failure"}}
	history := doctor.Finding{Check: "rollout-history", Severity: doctor.Info, Object: dep, Message: "no change-cause"}
	if got := doctor.Fold([]doctor.Finding{refusal, history}); len(got) != 2 {
		t.Fatalf("refusal folded into an unrelated finding: %+v", got)
	}
	same := doctor.Finding{Check: "replica-failure", Severity: doctor.Critical, Object: dep, Message: "a ResourceQuota is used up"}
	got := doctor.Fold([]doctor.Finding{refusal, history, same})
	if len(got) != 2 || got[1].Check != "replica-failure" || len(got[1].Explains) != 1 {
		t.Fatalf("refusal not folded into replica-failure's finding: %+v", got)
	}
}

// TestFoldViaMember: a Via naming a member of a grouped finding (the
// second of two NotReady nodes) folds into that finding.
func TestFoldViaMember(t *testing.T) {
	n1 := doctor.ObjectRef{APIVersion: "v1", Kind: "Node", Name: "n1"}
	n2 := doctor.ObjectRef{Kind: "Node", Name: "n2"}
	health := doctor.Finding{Check: "node-health", Severity: doctor.Critical, Object: n1, Message: "2 nodes NotReady", Members: []doctor.ObjectRef{n1, n2}}
	taint := doctor.Finding{Check: "node-taints", Severity: doctor.Warning, Object: n2, Message: "node n2 is tainted", Via: []doctor.ObjectRef{n2}}
	got := doctor.Fold([]doctor.Finding{health, taint})
	if len(got) != 1 || len(got[0].Explains) != 1 || got[0].Explains[0] != "node-taints node/n2: node n2 is tainted" {
		t.Fatalf("taint of a member not folded: %+v", got)
	}
	if got := doctor.Fold([]doctor.Finding{taint}); len(got) != 1 {
		t.Errorf("lone taint folded: %+v", got)
	}
}

// TestFoldKeepsTheCauseSeverity: a consequence the cause's check has
// already weighed (a fail-open webhook's dead backend) folds without
// raising the cause's severity; an ordinary symptom raises it.
func TestFoldKeepsTheCauseSeverity(t *testing.T) {
	hook := doctor.ObjectRef{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration", Name: "guard"}
	dep := doctor.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "guard", Name: "guard"}
	cause := doctor.Finding{Check: "admission-webhooks", Severity: doctor.Warning, Object: hook, Message: "fails open"}
	backend := doctor.Finding{Check: "workload-pods", Severity: doctor.Critical, Object: dep, Message: "0 of 1 available",
		Via: []doctor.ObjectRef{hook}, ViaChecks: []string{"admission-webhooks"}, ViaKeepsSeverity: true}
	got := doctor.Fold([]doctor.Finding{backend, cause})
	if len(got) != 1 || got[0].Severity != doctor.Warning || len(got[0].Explains) != 1 {
		t.Fatalf("got %+v, want the webhook's warning explaining its backend", got)
	}
	backend.ViaKeepsSeverity = false
	if got := doctor.Fold([]doctor.Finding{backend, cause}); len(got) != 1 || got[0].Severity != doctor.Critical {
		t.Fatalf("got %+v, want the symptom's severity raised onto the cause", got)
	}
}

// TestValidName pins the check-name pattern shared by the registry and
// configured checks.
func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{"pod-storm": true, "replicas-at-least-2": true, "a": true,
		"": false, "Bad_Name": false, "-lead": false, "trail-": false, "double--dash": false, "2fast": false} {
		if got := doctor.ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %t, want %t", name, got, want)
		}
	}
}

// TestFoldFollowsChains: a Service without endpoints because its pods are
// down, whose pods are down because their node is, folds with them into
// the node's finding: one outage, one finding. A loop folds nothing.
func TestFoldFollowsChains(t *testing.T) {
	node := doctor.ObjectRef{Kind: "Node", Name: "n3"}
	sts := doctor.ObjectRef{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: "brk", Name: "ledger"}
	svc := doctor.ObjectRef{APIVersion: "v1", Kind: "Service", Namespace: "brk", Name: "ledger"}
	health := doctor.Finding{Check: "node-health", Severity: doctor.Critical, Object: node, Message: "node n3 is unreachable"}
	pods := doctor.Finding{Check: "workload-pods", Severity: doctor.Critical, Object: sts, Message: "0 of 1 available", Via: []doctor.ObjectRef{node}}
	service := doctor.Finding{Check: "service-endpoints", Severity: doctor.Warning, Object: svc, Message: "no ready endpoint", Via: []doctor.ObjectRef{sts}}
	got := doctor.Fold([]doctor.Finding{service, pods, health})
	if len(got) != 1 || got[0].Check != "node-health" || len(got[0].Explains) != 2 {
		t.Fatalf("got %+v, want node-health explaining the pods and the Service", got)
	}
	a := doctor.Finding{Check: "a", Object: sts, Message: "a", Via: []doctor.ObjectRef{svc}}
	b := doctor.Finding{Check: "b", Object: svc, Message: "b", Via: []doctor.ObjectRef{sts}}
	if got := doctor.Fold([]doctor.Finding{a, b}); len(got) != 2 {
		t.Errorf("a loop folded: %+v", got)
	}
}

// TestFallbackRunsOnWhatThereIs: a check whose required read is missing
// (absent or forbidden) still runs, with partial coverage, when one of its
// fallback reads was read; not when none was, nor when the required read
// failed (the scan is then incomplete, whatever the fallback says).
func TestFallbackRunsOnWhatThereIs(t *testing.T) {
	ran := false
	c := &doctor.Check{Name: "fallback", Doc: doc, Severity: doctor.Warning, Reads: []snapshot.Resource{snapshot.Pods},
		Optional: []snapshot.Resource{snapshot.Deployments}, Fallback: []snapshot.Resource{snapshot.Deployments},
		Run: func(*doctor.Pass) error { ran = true; return nil }}
	if err := doctor.Validate([]*doctor.Check{c}); err != nil {
		t.Fatal(err)
	}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no"))
	for _, tc := range []struct {
		name   string
		errs   map[snapshot.Resource]error
		status string
		ran    bool
	}{
		{"pods forbidden, deployments read", map[snapshot.Resource]error{snapshot.Pods: forbidden}, doctor.StatusPassed, true},
		{"pods and deployments forbidden", map[snapshot.Resource]error{snapshot.Pods: forbidden, snapshot.Deployments: forbidden}, doctor.StatusSkipped, false},
		{"pods failed", map[snapshot.Resource]error{snapshot.Pods: errors.New("connection reset")}, doctor.StatusError, false},
	} {
		ran = false
		snap := emptySnapshot(t)
		for r, err := range tc.errs {
			snap = snapshot.WithError(snap, r, err)
		}
		r := doctor.Run(context.Background(), snap, []*doctor.Check{c}, time.Now())
		if got := r.Checks[0]; got.Status != tc.status || ran != tc.ran {
			t.Errorf("%s: status %s, ran %v; want %s, %v", tc.name, got.Status, ran, tc.status, tc.ran)
		} else if tc.ran && got.Coverage != doctor.CoveragePartial {
			t.Errorf("%s: coverage %s, want partial", tc.name, got.Coverage)
		}
	}
	bad := *c
	bad.Optional = nil
	if err := doctor.Validate([]*doctor.Check{&bad}); err == nil {
		t.Error("a fallback read that is not optional passed validation")
	}
}

// TestScopedScanKeepsItsNodes: a scan of one namespace keeps the findings
// on nodes its pods run on (or are nominated to), and those that explain
// one of its findings; other nodes' findings are not its business.
func TestScopedScanKeepsItsNodes(t *testing.T) {
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: corev1.PodSpec{NodeName: "a"}}
	nodeFinding := func(name string, explains ...string) func(*doctor.Pass) error {
		return func(p *doctor.Pass) error {
			p.Report(doctor.Finding{Object: doctor.ObjectRef{Kind: "Node", Name: name}, Message: name, Explains: explains})
			return nil
		}
	}
	for _, scope := range []string{"", "shop"} {
		s, err := snapshot.FromObjects(pod)
		if err != nil {
			t.Fatal(err)
		}
		s.Namespace = scope
		r := doctor.Run(context.Background(), s, []*doctor.Check{check("a", nodeFinding("a")), check("b", nodeFinding("b")), check("c", nodeFinding("c", "x shop/pod/web: down"))}, time.Now())
		var got []string
		for _, f := range r.Findings {
			got = append(got, f.Object.Name)
		}
		sort.Strings(got)
		want := "a b c"
		if scope != "" {
			want = "a c"
		}
		if strings.Join(got, " ") != want {
			t.Errorf("-n %q: findings on %v, want %s", scope, got, want)
		}
	}
}

// TestScopedScanLeavesOutOtherClusterWideFindings: in a scan of one
// namespace, a finding on a cluster-scoped object stays when the namespace
// depends on it (its PersistentVolume, a ClusterRoleBinding of its
// ServiceAccount, its Namespace, an object whose finding explains one of
// its own); others are left out and counted, and the coverage line says so.
func TestScopedScanLeavesOutOtherClusterWideFindings(t *testing.T) {
	objs := []runtime.Object{
		&corev1.PersistentVolume{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"}, ObjectMeta: metav1.ObjectMeta{Name: "pv-shop"},
			Spec: corev1.PersistentVolumeSpec{ClaimRef: &corev1.ObjectReference{Namespace: "shop", Name: "data"}}},
		&corev1.PersistentVolume{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"}, ObjectMeta: metav1.ObjectMeta{Name: "pv-other"},
			Spec: corev1.PersistentVolumeSpec{ClaimRef: &corev1.ObjectReference{Namespace: "billing", Name: "data"}}},
		&rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"}, ObjectMeta: metav1.ObjectMeta{Name: "shop-reader"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "shop", Name: "web"}}},
		&rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"}, ObjectMeta: metav1.ObjectMeta{Name: "billing-reader"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "billing", Name: "api"}}},
		&rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"}, ObjectMeta: metav1.ObjectMeta{Name: "shop-all-sas"},
			Subjects: []rbacv1.Subject{{Kind: "Group", Name: "system:serviceaccounts:shop"}}},
		&apiregistrationv1.APIService{TypeMeta: metav1.TypeMeta{APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService"}, ObjectMeta: metav1.ObjectMeta{Name: "v1beta1.custom.metrics.k8s.io"},
			Spec: apiregistrationv1.APIServiceSpec{Service: &apiregistrationv1.ServiceReference{Namespace: "shop", Name: "adapter"}}},
	}
	on := func(kind, name string, explains ...string) func(*doctor.Pass) error {
		return func(p *doctor.Pass) error {
			p.Report(doctor.Finding{Severity: doctor.Warning, Object: doctor.ObjectRef{Kind: kind, Name: name}, Message: kind + " " + name, Explains: explains})
			return nil
		}
	}
	cs := []*doctor.Check{
		check("a", on("PersistentVolume", "pv-shop")), check("b", on("PersistentVolume", "pv-other")),
		check("c", on("ClusterRoleBinding", "shop-reader")), check("d", on("ClusterRoleBinding", "billing-reader")),
		check("e", on("APIService", "v1beta1.metrics.k8s.io")), check("f", on("APIService", "v1.custom.example.com", "x shop/HorizontalPodAutoscaler/web: no metrics")),
		check("g", on("Metrics", "apiserver")), check("h", on("Namespace", "shop")), check("i", on("Namespace", "billing")),
		check("j", on("ClusterRoleBinding", "shop-all-sas")), check("k", on("APIService", "v1beta1.custom.metrics.k8s.io")),
		check("l", on("GatewayClass", "envoy")),
	}
	cs[0].Reads = []snapshot.Resource{snapshot.PersistentVolumes}
	cs[2].Reads = []snapshot.Resource{snapshot.ClusterRoleBindings}
	for _, scope := range []string{"", "shop"} {
		s, err := snapshot.FromObjects(objs...)
		if err != nil {
			t.Fatal(err)
		}
		s.Namespace = scope
		r := doctor.Run(context.Background(), s, cs, time.Now())
		var got []string
		for _, f := range r.Findings {
			got = append(got, f.Object.Name)
		}
		sort.Strings(got)
		want, outside := "apiserver billing billing-reader envoy pv-other pv-shop shop shop-all-sas shop-reader v1.custom.example.com v1beta1.custom.metrics.k8s.io v1beta1.metrics.k8s.io", 0
		if scope != "" {
			// The gateway-api check reports a GatewayClass under -n only
			// when this namespace's Gateways use it.
			want, outside = "envoy pv-shop shop shop-all-sas shop-reader v1.custom.example.com v1beta1.custom.metrics.k8s.io", 5
		}
		if strings.Join(got, " ") != want || r.OutsideNamespace != outside {
			t.Errorf("-n %q: findings on %v (%d left out), want %s (%d)", scope, got, r.OutsideNamespace, want, outside)
		}
		if line := r.CoverageLine(); (outside > 0) != strings.Contains(line, "(and 5 problems on cluster-wide objects this namespace does not depend on, left out: scan without -n to see them)") {
			t.Errorf("-n %q: coverage line %q", scope, line)
		}
	}
}
