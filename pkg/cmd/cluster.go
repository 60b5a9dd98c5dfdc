package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	k8sversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// clusterOptions are the flags every command that reads the cluster shares:
// kubectl's own (through ConfigFlags), -A, --timeout, --stats and -v.
type clusterOptions struct {
	flags         *genericclioptions.ConfigFlags
	allNamespaces bool
	Timeout       time.Duration
	Stats         bool
	// LogLevel is kubectl's -v: client-go's log verbosity on stderr
	// (6 logs each request, 8 their bodies).
	LogLevel int32

	// namespaceSet records whether -n was given (Complete).
	namespaceSet bool
	// Namespace is the scope of namespaced reads after connect: "" for the
	// whole cluster unless -n was given.
	Namespace string
	// ContextNamespace is -n, or else the kubeconfig context's namespace:
	// where a named workload is looked up, as kubectl does.
	ContextNamespace string

	// Config is the REST config after connect; tests may set it directly.
	Config *rest.Config
	// retry is the backoff of transient read failures; zero is
	// snapshot.DefaultRetry (tests shorten it).
	retry wait.Backoff
	stats *snapshot.Stats
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
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "Give up on the scan after this long; reads still unanswered at 90% of it fail alone and the rest is reported")
	fs.BoolVar(&o.Stats, "stats", false, "Print the API requests made, with bytes, time and retries for each, to stderr")
	fs.Int32VarP(&o.LogLevel, "v", "v", 0, "Log level of client-go's logs on stderr, as kubectl's -v (6 shows each request)")
}

// complete records what the flags say about the cluster; the kubeconfig
// is read later, by connect, so a bad flag is reported even where no
// cluster is configured.
func (o *clusterOptions) complete(cmd *cobra.Command) {
	if f := cmd.Flags().Lookup("namespace"); f != nil && f.Changed && !o.allNamespaces {
		o.namespaceSet = true
	}
}

// validate rejects bad cluster flags, naming the flag.
func (o *clusterOptions) validate() error {
	if o.Timeout <= 0 {
		return usageError("--timeout must be positive, got %s", o.Timeout)
	}
	if o.LogLevel < 0 {
		return usageError("-v must be 0 or more, got %d", o.LogLevel)
	}
	return nil
}

// applyLogLevel sends client-go's klog output to w at -v's verbosity, as
// kubectl -v does; at 0 main keeps klog silent.
func (o *clusterOptions) applyLogLevel(w io.Writer) error {
	if o.LogLevel <= 0 {
		return nil // a negative -v is rejected by validate
	}
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for name, value := range map[string]string{"v": strconv.Itoa(int(o.LogLevel)), "logtostderr": "false", "alsologtostderr": "false"} {
		if err := fs.Set(name, value); err != nil {
			return fmt.Errorf("internal: setting klog -%s: %w", name, err)
		}
	}
	klog.SetOutput(w)
	return nil
}

