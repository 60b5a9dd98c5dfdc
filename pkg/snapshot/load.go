package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	dto "github.com/prometheus/client_model/go"
	"golang.org/x/sync/errgroup"
)

// LoadOptions tunes a load.
type LoadOptions struct {
	// Namespace narrows namespaced lists; "" lists across the cluster.
	Namespace string
	// Parallelism bounds concurrent LISTs (default 4): enough to hide
	// latency, few enough not to compete with the cluster's own clients.
	Parallelism int
	// Progress, when set, is called as each LIST starts.
	Progress func(r Resource)
	// Retry is the jittered backoff between attempts of a read that failed
	// transiently; its Steps is the number of retries. Zero: DefaultRetry.
	Retry wait.Backoff
	// Access, from ReviewAccess, names the reads the user may not make:
	// they are not sent, and the checks that need them are skipped.
	Access *Access
}

// DefaultRetry retries a read that failed transiently up to four times,
// after 200ms, 400ms, 800ms and 1.6s, each plus up to 50% of jitter (so
// that clients failed by one blip do not return in step), never past the
// read's deadline: about 4s at most, so an API server failing every read
// costs a scan seconds, not its whole --timeout.
var DefaultRetry = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 4, Cap: 1600 * time.Millisecond}

// ListError says why a resource could not be listed. Skip errors (forbidden,
// not served, unavailable) make the checks that need the resource skipped;
// other errors make them errored. Neither aborts the scan.
type ListError struct {
	Resource Resource
	Reason   string
	Skip     bool
	Err      error
	// Cause classifies the failure for coverage reports and exit codes:
	// one of the Cause* constants; "" is derived from Skip and Reason.
	Cause string
}

// Why a read is missing from a snapshot (ListError.Cause, CauseOf).
const (
	// CauseAbsent: the input (a dump, a capture, kubectl output) does not
	// hold the resource, or the scan did not plan it.
	CauseAbsent = "absent"
	// CauseDenied: the user may not read it (RBAC: forbidden, unauthorized).
	CauseDenied = "denied"
	// CauseUnserved: the cluster does not serve the API (not installed) or
	// it is unavailable (an aggregated API answering 503).
	CauseUnserved = "unserved"
	// CauseFailed: the read failed or timed out; a retry may succeed.
	CauseFailed = "failed"
)

// CauseOf classifies why err kept a resource from being read: CauseFailed
// for an error that is not a skippable ListError.
func CauseOf(err error) string {
	var le *ListError
	if !errors.As(err, &le) {
		return CauseFailed
	}
	switch {
	case le.Cause != "":
		return le.Cause
	case !le.Skip:
		return CauseFailed
	case strings.HasPrefix(le.Reason, "forbidden") || strings.HasPrefix(le.Reason, "unauthorized") ||
		strings.Contains(le.Reason, "forbidden"):
		return CauseDenied
	case strings.HasPrefix(le.Reason, "not served") || strings.HasPrefix(le.Reason, "unavailable"):
		return CauseUnserved
	}
	return CauseAbsent
}

func (e *ListError) Error() string { return e.Reason }
func (e *ListError) Unwrap() error { return e.Err }

// IsSkippable says whether err means "this resource is not for us" rather
// than "something broke".
func IsSkippable(err error) bool {
	var le *ListError
	return errors.As(err, &le) && le.Skip
}

