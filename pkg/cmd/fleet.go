package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/connect"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/offline"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// fleetOptions make one run over several clusters: --context a,b,c,
// --all-contexts, or --from with several captures (a comma-separated list,
// or a directory holding only kubectl-doctor dumps).
type fleetOptions struct {
	AllContexts bool
	Parallel    int

	// contexts are the kubeconfig contexts of a live fleet run (resolved by
	// Run: --all-contexts reads the kubeconfig); froms the captures of an
	// offline one. At most one of the two is a fleet.
	contexts []string
	froms    []string
	live     bool
}

// defaultParallel scans a few clusters at a time: each scan mostly waits
// on its API server, but a laptop decodes every response.
func defaultParallel() int { return max(2, min(8, 2*runtime.NumCPU())) }

func (o *fleetOptions) addFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.AllContexts, "all-contexts", false, "Scan every context of the kubeconfig (all files in KUBECONFIG, merged as kubectl does) and print one merged report")
	fs.IntVar(&o.Parallel, "parallel", defaultParallel(), "In a fleet run (--context a,b, --all-contexts, several --from inputs), scan this many clusters at once")
}

// enabled says whether the run is a fleet run.
func (o *fleetOptions) enabled() bool { return o.live || len(o.froms) > 0 }

// completeFleet decides whether the flags ask for a fleet run; it reads no
// kubeconfig (Run resolves --all-contexts).
func (o *ScanOptions) completeFleet() {
	f := &o.fleet
	if o.offline.From != "" {
		var froms []string
		for _, p := range strings.Split(o.offline.From, ",") {
			if p = strings.TrimSpace(p); p != "" {
				froms = append(froms, p)
			}
		}
		if len(froms) == 1 {
			if fi, err := os.Stat(froms[0]); err == nil && fi.IsDir() {
				froms = offline.DumpDir(froms[0])
			} else {
				froms = nil
			}
		}
		f.froms = froms
		return
	}
	if ctx := o.cluster.Flags.Context; ctx != nil && strings.Contains(*ctx, ",") {
		for _, c := range strings.Split(*ctx, ",") {
			if c = strings.TrimSpace(c); c != "" && !contains(f.contexts, c) {
				f.contexts = append(f.contexts, c)
			}
		}
		f.live = true
	}
	if f.AllContexts {
		f.live = true
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// validateFleet rejects fleet flags that cannot go together.
func (o *ScanOptions) validateFleet() error {
	f := &o.fleet
	if f.enabled() && f.Parallel < 1 {
		return usageError("--parallel must be at least 1, got %d", f.Parallel)
	}
	if f.AllContexts && o.offline.From != "" {
		return usageError("--all-contexts: not with --from (name the captures in --from instead)")
	}
	if f.AllContexts && len(f.contexts) > 0 {
		return usageError("--all-contexts: not with --context")
	}
	if o.offline.From != "" && len(f.froms) == 0 && strings.Contains(o.offline.From, ",") {
		return usageError("--from: no input in %q", o.offline.From)
	}
	for _, p := range f.froms {
		if p == "-" {
			return usageError("--from: standard input (-) cannot be one of several inputs")
		}
	}
	return nil
}

// fleetTarget is one cluster of a fleet run.
type fleetTarget struct {
	name string
	scan func(ctx context.Context, errOut io.Writer) (*doctor.Report, error)
}

// runFleet scans every cluster, --parallel at a time, each with its own
// --timeout; a cluster that cannot be scanned is reported as such and
// never stops the others. It prints one merged report and exits by the
// worst cluster (decide): 1 when any finding of any cluster is at or above
// --fail-on, else 2 when a cluster's scan is incomplete or failed (unless
// --allow-incomplete), else, with --require-complete, 2, 4 or 3 by the worst
// gap of any cluster (decide), else 0.
func (o *ScanOptions) runFleet(ctx context.Context) error {
	start := time.Now()
	targets, err := o.fleetTargets()
	if err != nil {
		return err
	}
	results := make([]doctor.ClusterResult, len(targets))
	logs := make([]bytes.Buffer, len(targets))
	sem := make(chan struct{}, o.fleet.Parallel)
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				results[i] = doctor.ClusterResult{Name: t.name, Err: errors.New("interrupted before the scan began")}
				return
			}
			r, err := safeScan(ctx, t, &logs[i])
			results[i] = doctor.ClusterResult{Name: t.name, Report: r, Err: err}
		}()
	}
	wg.Wait()
	f := doctor.Merge(results, doctor.Duration(time.Since(start)))

	if err := report.PrintFleet(o.Out, f, printOptions(o.Output, useColor(o.Out), o.checks, o.failOn)); err != nil {
		return &exitError{Code: ExitError, Err: fmt.Errorf("writing report: %w", err)}
	}
	// Each cluster's messages, in cluster order, each line naming it.
	order := make([]int, len(targets))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return targets[order[a]].name < targets[order[b]].name })
	for _, i := range order {
		for _, line := range strings.Split(strings.TrimRight(logs[i].String(), "\n"), "\n") {
			if line != "" {
				fmt.Fprintf(o.ErrOut, "[%s] %s\n", report.Esc(targets[i].name), line)
			}
		}
	}
	gaps, coverage := fleetCoverage(results)
	return decide(outcome{Fails: f.Fails(o.failOn), Incomplete: report.Esc(f.IncompleteSummary()), AllowIncomplete: o.AllowIncomplete,
		RequireComplete: o.RequireComplete, Gaps: gaps, Coverage: report.Esc(coverage), Interrupted: errors.Is(ctx.Err(), context.Canceled)}).exit(o.ErrOut)
}

