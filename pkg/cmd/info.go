package cmd

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
)

// Set by the release build (-ldflags -X); `go install` builds fall back to
// the module version recorded in the binary.
var (
	version = ""
	commit  = ""
	date    = ""
)

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "dev"
}

func newVersionCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the kubectl-doctor version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			line := "kubectl-doctor " + versionString()
			if commit != "" {
				line += " (" + commit
				if date != "" {
					line += ", " + date
				}
				line += ")"
			}
			_, err := fmt.Fprintln(streams.Out, line)
			return err
		},
	}
}

func newChecksCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "checks",
		Short: "List the checks kubectl doctor runs",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			var rows [][]string
			for _, c := range checks.All() {
				rows = append(rows, []string{c.Name, c.Severity.String(), c.Title()})
			}
			return report.Table(streams.Out, []string{"NAME", "SEVERITY", "TITLE"}, rows)
		},
	}
}

func newExplainCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:               "explain CHECK",
		Short:             "Explain a check: why it matters, how it detects, how to fix",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: checkNames,
		RunE: func(_ *cobra.Command, args []string) error {
			var names []string
			for _, c := range checks.All() {
				if c.Name == args[0] {
					_, err := fmt.Fprintf(streams.Out, "%s (%s, default severity %s)\n\n%s\n", c.Title(), c.Name, c.Severity, c.Body())
					return err
				}
				names = append(names, c.Name)
			}
			return usageError("unknown check %q (known: %s)", args[0], strings.Join(names, ", "))
		},
	}
}
