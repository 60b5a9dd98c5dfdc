package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
)

// ChecksOptions is `kubectl doctor checks`: every check the registry and
// the config know of, with its severity.
type ChecksOptions struct {
	config configSource
	genericiooptions.IOStreams
}

func newChecksCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &ChecksOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "checks",
		Short: "List the checks kubectl doctor runs, built-in and custom (from the config file)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context())
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// AddFlags registers --config and --profile.
func (o *ChecksOptions) AddFlags(cmd *cobra.Command) { o.config.addFlag(cmd.Flags()) }

// Run reads the config and prints the table of checks.
func (o *ChecksOptions) Run(_ context.Context) error {
	all, cfg, err := o.config.registry()
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
	return report.Table(o.Out, []string{"NAME", "SEVERITY", "TITLE"}, rows)
}

// ExplainOptions is `kubectl doctor explain CHECK`: a check's doc.
type ExplainOptions struct {
	config configSource
	// Check is the name of the check to explain.
	Check string
	genericiooptions.IOStreams
}

func newExplainCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &ExplainOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:               "explain CHECK",
		Short:             "Explain a check: why it matters, how it detects, how to fix",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: checkNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Complete(args)
			return o.Run(cmd.Context())
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// AddFlags registers --config and --profile.
func (o *ExplainOptions) AddFlags(cmd *cobra.Command) { o.config.addFlag(cmd.Flags()) }

// Complete takes the check's name from the argument.
func (o *ExplainOptions) Complete(args []string) { o.Check = args[0] }

// Run prints the doc of the check, or names the known ones.
func (o *ExplainOptions) Run(_ context.Context) error {
	all, _, err := o.config.registry()
	if err != nil {
		return err
	}
	var names []string
	for _, c := range all {
		if c.Name == o.Check {
			_, err := fmt.Fprintf(o.Out, "%s (%s, default severity %s)\n\n%s\n", c.Title(), c.Name, c.Severity, c.Body())
			return err
		}
		names = append(names, c.Name)
	}
	return usageError("unknown check %q (known: %s)", o.Check, strings.Join(names, ", "))
}
