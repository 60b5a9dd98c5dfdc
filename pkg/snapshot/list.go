package snapshot

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

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
	c.NegotiatedSerializer = streamCodecs(tr)
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