// Load reads each planned resource once, from the watch cache: as a streamed
// watch-list (sendInitialEvents, trimmed object by object) where the server
// supports it, else a resourceVersion=0 LIST without pagination (the cache
// serves it from memory without touching etcd); protobuf; trimmed by one
// Trimmer; at most opts.Parallelism at a time.
//
// Transient failures (5xx, timeouts) are retried with jittered backoff
// before ctx's deadline; client-go itself retries 429s and 5xx that carry
// Retry-After, honouring it, and dropped connections. What still fails is
// recorded on the snapshot per resource, never returned: a read that hangs
// past the deadline ("timed out reading pods after 18s"), or one cut by
// Ctrl-C, costs only the checks that need it, and the snapshot holds
// everything that was read.
func Load(ctx context.Context, cfg *rest.Config, reads []Resource, opts LoadOptions) (*Snapshot, error) {
	if opts.Parallelism <= 0 {
		opts.Parallelism = 4
	}
	if opts.Retry == (wait.Backoff{}) {
		opts.Retry = DefaultRetry
	}
	plan := Plan(reads)
	// The largest reads start first, so that they never queue behind small
	// ones for a parallelism slot: pods dominate every scan.
	sort.SliceStable(plan, func(i, j int) bool { return readWeight(plan[i]) > readWeight(plan[j]) })
	s := newSnapshot()
	s.Namespace = opts.Namespace

	protoCfg := rest.CopyConfig(cfg)
	protoCfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	protoCfg.ContentType = "application/vnd.kubernetes.protobuf"
	l := &loader{cfg: protoCfg, trim: NewTrimmer(), opts: opts, start: time.Now()}

	var mu sync.Mutex
	record := func(r Resource, list runtime.Object, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			s.errs[r] = err
			return
		}
		if m, ok := list.(*metricsList); ok {
			s.metrics = m.families
			return
		}
		if r == Pods {
			if sp, ok := list.(*streamedPods); ok {
				s.pods = sp.ptrs
				list = &podPointerList{}
			} else {
				s.pods = podPointers(list)
			}
		}
		s.lists[r] = list
	}

	var g errgroup.Group
	g.SetLimit(opts.Parallelism)
	for _, r := range plan {
		if verb, denied := opts.Access.Denies(r); denied {
			record(r, nil, &ListError{Resource: r, Skip: true, Reason: "forbidden: " + Needs(verb, r, opts.Namespace)})
			continue
		}
		g.Go(func() error {
			begin := time.Now()
			list, err := l.read(ctx, r)
			if err != nil && r.Extension() && apierrors.IsNotFound(err) {
				list, err = Scheme().New(r.GVR().GroupVersion().WithKind(r.Kind + "List"))
			}
			if err != nil {
				err = l.classify(ctx, r, err, begin)
			}
			record(r, list, err)
			return nil
		})
	}
	_ = g.Wait() // reads record their own errors
	return s, nil
}

// loader is one Load: its clients and options, shared by its reads.
type loader struct {
	cfg   *rest.Config
	trim  *Trimmer
	opts  LoadOptions
	start time.Time
}

