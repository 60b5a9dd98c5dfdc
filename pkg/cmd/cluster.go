package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
	k8sversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// clusterOptions are the flags every command that reads the cluster shares:
// kubectl's own (through ConfigFlags), -A, --timeout and --stats.
type clusterOptions struct {
	flags         *genericclioptions.ConfigFlags
	allNamespaces bool
	Timeout       time.Duration
	Stats         bool

	// Namespace is the scope of namespaced reads after Complete: "" for the
	// whole cluster unless -n was given.
	Namespace string
	// ContextNamespace is -n, or else the kubeconfig context's namespace:
	// where a named workload is looked up, as kubectl does.
	ContextNamespace string

	// Config is the REST config after Complete; tests may set it directly.
	Config *rest.Config
	stats  *snapshot.Stats
}

// defaultHost is what client-go falls back to with no kubeconfig at all.
const defaultHost = "http://localhost:8080"

func newClusterOptions() *clusterOptions {
	return &clusterOptions{
		flags:   genericclioptions.NewConfigFlags(true),
		Timeout: 60 * time.Second,
	}
}

func (o *clusterOptions) addFlags(fs *pflag.FlagSet) {
	o.flags.AddFlags(fs)
	fs.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "Scan every namespace (the default; overrides -n)")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "Give up on the whole scan after this long (exit 2)")
	fs.BoolVarP(&o.Stats, "stats", "v", false, "Print the API requests made, with bytes and time for each, to stderr")
}

// complete resolves the namespace scope and the REST config.
func (o *clusterOptions) complete(cmd *cobra.Command) error {
	if o.Timeout <= 0 {
		return usageError("--timeout must be positive, got %s", o.Timeout)
	}
	loader := o.flags.ToRawKubeConfigLoader()
	ns, _, err := loader.Namespace()
	if err != nil {
		return usageError("reading kubeconfig: %v", err)
	}
	o.ContextNamespace = ns
	if f := cmd.Flags().Lookup("namespace"); f != nil && f.Changed && !o.allNamespaces {
		o.Namespace = ns
	}
	if o.Config != nil {
		return nil
	}
	cfg, err := o.flags.ToRESTConfig()
	if err != nil {
		return usageError("reading kubeconfig: %v", err)
	}
	if raw, err := loader.RawConfig(); err == nil && len(raw.Clusters) == 0 && cfg.Host == defaultHost {
		// client-go would silently try http://localhost:8080.
		return usageError("no cluster configured: set KUBECONFIG, --kubeconfig, or --server")
	}
	o.Config = cfg
	return nil
}

// restConfig is the config scans use: wire-level stats, gentle QPS, and
// server warnings on stderr rather than through klog.
func (o *clusterOptions) restConfig(errOut io.Writer) *rest.Config {
	cfg := rest.CopyConfig(o.Config)
	o.stats = &snapshot.Stats{}
	cfg.Wrap(o.stats.Wrap)
	cfg.QPS, cfg.Burst = 20, 40
	cfg.UserAgent = "kubectl-doctor/" + versionString()
	cfg.WarningHandler = rest.NewWarningWriter(errOut, rest.WarningWriterOptions{Deduplicate: true})
	return cfg
}

// serverVersion is the first request of every scan: it proves the server is
// reachable (exit 2 fast when it is not) and names the cluster in the report.
func serverVersion(ctx context.Context, cfg *rest.Config) (*k8sversion.Info, error) {
	c := rest.CopyConfig(cfg)
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	client, err := rest.UnversionedRESTClientFor(c)
	if err != nil {
		return nil, err
	}
	body, err := client.Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var v k8sversion.Info
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("decoding /version: %w", err)
	}
	return &v, nil
}

// load connects and lists what the reads need, with a spinner on a TTY.
func (o *clusterOptions) load(ctx context.Context, streams ioStreams, reads []snapshot.Resource) (*snapshot.Snapshot, *k8sversion.Info, *rest.Config, error) {
	cfg := o.restConfig(streams.ErrOut)
	v, err := serverVersion(ctx, cfg)
	if err != nil {
		return nil, nil, nil, connectError(ctx, cfg, err, o.Timeout)
	}
	progress := newProgress(streams.ErrOut, len(snapshot.Plan(reads)))
	defer progress.done()
	snap, err := snapshot.Load(ctx, cfg, reads, snapshot.LoadOptions{Namespace: o.Namespace, Progress: progress.step})
	if err != nil {
		return nil, nil, nil, connectError(ctx, cfg, err, o.Timeout)
	}
	snap.ServerVersion = v.GitVersion
	return snap, v, cfg, nil
}

func connectError(ctx context.Context, cfg *rest.Config, err error, timeout time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &exitError{Code: ExitError, Err: fmt.Errorf("scan timed out after %s (raise --timeout)", timeout)}
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return &exitError{Code: ExitError, Err: errors.New("interrupted")}
	}
	return &exitError{Code: ExitError, Err: fmt.Errorf("cannot reach the API server at %s: %v", cfg.Host, err)}
}

// printStats writes what the scan cost the API server, one line a request.
func (o *clusterOptions) printStats(w io.Writer) {
	if !o.Stats || o.stats == nil {
		return
	}
	reqs := o.stats.Requests()
	var bytes int64
	var total time.Duration
	for _, r := range reqs {
		bytes += r.Bytes
		total += r.Duration
	}
	fmt.Fprintf(w, "%s, %s received:\n", doctor.Plural(len(reqs), "API request", "API requests"), humanBytes(bytes))
	for _, r := range reqs {
		fmt.Fprintf(w, "  %-6s %3d %9s %8s  %s\n", r.Method, r.Status, humanBytes(r.Bytes),
			r.Duration.Round(time.Millisecond), report.Esc(r.Path))
	}
}

func (o *clusterOptions) requests() int {
	if o.stats == nil {
		return 0
	}
	return len(o.stats.Requests())
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func usageError(format string, args ...any) error {
	return &exitError{Code: ExitError, Err: fmt.Errorf(format, args...)}
}

// ioStreams is the subset of IOStreams the helpers need.
type ioStreams struct {
	Out, ErrOut io.Writer
}

// isTerminal says whether w is a terminal (for colour and the spinner).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// useColor follows the NO_COLOR convention (no-color.org) and only colours terminals.
func useColor(w io.Writer) bool {
	_, noColor := os.LookupEnv("NO_COLOR")
	return !noColor && isTerminal(w)
}

// progress is a one-line status on stderr, shown only on a terminal so that
// CI logs and pipes stay clean.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	total int
	n     int
	on    bool
}

func newProgress(w io.Writer, total int) *progress {
	return &progress{w: w, total: total, on: isTerminal(w)}
}

func (p *progress) step(r snapshot.Resource) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	fmt.Fprintf(p.w, "\r\033[Kkubectl doctor: listing %s (%d/%d)…", r, p.n, p.total)
}

func (p *progress) done() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
