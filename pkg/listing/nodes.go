package listing

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

// NodeRow is one row of `kubectl doctor nodes`: the nodes of one pool that
// run the same versions.
type NodeRow struct {
	Pool      string `json:"pool"`
	PoolLabel string `json:"poolLabel,omitempty"`
	Count     int    `json:"count"`
	kube.NodeVersions
	Nodes []string `json:"nodes"`
	// Odd lists the fields (kubelet, kernel, osImage, containerRuntime,
	// architecture) whose value is not the most common one in the pool.
	Odd []string `json:"odd,omitempty"`
}

// NodeRows groups the fleet into pools and, within each pool, into rows of
// identical versions: most nodes first, odd rows marked. Nodes that have not
// reported their nodeInfo are a row of their own, never odd.
func NodeRows(nodes []corev1.Node) []NodeRow {
	var rows []NodeRow
	for _, p := range kube.Pools(nodes) {
		odd := kube.OddFields(p.Drift())
		byKey := map[string]*NodeRow{}
		var pool []*NodeRow
		for _, n := range p.Nodes {
			fields := odd[n.Name]
			key := fmt.Sprintf("%q|%v", n.V, fields)
			r := byKey[key]
			if r == nil {
				r = &NodeRow{Pool: p.Name, PoolLabel: p.Label, NodeVersions: n.V, Odd: fields}
				byKey[key] = r
				pool = append(pool, r)
			}
			r.Nodes = append(r.Nodes, n.Name)
			r.Count++
		}
		sort.SliceStable(pool, func(i, j int) bool {
			a, b := pool[i], pool[j]
			if (len(a.Odd) == 0) != (len(b.Odd) == 0) {
				return len(a.Odd) == 0
			}
			if a.Count != b.Count {
				return a.Count > b.Count
			}
			return fmt.Sprint(a.NodeVersions) < fmt.Sprint(b.NodeVersions)
		})
		for _, r := range pool {
			rows = append(rows, *r)
		}
	}
	return rows
}