// read makes one read of r, retrying transient failures. A decoding bug
// costs this resource, not the process: Execute's recover cannot see a
// panic in this goroutine.
func (l *loader) read(ctx context.Context, r Resource) (list runtime.Object, err error) {
	defer func() {
		if v := recover(); v != nil {
			list, err = nil, fmt.Errorf("internal error: %v", v)
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, err // ran out of time waiting for a parallelism slot
	}
	ctx = WithRead(ctx, r.String())
	if l.opts.Progress != nil {
		l.opts.Progress(r)
	}
	err = Retry(ctx, l.opts.Retry, nil, func() error {
		list, err = l.once(ctx, r)
		return err
	})
	return list, err
}

// Retry calls attempt until it succeeds, fails for good, or backoff.Steps
// retries are spent, waiting backoff's jittered steps (or longer, when the
// server asked for it) in between; it gives up at once, with the last
// error, when the next attempt could not end before ctx's deadline.
// transient says which errors are worth another attempt; nil means
// Transient.
func Retry(ctx context.Context, backoff wait.Backoff, transient func(error) bool, attempt func() error) error {
	if transient == nil {
		transient = Transient
	}
	retries := backoff.Steps
	for n := 0; ; n++ {
		err := attempt()
		if err == nil || ctx.Err() != nil || n >= retries || !transient(err) {
			return err
		}
		wait := backoff.Step()
		if s, ok := apierrors.SuggestsClientDelay(err); ok && time.Duration(s)*time.Second > wait {
			wait = time.Duration(s) * time.Second
		}
		if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
			return err // the next attempt could not finish in time: say what failed
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// once is one attempt at a read (client-go may retry inside it).
func (l *loader) once(ctx context.Context, r Resource) (runtime.Object, error) {
	if r.Path != "" {
		body, err := getRaw(ctx, l.cfg, r.Path)
		if err != nil {
			return nil, err
		}
		m := newSnapshot()
		if err := m.SetMetrics(bytes.NewReader(body)); err != nil {
			return nil, err
		}
		return &metricsList{families: m.metrics}, nil
	}
	return listTyped(ctx, l.cfg, r, l.opts.Namespace, !l.opts.Access.noWatch(r), l.trim)
}

// Transient says whether a failed read is worth another attempt within
// its deadline: a 5xx or a timeout. 429s and 5xx with Retry-After are
// not: client-go's own retry loop has already retried those, honouring
// Retry-After, before the error reached us (as it has dropped connections
// of a GET; one that still surfaces is retried here).
func Transient(err error) bool {
	if _, ok := apierrors.SuggestsClientDelay(err); ok {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		return code >= 500 || code == http.StatusRequestTimeout
	}
	return utilnet.IsTimeout(err) || errors.Is(err, context.DeadlineExceeded) ||
		utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) || utilnet.IsHTTP2ConnectionLost(err)
}

// classify turns a read's final error into the ListError checks see. A
// read cut short by ctx says so: Ctrl-C, or the deadline by which every
// read must end (the read had until then since the load started, queued
// for a slot or not); or its attempts ran out of time (--request-timeout),
// counted from its own start.
func (l *loader) classify(ctx context.Context, r Resource, err error, begin time.Time) error {
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return &ListError{Resource: r, Err: err, Reason: fmt.Sprintf("interrupted before reading %s finished", r)}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &ListError{Resource: r, Err: err, Reason: fmt.Sprintf("timed out reading %s after %s", r, roundSeconds(time.Since(l.start)))}
	case errors.Is(err, context.DeadlineExceeded):
		return &ListError{Resource: r, Err: err, Reason: fmt.Sprintf("timed out reading %s after %s", r, roundSeconds(time.Since(begin)))}
	}
	return classify(r, l.opts.Namespace, err)
}

func roundSeconds(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// metricsList carries parsed /metrics out of a read.
type metricsList struct {
	runtime.Object
	families map[string]*dto.MetricFamily
}

func getRaw(ctx context.Context, cfg *rest.Config, path string) ([]byte, error) {
	c := rest.CopyConfig(cfg)
	c.AcceptContentTypes = "text/plain"
	c.NegotiatedSerializer = Codecs().WithoutConversion()
	client, err := rest.UnversionedRESTClientFor(c)
	if err != nil {
		return nil, err
	}
	return client.Get().AbsPath(path).DoRaw(ctx)
}

// readWeight ranks reads by their usual size in a cluster.
func readWeight(r Resource) int {
	switch r {
	case Pods:
		return 3
	case ReplicaSets, Events(r.FieldSelector), EndpointSlices, APIServerMetrics:
		return 2
	case Nodes, Jobs, Services, ControllerRevisions:
		return 1
	}
	return 0
}

func listOptions(r Resource) metav1.ListOptions {
	// resourceVersion=0 with no limit: served whole from the watch cache.
	return metav1.ListOptions{ResourceVersion: "0", FieldSelector: r.FieldSelector}
}

// listTyped reads r in full: streamed when stream is true and the server
// streams lists, else one resourceVersion=0 LIST.
func listTyped(ctx context.Context, cfg *rest.Config, r Resource, ns string, stream bool, tr *Trimmer) (runtime.Object, error) {
	gv := r.GVR().GroupVersion()
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	if gv.Group == "" {
		c.APIPath = "/api"
	}
	c.NegotiatedSerializer = streamCodecs()
	client, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, err
	}
	list, err := Scheme().New(gv.WithKind(r.Kind + "List"))
	if err != nil {
		return nil, err
	}
	if stream && r.Kind != "Event" { // events have no watch cache to stream from
		streamed, err := watchList(ctx, client, r, ns, list, tr)
		if err == nil {
			return streamed, nil
		}
		if ctx.Err() != nil || !fallBackToList(err) {
			return nil, err
		}
	}
	opts := listOptions(r)
	req := client.Get().Resource(r.Resource).VersionedParams(&opts, metav1.ParameterCodec)
	if r.Namespaced && ns != "" {
		req = req.Namespace(ns)
	}
	if err := req.Do(ctx).Into(list); err != nil {
		return nil, err
	}
	tr.trimList(list)
	return list, nil
}

// initialEventsEnd marks the bookmark that closes a watch-list's initial state.
const initialEventsEnd = "k8s.io/initial-events-end"

// watchList reads a resource as a stream (a watch with sendInitialEvents,
// served from the watch cache: the API server's "streaming list"), trimming
// each object as it arrives, so the scan never holds a whole response body
// nor an untrimmed object. Servers without WatchList refuse it and the
// caller falls back to a resourceVersion=0 LIST.
func watchList(ctx context.Context, client *rest.RESTClient, r Resource, ns string, list runtime.Object, tr *Trimmer) (runtime.Object, error) {
	opts := metav1.ListOptions{
		Watch:                true,
		SendInitialEvents:    ptrTo(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		ResourceVersion:      "0", // any state of the cache will do, as with a resourceVersion=0 LIST
		AllowWatchBookmarks:  true,
		FieldSelector:        r.FieldSelector,
	}
	req := client.Get().Resource(r.Resource).VersionedParams(&opts, metav1.ParameterCodec)
	if r.Namespaced && ns != "" {
		req = req.Namespace(ns)
	}
	w, err := req.Watch(ctx)
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	// Live events may arrive before the initial-events bookmark: apply them
	// to a keyed store, as client-go's reflector does, so the snapshot holds
	// the latest state and nothing deleted.
	want := reflect.TypeOf(list).Elem().Name()
	var order []string
	byKey := map[string]runtime.Object{}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, fmt.Errorf("watch-list of %s ended before its initial events did", r)
			}
			switch ev.Type {
			case watch.Added, watch.Modified, watch.Deleted:
				if got := reflect.TypeOf(ev.Object).Elem().Name(); got+"List" != want {
					return nil, fmt.Errorf("watch-list of %s: got a %s", r, got)
				}
				m, err := meta.Accessor(ev.Object)
				if err != nil {
					return nil, fmt.Errorf("watch-list of %s: %w", r, err)
				}
				key := m.GetNamespace() + "/" + m.GetName()
				if ev.Type == watch.Deleted {
					delete(byKey, key)
					continue
				}
				if _, seen := byKey[key]; !seen {
					order = append(order, key)
				}
				tr.Trim(ev.Object)
				byKey[key] = ev.Object
			case watch.Bookmark:
				m, err := meta.Accessor(ev.Object)
				if err == nil && m.GetAnnotations()[initialEventsEnd] == "true" {
					return fileStreamed(list, order, byKey, m.GetResourceVersion())
				}
			case watch.Error:
				return nil, apierrors.FromObject(ev.Object)
			}
		}
	}
}

