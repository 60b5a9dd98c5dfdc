package cmd

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/connect"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// HistoryOptions is `kubectl doctor history`: the revisions kubectl rollout
// history shows, for every workload at once or for one.
type HistoryOptions struct {
	listOptions
	Now time.Time
	// Target is the argument, deployment/NAME (or daemonset/, statefulset/);
	// empty for every workload.
	Target string
	// Kind and Name select one workload, parsed from Target; empty for all.
	Kind, Name string
	genericiooptions.IOStreams
}

var historyKinds = map[string]string{
	"deployment": "Deployment", "deployments": "Deployment", "deploy": "Deployment",
	"daemonset": "DaemonSet", "daemonsets": "DaemonSet", "ds": "DaemonSet",
	"statefulset": "StatefulSet", "statefulsets": "StatefulSet", "sts": "StatefulSet",
}

// NewHistoryOptions returns the options of history, with the cluster flags
// the root command shares.
func NewHistoryOptions(streams genericiooptions.IOStreams, cluster *connect.Options) *HistoryOptions {
	return &HistoryOptions{listOptions: listOptions{cluster: cluster}, IOStreams: streams}
}

func newHistoryCommand(streams genericiooptions.IOStreams, cluster *connect.Options) *cobra.Command {
	o := NewHistoryOptions(streams, cluster)
	cmd := &cobra.Command{
		Use:   "history [deployment/NAME|daemonset/NAME|statefulset/NAME | TYPE NAME]",
		Short: "Show rollout history with change-causes, ages and images, across all namespaces",
		Example: `  kubectl doctor history
  kubectl doctor history -n shop deployment/web
  kubectl doctor history -n shop deploy web`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Complete(cmd, args)
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
func (o *HistoryOptions) AddFlags(cmd *cobra.Command) { o.addFlags(cmd) }

// Complete records the cluster flags and the workload argument; Run reads
// the kubeconfig, then parses the argument (selectWorkload).
func (o *HistoryOptions) Complete(cmd *cobra.Command, args []string) {
	o.complete(cmd)
	switch len(args) {
	case 1:
		o.Target = args[0]
	case 2:
		// kubectl's TYPE NAME form.
		o.Target = args[0] + "/" + args[1]
	}
}

// Validate rejects a bad -o or cluster flag.
func (o *HistoryOptions) Validate() error { return o.validate() }

// selectWorkload parses Target, KIND/NAME; a named workload is looked up
// in -n or the context's namespace, as kubectl rollout history does, so it
// runs once the kubeconfig is read.
func (o *HistoryOptions) selectWorkload() error {
	if o.Target == "" {
		return nil
	}
	kind, name, ok := strings.Cut(o.Target, "/")
	o.Kind = historyKinds[strings.ToLower(kind)]
	if !ok || name == "" || o.Kind == "" {
		return usageError("history: want deployment/NAME, daemonset/NAME or statefulset/NAME, got %q", o.Target)
	}
	o.Name = name
	if o.cluster.Namespace == "" {
		o.cluster.Namespace = o.cluster.ContextNamespace
	}
	return nil
}

func (o *HistoryOptions) reads() []snapshot.Resource {
	switch o.Kind {
	case "Deployment":
		return []snapshot.Resource{snapshot.Deployments, snapshot.ReplicaSets}
	case "DaemonSet":
		return []snapshot.Resource{snapshot.DaemonSets, snapshot.ControllerRevisions}
	case "StatefulSet":
		return []snapshot.Resource{snapshot.StatefulSets, snapshot.ControllerRevisions}
	}
	return []snapshot.Resource{snapshot.Deployments, snapshot.ReplicaSets, snapshot.DaemonSets, snapshot.StatefulSets, snapshot.ControllerRevisions}
}

// Run lists what the histories need, once, and prints them.
func (o *HistoryOptions) Run(ctx context.Context) error {
	ctx, done, err := o.connect(ctx, o.ErrOut)
	if err != nil {
		return err
	}
	defer done()
	if err := o.selectWorkload(); err != nil {
		return err
	}
	snap, err := o.load(ctx, o.ErrOut, o.reads()...)
	if err != nil {
		return err
	}
	var hs []kube.WorkloadHistory
	for _, h := range kube.Histories(snap) {
		if o.Kind == "" || (h.Kind == o.Kind && h.Name == o.Name) {
			hs = append(hs, h)
		}
	}
	if o.Kind != "" && len(hs) == 0 {
		return &exitError{Code: ExitError, Err: fmt.Errorf("%s %q not found in namespace %q", strings.ToLower(o.Kind), o.Name, o.cluster.Namespace)}
	}
	if done, err := printDocument(&o.listOptions, o.Out, "workloads", hs); done {
		return err
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	header := []string{"NAMESPACE", "WORKLOAD", "REVISION", "CHANGE-CAUSE", "AGE", "IMAGES"}
	if o.wide() {
		header = append(header, "SOURCE")
	}
	var rows [][]string
	for _, h := range hs {
		if len(h.Revisions) == 0 {
			rows = append(rows, []string{h.Namespace, h.Ref(), "<none>", "", "", ""})
			continue
		}
		for _, r := range h.Revisions {
			row := []string{h.Namespace, h.Ref(), strconv.FormatInt(r.Revision, 10), orDash(r.ChangeCause, "<none>"),
				duration.HumanDuration(now.Sub(r.Created)), strings.Join(r.Images, ",")}
			if o.wide() {
				row = append(row, r.Source)
			}
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(o.ErrOut, "No deployments, daemonsets or statefulsets found.")
		return err
	}
	return report.Table(o.Out, header, rows)
}
