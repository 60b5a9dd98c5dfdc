package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
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
}

// ListError says why a resource could not be listed. Skip errors (forbidden,
// not served, unavailable) make the checks that need the resource skipped;
// other errors make them errored. Neither aborts the scan.
type ListError struct {
	Resource Resource
	Reason   string
	Skip     bool
	Err      error
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
// serves it from memory without touching etcd); protobuf;
// at most opts.Parallelism at a time. Per-resource failures are recorded, not
// returned; only a cancelled or expired ctx fails the load.
func Load(ctx context.Context, cfg *rest.Config, reads []Resource, opts LoadOptions) (*Snapshot, error) {
	if opts.Parallelism <= 0 {
		opts.Parallelism = 4
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

	var mu sync.Mutex
	sem := make(chan struct{}, opts.Parallelism)
	var wg sync.WaitGroup
	for _, r := range plan {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			// A decoding bug must cost one resource, not the process: Execute's
			// recover cannot see a panic in this goroutine.
			defer func() {
				if v := recover(); v != nil {
					mu.Lock()
					s.errs[r] = &ListError{Resource: r, Reason: fmt.Sprintf("reading %s: internal error: %v", r, v)}
					mu.Unlock()
				}
			}()
			if opts.Progress != nil {
				opts.Progress(r)
			}
			if r.Path != "" {
				body, err := getRaw(ctx, protoCfg, r.Path)
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					err = s.SetMetrics(bytes.NewReader(body))
				}
				if err != nil {
					s.errs[r] = classify(r, opts.Namespace, err)
				}
				return
			}
			list, err := listTyped(ctx, protoCfg, r, opts.Namespace)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				s.errs[r] = classify(r, opts.Namespace, err)
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
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s, nil
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

func listTyped(ctx context.Context, cfg *rest.Config, r Resource, ns string) (runtime.Object, error) {
	gv := r.GVR().GroupVersion()
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	if gv.Group == "" {
		c.APIPath = "/api"
	}
	c.NegotiatedSerializer = Codecs().WithoutConversion()
	client, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, err
	}
	list, err := Scheme().New(gv.WithKind(r.Kind + "List"))
	if err != nil {
		return nil, err
	}
	if r.Kind != "Event" { // events have no watch cache to stream from
		streamed, err := watchList(ctx, client, r, ns, list)
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
	(*Trimmer)(nil).trimList(list) // TODO(merge): the loader's Trimmer
	return list, nil
}

// initialEventsEnd marks the bookmark that closes a watch-list's initial state.
const initialEventsEnd = "k8s.io/initial-events-end"

// watchList reads a resource as a stream (a watch with sendInitialEvents,
// served from the watch cache: the API server's "streaming list"), trimming
// each object as it arrives, so the scan never holds a whole response body
// nor an untrimmed object. Servers without WatchList refuse it and the
// caller falls back to a resourceVersion=0 LIST.
func watchList(ctx context.Context, client *rest.RESTClient, r Resource, ns string, list runtime.Object) (runtime.Object, error) {
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
				Trim(ev.Object)
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

func classify(r Resource, ns string, err error) error {
	scope := "at cluster scope"
	if r.Namespaced && ns != "" {
		scope = "in namespace " + ns
	}
	le := &ListError{Resource: r, Err: err, Skip: true}
	switch {
	case r.Path != "" && apierrors.IsForbidden(err):
		le.Reason = fmt.Sprintf("forbidden: cannot get %s", r.Path)
	case apierrors.IsForbidden(err):
		le.Reason = fmt.Sprintf("forbidden: cannot list %s %s", r, scope)
	case apierrors.IsUnauthorized(err):
		le.Reason = fmt.Sprintf("unauthorized: cannot list %s %s", r, scope)
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
