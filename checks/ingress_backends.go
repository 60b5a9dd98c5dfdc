package checks

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// IngressBackends reports Ingresses that route to nothing: a backend Service
// that does not exist, a port it does not expose, a Service with no ready
// endpoint, or an IngressClass that no controller implements. Each answers
// 503 or 404 at the edge while every object looks fine on its own.
var IngressBackends = &doctor.Check{
	Name:     "ingress-backends",
	Severity: doctor.Warning,
	Origin:   "everyday",
	Reads:    append([]snapshot.Resource{snapshot.Ingresses}, kube.ServiceReads...),
	// IngressClasses are cluster-scoped: a user limited to a namespace
	// cannot list them, and the backends are judged without them.
	Optional: []snapshot.Resource{snapshot.IngressClasses, snapshot.Deployments, snapshot.StatefulSets},
	Run:      runIngressBackends,
	Doc: `Ingresses whose backends or class do not exist, or whose Services have no ready endpoint

## Why it matters
An Ingress only names its backends; nothing validates them. A Service
renamed, a port changed from 80 to 8080 or renamed from ` + "`http`" + ` to ` + "`web`" + `, a
Service whose pods are all unready, or an ` + "`ingressClassName`" + ` that no IngressClass
defines: the Ingress is accepted, and users get 503s (or nothing at all,
when no controller claims the class).

## How it is detected
For every Ingress, the default backend and every rule path with a Service
backend (resource backends are skipped) are checked against the snapshot's
Services and EndpointSlices: the Service must exist, expose the port by number
or name, and have at least one ready endpoint on it (` + "`ExternalName`" + ` Services are
taken as they are). One finding per Ingress lists the broken backends with
their hosts and paths: critical when every backend is broken, a warning when
some still work. An ` + "`ingressClassName`" + ` with no IngressClass is a warning; an
Ingress with neither a class nor the legacy ` + "`kubernetes.io/ingress.class`" + `
annotation, in a cluster that has IngressClasses but none marked default, is
info — only controllers started to watch class-less Ingresses serve it. A
port the load balancer reports in error in the Ingress status
(` + "`status.loadBalancer.ingress[].ports[].error`" + `) is a warning, quoted.
IngressClasses are an optional read: when they cannot be listed (they are
cluster-scoped, and a user limited to one namespace may not list them) the
backends and the load balancer's ports are still checked, the class is not
judged, and the report's coverage says the check ran without them.

When every problem of an Ingress is a backend Service without a ready
endpoint, the Service's own finding (service-endpoints, service-target-port)
is the cause and names the Ingress: this finding folds into it (Via), and
stands when that check finds nothing or did not run. A backend Service whose
Deployment or StatefulSet is scaled to 0 replicas is named as such (the
backend is right, its pods are gone): service-endpoints is quiet on a Service
of a workload scaled to zero on purpose, but one an Ingress still routes to
answers 503.

## How to fix
Point the backend at the Service and port that exist (` + "`kubectl edit ingress`" + `),
restore the Service's pods (` + "`kubectl scale`" + ` a workload scaled to zero,
or remove the rules of a retired one), or set ` + "`ingressClassName`" + ` to one of the cluster's
classes (or mark one default with
` + "`ingressclass.kubernetes.io/is-default-class: \"true\"`" + `).

## References
- https://kubernetes.io/docs/concepts/services-networking/ingress/#the-ingress-resource
- https://kubernetes.io/docs/concepts/services-networking/ingress/#default-ingress-class
- https://kubernetes.io/docs/concepts/services-networking/ingress/#default-backend`,
}

const legacyIngressClassAnnotation = "kubernetes.io/ingress.class"

