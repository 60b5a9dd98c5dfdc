package cmd

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

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
	var src configSource
	cmd := &cobra.Command{
		Use:   "checks",
		Short: "List the checks kubectl doctor runs, built-in and custom (from the config file)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			all, cfg, err := src.registry()
			if err != nil {
				return err
			}
			var rows [][]string
			for _, c := range all {
				sev := c.Severity.String()
				if cfg != nil {
					if cc, ok := cfg.Checks[c.Name]; ok && cc.Severity != 0 {
						sev = cc.Severity.String() + " (config)"
					}
					if !cfg.Enabled(c.Name) {
						sev = "disabled (config)"
					}
				}
				rows = append(rows, []string{c.Name, sev, c.Title()})
			}
			return report.Table(streams.Out, []string{"NAME", "SEVERITY", "TITLE"}, rows)
		},
	}
	src.addFlag(cmd.Flags())
	return cmd
}

func newExplainCommand(streams genericiooptions.IOStreams) *cobra.Command {
	var src configSource
	cmd := &cobra.Command{
		Use:               "explain CHECK",
		Short:             "Explain a check: why it matters, how it detects, how to fix",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: checkNames,
		RunE: func(_ *cobra.Command, args []string) error {
			all, _, err := src.registry()
			if err != nil {
				return err
			}
			var names []string
			for _, c := range all {
				if c.Name == args[0] {
					_, err := fmt.Fprintf(streams.Out, "%s (%s, default severity %s)\n\n%s\n", c.Title(), c.Name, c.Severity, c.Body())
					return err
				}
				names = append(names, c.Name)
			}
			return usageError("unknown check %q (known: %s)", args[0], strings.Join(names, ", "))
		},
	}
	src.addFlag(cmd.Flags())
	return cmd
}
