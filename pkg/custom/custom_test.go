package custom

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
