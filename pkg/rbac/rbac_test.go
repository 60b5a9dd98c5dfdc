package rbac

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

func committedRole(t *testing.T) rbacv1.ClusterRole {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "base", "clusterrole.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(b, &role); err != nil {
		t.Fatal(err)
	}
	return role
}

// TestCommittedRoleIsGenerated fails when deploy/base/clusterrole.yaml is not
// what `make deploy` writes for today's checks.
func TestCommittedRoleIsGenerated(t *testing.T) {
	want, err := ClusterRoleYAML(checks.All())
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "deploy", "base", "clusterrole.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("deploy/base/clusterrole.yaml is stale: run make deploy (go run ./hack/gendeploy)\ngot:\n%s\nwant:\n%s", got, want)
	}
}

// TestRoleGrantsEveryRead fails when a check reads (or may read) a resource
// the committed ClusterRole does not let it list, and when the role grants
// more than reading.
func TestRoleGrantsEveryRead(t *testing.T) {
	role := committedRole(t)
	for _, c := range checks.All() {
		for _, r := range snapshot.Plan(append(append([]snapshot.Resource(nil), c.Reads...), c.Optional...)) {
			verb := r.Verb()
			if !snapshot.Allows(role.Rules, verb, r) {
				t.Errorf("check %s reads %s, which deploy/base/clusterrole.yaml does not grant (%s)", c.Name, r, verb)
			}
		}
	}
	for _, rule := range role.Rules {
		for _, v := range rule.Verbs {
			if !slices.Contains(Verbs, v) {
				t.Errorf("rule %+v grants %q", rule, v)
			}
		}
		for _, s := range append(append(append([]string(nil), rule.Resources...), rule.APIGroups...), rule.NonResourceURLs...) {
			if s == "*" || s == "secrets" {
				t.Errorf("rule %+v grants %q", rule, s)
			}
		}
	}
}

func TestRulesRefuseSecretsAndWildcards(t *testing.T) {
	for _, r := range []snapshot.Resource{{Version: "v1", Resource: "secrets", Kind: "Secret", Namespaced: true}, {Group: "*", Version: "v1", Resource: "x"}} {
		c := &doctor.Check{Name: "bad", Reads: []snapshot.Resource{r}}
		if _, err := Rules([]*doctor.Check{c}); err == nil {
			t.Errorf("Rules granted %v", r)
		}
	}
	pods := &doctor.Check{Name: "p", Reads: []snapshot.Resource{snapshot.Pods}}
	rules, err := Rules([]*doctor.Check{pods})
	if err != nil || snapshot.Allows(rules, "list", snapshot.Nodes) || !snapshot.Allows(rules, "watch", snapshot.Pods) {
		t.Errorf("rules %+v err %v", rules, err)
	}
}

// TestOperatorRulesMatch keeps the PrometheusRule of the operator overlay
// equal to deploy/prometheus/rules.yaml.
func TestOperatorRulesMatch(t *testing.T) {
	var plain struct {
		Groups []any `json:"groups"`
	}
	var cr struct {
		Spec struct {
			Groups []any `json:"groups"`
		} `json:"spec"`
	}
	for path, v := range map[string]any{"prometheus/rules.yaml": &plain, "prometheus-operator/prometheusrule.yaml": &cr} {
		b, err := os.ReadFile(filepath.Join("..", "..", "deploy", path))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	if len(plain.Groups) == 0 || !reflect.DeepEqual(plain.Groups, cr.Spec.Groups) {
		t.Error("deploy/prometheus-operator/prometheusrule.yaml differs from deploy/prometheus/rules.yaml")
	}
}
