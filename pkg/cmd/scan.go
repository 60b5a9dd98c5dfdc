package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/connect"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
)

// ScanOptions is `kubectl doctor` without a subcommand.
type ScanOptions struct {
	cluster *connect.Options

	Only   []string
	Skip   []string
	Output string
	FailOn string
	// AllowIncomplete accepts a partial scan (a check errored, or none
	// could run): the exit code then follows the findings alone.
	AllowIncomplete bool
	// RequireComplete fails a scan in which a check did not run, or ran
	// without some of its data, for lack of input or permissions (exit 3
	// or 4), where the default passes it with the gaps reported.
	RequireComplete bool
	// printed records that the report was written, so that a later error
	// does not write a second one (reportFailure).
	printed bool

	// failOn and checks are derived from FailOn, Only and Skip by Complete.
	failOn doctor.Severity
	checks []*doctor.Check
	// ci is --config, --baseline and --show-suppressed (scan_ci.go).
	ci ciOptions
	// offline is --from (scan_offline.go).
	offline offlineOptions
	// fleet is --context a,b, --all-contexts and several --from inputs
	// (fleet.go).
	fleet fleetOptions
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
	return &ScanOptions{cluster: connect.New(userAgent()), Output: "table", FailOn: "critical", fleet: fleetOptions{Parallel: defaultParallel()}, IOStreams: streams}
}

// AddFlags registers the scan's flags on the root command.
func (o *ScanOptions) AddFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	o.cluster.AddFlags(cmd.PersistentFlags())
	fs.StringSliceVar(&o.Only, "check", nil, "Run only these checks (comma-separated names; see 'kubectl doctor checks')")
	fs.StringSliceVar(&o.Skip, "skip", nil, "Do not run these checks")
	fs.StringVarP(&o.Output, "output", "o", o.Output, "Output format: table, wide, json, yaml, sarif or junit")
	fs.StringVar(&o.FailOn, "fail-on", o.FailOn, "Exit 1 when a finding is at least this severe: critical, warning, info or never")
	fs.BoolVar(&o.AllowIncomplete, "allow-incomplete", false, "Accept a partial scan (a read failed or timed out, or no check could run): exit by the findings instead of 2")
	fs.BoolVar(&o.RequireComplete, "require-complete", false, "Fail unless every selected check ran with all its data: exit 3 when the input lacks some, 4 when reads were denied")
	o.offline.addFlags(fs)
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "Write a CPU profile of the scan to this file")
	fs.StringVar(&o.MemProfile, "memprofile", "", "Write a heap profile, taken after the checks ran, to this file")
	_ = fs.MarkHidden("cpuprofile")
	_ = fs.MarkHidden("memprofile")
	_ = cmd.RegisterFlagCompletionFunc("check", checkNames)
	_ = cmd.RegisterFlagCompletionFunc("skip", checkNames)
	o.ci.addFlags(cmd)
	o.addFleetFlags(cmd)
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(report.ScanFormats, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions([]string{"critical", "warning", "info", "never"}, cobra.ShellCompDirectiveNoFileComp))
}

// Complete derives what the flags imply: the severity gate and the checks
// to run (reading the --config and --baseline files). It reads no
// kubeconfig (Run connects), so a bad flag is reported even where no
// cluster is configured.
func (o *ScanOptions) Complete(cmd *cobra.Command) error {
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
	switch {
	case cmd == nil:
	case o.offline.From != "": // no cluster, no kubeconfig
		o.offline.complete(cmd)
	default:
		o.cluster.Complete(cmd)
	}
	if cmd != nil {
		o.completeFleet()
	}
	return nil
}

// Validate rejects options that cannot make a scan, naming the flag. It
// changes nothing.
func (o *ScanOptions) Validate() error {
	if err := validateOutput(o.Output, report.ScanFormats); err != nil {
		return err
	}
	if len(o.checks) == 0 {
		return usageError("--check/--skip: %v", doctor.ErrNoChecks)
	}
	if o.offline.KeepGoing && o.offline.From == "" {
		return usageError("--keep-going: only with --from (a live scan never stops at a failed read)")
	}
	if err := o.validateFleet(); err != nil {
		return err
	}
	return couldNotRun(o.cluster.Validate())
}

