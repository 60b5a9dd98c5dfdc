package cmd

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/audit"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
)

// AuditOptions is `kubectl doctor audit FILE...`: the clients that load the
// API server most, from its audit logs. It needs no cluster.
type AuditOptions struct {
	Files  []string
	Output string
	Top    int
	FailOn string

	failOn doctor.Severity
	genericiooptions.IOStreams
}

// NewAuditOptions returns audit's defaults: a table of the top 15 clients,
// never failing on findings.
func NewAuditOptions(streams genericiooptions.IOStreams) *AuditOptions {
	return &AuditOptions{Output: "table", Top: 15, FailOn: "never", IOStreams: streams}
}

func newAuditCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := NewAuditOptions(streams)
	cmd := &cobra.Command{
		Use:   "audit FILE... (or - for stdin)",
		Short: "Rank the API clients that load the API server, from its audit logs",
		Long: `Reads Kubernetes audit logs (audit.k8s.io/v1 Event JSON lines; several
files; gzip is detected; - reads stdin) in constant memory, and ranks clients
(user and user agent, per resource) by the time their LIST calls took: how
many, p95 latency, share of all LIST time, LISTs without resourceVersion
(consistent reads), with label selectors, WATCH vs LIST, and how many ran at
once. The heaviest clients become findings with remediation.

Corrupt or truncated lines are counted, never fatal; an input that is not an
audit log at all is an error (exit 2).`,
		Example: `  kubectl doctor audit /var/log/kubernetes/audit/audit.log*
  zcat audit-*.gz | kubectl doctor audit - -o json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Complete(args)
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// AddFlags registers audit's flags.
func (o *AuditOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "Output format: table, wide, json or yaml")
	cmd.Flags().IntVar(&o.Top, "top", o.Top, "How many client rows to show (0: all)")
	cmd.Flags().StringVar(&o.FailOn, "fail-on", o.FailOn, "Exit 1 when a finding is at least this severe: critical, warning, info or never")
}

// Complete takes the files from the arguments and the gate from
// --fail-on; Validate reports a --fail-on that names no severity.
func (o *AuditOptions) Complete(args []string) {
	o.Files = args
	o.failOn, _ = doctor.ParseSeverity(o.FailOn)
}

// Validate rejects bad flags, naming the flag. It changes nothing.
func (o *AuditOptions) Validate() error {
	if !slices.Contains(report.Formats, o.Output) {
		return usageError("--output must be one of table, wide, json, yaml; got %q", o.Output)
	}
	if o.Top < 0 {
		return usageError("--top must be 0 or more, got %d", o.Top)
	}
	if _, err := doctor.ParseSeverity(o.FailOn); err != nil {
		return usageError("--fail-on: %v", err)
	}
	return nil
}

// Run analyses the inputs and prints the ranking and findings.
func (o *AuditOptions) Run(_ context.Context) error {
	var inputs []audit.Input
	for _, f := range o.Files {
		if f == "-" {
			inputs = append(inputs, audit.Input{Name: "stdin", R: o.In})
			continue
		}
		fh, err := os.Open(f)
		if err != nil {
			return &exitError{Code: ExitError, Err: err}
		}
		defer fh.Close()
		inputs = append(inputs, audit.Input{Name: f, R: fh})
	}
	a, err := audit.Analyze(inputs)
	if err != nil {
		return &exitError{Code: ExitError, Err: err}
	}
	r := a.Report(o.Top)
	switch o.Output {
	case "json":
		err = report.JSON(o.Out, r)
	case "yaml":
		err = report.YAML(o.Out, r)
	default:
		err = o.table(a, r)
	}
	if err != nil {
		return &exitError{Code: ExitError, Err: err}
	}
	return decide(outcome{Fails: o.fails(r.Findings)}).exit(o.ErrOut)
}

// fails says whether a finding is at or above --fail-on.
func (o *AuditOptions) fails(findings []doctor.Finding) bool {
	for _, f := range findings {
		if o.failOn != doctor.Never && f.Severity >= o.failOn {
			return true
		}
	}
	return false
}

func (o *AuditOptions) table(a *audit.Analysis, r *audit.Report) error {
	fmt.Fprintf(o.Out, "%s of %s, %s between %s and %s (%s); %s corrupt\n\n",
		doctor.Plural(a.Events, "LIST/WATCH event", "LIST/WATCH events"), doctor.Plural(a.Lines, "line", "lines"),
		"stage "+a.Stage, a.From.UTC().Format(time.RFC3339), a.To.UTC().Format(time.RFC3339),
		a.To.Sub(a.From).Round(time.Second), doctor.Plural(a.Corrupt, "line", "lines"))
	header := []string{"USER", "RESOURCE", "SCOPE", "LISTS", "NO-RV", "SELECTOR", "P95", "LIST-TIME", "SHARE", "WATCHES", "PEAK"}
	if o.Output == "wide" {
		header = append(header, "USER-AGENT")
	}
	var rows [][]string
	for _, c := range r.Clients {
		row := []string{c.User, c.Resource, c.Scope, strconv.Itoa(c.Lists), pctString(c.WithoutRV, c.Lists), pctString(c.WithSelector, c.Lists),
			time.Duration(c.P95).Round(time.Millisecond).String(), time.Duration(c.ListTime).Round(time.Millisecond).String(),
			fmt.Sprintf("%.1f%%", c.Share*100), strconv.Itoa(c.Watches), strconv.Itoa(c.PeakConcurrency)}
		if o.Output == "wide" {
			row = append(row, c.UserAgent)
		}
		rows = append(rows, row)
	}
	if err := report.Table(o.Out, header, rows); err != nil {
		return err
	}
	if len(r.Findings) == 0 {
		_, err := fmt.Fprintln(o.Out, "\nNo client stands out.")
		return err
	}
	fmt.Fprintln(o.Out)
	return report.Findings(o.Out, r.Findings, report.Options{Format: o.Output, Color: useColor(o.Out)})
}

func pctString(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%d%%", n*100/of)
}
