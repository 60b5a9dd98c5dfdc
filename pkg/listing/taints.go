package listing

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

// TaintRow is one row of `kubectl doctor taints`: one taint of one node, or
// a node without taints (Key empty).
type TaintRow struct {
	Node   string     `json:"node"`
	Key    string     `json:"key,omitempty"`
	Value  string     `json:"value,omitempty"`
	Effect string     `json:"effect,omitempty"`
	Since  *time.Time `json:"since,omitempty"`
	Class  string     `json:"class,omitempty"`
}

// TaintRows lists every taint of every node, sorted by node then key, with
// untainted nodes as a row of their own so the listing covers the fleet.
func TaintRows(nodes []corev1.Node) []TaintRow {
	var rows []TaintRow
	for i := range nodes {
		n := &nodes[i]
		if len(n.Spec.Taints) == 0 {
			rows = append(rows, TaintRow{Node: n.Name})
			continue
		}
		for _, t := range n.Spec.Taints {
			rows = append(rows, TaintRow{Node: n.Name, Key: t.Key, Value: t.Value, Effect: string(t.Effect),
				Since: kube.TaintSince(n, t), Class: kube.TaintClass(t.Key)})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Node != rows[j].Node {
			return rows[i].Node < rows[j].Node
		}
		if rows[i].Key != rows[j].Key {
			return rows[i].Key < rows[j].Key
		}
		return rows[i].Effect < rows[j].Effect
	})
	return rows
}
