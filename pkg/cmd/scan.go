package cmd

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
)

// ScanOptions is `kubectl doctor` without a subcommand.
type ScanOptions struct {
	cluster *clusterOptions

	Only   []string
	Skip   []string
	Output string
	FailOn string

	failOn doctor.Severity
	checks []*doctor.Check
	// ci is --config, --baseline and --show-suppressed (scan_ci.go).
	ci ciOptions
	// offline is --from (scan_offline.go).
	offline offlineOptions
	// CPUProfile and MemProfile write pprof profiles (hidden flags, for
	// docs/performance.md): CPU over the whole scan, heap in use once the
	// checks have run, when the snapshot is still alive.
	CPUProfile, MemProfile string
	// Now is the clock checks see; zero means time.Now.
	Now time.Time

	genericiooptions.IOStreams
}

// NewScanOptions returns options with kubectl-doctor's defaults.
func NewScanOptions(streams genericiooptions.IOStreams) *ScanOptions {
	return &ScanOptions{cluster: newClusterOptions(), Output: "table", FailOn: "critical", IOStreams: streams}
}

// AddFlags registers the scan's flags on the root command.
func (o *ScanOptions) AddFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	o.cluster.addFlags(cmd.PersistentFlags())
	fs.StringSliceVar(&o.Only, "check", nil, "Run only these checks (comma-separated names; see 'kubectl doctor checks')")
	fs.StringSliceVar(&o.Skip, "skip", nil, "Do not run these checks")
	fs.StringVarP(&o.Output, "output", "o", o.Output, "Output format: table, wide, json, yaml, sarif or junit")
	fs.StringVar(&o.FailOn, "fail-on", o.FailOn, "Exit 1 when a finding is at least this severe: critical, warning, info or never")
	o.offline.addFlags(fs)
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "Write a CPU profile of the scan to this file")
	fs.StringVar(&o.MemProfile, "memprofile", "", "Write a heap profile, taken after the checks ran, to this file")
	_ = fs.MarkHidden("cpuprofile")
	_ = fs.MarkHidden("memprofile")
	_ = cmd.RegisterFlagCompletionFunc("check", checkNames)
	_ = cmd.RegisterFlagCompletionFunc("skip", checkNames)
	o.ci.addFlags(cmd)
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(report.ScanFormats, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions([]string{"critical", "warning", "info", "never"}, cobra.ShellCompDirectiveNoFileComp))
}

// Complete resolves the cluster and the selected checks.
func (o *ScanOptions) Complete(cmd *cobra.Command) error {
	if o.offline.From != "" { // no cluster, no kubeconfig
		o.offline.complete(cmd)
		return nil
	}
	return o.cluster.complete(cmd)
}

// Validate rejects bad flag values, naming the flag.
func (o *ScanOptions) Validate() error {
	if !slices.Contains(report.ScanFormats, o.Output) {
		return usageError("--output must be one of %s; got %q", strings.Join(report.ScanFormats, ", "), o.Output)
	}
	sev, err := doctor.ParseSeverity(o.FailOn)
	if err != nil {
		return usageError("--fail-on: %v", err)
	}
	o.failOn = sev
	selected, err := o.ci.selectChecks(o.Only, o.Skip)
	if err != nil {
		return err
	}
	o.checks = selected
	return nil
}

// Run scans the cluster, prints the report and turns it into an exit code.
func (o *ScanOptions) Run(ctx context.Context) error {
	start := time.Now()
	if o.CPUProfile != "" {
		f, err := os.Create(o.CPUProfile)
		if err != nil {
			return &exitError{Code: ExitError, Err: err}
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return &exitError{Code: ExitError, Err: err}
		}
		defer pprof.StopCPUProfile()
	}
	ctx, cancel := context.WithTimeout(ctx, o.cluster.Timeout)
	defer cancel()

	snap, ver, cfg, err := o.load(ctx, ioStreams{o.Out, o.ErrOut}, doctor.Reads(o.checks)) // the cluster, or --from
	if err != nil {
		return err
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	r := doctor.Run(ctx, snap, o.checks, now)
	if o.MemProfile != "" {
		if err := writeHeapProfile(o.MemProfile); err != nil {
			return &exitError{Code: ExitError, Err: err}
		}
		runtime.KeepAlive(snap)
	}
	r.Cluster = doctor.Cluster{Server: cfg.Host, Version: ver.GitVersion, Namespace: o.cluster.Namespace}
	r.Requests = o.cluster.requests()
	r.Duration = doctor.Duration(time.Since(start))
	o.ci.apply(r, snap, now)

	if err := report.Print(o.Out, r, printOptions(o.Output, useColor(o.Out), o.checks, o.failOn)); err != nil {
		return &exitError{Code: ExitError, Err: fmt.Errorf("writing report: %w", err)}
	}
	o.cluster.printStats(o.ErrOut)
	if r.Fails(o.failOn) {
		return &exitError{Code: ExitFindings}
	}
	return nil
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("heap").WriteTo(f, 0)
}
