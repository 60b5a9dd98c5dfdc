package connect

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// readShare is the part of --timeout reads may use: the rest is for the
// checks and the report, so a hung read never costs what was read.
const readShare = 0.9

// ReadDeadline is when reads started at start must have ended.
func (o *Options) ReadDeadline(start time.Time) time.Time {
	return start.Add(time.Duration(float64(o.Timeout) * readShare))
}

// restConfig is the config reads use: wire-level stats, gentle QPS, and
// server warnings on stderr rather than through klog. Each call starts the
// statistics afresh.
func (o *Options) restConfig(errOut io.Writer) *rest.Config {
	cfg := rest.CopyConfig(o.Config)
	o.stats = &snapshot.Stats{}
	cfg.Wrap(o.stats.Wrap)
	cfg.QPS, cfg.Burst = 20, 40
	cfg.UserAgent = o.UserAgent
	cfg.WarningHandler = rest.NewWarningWriter(errOut, rest.WarningWriterOptions{Deduplicate: true})
	return cfg
}

// Open makes the REST config of the reads to come (after Connect) and
// sends the first request, /version: it returns the config and the
// server's version, or the one-line reason the server cannot be reached.
func (o *Options) Open(ctx context.Context, errOut io.Writer) (*rest.Config, string, error) {
	cfg := o.restConfig(errOut)
	v, err := serverVersion(ctx, cfg)
	if err != nil {
		return nil, "", o.Unreachable(ctx, cfg, err)
	}
	return cfg, v, nil
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

// Unreachable is the error of a request that got no usable answer, in
// words the user acts on: the scan timed out, was interrupted, or the
// server cannot be reached.
func (o *Options) Unreachable(ctx context.Context, cfg *rest.Config, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("scan timed out after %s (raise --timeout)", o.Timeout)
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return errors.New("interrupted")
	}
	switch {
	case apierrors.IsUnauthorized(err):
		// The server answered: the network is fine, the credentials are not.
		return fmt.Errorf("the API server at %s rejected the credentials (401 Unauthorized): the kubeconfig user's token or certificate is invalid or expired; log in again or refresh the kubeconfig", cfg.Host)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("the API server at %s answered 403 Forbidden to GET /version: this user may not even read the server's version: %v", cfg.Host, err)
	}
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &unknownAuthority):
		return fmt.Errorf("the API server at %s was reached but its TLS certificate is not signed by the kubeconfig's certificate-authority: %v", cfg.Host, err)
	case errors.As(err, &hostname):
		return fmt.Errorf("the API server at %s was reached but its TLS certificate is not valid for that address (the kubeconfig's server, or tls-server-name): %v", cfg.Host, err)
	case errors.As(err, &invalid):
		return fmt.Errorf("the API server at %s was reached but its TLS certificate is invalid (expired, or not yet valid?): %v", cfg.Host, err)
	}
	return fmt.Errorf("cannot reach the API server at %s: %v", cfg.Host, err)
}

// namespaceMissing says -n names a namespace the server does not have: a
// typo must not read as a clean bill of health. One GET, from the watch
// cache; a user who may not get namespaces is not stopped (the reads say
// what they could see).
func namespaceMissing(ctx context.Context, cfg *rest.Config, ns string) bool {
	c, err := snapshot.GroupClient(cfg, corev1.SchemeGroupVersion)
	if err != nil {
		return false
	}
	err = c.Get().Resource("namespaces").Name(ns).Param("resourceVersion", "0").Do(ctx).Error()
	return apierrors.IsNotFound(err)
}

// NamespaceExists is the error of a -n naming a namespace the server does
// not have, nil when it has it (or there is no -n, or the user may not get
// namespaces).
func (o *Options) NamespaceExists(ctx context.Context, cfg *rest.Config) error {
	if o.Namespace != "" && namespaceMissing(ctx, cfg, o.Namespace) {
		return fmt.Errorf("namespace %q not found: nothing in it to check (kubectl get namespaces)", o.Namespace)
	}
	return nil
}

