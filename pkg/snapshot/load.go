package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

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
			record(r, nil, &ListError{Resource: r, Skip: true, Reason: "forbidden: " + needs(verb, r, opts.Namespace)})
			continue
		}
		g.Go(func() error {
			begin := time.Now()
			list, err := l.read(ctx, r)
			if err != nil && r.Extension() && apierrors.IsNotFound(err) {
				list, err = Scheme().New(r.GVR().GroupVersion().WithKind(r.Kind + "List"))
				mu.Lock()
				if s.notServed == nil {
					s.notServed = map[Resource]bool{}
				}
				s.notServed[r] = true
				mu.Unlock()
			}
			if err != nil {
				err = l.classifyReadError(ctx, r, err, begin)
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

// classifyReadError turns a read's final error into the ListError checks
// see. A read cut short by ctx says so: Ctrl-C, or the deadline by which every
// read must end (the read had until then since the load started, queued
// for a slot or not); or its attempts ran out of time (--request-timeout),
// counted from its own start. Any other error is classified by its API
// status (classifyAPIError), which WithError uses alone: only a load knows
// when it and its reads began.
func (l *loader) classifyReadError(ctx context.Context, r Resource, err error, begin time.Time) error {
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return &ListError{Resource: r, Err: err, Reason: fmt.Sprintf("interrupted before reading %s finished", r)}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &ListError{Resource: r, Err: err, Reason: fmt.Sprintf("timed out reading %s after %s", r, roundSeconds(time.Since(l.start)))}
	case errors.Is(err, context.DeadlineExceeded):
		return &ListError{Resource: r, Err: err, Reason: fmt.Sprintf("timed out reading %s after %s", r, roundSeconds(time.Since(begin)))}
	}
	return classifyAPIError(r, l.opts.Namespace, err)
}

func roundSeconds(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
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
