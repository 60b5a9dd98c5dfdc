package kube

import (
	"errors"
	"sort"
	"strings"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// ServiceReferrerReads are what ServiceReferrers reads to know what points
// at a Service: Ingress and Gateway route backends, the Services of
// APIServices and admission webhooks, and StatefulSets' serviceName.
var ServiceReferrerReads = append([]snapshot.Resource{snapshot.Ingresses, snapshot.HTTPRoutes, snapshot.GRPCRoutes,
	snapshot.APIServices, snapshot.StatefulSets}, WebhookConfigReads...)

// Referrer is an object that points at a Service: its traffic or its
// callers depend on the Service having endpoints.
type Referrer struct {
	Ref doctor.ObjectRef
	How RefersBy
}

// RefersBy is how an object refers to a Service.
type RefersBy int

const (
	RoutesTo         RefersBy = iota + 1 // an Ingress or a Gateway API route sends traffic to it
	ServedBy                             // an APIService is served by it
	CalledBy                             // an admission webhook calls it
	NamesAsGoverning                     // a StatefulSet names it as its serviceName
)

// ServiceReferrers indexes, per Service ("namespace/name"), the objects
// that refer to it, and lists the reads it could not make: a Service that
// nothing refers to is only known to be unreferenced when none is missing.
// An API the cluster does not serve (no Gateway API installed) refers to
// nothing and is not missing.
func ServiceReferrers(s *snapshot.Snapshot) (map[string][]Referrer, []snapshot.Resource) {
	type memo struct {
		refs    map[string][]Referrer
		missing []snapshot.Resource
	}
	m := snapshot.Memo(s, serviceReferrersKey{}, func() memo {
		out := memo{refs: map[string][]Referrer{}}
		add := func(ns, name string, r Referrer) {
			k := ns + "/" + name
			for _, have := range out.refs[k] {
				if have == r {
					return
				}
			}
			out.refs[k] = append(out.refs[k], r)
		}
		readable := func(r snapshot.Resource) bool {
			err := s.Err(r)
			if err == nil {
				return true
			}
			var le *snapshot.ListError
			if !errors.As(err, &le) || snapshot.CauseOf(err) != snapshot.CauseUnserved {
				out.missing = append(out.missing, r)
			}
			return false
		}
		if readable(snapshot.Ingresses) {
			ings := s.Ingresses()
			for i := range ings {
				ing := &ings[i]
				ref := doctor.ObjectRef{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name}
				if b := ing.Spec.DefaultBackend; b != nil && b.Service != nil {
					add(ing.Namespace, b.Service.Name, Referrer{ref, RoutesTo})
				}
				for _, rule := range ing.Spec.Rules {
					if rule.HTTP == nil {
						continue
					}
					for _, path := range rule.HTTP.Paths {
						if path.Backend.Service != nil {
							add(ing.Namespace, path.Backend.Service.Name, Referrer{ref, RoutesTo})
						}
					}
				}
			}
		}
		if readable(snapshot.HTTPRoutes) {
			hrs := s.HTTPRoutes()
			for i := range hrs {
				r := &hrs[i]
				ref := doctor.ObjectRef{APIVersion: "gateway.networking.k8s.io/v1", Kind: "HTTPRoute", Namespace: r.Namespace, Name: r.Name}
				for _, rule := range r.Spec.Rules {
					for _, b := range rule.BackendRefs {
						if (b.Kind == nil || *b.Kind == "Service") && (b.Group == nil || *b.Group == "") {
							ns := r.Namespace
							if b.Namespace != nil {
								ns = string(*b.Namespace)
							}
							add(ns, string(b.Name), Referrer{ref, RoutesTo})
						}
					}
				}
			}
		}
		if readable(snapshot.GRPCRoutes) {
			grs := s.GRPCRoutes()
			for i := range grs {
				r := &grs[i]
				ref := doctor.ObjectRef{APIVersion: "gateway.networking.k8s.io/v1", Kind: "GRPCRoute", Namespace: r.Namespace, Name: r.Name}
				for _, rule := range r.Spec.Rules {
					for _, b := range rule.BackendRefs {
						if (b.Kind == nil || *b.Kind == "Service") && (b.Group == nil || *b.Group == "") {
							ns := r.Namespace
							if b.Namespace != nil {
								ns = string(*b.Namespace)
							}
							add(ns, string(b.Name), Referrer{ref, RoutesTo})
						}
					}
				}
			}
		}
		if readable(snapshot.APIServices) {
			as := s.APIServices()
			for i := range as {
				if svc := as[i].Spec.Service; svc != nil {
					add(svc.Namespace, svc.Name, Referrer{doctor.ObjectRef{APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService", Name: as[i].Name}, ServedBy})
				}
			}
		}
		if readable(snapshot.MutatingWebhooks) && readable(snapshot.ValidatingWebhooks) {
			for _, w := range Webhooks(s) {
				if w.Service != nil {
					add(w.Service.Namespace, w.Service.Name, Referrer{w.Config, CalledBy})
				}
			}
		}
		if readable(snapshot.StatefulSets) {
			sts := s.StatefulSets()
			for i := range sts {
				if n := sts[i].Spec.ServiceName; n != "" {
					add(sts[i].Namespace, n, Referrer{doctor.ObjectRef{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: sts[i].Namespace, Name: sts[i].Name}, NamesAsGoverning})
				}
			}
		}
		for _, rs := range out.refs {
			sort.Slice(rs, func(i, j int) bool {
				a, b := rs[i], rs[j]
				if ka, kb := strings.ToLower(a.Ref.Kind), strings.ToLower(b.Ref.Kind); ka != kb {
					return ka < kb
				}
				if a.Ref.Name != b.Ref.Name {
					return a.Ref.Name < b.Ref.Name
				}
				return a.How < b.How
			})
		}
		return out
	})
	return m.refs, m.missing
}

type serviceReferrersKey struct{}