func runIngressBackends(p *doctor.Pass) error {
	svcs := kube.ServicesOf(p.Snapshot)
	classes := map[string]bool{}
	var defaults []string
	ics := p.Snapshot.IngressClasses()
	for i := range ics {
		classes[ics[i].Name] = true
		if ics[i].Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
			defaults = append(defaults, ics[i].Name)
		}
	}
	names := make([]string, 0, len(classes))
	for n := range classes {
		names = append(names, n)
	}
	sort.Strings(names)
	classesRead := p.Snapshot.Err(snapshot.IngressClasses) == nil

	ings := p.Snapshot.Ingresses()
	for i := range ings {
		ing := &ings[i]
		ref := kube.Ref("networking.k8s.io/v1", "Ingress", ing)
		var problems []string
		var rem []doctor.Remediation
		sev := doctor.Severity(0)

		// Backends: one entry per distinct (service, port), with where it is used.
		type use struct {
			backend *networkingv1.IngressServiceBackend
			where   []string
		}
		var order []string
		uses := map[string]*use{}
		add := func(b *networkingv1.IngressBackend, where string) {
			if b == nil || b.Service == nil {
				return
			}
			key := b.Service.Name + ":" + backendPort(b.Service.Port)
			if uses[key] == nil {
				uses[key] = &use{backend: b.Service}
				order = append(order, key)
			}
			uses[key].where = append(uses[key].where, where)
		}
		add(ing.Spec.DefaultBackend, "the default backend")
		for _, r := range ing.Spec.Rules {
			if r.HTTP == nil {
				continue
			}
			host := r.Host
			if host == "" {
				host = "*"
			}
			for _, path := range r.HTTP.Paths {
				pth := path.Path
				if pth == "" {
					pth = "/"
				}
				add(&path.Backend, host+pth)
			}
		}
		broken := 0
		// via: the Services whose own finding (no endpoint, a targetPort
		// no pod declares) is the cause, when that is every problem.
		var via []doctor.ObjectRef
		var scaled []*kube.Workload
		onlyEndpoints := true
		for _, key := range order {
			u := uses[key]
			why := backendProblem(svcs, ing.Namespace, u.backend)
			if why == "" {
				continue
			}
			broken++
			svc := svcs.Get(ing.Namespace, u.backend.Name)
			if w := scaledBackend(p, svc, why); w != nil {
				// service-endpoints is quiet on a Service whose workload
				// is scaled to zero (on purpose, as a rule): here it is
				// still routed to.
				why = fmt.Sprintf("service %s selects %s, which is scaled to 0 replicas", svc.Name, w.KindName())
				scaled = append(scaled, w)
				onlyEndpoints = false
			} else if svc != nil && len(svc.Spec.Selector) > 0 && strings.HasSuffix(why, " has no ready endpoint") {
				via = append(via, kube.Ref("v1", "Service", svc))
			} else {
				onlyEndpoints = false
			}
			problems = append(problems, fmt.Sprintf("%s (%s): %s", key, strings.Join(doctor.Examples(u.where), ", ")+more(len(u.where)), why))
		}
		// With a class no controller claims, nothing answers at all.
		unclaimed := classesRead && ing.Spec.IngressClassName != nil && !classes[*ing.Spec.IngressClassName]
		if broken > 0 {
			sev = doctor.Warning
			lead := fmt.Sprintf("%d of its %d backends are broken", broken, len(order))
			if broken == len(order) {
				sev = doctor.Critical
				lead = "every backend is broken, it can only answer 503"
				if len(order) == 1 {
					lead = "its only backend is broken, it can only answer 503"
				}
				if unclaimed {
					lead = strings.TrimSuffix(lead, ", it can only answer 503")
				}
			}
			problems = append([]string{lead}, problems...)
			if len(scaled) < broken {
				rem = append(rem,
					doctor.Remediation{Text: "compare the backends with the namespace's Services and their ports",
						Command: fmt.Sprintf("kubectl get services,endpointslices -n %s", ing.Namespace)},
					doctor.Remediation{Text: "point the backends at the Service and port that serve them",
						Command: fmt.Sprintf("kubectl edit ingress %s -n %s", ing.Name, ing.Namespace)})
			}
			for _, w := range scaled {
				rem = append(rem, doctor.Remediation{Text: fmt.Sprintf("scale %s back up if it should still serve these paths", w.KindName()),
					Command: fmt.Sprintf("kubectl scale %s -n %s --replicas=<n>", w.KindName(), w.Ref.Namespace)})
			}
			if len(scaled) > 0 {
				rem = append(rem, doctor.Remediation{Text: "or, if it is retired, remove its rules from the Ingress (or the Ingress)",
					Command: fmt.Sprintf("kubectl edit ingress %s -n %s", ing.Name, ing.Namespace)})
			}
		}

		switch cls := ing.Spec.IngressClassName; {
		case !classesRead:
			// The classes could not be listed: whether the class
			// exists or a default is set is not known.
		case cls != nil && !classes[*cls]:
			sev = max(sev, doctor.Warning)
			avail := "the cluster has no IngressClass"
			if len(names) > 0 {
				avail = "the cluster's classes are " + strings.Join(names, ", ")
			}
			problems = append(problems, fmt.Sprintf("its ingressClassName %q names no IngressClass (%s): no controller claims it", *cls, avail))
			if len(names) > 0 {
				to := names[0]
				if len(defaults) > 0 {
					to = defaults[0]
				}
				rem = append(rem, doctor.Remediation{Text: "use a class the cluster has",
					Command: fmt.Sprintf(`kubectl patch ingress %s -n %s --type=merge -p '{"spec":{"ingressClassName":"%s"}}'`, ing.Name, ing.Namespace, to)})
			} else {
				rem = append(rem, doctor.Remediation{Text: fmt.Sprintf("install the ingress controller that serves class %s (its chart or manifest creates the IngressClass), or use the class of the controller you run", *cls), Command: "kubectl get ingressclasses"})
			}
		case cls == nil && ing.Annotations[legacyIngressClassAnnotation] == "" && len(names) > 0 && len(defaults) == 0:
			sev = max(sev, doctor.Info)
			problems = append(problems, fmt.Sprintf("it names no ingressClassName and the cluster has no default IngressClass (classes: %s): only a controller started to watch class-less Ingresses serves it", strings.Join(names, ", ")))
			rem = append(rem, doctor.Remediation{Text: "name its class explicitly",
				Command: fmt.Sprintf(`kubectl patch ingress %s -n %s --type=merge -p '{"spec":{"ingressClassName":"%s"}}'`, ing.Name, ing.Namespace, names[0])})
		}
		// The load balancer's own verdict on its ports (status.loadBalancer.ingress[].ports[].error).
		for _, lb := range ing.Status.LoadBalancer.Ingress {
			for _, pt := range lb.Ports {
				if pt.Error == nil || *pt.Error == "" {
					continue
				}
				sev = max(sev, doctor.Warning)
				addr := lb.IP
				if addr == "" {
					addr = lb.Hostname
				}
				problems = append(problems, fmt.Sprintf("its load balancer %s reports port %d/%s in error: %s", addr, pt.Port, pt.Protocol, quote(*pt.Error)))
				rem = append(rem, doctor.Remediation{Text: "read the ingress controller's events for the load balancer", Command: fmt.Sprintf("kubectl describe ingress %s -n %s", ing.Name, ing.Namespace)})
			}
		}
		if sev == 0 {
			continue
		}
		f := doctor.Finding{Severity: sev, Object: ref, Message: "ingress " + ing.Name + ": " + strings.Join(problems, "; "), Remediation: rem}
		if onlyEndpoints && broken > 0 && len(problems) == broken+1 {
			// The Service's finding names this Ingress: fold into it.
			f.Via, f.ViaChecks = via, []string{"service-endpoints", "service-target-port"}
		}
		p.Report(f)
	}
	return nil
}

