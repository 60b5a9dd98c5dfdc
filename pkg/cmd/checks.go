package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
)

// ChecksOptions is `kubectl doctor checks`: every check the registry and
// the config know of, with its severity.
type ChecksOptions struct {
	config configSource
	// Output is "" (a table) or json/yaml, for tooling.
	Output string
	genericiooptions.IOStreams
}

// checkEntry is one check in `checks -o json|yaml`.
type checkEntry struct {
	Name     string   `json:"name"`
	Severity string   `json:"severity"`
	Enabled  bool     `json:"enabled"`
	Title    string   `json:"title"`
	Reads    []string `json:"reads"`
	Optional []string `json:"optional,omitempty"`
}

func newChecksCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &ChecksOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "checks",
		Short: "List the checks kubectl doctor runs, built-in and custom (from the config file)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Output != "" && o.Output != "json" && o.Output != "yaml" {
				return usageError("-o: unknown format %q (known: json, yaml; the default is a table)", o.Output)
			}
			return o.Run(cmd.Context())
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// AddFlags registers --config, --profile and -o.
func (o *ChecksOptions) AddFlags(cmd *cobra.Command) {
	o.config.addFlag(cmd.Flags())
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml (the default is a table)")
}

// Run reads the config and prints the table of checks.
func (o *ChecksOptions) Run(_ context.Context) error {
	all, cfg, err := o.config.registry()
	if err != nil {
		return err
	}
	var rows [][]string
	var entries []checkEntry
	for _, c := range all {
		sev, e := c.Severity.String(), checkEntry{Name: c.Name, Severity: c.Severity.String(), Enabled: true, Title: c.Title()}
		if cfg != nil {
			if cc, ok := cfg.Checks[c.Name]; ok && cc.Severity != 0 {
				sev, e.Severity = cc.Severity.String()+" (config)", cc.Severity.String()
			}
			if !cfg.Enabled(c.Name) {
				sev, e.Enabled = "disabled (config)", false
			}
		}
		for _, r := range c.Reads {
			e.Reads = append(e.Reads, r.String())
		}
		for _, r := range c.Optional {
			e.Optional = append(e.Optional, r.String())
		}
		rows, entries = append(rows, []string{c.Name, sev, c.Title()}), append(entries, e)
	}
	doc := map[string]any{"apiVersion": doctor.APIVersion, "kind": "CheckList", "checks": entries}
	switch o.Output {
	case "json":
		return report.JSON(o.Out, doc)
	case "yaml":
		return report.YAML(o.Out, doc)
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
