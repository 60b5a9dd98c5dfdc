package config

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

func finding(check string, sev doctor.Severity, apiVersion, kind, ns, name string) doctor.Finding {
	f := doctor.Finding{Check: check, Severity: sev, Object: doctor.ObjectRef{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name}, Message: "m", Count: 1}
	f.Fingerprint = f.ComputeFingerprint()
	return f
}

func TestApply(t *testing.T) {
	cfg, err := Parse([]byte(header+`checks:
  pod-storm: {severity: critical}
ignore:
- check: pod-storm
  namespace: legacy
  name: "batch-*"
  reason: INC-4711
  expires: "2027-03-31"
- check: node-taints
  kind: Node
  name: old-*
  reason: being drained
  expires: "2020-01-01"
`), "team.yaml", builtin)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.FromObjects(
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Annotations: map[string]string{
			IgnoreAnnotation: "node-taints, pod-storm", IgnoreReasonAnnotation: "owned by team shop, see SHOP-1"}}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api", Annotations: map[string]string{IgnoreAnnotation: "node-taints"}}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Annotations: map[string]string{IgnoreAnnotation: "*"}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	r := &doctor.Report{
		Checks: []doctor.CheckResult{{Name: "pod-storm", Status: doctor.StatusFailed, Findings: 4}, {Name: "node-taints", Status: doctor.StatusFailed, Findings: 3}},
		Findings: []doctor.Finding{
			finding("pod-storm", doctor.Warning, "apps/v1", "Deployment", "legacy", "batch-1"), // config ignore
			finding("pod-storm", doctor.Warning, "apps/v1", "Deployment", "legacy", "web"),     // kept, severity overridden
			finding("pod-storm", doctor.Info, "apps/v1", "Deployment", "shop", "web"),          // annotation
			finding("pod-storm", doctor.Info, "apps/v1", "Deployment", "shop", "api"),          // annotation names another check: kept
			finding("node-taints", doctor.Warning, "v1", "Node", "", "old-1"),                  // expired entry: kept
			finding("node-taints", doctor.Warning, "v1", "Node", "", "old-2"),                  // expired entry: kept
			finding("node-taints", doctor.Warning, "", "Node", "", "n1"),                       // annotation "*", no apiVersion
		},
	}
	Apply(cfg, r, snap, time.Date(2027, 3, 31, 12, 0, 0, 0, time.UTC))
	r.Finalize()
	got := map[string]doctor.Finding{}
	for _, f := range r.Findings {
		got[f.Object.String()] = f
	}
	if len(r.Findings) != 4 || got["legacy/deployment/web"].Severity != doctor.Critical || got["shop/deployment/api"].Severity != doctor.Critical {
		t.Errorf("kept findings: %+v", r.Findings)
	}
	if _, ok := got["node/old-1"]; !ok {
		t.Error("an expired ignore entry must not suppress")
	}
	sup := map[string]*doctor.Suppression{}
	for _, f := range r.Suppressed {
		sup[f.Object.String()] = f.Suppression
	}
	if s := sup["legacy/deployment/batch-1"]; s == nil || s.Source != "config" || s.Reason != "INC-4711" || s.Line != 6 || s.Expires != "2027-03-31" {
		t.Errorf("config suppression: %+v", s)
	}
	if s := sup["shop/deployment/web"]; s == nil || s.Source != "annotation" || s.Reason != "owned by team shop, see SHOP-1" {
		t.Errorf("annotation suppression: %+v", s)
	}
	if s := sup["node/n1"]; s == nil || s.Reason != "(no doctor.kubectl.io/ignore-reason annotation)" {
		t.Errorf("annotation * without reason: %+v", s)
	}
	if r.Summary.Suppressed != 3 || r.Summary.Critical != 2 || r.Summary.Warning != 2 {
		t.Errorf("summary: %+v", r.Summary)
	}
	if len(r.ExpiredIgnores) != 1 || r.ExpiredIgnores[0].Line != 11 || r.ExpiredIgnores[0].Matches != 2 || r.ExpiredIgnores[0].Reason != "being drained" {
		t.Errorf("expired: %+v", r.ExpiredIgnores)
	}
	if r.Checks[0].Findings != 2 || r.Checks[1].Findings != 2 {
		t.Errorf("check counts: %+v", r.Checks)
	}

	// The day after its expiry, the pod-storm entry stops applying too.
	r2 := &doctor.Report{Checks: []doctor.CheckResult{{Name: "pod-storm", Status: doctor.StatusFailed, Findings: 1}},
		Findings: []doctor.Finding{finding("pod-storm", doctor.Warning, "apps/v1", "Deployment", "legacy", "batch-1")}}
	Apply(cfg, r2, snap, time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC))
	if len(r2.Findings) != 1 || len(r2.ExpiredIgnores) != 2 || r2.ExpiredIgnores[0].Matches != 1 {
		t.Errorf("after expiry: findings %+v, expired %+v", r2.Findings, r2.ExpiredIgnores)
	}
}

func TestApplyAllSuppressedPasses(t *testing.T) {
	cfg, err := Parse([]byte(header+"ignore:\n- check: pod-storm\n  reason: r\n"), "x", builtin)
	if err != nil {
		t.Fatal(err)
	}
	r := &doctor.Report{Checks: []doctor.CheckResult{{Name: "pod-storm", Status: doctor.StatusFailed, Findings: 1}},
		Findings: []doctor.Finding{finding("pod-storm", doctor.Critical, "apps/v1", "Deployment", "a", "b")}}
	Apply(cfg, r, nil, time.Now())
	r.Finalize()
	if r.Checks[0].Status != doctor.StatusPassed || r.Summary.Passed != 1 || r.Fails(doctor.Info) {
		t.Errorf("a check whose findings are all suppressed: %+v, summary %+v", r.Checks, r.Summary)
	}
}

// TestIgnoreIsPerMember: an ignore entry written for one node of a grouped
// finding silences that node only; the finding stays for the others, and
// is suppressed once every member is ignored.
func TestIgnoreIsPerMember(t *testing.T) {
	cfg, err := Parse([]byte(header+`ignore:
- check: node-health
  kind: Node
  name: n1
  reason: being replaced
`), "team.yaml", []string{"node-health"})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.FromObjects()
	if err != nil {
		t.Fatal(err)
	}
	grouped := func(names ...string) doctor.Finding {
		f := finding("node-health", doctor.Critical, "v1", "Node", "", names[0])
		f.Count, f.Examples = len(names), names
		for _, n := range names {
			f.Members = append(f.Members, doctor.ObjectRef{APIVersion: "v1", Kind: "Node", Name: n})
		}
		f.ComputeMemberFingerprints()
		return f
	}
	r := &doctor.Report{Checks: []doctor.CheckResult{{Name: "node-health", Status: doctor.StatusFailed, Findings: 2}},
		Findings: []doctor.Finding{grouped("n1", "n2"), grouped("n1")}}
	Apply(cfg, r, snap, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	if len(r.Findings) != 1 || len(r.Suppressed) != 1 {
		t.Fatalf("findings %+v, suppressed %+v", r.Findings, r.Suppressed)
	}
	f := r.Findings[0]
	if f.Object.Name != "n2" || f.Count != 1 || len(f.Members) != 1 || len(f.MemberFingerprints) != 1 || len(f.Examples) != 1 || f.Examples[0] != "n2" {
		t.Errorf("spreading problem: %+v", f)
	}
	if r.Suppressed[0].Suppression == nil || r.Suppressed[0].Suppression.Reason != "being replaced" {
		t.Errorf("suppressed %+v", r.Suppressed[0])
	}
}
