package cmd

import (
	"context"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// TaintsOptions is `kubectl doctor taints`: every taint of every node.
type TaintsOptions struct {
	cluster *clusterOptions
	Output  string
	Now     time.Time
	genericiooptions.IOStreams
}

func newTaintsCommand(streams genericiooptions.IOStreams, cluster *clusterOptions) *cobra.Command {
	o := &TaintsOptions{cluster: cluster, Output: "table", IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "taints",
		Short: "List every node's taints (NODE, KEY, VALUE, EFFECT, SINCE)",
		Example: `  kubectl doctor taints
  kubectl doctor taints -o wide   # adds what each taint means: problem, cordon, control-plane, intended`,
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
func (o *TaintsOptions) Validate() error {
	if !slices.Contains(report.Formats, o.Output) {
		return usageError("--output must be one of table, wide, json, yaml; got %q", o.Output)
	}
	return nil
}

// Run lists the nodes once and prints their taints.
func (o *TaintsOptions) Run(ctx context.Context) error {
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
	rows := checks.TaintRows(snap.Nodes())
	switch o.Output {
	case "json":
		return report.JSON(o.Out, map[string]any{"taints": nonNil(rows)})
	case "yaml":
		return report.YAML(o.Out, map[string]any{"taints": nonNil(rows)})
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	header := []string{"NODE", "KEY", "VALUE", "EFFECT", "SINCE"}
	if o.Output == "wide" {
		header = append(header, "CLASS")
	}
	var table [][]string
	for _, r := range rows {
		row := []string{r.Node, orDash(r.Key, "<none>"), orDash(r.Value, ""), orDash(r.Effect, ""), "-"}
		if r.Since != nil {
			row[4] = duration.HumanDuration(now.Sub(*r.Since))
		}
		if o.Output == "wide" {
			row = append(row, orDash(r.Class, ""))
		}
		table = append(table, row)
	}
	return report.Table(o.Out, header, table)
}

func orDash(s, none string) string {
	if s == "" {
		if none != "" {
			return none
		}
		return "-"
	}
	return s
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
