package cmd

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/connect"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// NodesOptions is `kubectl doctor nodes`: the fleet by pool and version.
type NodesOptions struct {
	listOptions
	genericiooptions.IOStreams
}

// NewNodesOptions returns the options of nodes, with the cluster flags the
// root command shares.
func NewNodesOptions(streams genericiooptions.IOStreams, cluster *connect.Options) *NodesOptions {
	return &NodesOptions{listOptions: listOptions{cluster: cluster}, IOStreams: streams}
}

func newNodesCommand(streams genericiooptions.IOStreams, cluster *connect.Options) *cobra.Command {
	o := NewNodesOptions(streams, cluster)
	cmd := &cobra.Command{
		Use:   "nodes",
		Short: "List the fleet by pool: what each group of nodes runs (POOL, NODES, KUBELET, KERNEL, OS, RUNTIME, ARCH)",
		Long: `List the nodes grouped by pool (the eks.amazonaws.com/nodegroup,
cloud.google.com/gke-nodepool, karpenter.sh/nodepool or
kubernetes.azure.com/agentpool label, else node.kubernetes.io/instance-type,
else <none>), one row per distinct kubelet, kernel, OS image, container
runtime and architecture within a pool. A value that differs from the most
common one in its pool ends with '*': that node is odd, and the node-drift
check reports it. Nodes that have not reported their versions show '-'.`,
		Example: `  kubectl doctor nodes
  kubectl doctor nodes -o wide   # adds the pool label and the node names
  kubectl doctor nodes -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Complete(cmd)
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// AddFlags registers -o; the cluster flags are the root's.
func (o *NodesOptions) AddFlags(cmd *cobra.Command) { o.addFlags(cmd) }

// Complete records what the cluster flags say; Run reads the kubeconfig.
func (o *NodesOptions) Complete(cmd *cobra.Command) { o.complete(cmd) }

// Validate rejects a bad -o or cluster flag.
func (o *NodesOptions) Validate() error { return o.validate() }

// Run lists the nodes once and prints the fleet by pool.
func (o *NodesOptions) Run(ctx context.Context) error {
	ctx, done, err := o.connect(ctx, o.ErrOut)
	if err != nil {
		return err
	}
	defer done()
	snap, err := o.load(ctx, o.ErrOut, snapshot.Nodes)
	if err != nil {
		return err
	}
	rows := nodeRows(snap.Nodes())
	if done, err := printDocument(&o.listOptions, o.Out, "nodes", rows); done {
		return err
	}
	header := []string{"POOL", "NODES", "KUBELET", "KERNEL", "OS", "RUNTIME", "ARCH"}
	if o.wide() {
		header = append(header, "LABEL", "NAMES")
	}
	var table [][]string
	for _, r := range rows {
		odd := func(field, v string) string {
			v = orDash(v, "")
			if slices.Contains(r.Odd, field) {
				v += "*"
			}
			return v
		}
		row := []string{r.Pool, fmt.Sprint(r.Count),
			odd("kubelet", r.Kubelet), odd("kernel", r.Kernel), odd("osImage", r.OSImage),
			odd("containerRuntime", r.ContainerRuntime), odd("architecture", r.Architecture)}
		if o.wide() {
			names := strings.Join(doctor.Examples(r.Nodes), ",")
			if len(r.Nodes) > doctor.MaxExamples {
				names += fmt.Sprintf(",+%d", len(r.Nodes)-doctor.MaxExamples)
			}
			row = append(row, orDash(r.PoolLabel, ""), names)
		}
		table = append(table, row)
	}
	return report.Table(o.Out, header, table)
}

// nodeRow is one row of `kubectl doctor nodes`, in the table and in the
// JSON and YAML: the nodes of one pool that run the same versions.
type nodeRow struct {
	Pool      string `json:"pool"`
	PoolLabel string `json:"poolLabel,omitempty"`
	Count     int    `json:"count"`
	kube.NodeVersions
	Nodes []string `json:"nodes"`
	// Odd lists the fields (kubelet, kernel, osImage, containerRuntime,
	// architecture) whose value is not the most common one in the pool.
	Odd []string `json:"odd,omitempty"`
}

// nodeRows groups the fleet into pools and, within each pool, into rows of
// identical versions: most nodes first, odd rows marked. Nodes that have not
// reported their nodeInfo are a row of their own, never odd.
func nodeRows(nodes []corev1.Node) []nodeRow {
	var rows []nodeRow
	for _, p := range kube.Pools(nodes) {
		odd := kube.OddFields(p.Drift())
		byKey := map[string]*nodeRow{}
		var pool []*nodeRow
		for _, n := range p.Nodes {
			fields := odd[n.Name]
			key := fmt.Sprintf("%q|%v", n.V, fields)
			r := byKey[key]
			if r == nil {
				r = &nodeRow{Pool: p.Name, PoolLabel: p.Label, NodeVersions: n.V, Odd: fields}
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
