package cmd

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/listing"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// TaintsOptions is `kubectl doctor taints`: every taint of every node.
type TaintsOptions struct {
	cluster *clusterOptions
	listOutput
	Now time.Time
	genericiooptions.IOStreams
}

func newTaintsCommand(streams genericiooptions.IOStreams, cluster *clusterOptions) *cobra.Command {
	o := &TaintsOptions{cluster: cluster, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "taints",
		Short: "List every node's taints (NODE, KEY, VALUE, EFFECT, SINCE)",
		Example: `  kubectl doctor taints
  kubectl doctor taints -o wide   # adds what each taint means: problem, cordon, control-plane, intended`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runListing(cmd, o.cluster, &o.listOutput, nil, o.Run)
		},
	}
	o.addFlags(cmd)
	return cmd
}

// Run lists the nodes once and prints their taints.
func (o *TaintsOptions) Run(ctx context.Context) error {
	snap, err := o.cluster.loadAll(ctx, ioStreams{o.Out, o.ErrOut}, snapshot.Nodes)
	if err != nil {
		return err
	}
	rows := listing.TaintRows(snap.Nodes())
	if done, err := printDocument(&o.listOutput, o.Out, "taints", rows); done {
		return err
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	header := []string{"NODE", "KEY", "VALUE", "EFFECT", "SINCE"}
	if o.wide() {
		header = append(header, "CLASS")
	}
	var table [][]string
	for _, r := range rows {
		row := []string{r.Node, orDash(r.Key, "<none>"), orDash(r.Value, ""), orDash(r.Effect, ""), "-"}
		if r.Since != nil {
			row[4] = duration.HumanDuration(now.Sub(*r.Since))
		}
		if o.wide() {
			row = append(row, orDash(r.Class, ""))
		}
		table = append(table, row)
	}
	return report.Table(o.Out, header, table)
}