// Run scans the cluster, prints the report and turns it into an exit code
// (decide): 1 when a finding is at or above --fail-on (complete or not:
// more reads can only add findings), else 2 when the scan is incomplete
// (unless --allow-incomplete), else 0, or with --require-complete 2, 4 or
// 3 by what kept a check from its data.
func (o *ScanOptions) Run(ctx context.Context) error {
	if o.fleet.enabled() {
		return o.runFleet(ctx)
	}
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
	deadline := start.Add(o.cluster.Timeout)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()

	snap, source, err := o.load(ctx, start) // the cluster, or --from
	if err != nil {
		return err
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	// The checks run on what was read even after Ctrl-C: they only compute,
	// and the report of a partial scan is what the user asked for.
	checkCtx, cancelChecks := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancelChecks()
	r := doctor.Run(checkCtx, snap, o.checks, now)
	if len(o.offline.unreadable) > 0 {
		r.SetUnreadable(o.offline.unreadable)
	}
	if o.MemProfile != "" {
		if err := writeHeapProfile(o.MemProfile); err != nil {
			return &exitError{Code: ExitError, Err: err}
		}
		runtime.KeepAlive(snap)
	}
	r.Cluster = doctor.Cluster{Server: source, Version: snap.ServerVersion, Namespace: o.cluster.Namespace, AgesAsOf: o.offline.agesAsOf}
	if o.offline.From == "" {
		r.Cluster.Context = o.clusterName()
	}
	stamp(r)
	r.Requests, r.Retries = o.cluster.Requests()
	r.Duration = doctor.Duration(time.Since(start))
	o.ci.applyFor(r, snap, now, o.clusterName())

	o.printed = true
	if err := report.Print(o.Out, r, printOptions(o.Output, useColor(o.Out), o.ci.all, o.failOn)); err != nil {
		return &exitError{Code: ExitError, Err: fmt.Errorf("writing report: %w", err)}
	}
	o.cluster.PrintStats(o.ErrOut)
	if err := o.ci.writeBaseline(r); err != nil {
		return &exitError{Code: ExitError, Err: err}
	}
	out := o.outcome(r)
	out.Interrupted = errors.Is(ctx.Err(), context.Canceled)
	return decide(out).exit(o.ErrOut)
}

// outcome is what the exit code of a single scan depends on.
func (o *ScanOptions) outcome(r *doctor.Report) outcome {
	return outcome{Fails: r.Fails(o.failOn), Incomplete: r.IncompleteSummary(), Gaps: r.GapCauses(), Coverage: r.CoverageLine(),
		AllowIncomplete: o.AllowIncomplete, RequireComplete: o.RequireComplete}
}

// reportFailure writes the report of a scan that could not run (exit 2)
// in the format CI asked for, SARIF or JUnit, so that an upload step that
// always runs finds a file saying why instead of an empty one. Other
// formats leave stdout empty; the error is on stderr either way.
func (o *ScanOptions) reportFailure(err error) error {
	if err == nil || o.printed || (o.Output != "sarif" && o.Output != "junit") {
		return err
	}
	var ee *exitError
	if errors.As(err, &ee) && ee.Err == nil {
		return err
	}
	o.printFailure(err)
	return err
}

func (o *ScanOptions) printFailure(err error) {
	o.printed = true
	r := doctor.FailedReport(oneLine(err.Error()))
	_ = report.Print(o.Out, r, printOptions(o.Output, false, o.checks, o.failOn))
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("heap").WriteTo(f, 0)
}

// stamp records when the report was made and by which kubectl-doctor.
func stamp(r *doctor.Report) {
	r.GeneratedAt, r.DoctorVersion = time.Now().UTC().Format(time.RFC3339), versionString()
}