// connect reads the kubeconfig: the namespace scope and the REST config.
func (o *clusterOptions) connect() error {
	loader := o.flags.ToRawKubeConfigLoader()
	ns, _, err := loader.Namespace()
	if err != nil {
		return usageError("reading kubeconfig: %v", err)
	}
	o.ContextNamespace = ns
	if o.namespaceSet {
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

// readShare is the part of --timeout reads may use: the rest is for the
// checks and the report, so a hung read never costs what was read.
const readShare = 0.9

// readDeadline is when reads started at start must have ended.
func (o *clusterOptions) readDeadline(start time.Time) time.Time {
	return start.Add(time.Duration(float64(o.Timeout) * readShare))
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
// client-go retries it on a dropped connection or a Retry-After; a 5xx is
// retried here, briefly: a server that times out is unreachable.
func serverVersion(ctx context.Context, cfg *rest.Config) (string, error) {
	c := rest.CopyConfig(cfg)
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	client, err := rest.UnversionedRESTClientFor(c)
	if err != nil {
		return "", err
	}
	ctx = snapshot.WithRead(ctx, "/version")
	var body []byte
	// Timeouts are not retried here: a server that does not answer its
	// first request is unreachable, and the user is told so at once.
	backoff := snapshot.DefaultRetry
	backoff.Steps = 3
	answered5xx := func(err error) bool {
		var status apierrors.APIStatus
		return errors.As(err, &status) && snapshot.Transient(err)
	}
	err = snapshot.Retry(ctx, backoff, answered5xx, func() error {
		var err error
		body, err = client.Get().AbsPath("/version").Do(ctx).Raw()
		return err
	})
	if err != nil {
		return "", err
	}
	var v k8sversion.Info
	if err := json.Unmarshal(body, &v); err != nil {
		return "", fmt.Errorf("decoding /version: %w", err)
	}
	return v.GitVersion, nil
}

// namespaceMissing says -n names a namespace the server does not have: a
// typo must not read as a clean bill of health. One GET, from the watch
// cache; a user who may not get namespaces is not stopped (the reads say
// what they could see).
func namespaceMissing(ctx context.Context, cfg *rest.Config, ns string) bool {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return false
	}
	_, err = cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{ResourceVersion: "0"})
	return apierrors.IsNotFound(err)
}

// load connects and reads what the checks need, with a spinner on a TTY.
// Reads must end by readDeadline; each failure costs only the checks that
// needed it, and load fails only when the server cannot be reached at all.
// With review, the user's access is reviewed first: reads it denies are
// not sent, and stderr says which checks that skips.
func (o *clusterOptions) load(ctx context.Context, streams ioStreams, checks []*doctor.Check, readDeadline time.Time, review bool) (*snapshot.Snapshot, error) {
	cfg := o.restConfig(streams.ErrOut)
	readCtx, cancel := context.WithDeadline(ctx, readDeadline)
	defer cancel()
	v, err := serverVersion(readCtx, cfg)
	if err != nil {
		return nil, connectError(readCtx, cfg, err, o.Timeout)
	}
	if o.Namespace != "" && namespaceMissing(readCtx, cfg, o.Namespace) {
		return nil, &exitError{Code: ExitError, Err: fmt.Errorf("namespace %q not found: nothing in it to check (kubectl get namespaces)", o.Namespace)}
	}
	reads := doctor.Reads(checks)
	opts := snapshot.LoadOptions{Namespace: o.Namespace, Retry: o.retry}
	if review {
		access, err := snapshot.ReviewAccess(readCtx, cfg, reads, o.Namespace)
		if err != nil {
			// No review (an old or locked-down server): forbidden reads
			// are found out by reading, and skipped the same way.
			klog.V(2).InfoS("access review failed", "err", err)
		} else {
			opts.Access = access
			if line := deniedLine(access, checks, o.Namespace); line != "" {
				fmt.Fprintln(streams.ErrOut, "warning: "+line)
			}
		}
	}
	progress := newProgress(streams.ErrOut, len(snapshot.Plan(reads)))
	opts.Progress = progress.step
	snap, err := snapshot.Load(readCtx, cfg, reads, opts)
	progress.done()
	if err != nil {
		return nil, &exitError{Code: ExitError, Err: err}
	}
	snap.ServerVersion = v
	return snap, nil
}

// deniedLine says, before the scan, which reads the access review denied
// and which checks that skips; "" when nothing is denied.
func deniedLine(a *snapshot.Access, checks []*doctor.Check, ns string) string {
	if len(a.Denied) == 0 {
		return ""
	}
	byVerb := map[string][]string{}
	var verbs []string
	for _, r := range snapshot.Plan(doctor.Reads(checks)) {
		verb, ok := a.Denies(r)
		if !ok {
			continue
		}
		if _, seen := byVerb[verb]; !seen {
			verbs = append(verbs, verb)
		}
		what := r.Path
		if what == "" {
			what = r.GVR().GroupResource().String()
		}
		if !slices.Contains(byVerb[verb], what) {
			byVerb[verb] = append(byVerb[verb], what)
		}
	}
	var may []string
	for _, v := range verbs {
		may = append(may, v+" "+strings.Join(byVerb[v], ", "))
	}
	var skipped []string
	for _, c := range checks {
		for _, r := range c.Reads {
			if _, ok := a.Denies(r); ok {
				skipped = append(skipped, c.Name)
				break
			}
		}
	}
	scope := "in all namespaces"
	if ns != "" {
		scope = "in namespace " + ns
	}
	line := fmt.Sprintf("this user may not %s (%s, by SelfSubjectRulesReview)", strings.Join(may, "; nor "), scope)
	if len(skipped) > 0 {
		line += fmt.Sprintf(": %s skipped: %s", doctor.Plural(len(skipped), "check", "checks"), strings.Join(skipped, ", "))
	}
	return line
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

// printStats writes what the scan cost the API server, one line a read:
// its last request, and the statuses of the attempts retried before it.
func (o *clusterOptions) printStats(w io.Writer) {
	if !o.Stats || o.stats == nil {
		return
	}
	reads := o.stats.Reads()
	var bytes int64
	var retried, retries int
	for _, r := range reads {
		for _, q := range r.Requests {
			bytes += q.Bytes
		}
		if r.Retries() > 0 {
			retried++
			retries += r.Retries()
		}
	}
	fmt.Fprintf(w, "%s, %s received:\n", doctor.Plural(len(reads), "API request", "API requests"), humanBytes(bytes))
	for _, r := range reads {
		last := r.Last()
		var took time.Duration
		var before []string
		for i, q := range r.Requests {
			took += q.Duration
			if i < len(r.Requests)-1 {
				before = append(before, attemptLabel(q))
			}
		}
		status := strconv.Itoa(last.Status)
		if last.Status == 0 {
			status = attemptLabel(last)
		}
		line := fmt.Sprintf("  %-6s %3s %9s %8s  %s", last.Method, status, humanBytes(last.Bytes), took.Round(time.Millisecond), report.Esc(last.Path))
		if len(before) > 0 {
			line += "  (after " + strings.Join(before, ", ") + ")"
		}
		fmt.Fprintln(w, line)
	}
	if retries > 0 {
		more := "more attempts"
		if retries == 1 {
			more = "more attempt"
		}
		fmt.Fprintf(w, "  %s retried: %d %s\n", doctor.Plural(retried, "request", "requests"), retries, more)
	}
}

// attemptLabel is an attempt's outcome in a word: its status code, or
// what went wrong on the wire.
func attemptLabel(q snapshot.Request) string {
	switch {
	case q.Status != 0:
		return strconv.Itoa(q.Status)
	case strings.Contains(q.Err, "reset"), strings.Contains(q.Err, "EOF"), strings.Contains(q.Err, "broken pipe"):
		return "reset"
	case strings.Contains(q.Err, "deadline") || strings.Contains(q.Err, "timeout") || strings.Contains(q.Err, "Timeout"):
		return "timeout"
	case strings.Contains(q.Err, "canceled"):
		return "cancelled"
	}
	return "error"
}

// requests is what the report counts: reads, and the retries they took.
func (o *clusterOptions) requests() (reads, retries int) {
	if o.stats == nil {
		return 0, 0
	}
	for _, r := range o.stats.Reads() {
		reads++
		retries += r.Retries()
	}
	return reads, retries
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
