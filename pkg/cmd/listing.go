package cmd

import (
	"context"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// listOutput is what the listing subcommands (taints, nodes, history) share:
// the -o flag, a load that must succeed for every read, and the JSON/YAML
// document {key: rows}.
type listOutput struct {
	Output string
}

func (l *listOutput) addFlags(cmd *cobra.Command) {
	if l.Output == "" {
		l.Output = "table"
	}
	cmd.Flags().StringVarP(&l.Output, "output", "o", l.Output, "Output format: table, wide, json or yaml")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(report.Formats, cobra.ShellCompDirectiveNoFileComp))
}

func (l *listOutput) validate() error { return validateOutput(l.Output, report.Formats) }

// validateOutput is the one check of -o, for the scan and the listings.
func validateOutput(got string, formats []string) error {
	if !slices.Contains(formats, got) {
		return usageError("--output must be one of %s; got %q", strings.Join(formats, ", "), got)
	}
	return nil
}

func (l *listOutput) wide() bool { return l.Output == "wide" }

// printDocument writes {key: rows} when -o is json or yaml and says whether
// it did; the caller prints its table otherwise.
func printDocument[T any](l *listOutput, w io.Writer, key string, rows []T) (bool, error) {
	doc := map[string]any{key: nonNil(rows)}
	switch l.Output {
	case "json":
		return true, report.JSON(w, doc)
	case "yaml":
		return true, report.YAML(w, doc)
	}
	return false, nil
}

// loadAll loads the reads for a listOutput, which cannot do without any of
// them: a forbidden read is an error here, not a skipped check.
func (o *clusterOptions) loadAll(ctx context.Context, streams ioStreams, reads ...snapshot.Resource) (*snapshot.Snapshot, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(o.Timeout)
	}
	snap, err := o.load(ctx, streams, []*doctor.Check{{Name: "listing", Reads: reads}}, deadline, false)
	if err != nil {
		return nil, err
	}
	for _, r := range reads {
		if err := snap.Err(r); err != nil {
			return nil, &exitError{Code: ExitError, Err: err}
		}
	}
	return snap, nil
}

// runListing is the RunE of a listOutput subcommand: resolve the cluster,
// complete and validate the options, run with the scan timeout, then print
// --stats.
func runListing(cmd *cobra.Command, cluster *clusterOptions, l *listOutput, complete func() error, run func(context.Context) error) error {
	if err := l.validate(); err != nil {
		return err
	}
	cluster.complete(cmd)
	if err := cluster.validate(); err != nil {
		return err
	}
	if err := cluster.connect(); err != nil {
		return err
	}
	if complete != nil {
		if err := complete(); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), cluster.Timeout)
	defer cancel()
	defer cluster.printStats(cmd.ErrOrStderr())
	return run(ctx)
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
