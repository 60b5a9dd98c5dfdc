package cmd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// NodesOptions is `kubectl doctor nodes`: the fleet by pool and version.
type NodesOptions struct {
	cluster *clusterOptions
	Output  string
	genericiooptions.IOStreams
}

func newNodesCommand(streams genericiooptions.IOStreams, cluster *clusterOptions) *cobra.Command {
	o := &NodesOptions{cluster: cluster, Output: "table", IOStreams: streams}
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
			if err := o.cluster.complete(cmd); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "Output format: table, wide, json or yaml")
	return cmd
}

// Validate checks the output format.
func (o *NodesOptions) Validate() error {
	if !slices.Contains(report.Formats, o.Output) {
		return usageError("--output must be one of table, wide, json, yaml; got %q", o.Output)
	}
	return nil
}

// Run lists the nodes once and prints the fleet by pool.
func (o *NodesOptions) Run(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, o.cluster.Timeout)
	defer cancel()
	snap, _, _, err := o.cluster.load(ctx, ioStreams{o.Out, o.ErrOut}, []snapshot.Resource{snapshot.Nodes})
	if err != nil {
		return err
	}
	if err := snap.Err(snapshot.Nodes); err != nil {
		return &exitError{Code: ExitError, Err: err}
	}
	defer o.cluster.printStats(o.ErrOut)
	rows := checks.NodeRows(snap.Nodes())
	switch o.Output {
	case "json":
		return report.JSON(o.Out, map[string]any{"nodes": nonNil(rows)})
	case "yaml":
		return report.YAML(o.Out, map[string]any{"nodes": nonNil(rows)})
	}
	header := []string{"POOL", "NODES", "KUBELET", "KERNEL", "OS", "RUNTIME", "ARCH"}
	if o.Output == "wide" {
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
		if o.Output == "wide" {
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
