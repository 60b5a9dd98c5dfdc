package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/connect"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/serve"
)

// ServeOptions is `kubectl doctor serve`: scan every --interval and serve
// the last report as Prometheus metrics and JSON.
type ServeOptions struct {
	scan     *ScanOptions
	Interval time.Duration
	Listen   string
	// ShutdownGrace bounds how long in-flight HTTP requests may take after
	// SIGTERM.
	ShutdownGrace time.Duration

	genericiooptions.IOStreams
}

// NewServeOptions returns serve's defaults: every 5 minutes on :8080, with
// the cluster flags the root command shares.
func NewServeOptions(streams genericiooptions.IOStreams, cluster *connect.Options) *ServeOptions {
	return &ServeOptions{
		scan:     &ScanOptions{cluster: cluster, Output: "json", FailOn: "never", fleet: fleetOptions{Parallel: defaultParallel()}, IOStreams: streams},
		Interval: 5 * time.Minute, Listen: "127.0.0.1:8080", ShutdownGrace: 5 * time.Second, IOStreams: streams,
	}
}

func newServeCommand(streams genericiooptions.IOStreams, cluster *connect.Options) *cobra.Command {
	o := NewServeOptions(streams, cluster)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Scan every --interval and serve the findings as Prometheus metrics and JSON",
		Long: `serve runs the scan every --interval and serves the last report on --listen:

  /metrics  Prometheus metrics: one series per finding (check, severity,
            namespace, kind, name, cause; its value the number of objects it
            stands for), per-check status, scan duration, last scan time and
            completeness, API server requests, errors and bytes per scan,
            and the Go and process collectors (docs/fleet.md lists them all)
  /report   the last report, as 'kubectl doctor -o json' prints it
  /healthz  200 while the process runs
  /readyz   200 once the first scan has finished

Inside a pod it uses the pod's ServiceAccount (in-cluster config); elsewhere
the kubeconfig, and --context a,b or --all-contexts serve several clusters,
each series labelled with its cluster. A scan that fails keeps the previous
report, marked stale (kubectl_doctor_report_stale 1). SIGTERM stops it
gracefully. deploy/ holds the manifests ('kubectl apply -k deploy').`,
		Example: `  # In a cluster: see deploy/ (kubectl apply -k deploy)
  # On a laptop, two clusters, every minute:
  kubectl doctor serve --context prod,staging --interval 1m --listen 127.0.0.1:9090`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Complete(cmd); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// AddFlags registers serve's flags; the cluster flags are the root's.
func (o *ServeOptions) AddFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.DurationVar(&o.Interval, "interval", o.Interval, "Time between the start of two scans")
	fs.StringVar(&o.Listen, "listen", o.Listen, "Address to serve /metrics, /report, /healthz and /readyz on (default: this machine only, as /report names objects; :8080 in a pod)")
	fs.StringSliceVar(&o.scan.Only, "check", nil, "Run only these checks")
	fs.StringSliceVar(&o.scan.Skip, "skip", nil, "Do not run these checks")
	o.scan.ci.addFlag(fs)
	o.scan.fleet.addFlags(fs)
	_ = cmd.RegisterFlagCompletionFunc("check", checkNames)
	_ = cmd.RegisterFlagCompletionFunc("skip", checkNames)
}

// Complete selects the checks (reading --config) and the clusters.
func (o *ServeOptions) Complete(cmd *cobra.Command) error {
	if !cmd.Flags().Changed("listen") && os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		// In a pod, the kubelet's probes and Prometheus come from outside
		// it: the loopback default would leave them refused.
		o.Listen = ":8080"
	}
	return o.scan.Complete(cmd)
}

// Validate rejects bad flags, naming the flag.
func (o *ServeOptions) Validate() error {
	if o.Interval < time.Second {
		return usageError("--interval must be at least 1s, got %s", o.Interval)
	}
	if o.Listen == "" {
		return usageError("--listen: an address is required")
	}
	if o.scan.offline.From != "" {
		return usageError("--from: serve scans live clusters only")
	}
	return o.scan.Validate()
}

// Run serves until ctx ends (SIGTERM, Ctrl-C), scanning every Interval.
func (o *ServeOptions) Run(ctx context.Context) error {
	var targets []fleetTarget
	var names []string
	fleet := o.scan.fleet.enabled()
	if fleet {
		ts, err := o.scan.fleetTargets()
		if err != nil {
			return err
		}
		targets = ts
	} else {
		targets = []fleetTarget{{name: o.scan.clusterName()}}
	}
	for _, t := range targets {
		names = append(names, t.name)
	}
	srv := serve.New(names, fleet)
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return usageError("--listen: %v", err)
	}
	httpSrv := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- httpSrv.Serve(ln) }()
	fmt.Fprintf(o.ErrOut, "kubectl doctor: serving /metrics, /report, /healthz and /readyz on http://%s; scanning %s every %s\n",
		ln.Addr(), report.Esc(strings.Join(displayNames(names), ", ")), o.Interval)

	timer := time.NewTimer(0)
	defer timer.Stop()
	var serveErr error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case serveErr = <-served:
			break loop
		case <-timer.C:
		}
		next := time.Now().Add(o.Interval)
		o.scanAll(ctx, srv, targets, fleet)
		timer.Reset(max(time.Until(next), 0))
	}
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.ShutdownGrace)
	defer cancel()
	if err := httpSrv.Shutdown(shutCtx); err != nil {
		return &exitError{Code: ExitError, Err: fmt.Errorf("shutting down: %w", err)}
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return &exitError{Code: ExitError, Err: fmt.Errorf("serving: %w", serveErr)}
	}
	fmt.Fprintln(o.ErrOut, "kubectl doctor: stopped")
	return nil
}

func displayNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if n == "" {
			out[i] = "the cluster"
		}
	}
	return out
}

// scanAll scans every target, --parallel at a time, and records each
// outcome; a scan cut short by shutdown is not recorded.
func (o *ServeOptions) scanAll(ctx context.Context, srv *serve.Server, targets []fleetTarget, fleet bool) {
	sem := make(chan struct{}, o.scan.fleet.Parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			var log bytes.Buffer
			var cost connect.Cost
			start := time.Now()
			r, err := o.scan.scanContextCost(ctx, t.name, &log, &cost)
			var ee *exitError
			if errors.As(err, &ee) && ee.Err != nil {
				err = ee.Err
			}
			if ctx.Err() != nil {
				return
			}
			sc := serve.Scan{Cluster: t.name, Report: r, Err: err, Started: start, Duration: time.Since(start),
				Requests: cost.Requests, Errors: cost.Errors, Bytes: cost.Bytes}
			srv.Record(sc)
			mu.Lock()
			defer mu.Unlock()
			for _, line := range strings.Split(strings.TrimRight(log.String(), "\n"), "\n") {
				if line != "" {
					fmt.Fprintf(o.ErrOut, "[%s] %s\n", report.Esc(displayNames([]string{t.name})[0]), line)
				}
			}
			fmt.Fprintln(o.ErrOut, "kubectl doctor: "+report.Esc(serve.Describe(sc)))
		}()
	}
	wg.Wait()
}
