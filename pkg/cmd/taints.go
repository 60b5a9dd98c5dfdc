package cmd

import (
	"context"
	"sort"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/connect"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// TaintsOptions is `kubectl doctor taints`: every taint of every node.
type TaintsOptions struct {
	listOptions
	Now time.Time
	genericiooptions.IOStreams
}

// NewTaintsOptions returns the options of taints, with the cluster flags
// the root command shares.
func NewTaintsOptions(streams genericiooptions.IOStreams, cluster *connect.Options) *TaintsOptions {
	return &TaintsOptions{listOptions: listOptions{cluster: cluster}, IOStreams: streams}
}

func newTaintsCommand(streams genericiooptions.IOStreams, cluster *connect.Options) *cobra.Command {
	o := NewTaintsOptions(streams, cluster)
	cmd := &cobra.Command{
		Use:   "taints",
		Short: "List every node's taints (NODE, KEY, VALUE, EFFECT, SINCE)",
		Example: `  kubectl doctor taints
  kubectl doctor taints -o wide   # adds what each taint means: problem, cordon, control-plane, intended`,
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
func (o *TaintsOptions) AddFlags(cmd *cobra.Command) { o.addFlags(cmd) }

// Complete records what the cluster flags say; Run reads the kubeconfig.
func (o *TaintsOptions) Complete(cmd *cobra.Command) { o.complete(cmd) }

// Validate rejects a bad -o or cluster flag.
func (o *TaintsOptions) Validate() error { return o.validate() }

// Run lists the nodes once and prints their taints.
func (o *TaintsOptions) Run(ctx context.Context) error {
	ctx, done, err := o.connect(ctx, o.ErrOut)
	if err != nil {
		return err
	}
	defer done()
	snap, err := o.load(ctx, o.ErrOut, snapshot.Nodes)
	if err != nil {
		return err
	}
	rows := taintRows(snap.Nodes())
	if done, err := printDocument(&o.listOptions, o.Out, "taints", rows); done {
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

// taintRow is one row of `kubectl doctor taints`, in the table and in the
// JSON and YAML: one taint of one node, or a node without taints (Key
// empty).
type taintRow struct {
	Node   string     `json:"node"`
	Key    string     `json:"key,omitempty"`
	Value  string     `json:"value,omitempty"`
	Effect string     `json:"effect,omitempty"`
	Since  *time.Time `json:"since,omitempty"`
	Class  string     `json:"class,omitempty"`
}

// taintRows lists every taint of every node, sorted by node then key, with
// untainted nodes as a row of their own so the listing covers the fleet.
func taintRows(nodes []corev1.Node) []taintRow {
	var rows []taintRow
	for i := range nodes {
		n := &nodes[i]
		if len(n.Spec.Taints) == 0 {
			rows = append(rows, taintRow{Node: n.Name})
			continue
		}
		for _, t := range n.Spec.Taints {
			rows = append(rows, taintRow{Node: n.Name, Key: t.Key, Value: t.Value, Effect: string(t.Effect),
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
