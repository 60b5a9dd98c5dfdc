package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSoonest pins the single change that frees a node first: a cordon
// that is the only obstacle, then the intended taint alone on most nodes,
// then the node closest to fitting; a problem taint is never to tolerate.
func TestSoonest(t *testing.T) {
	node := func(name string) *corev1.Node { return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}} }
	gpu := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	notReady := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}
	short := func(missing string) []Shortage {
		return []Shortage{{Resource: corev1.ResourceCPU, Request: resource.MustParse("2"), Free: resource.MustParse(missing), Allocatable: resource.MustParse("4")}}
	}
	for _, c := range []struct {
		name  string
		nodes []NodeFit
		want  *SoonestFix
	}{
		{"nothing", nil, nil},
		{"cordon first", []NodeFit{{Node: node("a"), Taints: []corev1.Taint{gpu}}, {Node: node("b"), Cordoned: true}}, &SoonestFix{Kind: FixUncordon, Node: "b"}},
		{"cordon and room: not one change", []NodeFit{{Node: node("a"), Cordoned: true, Short: short("1")}}, nil},
		{"taint on most nodes", []NodeFit{{Node: node("a"), Taints: []corev1.Taint{gpu}}, {Node: node("b"), Taints: []corev1.Taint{gpu}}, {Node: node("c"), Short: short("1")}},
			&SoonestFix{Kind: FixTolerate, Taint: gpu.ToString(), Nodes: 2}},
		{"problem taint: room instead", []NodeFit{{Node: node("a"), Taints: []corev1.Taint{notReady}}, {Node: node("c"), Short: short("1")}},
			&SoonestFix{Kind: FixRoom, Node: "c", Shortage: short("1")[0]}},
		{"closest to fitting", []NodeFit{{Node: node("a"), Short: short("0")}, {Node: node("b"), Short: short("1500m")}},
			&SoonestFix{Kind: FixRoom, Node: "b", Shortage: short("1500m")[0]}},
		{"selector excludes", []NodeFit{{Node: node("a"), SelectorMismatch: true, Cordoned: true}}, nil},
	} {
		got := (&Fit{Nodes: c.nodes}).Soonest()
		if (got == nil) != (c.want == nil) || got != nil && (got.Kind != c.want.Kind || got.Node != c.want.Node || got.Taint != c.want.Taint ||
			got.Nodes != c.want.Nodes || got.Shortage.Free.Cmp(c.want.Shortage.Free) != 0) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
