package custom

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/config"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

func parse(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), "test.yaml", []string{"pod-storm"})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

const replicas = `apiVersion: doctor.kubectl.io/v1alpha1
kind: Config
custom:
- name: replicas-at-least-2
  severity: critical
  resource: deployments.apps
  rule: "object.spec.replicas >= 2"
  message: "'has ' + string(object.spec.replicas) + ' replica(s); run at least 2'"
  remediation: "kubectl scale deployment {{name}} -n {{namespace}} --replicas=2"
- name: image-from-registry
  resource: pods
  rule: "object.spec.containers.all(c, c.image.startsWith('registry.example.com/'))"
`

func deploy(ns, name string, n int32) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To(n)}}
}

func pod(ns, name, image string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}}
}

func TestCustomChecksReportObjectsWhereTheRuleIsFalse(t *testing.T) {
	checks, err := Compile(parse(t, replicas))
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 2 {
		t.Fatalf("%d checks", len(checks))
	}
	if err := doctor.Validate(checks); err != nil {
		t.Fatalf("custom checks are not valid checks: %v", err)
	}
	snap, err := snapshot.FromObjects(deploy("shop", "web", 1), deploy("shop", "api", 3),
		pod("shop", "ok", "registry.example.com/shop/web:1"), pod("dev", "bad", "docker.io/library/nginx"))
	if err != nil {
		t.Fatal(err)
	}
	r := doctor.Run(t.Context(), snap, checks, time.Now())
	if len(r.Findings) != 2 {
		t.Fatalf("findings: %+v", r.Findings)
	}
	f := r.Findings[0]
	if f.Check != "replicas-at-least-2" || f.Severity != doctor.Critical || f.Object.String() != "shop/deployment/web" ||
		f.Message != "deployment shop/web has 1 replica(s); run at least 2" || f.Object.APIVersion != "apps/v1" ||
		f.Remediation[0].Command != "kubectl scale deployment web -n shop --replicas=2" || f.Fingerprint == "" {
		t.Errorf("finding %+v", f)
	}
	g := r.Findings[1]
	if g.Check != "image-from-registry" || g.Severity != doctor.Warning || g.Object.String() != "dev/pod/bad" ||
		!strings.Contains(g.Message, "does not satisfy object.spec.containers.all") {
		t.Errorf("finding %+v", g)
	}
}

func TestCompileErrorsNameTheCheckAndLine(t *testing.T) {
	for _, c := range []struct {
		rule, message, want string
	}{
		{`object.spec.replicas >=`, ``, `line 7: custom[0](bad).rule: invalid CEL: column 24: Syntax error`},
		{`objekt.spec.replicas >= 2`, ``, `line 7: custom[0](bad).rule: invalid CEL: column 1: undeclared reference to 'objekt'`},
		{`1 + 'a' == 2`, ``, `line 7: custom[0](bad).rule: invalid CEL: column 3: found no matching overload for '_+_' applied to '(int, string)'`},
		{`size(object.metadata.name)`, ``, `line 7: custom[0](bad).rule: CEL expression has type int, want bool`},
		{`true`, `42`, `line 8: custom[0](bad).message: CEL expression has type int, want string`},
	} {
		y := "apiVersion: doctor.kubectl.io/v1alpha1\nkind: Config\ncustom:\n- name: bad\n  severity: warning\n  resource: deployments.apps\n  rule: '" + strings.ReplaceAll(c.rule, "'", "''") + "'\n"
		if c.message != "" {
			y += "  message: '" + c.message + "'\n"
		}
		_, err := Compile(parse(t, y))
		var ce *config.Error
		if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "config test.yaml: "+c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("rule %q message %q:\n got %v\nwant config test.yaml: %s...", c.rule, c.message, err, c.want)
		}
	}
}