// fleetCoverage is what --require-complete judges in a fleet: the causes of
// every cluster's gaps, and the coverage line of each cluster that has
// some, named ("prod: 1 problem found by ...; dev: ...").
func fleetCoverage(results []doctor.ClusterResult) (map[string]bool, string) {
	gaps := map[string]bool{}
	var lines []string
	for _, r := range results {
		if r.Report == nil {
			continue
		}
		causes := r.Report.GapCauses()
		for c := range causes {
			gaps[c] = true
		}
		if len(causes) > 0 {
			lines = append(lines, r.Name+": "+r.Report.CoverageLine())
		}
	}
	sort.Strings(lines)
	return gaps, strings.Join(lines, "; ")
}

// safeScan runs one cluster's scan; a panic in it is that cluster's error.
func safeScan(ctx context.Context, t fleetTarget, errOut io.Writer) (r *doctor.Report, err error) {
	defer func() {
		if v := recover(); v != nil {
			r, err = nil, fmt.Errorf("internal error: %v", v)
		}
	}()
	r, err = t.scan(ctx, errOut)
	var ee *exitError
	if errors.As(err, &ee) && ee.Err != nil {
		err = ee.Err
	}
	return r, err
}

// fleetTargets lists the clusters of the run: the captures of --from, the
// contexts of --context, or every context of the kubeconfig.
func (o *ScanOptions) fleetTargets() ([]fleetTarget, error) {
	var out []fleetTarget
	if len(o.fleet.froms) > 0 {
		seen := map[string]bool{}
		for _, p := range o.fleet.froms {
			name := offline.ClusterName(p)
			if seen[name] {
				name = p // two files of one name in different directories
			}
			seen[name] = true
			out = append(out, fleetTarget{name: name, scan: func(ctx context.Context, errOut io.Writer) (*doctor.Report, error) {
				return o.scanCapture(ctx, name, p, errOut)
			}})
		}
		return out, nil
	}
	names := o.fleet.contexts
	raw, err := o.cluster.Flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, usageError("reading kubeconfig: %v", err)
	}
	for _, name := range names {
		if _, ok := raw.Contexts[name]; !ok {
			have := slices.Sorted(maps.Keys(raw.Contexts))
			return nil, usageError("--context: context %q not found in the kubeconfig (it has: %s)", name, strings.Join(have, ", "))
		}
	}
	if o.fleet.AllContexts {
		for name := range raw.Contexts {
			names = append(names, name)
		}
		sort.Strings(names)
		if len(names) == 0 {
			return nil, usageError("--all-contexts: the kubeconfig has no context")
		}
	}
	for _, name := range names {
		out = append(out, fleetTarget{name: name, scan: func(ctx context.Context, errOut io.Writer) (*doctor.Report, error) {
			return o.scanContext(ctx, name, errOut)
		}})
	}
	return out, nil
}

// scanContext scans one kubeconfig context as a single scan would, with
// its own --timeout; stderr messages go to errOut.
func (o *ScanOptions) scanContext(ctx context.Context, name string, errOut io.Writer) (*doctor.Report, error) {
	return o.scanContextCost(ctx, name, errOut, nil)
}