// fileStreamed turns streamed objects into what the snapshot files: pods as
// the decoder's own pointers, other kinds as an exactly sized Items slice.
func fileStreamed(list runtime.Object, order []string, byKey map[string]runtime.Object, rv string) (runtime.Object, error) {
	if _, isPods := list.(*corev1.PodList); isPods {
		sp := &streamedPods{}
		for _, k := range order {
			if o, ok := byKey[k]; ok {
				sp.ptrs = append(sp.ptrs, o.(*corev1.Pod))
			}
		}
		return sp, nil
	}
	items := reflect.ValueOf(list).Elem().FieldByName("Items")
	if !items.IsValid() {
		return nil, fmt.Errorf("%T has no Items", list)
	}
	out := reflect.MakeSlice(items.Type(), 0, len(byKey))
	for _, k := range order {
		if o, ok := byKey[k]; ok {
			out = reflect.Append(out, reflect.ValueOf(o).Elem())
		}
	}
	items.Set(out)
	if lm, err := meta.ListAccessor(list); err == nil {
		lm.SetResourceVersion(rv)
	}
	return list, nil
}

// streamedPods carries streamed pods out of watchList as the decoder's own
// pointers; the snapshot then files a podPointerList in their place.
type streamedPods struct {
	corev1.PodList
	ptrs []*corev1.Pod
}

// fallBackToList says whether a watch-list failure means "this server does
// not stream lists" (old server, feature gate off, RBAC without watch) rather
// than a failure a LIST would share.
func fallBackToList(err error) bool {
	return apierrors.IsBadRequest(err) || apierrors.IsInvalid(err) || apierrors.IsForbidden(err) ||
		apierrors.IsMethodNotSupported(err) || apierrors.IsNotAcceptable(err) || apierrors.IsUnsupportedMediaType(err) ||
		strings.Contains(err.Error(), "ended before its initial events")
}

func ptrTo[T any](v T) *T { return &v }

// Needs says what a user lacks for a read, as skip reasons put it: "needs
// list on nodes", "needs list on pods in all namespaces", "needs get on
// /metrics".
func Needs(verb string, r Resource, ns string) string {
	what := r.GVR().GroupResource().String()
	switch {
	case r.Path != "":
		return fmt.Sprintf("needs %s on %s", verb, r.Path)
	case !r.Namespaced:
		return fmt.Sprintf("needs %s on %s", verb, what)
	case ns != "":
		return fmt.Sprintf("needs %s on %s in namespace %s", verb, what, ns)
	}
	return fmt.Sprintf("needs %s on %s in all namespaces", verb, what)
}

func classify(r Resource, ns string, err error) error {
	verb := "list"
	if r.Path != "" {
		verb = "get"
	}
	le := &ListError{Resource: r, Err: err, Skip: true}
	switch {
	case apierrors.IsForbidden(err):
		le.Reason = "forbidden: " + Needs(verb, r, ns)
	case apierrors.IsUnauthorized(err):
		le.Reason = "unauthorized: " + Needs(verb, r, ns)
	case apierrors.IsNotFound(err), apierrors.IsMethodNotSupported(err):
		le.Reason = fmt.Sprintf("not served by this cluster: %s", r)
	case apierrors.IsServiceUnavailable(err):
		le.Reason = fmt.Sprintf("unavailable: listing %s: %v", r, err)
	default:
		le.Skip = false
		le.Reason = fmt.Sprintf("listing %s: %v", r, err)
	}
	return le
}