// A rule that fails on an object (a missing field) makes the check an
// error entry that says where and how to guard, instead of a panic or a
// silent pass.
func TestEvaluationErrorsMakeTheCheckAnError(t *testing.T) {
	checks, err := Compile(parse(t, `apiVersion: doctor.kubectl.io/v1alpha1
kind: Config
custom:
- name: has-owner-label
  resource: deployments.apps
  rule: "object.metadata.labels.owner != ''"
`))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.FromObjects(deploy("shop", "web", 1))
	if err != nil {
		t.Fatal(err)
	}
	r := doctor.Run(t.Context(), snap, checks, time.Now())
	if c := r.Checks[0]; c.Status != doctor.StatusError || !strings.Contains(c.Reason, "failed to evaluate on 1 of 1 deployments.apps (shop/web: no such key: labels); guard optional fields with has()") {
		t.Errorf("check %+v", c)
	}
}

// The API server's per-call cost limit stops a runaway rule.
func TestCostLimit(t *testing.T) {
	checks, err := Compile(parse(t, `apiVersion: doctor.kubectl.io/v1alpha1
kind: Config
custom:
- name: quadratic
  resource: pods
  rule: "object.spec.containers.all(a, object.spec.containers.all(b, object.spec.containers.all(c, a.name != '' && b.name != '' && c.name != '')))"
`))
	if err != nil {
		t.Fatal(err)
	}
	p := pod("shop", "huge", "x")
	for i := range 200 {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: fmt.Sprint("c", i), Image: "x"})
	}
	snap, err := snapshot.FromObjects(p)
	if err != nil {
		t.Fatal(err)
	}
	r := doctor.Run(t.Context(), snap, checks, time.Now())
	if c := r.Checks[0]; c.Status != doctor.StatusError || !strings.Contains(c.Reason, "cost limit exceeded") {
		t.Errorf("check %+v", c)
	}
}

// Custom checks read the same snapshot resource as built-in ones: one LIST.
func TestReadsAreShared(t *testing.T) {
	checks, err := Compile(parse(t, replicas))
	if err != nil {
		t.Fatal(err)
	}
	plan := snapshot.Plan(append(doctor.Reads(checks), snapshot.Deployments, snapshot.Pods))
	if len(plan) != 2 || plan[0] != snapshot.Deployments || plan[1] != snapshot.Pods {
		t.Errorf("plan %v, want deployments.apps and pods once each", plan)
	}
}

const cubic = `apiVersion: doctor.kubectl.io/v1alpha1
kind: Config
custom:
- name: cubic
  resource: pods
  rule: "object.spec.containers.all(a, object.spec.containers.all(b, object.spec.containers.all(c, a.name != '' && b.name != '' && c.name != '')))"
`

func widePods(n, containers int) []runtime.Object {
	var out []runtime.Object
	for i := range n {
		p := pod("shop", fmt.Sprint("p", i), "x")
		for j := range containers {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: fmt.Sprint("c", j), Image: "x"})
		}
		out = append(out, p)
	}
	return out
}

// TestRuleBudget: a rule under the per-call limit on each object still
// stops, naming itself, once its total cost passes its budget.
func TestRuleBudget(t *testing.T) {
	checks, err := compileWithBudget(parse(t, cubic), 50_000)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.FromObjects(widePods(20, 20)...)
	if err != nil {
		t.Fatal(err)
	}
	r := doctor.Run(t.Context(), snap, checks, time.Now())
	if c := r.Checks[0]; c.Status != doctor.StatusError || !strings.Contains(c.Reason, "exceeded its cost budget (50000) after ") ||
		!strings.Contains(c.Reason, "object.spec.containers.all(a") {
		t.Errorf("check %+v", c)
	}
}

// TestRuleStopsAtTheScanDeadline: --timeout bounds CEL too.
func TestRuleStopsAtTheScanDeadline(t *testing.T) {
	checks, err := Compile(parse(t, cubic))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.FromObjects(widePods(400, 60)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := doctor.Run(ctx, snap, checks, time.Now())
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("rule ran %s past a 300ms deadline", took)
	}
	if c := r.Checks[0]; c.Status != doctor.StatusError || !strings.Contains(c.Reason, "stopped by the scan's deadline (--timeout)") {
		t.Errorf("check %+v", c)
	}
}