// scanContextCost is scanContext, filling cost (when not nil) even when
// the scan fails. An empty name is the kubeconfig's current context, or
// the in-cluster config when there is no kubeconfig.
func (o *ScanOptions) scanContextCost(ctx context.Context, name string, errOut io.Writer, cost *connect.Cost) (*doctor.Report, error) {
	start := time.Now()
	cl := o.cluster.ForContext(name)
	if name == "" {
		cl.Flags.Context = o.cluster.Flags.Context
	}
	if cost != nil {
		defer func() { *cost = cl.Cost() }()
	}
	ctx, cancel := context.WithDeadline(ctx, start.Add(cl.Timeout))
	defer cancel()
	raw, err := cl.Flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig: %w", err)
	}
	if _, ok := raw.Contexts[name]; !ok && name != "" {
		return nil, fmt.Errorf("context %q not found in the kubeconfig", name)
	}
	if err := cl.Connect(); err != nil {
		return nil, err
	}
	snap, err := cl.Load(ctx, errOut, o.checks, cl.ReadDeadline(start), true)
	if err != nil {
		return nil, err
	}
	r := o.runChecks(ctx, snap, o.Now, start.Add(cl.Timeout), name)
	r.Cluster = doctor.Cluster{Server: cl.Config.Host, Version: snap.ServerVersion, Context: name, Namespace: cl.Namespace}
	if name == "" {
		r.Cluster.Context = raw.CurrentContext
		if c := o.cluster.Flags.Context; c != nil && *c != "" {
			r.Cluster.Context = *c
		}
	}
	stamp(r)
	r.Requests, r.Retries = cl.Requests()
	r.Duration = doctor.Duration(time.Since(start))
	cl.PrintStats(errOut)
	return r, nil
}

// scanCapture scans one --from input of an offline fleet, at its own
// capture time.
func (o *ScanOptions) scanCapture(ctx context.Context, name, path string, errOut io.Writer) (*doctor.Report, error) {
	start := time.Now()
	res, err := offline.Load(path, offline.Options{Namespace: o.offline.namespace, KeepGoing: o.offline.KeepGoing})
	if err != nil {
		var ie *offline.InputError
		if errors.As(err, &ie) {
			return nil, fmt.Errorf("--from %s", ie.Error())
		}
		return nil, fmt.Errorf("--from %s: %v", path, err)
	}
	now := o.Now
	if now.IsZero() {
		now = res.Now
	}
	printInputSummary(errOut, path, res, now)
	r := o.runChecks(ctx, res.Snapshot, now, start.Add(o.cluster.Timeout), name)
	if u := unreadableLines(res); len(u) > 0 {
		r.SetUnreadable(u)
	}
	source := path
	if res.Header != nil && res.Header.Server != "" {
		source = res.Header.Server
	}
	r.Cluster = doctor.Cluster{Server: source, Version: res.Snapshot.ServerVersion, Namespace: o.offline.namespace}
	stamp(r)
	r.Duration = doctor.Duration(time.Since(start))
	return r, nil
}

// runChecks runs the selected checks on snap and applies the config and
// baseline as scoped to the cluster named name.
func (o *ScanOptions) runChecks(ctx context.Context, snap *snapshot.Snapshot, now, deadline time.Time, name string) *doctor.Report {
	if now.IsZero() {
		now = time.Now()
	}
	checkCtx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	r := doctor.Run(checkCtx, snap, o.checks, now)
	o.ci.applyFor(r, snap, now, name)
	return r
}

// addFleetFlags registers the fleet flags next to the scan's.
func (o *ScanOptions) addFleetFlags(cmd *cobra.Command) {
	o.fleet.addFlags(cmd.Flags())
}

// clusterName names the cluster of a single scan for cluster-scoped ignore
// entries and baselines: the --from file's name, else the kubeconfig
// context in use ("" when there is none).
func (o *ScanOptions) clusterName() string {
	if o.offline.From != "" {
		if o.offline.From == "-" {
			return ""
		}
		return offline.ClusterName(o.offline.From)
	}
	if c := o.cluster.Flags.Context; c != nil && *c != "" {
		return *c
	}
	raw, err := o.cluster.Flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return ""
	}
	return raw.CurrentContext
}
