package cmd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/connect"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/listing"
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
	rows := listing.NodeRows(snap.Nodes())
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