func more(n int) string {
	if n > doctor.MaxExamples {
		return fmt.Sprintf(" and %d more", n-doctor.MaxExamples)
	}
	return ""
}

func backendPort(p networkingv1.ServiceBackendPort) string {
	if p.Name != "" {
		return p.Name
	}
	return fmt.Sprint(p.Number)
}

// scaledBackend is the Deployment or StatefulSet scaled to zero behind a
// backend Service that has no ready endpoint, nil when there is none.
func scaledBackend(p *doctor.Pass, svc *corev1.Service, why string) *kube.Workload {
	if svc == nil || len(svc.Spec.Selector) == 0 || !strings.HasSuffix(why, " has no ready endpoint") {
		return nil
	}
	return kube.ScaledToZero(p.Snapshot, svc.Namespace, labels.SelectorFromSet(svc.Spec.Selector))
}

// backendProblem says why the Ingress backend cannot serve, "" when it can.
func backendProblem(svcs *kube.Services, ns string, b *networkingv1.IngressServiceBackend) string {
	svc := svcs.Get(ns, b.Name)
	if svc == nil {
		return fmt.Sprintf("service %s does not exist", b.Name)
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return ""
	}
	var port *corev1.ServicePort
	var exposed []string
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		if (b.Port.Name != "" && sp.Name == b.Port.Name) || (b.Port.Name == "" && sp.Port == b.Port.Number) {
			port = sp
		}
		if sp.Name != "" {
			exposed = append(exposed, fmt.Sprintf("%d (%s)", sp.Port, sp.Name))
		} else {
			exposed = append(exposed, fmt.Sprint(sp.Port))
		}
	}
	if port == nil {
		what := fmt.Sprintf("port %d", b.Port.Number)
		if b.Port.Name != "" {
			what = fmt.Sprintf("port named %s", b.Port.Name)
		}
		return fmt.Sprintf("service %s has no %s (it exposes %s)", b.Name, what, strings.Join(exposed, ", "))
	}
	if len(svc.Spec.Selector) == 0 && svcs.ReadyAny(ns, b.Name) == 0 {
		return fmt.Sprintf("service %s has no selector and no ready endpoint in its EndpointSlices", b.Name)
	}
	if svcs.Ready(ns, b.Name, port.Name) == 0 {
		return fmt.Sprintf("service %s has no ready endpoint", b.Name)
	}
	return ""
}
