package snapshot

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

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
					tr.forget(ev.Object)
					delete(byKey, key)
					continue
				}
				if _, seen := byKey[key]; !seen {
					order = append(order, key)
				}
				tr.Trim(ev.Object)
				byKey[key] = ev.Object
			case watch.Bookmark:
				tr.forget(ev.Object)
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