// Load reads what the checks need (after Connect), with a progress line on
// a terminal. Reads must end by readDeadline; each failure costs only the
// checks that needed it, and Load fails only when the server cannot be
// reached at all. With review, the user's access is reviewed first: reads
// it denies are not sent, and errOut says which checks that skips.
func (o *Options) Load(ctx context.Context, errOut io.Writer, checks []*doctor.Check, readDeadline time.Time, review bool) (*snapshot.Snapshot, error) {
	readCtx, cancel := context.WithDeadline(ctx, readDeadline)
	defer cancel()
	cfg, v, err := o.Open(readCtx, errOut)
	if err != nil {
		return nil, err
	}
	if err := o.NamespaceExists(readCtx, cfg); err != nil {
		return nil, err
	}
	reads := doctor.Reads(checks)
	opts := snapshot.LoadOptions{Namespace: o.Namespace, Retry: o.Retry}
	if review {
		access, err := snapshot.ReviewAccess(readCtx, cfg, reads, o.Namespace)
		if err != nil {
			// No review (an old or locked-down server): forbidden reads
			// are found out by reading, and skipped the same way.
			klog.V(2).InfoS("access review failed", "err", err)
		} else {
			opts.Access = access
		}
	}
	progress := NewProgress(errOut, len(snapshot.Plan(reads)))
	opts.Progress = progress.Step
	snap, err := snapshot.Load(readCtx, cfg, reads, opts)
	progress.Done()
	if err != nil {
		return nil, err
	}
	if opts.Access != nil {
		if line := deniedLine(snap, opts.Access, checks, o.Namespace); line != "" {
			fmt.Fprintln(errOut, "warning: "+line)
		}
	}
	snap.ServerVersion = v
	return snap, nil
}

// LoadAll reads what a listing command prints, which cannot do without any
// of it: a forbidden or failed read is an error here, not a skipped check.
// Reads must end by ctx's deadline, or else --timeout from now.
func (o *Options) LoadAll(ctx context.Context, errOut io.Writer, reads ...snapshot.Resource) (*snapshot.Snapshot, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(o.Timeout)
	}
	snap, err := o.Load(ctx, errOut, []*doctor.Check{{Name: "listing", Reads: reads}}, deadline, false)
	if err != nil {
		return nil, err
	}
	for _, r := range reads {
		if err := snap.Err(r); err != nil {
			return nil, err
		}
	}
	return snap, nil
}

// deniedLine says which reads the user may not make and which checks that
// skips; "" when nothing was denied. It is written after the reads, from
// what the snapshot holds: the access review's denials (never sent) and the
// server's refusals of reads the review allowed (a namespace's rules review
// lists rules a RoleBinding grants only there), so its count is the
// report's. The verb is the review's, else "get" for a path and "list".
func deniedLine(snap *snapshot.Snapshot, a *snapshot.Access, checks []*doctor.Check, ns string) string {
	denied := func(r snapshot.Resource) bool {
		err := snap.Err(r)
		return err != nil && snapshot.CauseOf(err) == snapshot.CauseDenied
	}
	byVerb := map[string][]string{}
	var verbs []string
	for _, r := range snapshot.Plan(doctor.Reads(checks)) {
		if !denied(r) {
			continue
		}
		verb, ok := a.Denies(r)
		switch {
		case ok:
		case r.Path != "":
			verb = "get"
		default:
			verb = "list"
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
	if len(verbs) == 0 {
		return ""
	}
	var may []string
	for _, v := range verbs {
		may = append(may, v+" "+strings.Join(byVerb[v], ", "))
	}
	// Skipped as the report counts them: a denied read, and no read that
	// failed otherwise (that makes the check an error instead).
	var skipped []string
	for _, c := range checks {
		failed := slices.ContainsFunc(c.Reads, func(r snapshot.Resource) bool {
			err := snap.Err(r)
			return err != nil && !snapshot.IsSkippable(err)
		})
		if slices.ContainsFunc(c.Reads, denied) && !failed {
			skipped = append(skipped, c.Name)
		}
	}
	scope := "in all namespaces"
	if ns != "" {
		scope = "in namespace " + ns
	}
	line := fmt.Sprintf("this user may not %s (%s)", strings.Join(may, "; nor "), scope)
	if len(skipped) > 0 {
		line += fmt.Sprintf(": %s skipped: %s", doctor.Plural(len(skipped), "check", "checks"), strings.Join(skipped, ", "))
	}
	return line
}
