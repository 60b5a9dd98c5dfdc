// Package connect is the cluster connection every live command shares: the
// kubeconfig flags and the REST client, the first request (/version), the
// access review, reading the snapshot with a progress line and a read
// deadline inside --timeout, retries of transient failures, and the
// per-request statistics of --stats. Commands call it; it decides no exit
// code: every error it returns means "the command could not run".
package connect

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// Options are the flags every command that reads the cluster shares:
// kubectl's own (through ConfigFlags), -A, --timeout, --stats and -v.
type Options struct {
	Flags         *genericclioptions.ConfigFlags
	allNamespaces bool
	Timeout       time.Duration
	Stats         bool
	// LogLevel is kubectl's -v: client-go's log verbosity on stderr
	// (6 logs each request, 8 their bodies).
	LogLevel int32
	// UserAgent names the tool and its version to the API server.
	UserAgent string

	// namespaceSet records whether -n was given (Complete).
	namespaceSet bool
	// Namespace is the scope of namespaced reads after Connect: "" for the
	// whole cluster unless -n was given.
	Namespace string
	// ContextNamespace is -n, or else the kubeconfig context's namespace:
	// where a named workload is looked up, as kubectl does.
	ContextNamespace string

	// Config is the REST config after Connect; tests may set it directly.
	Config *rest.Config
	// Retry is the backoff of transient read failures; zero is
	// snapshot.DefaultRetry (tests shorten it).
	Retry wait.Backoff
	stats *snapshot.Stats
}

// defaultHost is what client-go falls back to with no kubeconfig at all.
const defaultHost = "http://localhost:8080"

// New returns the options with their defaults: a 60s --timeout.
func New(userAgent string) *Options {
	return &Options{
		Flags:     genericclioptions.NewConfigFlags(true),
		Timeout:   60 * time.Second,
		UserAgent: userAgent,
	}
}

// AddFlags registers the cluster flags, persistent on the root command so
// that every subcommand shares them.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Flags.AddFlags(fs)
	fs.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "Scan every namespace (the default; overrides -n)")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "Give up on the scan after this long; reads still unanswered at 90% of it fail alone and the rest is reported")
	fs.BoolVar(&o.Stats, "stats", false, "Print the API requests made, with bytes, time and retries for each, to stderr")
	fs.Int32VarP(&o.LogLevel, "v", "v", 0, "Log level of client-go's logs on stderr, as kubectl's -v (6 shows each request)")
}

// Complete records what the flags say about the cluster; the kubeconfig
// is read later, by Connect, so a bad flag is reported even where no
// cluster is configured.
func (o *Options) Complete(cmd *cobra.Command) {
	if f := cmd.Flags().Lookup("namespace"); f != nil && f.Changed && !o.allNamespaces {
		o.namespaceSet = true
	}
}

// Validate rejects bad cluster flags, naming the flag.
func (o *Options) Validate() error {
	if o.Timeout <= 0 {
		return fmt.Errorf("--timeout must be positive, got %s", o.Timeout)
	}
	if o.LogLevel < 0 {
		return fmt.Errorf("-v must be 0 or more, got %d", o.LogLevel)
	}
	return nil
}

// ApplyLogLevel sends client-go's klog output to w at -v's verbosity, as
// kubectl -v does; at 0 main keeps klog silent.
func (o *Options) ApplyLogLevel(w io.Writer) error {
	if o.LogLevel <= 0 {
		return nil // a negative -v is rejected by Validate
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

// Connect reads the kubeconfig: the namespace scope and the REST config.
func (o *Options) Connect() error {
	loader := o.Flags.ToRawKubeConfigLoader()
	ns, _, err := loader.Namespace()
	if err != nil {
		return fmt.Errorf("reading kubeconfig: %v", err)
	}
	o.ContextNamespace = ns
	if o.namespaceSet {
		o.Namespace = ns
	}
	if o.Config != nil {
		return nil
	}
	cfg, err := o.Flags.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("reading kubeconfig: %v", err)
	}
	if raw, err := loader.RawConfig(); err == nil && len(raw.Clusters) == 0 && cfg.Host == defaultHost {
		// client-go would silently try http://localhost:8080.
		return errors.New("no cluster configured: set KUBECONFIG, --kubeconfig, or --server")
	}
	o.Config = cfg
	return nil
}

// ForContext is a copy of the options for one context of a fleet run,
// with its own REST config and request statistics. It keeps the
// kubeconfig, namespace, impersonation and TLS flags.
func (o *Options) ForContext(name string) *Options {
	c := New(o.UserAgent)
	c.allNamespaces, c.Timeout, c.Stats, c.LogLevel, c.namespaceSet, c.Retry = o.allNamespaces, o.Timeout, o.Stats, o.LogLevel, o.namespaceSet, o.Retry
	copyFlags(c.Flags, o.Flags)
	c.Flags.Context = &name
	return c
}

func copyFlags(dst, src *genericclioptions.ConfigFlags) {
	for _, p := range []struct{ d, s **string }{
		{&dst.KubeConfig, &src.KubeConfig}, {&dst.Namespace, &src.Namespace},
		{&dst.Impersonate, &src.Impersonate}, {&dst.ImpersonateUID, &src.ImpersonateUID},
		{&dst.CAFile, &src.CAFile}, {&dst.CertFile, &src.CertFile}, {&dst.KeyFile, &src.KeyFile},
		{&dst.BearerToken, &src.BearerToken}, {&dst.Timeout, &src.Timeout}, {&dst.TLSServerName, &src.TLSServerName},
	} {
		if *p.s != nil {
			v := **p.s
			*p.d = &v
		}
	}
	if src.ImpersonateGroup != nil {
		g := append([]string(nil), *src.ImpersonateGroup...)
		dst.ImpersonateGroup = &g
	}
	if src.Insecure != nil {
		v := *src.Insecure
		dst.Insecure = &v
	}
}
