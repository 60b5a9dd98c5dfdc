package kube

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestAbsentLabels pins which node requirements no node meets, with the
// values the nodes have instead.
func TestAbsentLabels(t *testing.T) {
	values := map[string]map[string]bool{"pool": {"gpu": true, "cpu": true}}
	for _, c := range []struct {
		name string
		spec corev1.PodSpec
		want []AbsentLabel
	}{
		{"met", corev1.PodSpec{NodeSelector: map[string]string{"pool": "cpu"}}, nil},
		{"value nobody has", corev1.PodSpec{NodeSelector: map[string]string{"pool": "tpu"}},
			[]AbsentLabel{{Key: "pool", Want: []string{"tpu"}, Have: []string{"cpu", "gpu"}}}},
		{"label nobody has", corev1.PodSpec{NodeSelector: map[string]string{"zone": "a"}},
			[]AbsentLabel{{Key: "zone", Want: []string{"a"}, Have: []string{}}}},
		{"affinity In, one term", corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"tpu", "gpu"}}}}}}}}},
			nil},
		{"affinity Exists, a node has the label", corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpExists}}}}}}}},
			nil},
		{"affinity Exists, no node has the label", corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "accelerator", Operator: corev1.NodeSelectorOpExists}}}}}}}},
			[]AbsentLabel{{Key: "accelerator", Have: []string{}}}},
	} {
		if got := absentLabels(&c.spec, values); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
