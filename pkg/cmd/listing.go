package cmd

import (
	"context"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/connect"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// listOptions are what the listing commands (taints, nodes, history)
// share: the cluster flags, -o, a connection that prints --stats when the
// listing is done, and a load that must succeed for every read.
type listOptions struct {
	cluster *connect.Options
	Output  string
}

func (l *listOptions) addFlags(cmd *cobra.Command) {
	if l.Output == "" {
		l.Output = "table"
	}
	cmd.Flags().StringVarP(&l.Output, "output", "o", l.Output, "Output format: table, wide, json or yaml")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(report.Formats, cobra.ShellCompDirectiveNoFileComp))
}

// complete records what the cluster flags say; connect reads the
// kubeconfig.
func (l *listOptions) complete(cmd *cobra.Command) { l.cluster.Complete(cmd) }

// validate rejects a bad -o or cluster flag, naming it.
func (l *listOptions) validate() error {
	if err := validateOutput(l.Output, report.Formats); err != nil {
		return err
	}
	return couldNotRun(l.cluster.Validate())
}

// connect reads the kubeconfig and bounds the listing by --timeout. done
// prints --stats on errOut and ends the context.
func (l *listOptions) connect(ctx context.Context, errOut io.Writer) (_ context.Context, done func(), _ error) {
	if err := l.cluster.Connect(); err != nil {
		return nil, nil, couldNotRun(err)
	}
	ctx, cancel := context.WithTimeout(ctx, l.cluster.Timeout)
	return ctx, func() {
		l.cluster.PrintStats(errOut)
		cancel()
	}, nil
}

// load reads what the listing prints; any read that fails fails it.
func (l *listOptions) load(ctx context.Context, errOut io.Writer, reads ...snapshot.Resource) (*snapshot.Snapshot, error) {
	snap, err := l.cluster.LoadAll(ctx, errOut, reads...)
	return snap, couldNotRun(err)
}

// validateOutput is the one check of -o, for the scan and the listings.
func validateOutput(got string, formats []string) error {
	if !slices.Contains(formats, got) {
		return usageError("--output must be one of %s; got %q", strings.Join(formats, ", "), got)
	}
	return nil
}

func (l *listOptions) wide() bool { return l.Output == "wide" }

// printDocument writes {key: rows} when -o is json or yaml and says whether
// it did; the caller prints its table otherwise.
func printDocument[T any](l *listOptions, w io.Writer, key string, rows []T) (bool, error) {
	doc := map[string]any{key: nonNil(rows)}
	switch l.Output {
	case "json":
		return true, report.JSON(w, doc)
	case "yaml":
		return true, report.YAML(w, doc)
	}
	return false, nil
}

// orDash is s, or none (default "-") when s is empty: table cells are never blank.
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
