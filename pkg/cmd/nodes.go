package cmd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/listing"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// NodesOptions is `kubectl doctor nodes`: the fleet by pool and version.
type NodesOptions struct {
	cluster *clusterOptions
	listOutput
	genericiooptions.IOStreams
}

func newNodesCommand(streams genericiooptions.IOStreams, cluster *clusterOptions) *cobra.Command {
	o := &NodesOptions{cluster: cluster, IOStreams: streams}
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
			return runListing(cmd, o.cluster, &o.listOutput, nil, o.Run)
		},
	}
	o.addFlags(cmd)
	return cmd
}

// Run lists the nodes once and prints the fleet by pool.
func (o *NodesOptions) Run(ctx context.Context) error {
	snap, err := o.cluster.loadAll(ctx, ioStreams{o.Out, o.ErrOut}, snapshot.Nodes)
	if err != nil {
		return err
	}
	rows := listing.NodeRows(snap.Nodes())
	if done, err := printDocument(&o.listOutput, o.Out, "nodes", rows); done {
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
