package checks

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// GatewayAPI reports Gateway API objects that serve nothing: GatewayClasses
// no controller accepts, Gateways not accepted or programmed, and
// HTTPRoutes and GRPCRoutes whose parent Gateways reject them or whose
// backend Services do not exist.
var GatewayAPI = &doctor.Check{
	Name:     "gateway-api",
	Severity: doctor.Critical,
	Origin:   "peer coverage map",
	Reads:    []snapshot.Resource{snapshot.GatewayClasses, snapshot.Gateways, snapshot.HTTPRoutes, snapshot.Services},
	Optional: []snapshot.Resource{snapshot.GRPCRoutes},
	Run:      runGatewayAPI,
	Doc: `Gateway API classes, Gateways and routes that serve nothing, with the object that causes it

## Why it matters
The Gateway API splits an entry point in three: a GatewayClass names the
controller that implements it, a Gateway asks that controller for listeners
and an address, and HTTPRoutes or GRPCRoutes attach to the Gateway and send
traffic to Services. Each link can fail silently: a class whose controller
is not installed (every Gateway of the class waits forever with no
address), a Gateway the controller refuses (an invalid listener, no address
available), a route its Gateway does not allow (another namespace, a
hostname no listener serves) or whose backend Service does not exist (the
route answers 500). The objects are all accepted by the API server.

## How it is detected
Read only where the Gateway API is served: without its CRDs the lists are
"not served" and the check is skipped, never an error. One finding per root
cause, the furthest upstream first:
- a GatewayClass whose ` + "`Accepted`" + ` condition is False (its controller rejects it),
  or has not been set five minutes after creation (no controller with its
  ` + "`controllerName`" + ` runs): critical when Gateways use it, naming them and the
  routes attached to them (which are not reported again); info otherwise;
- a Gateway whose ` + "`gatewayClassName`" + ` names no class, or whose ` + "`Accepted`" + ` or
  ` + "`Programmed`" + ` condition is False (reason and message quoted), or is still
  unset five minutes after creation: critical. A Gateway of an accepted
  class that its controller has not programmed yet, within five minutes, is
  quiet;
- an HTTPRoute or GRPCRoute whose parent Gateway does not exist, or whose
  parent status says ` + "`Accepted: False`" + ` (NotAllowedByListeners,
  NoMatchingListenerHostname...) or ` + "`ResolvedRefs: False`" + ` (RefNotPermitted...),
  and Service backends that do not exist or lack the port, computed from
  the snapshot's Services: critical when no parent accepts it or every
  backend is broken, a warning otherwise. A scan of one namespace (` + "`-n`" + `)
  does not call a Gateway or Service of another namespace missing (it was
  not listed; the route's status still holds its controller's verdict),
  and reports a GatewayClass only when one of that namespace's Gateways
  uses it.

## How to fix
Install the controller the class names (or fix ` + "`controllerName`" + `); fix the
Gateway's listeners as the quoted condition says; allow the route's
namespace on the listener (` + "`allowedRoutes.namespaces`" + `), match a listener
hostname, add a ReferenceGrant for cross-namespace backends, or point the
backendRefs at a Service and port that exist.

## References
- https://gateway-api.sigs.k8s.io/api-types/gatewayclass/
- https://gateway-api.sigs.k8s.io/api-types/gateway/
- https://gateway-api.sigs.k8s.io/guides/troubleshooting/
- https://gateway-api.sigs.k8s.io/reference/spec/#routeconditionreason`,
}

// gatewayGrace is how long a controller may take to set a condition.
const gatewayGrace = 5 * time.Minute

// route is an HTTPRoute or a GRPCRoute, as far as this check looks.
type route struct {
	kind     string
	meta     *metav1.ObjectMeta
	parents  []gatewayv1.ParentReference
	status   []gatewayv1.RouteParentStatus
	backends []gatewayv1.BackendObjectReference
}

func runGatewayAPI(p *doctor.Pass) error {
	classes := map[string]*gatewayv1.GatewayClass{}
	gcs := p.Snapshot.GatewayClasses()
	var classNames []string
	for i := range gcs {
		classes[gcs[i].Name] = &gcs[i]
		classNames = append(classNames, gcs[i].Name)
	}
	sort.Strings(classNames)
	gws := p.Snapshot.Gateways()
	gateways := map[string]*gatewayv1.Gateway{}
	for i := range gws {
		gateways[gws[i].Namespace+"/"+gws[i].Name] = &gws[i]
	}
	routes := collectRoutes(p.Snapshot)

	// Routes attached to each Gateway, for the upstream findings' counts.
	attached := map[string][]string{}
	for _, r := range routes {
		for _, pr := range r.parents {
			if key, ok := gatewayParent(pr, r.meta.Namespace); ok {
				attached[key] = append(attached[key], strings.ToLower(r.kind)+"/"+r.meta.Namespace+"/"+r.meta.Name)
			}
		}
	}

	// GatewayClasses no controller accepts.
	brokenClass := map[string]bool{}
	for _, name := range classNames {
		gc := classes[name]
		why := classProblem(gc, p.Now)
		if why == "" {
			continue
		}
		brokenClass[name] = true
		var users, routesOf []string
		for i := range gws {
			if string(gws[i].Spec.GatewayClassName) == name {
				key := gws[i].Namespace + "/" + gws[i].Name
				users = append(users, key)
				routesOf = append(routesOf, attached[key]...)
			}
		}
		if len(users) == 0 && p.Snapshot.Namespace != "" {
			continue // a scan of one namespace (-n) none of whose Gateways uses it
		}
		sev := doctor.Info
		harm := "no Gateway uses it yet"
		if len(users) > 0 {
			sev = doctor.Critical
			harm = fmt.Sprintf("its %s (%s) get no address and serve nothing", doctor.Plural(len(users), "gateway", "gateways"), strings.Join(doctor.Examples(users), ", ")+more(len(users)))
			if len(users) == 1 {
				harm = fmt.Sprintf("its gateway %s gets no address and serves nothing", users[0])
			}
			if len(routesOf) > 0 {
				harm += fmt.Sprintf(", nor %s the %s attached to %s", map[bool]string{true: "does", false: "do"}[len(routesOf) == 1], doctor.Plural(len(routesOf), "route", "routes"), map[bool]string{true: "it", false: "them"}[len(users) == 1])
			}
		}
		p.Report(doctor.Finding{Severity: sev, Object: doctor.ObjectRef{APIVersion: "gateway.networking.k8s.io/v1", Kind: "GatewayClass", Name: name},
			Cause: "class-not-accepted", Count: max(len(users), 1),
			Message: fmt.Sprintf("gatewayclass %s %s: %s", name, why, harm),
			Remediation: []doctor.Remediation{
				{Text: "install (or start) the controller named by the class, or fix controllerName", Command: fmt.Sprintf("kubectl get gatewayclass %s -o jsonpath='{.spec.controllerName}{\"\\n\"}{.status.conditions}'", name)},
				{Text: "find the controller's pods", Command: "kubectl get pods -A -o wide | grep -i gateway"}}})
	}

	// Gateways.
	brokenGateway := map[string]bool{}
	sort.Slice(gws, func(i, j int) bool {
		return gws[i].Namespace+"/"+gws[i].Name < gws[j].Namespace+"/"+gws[j].Name
	})
	for i := range gws {
		gw := &gws[i]
		key := gw.Namespace + "/" + gw.Name
		cls := string(gw.Spec.GatewayClassName)
		if brokenClass[cls] {
			brokenGateway[key] = true
			continue // told with its class
		}
		ref := kube.Ref("gateway.networking.k8s.io/v1", "Gateway", gw)
		var why string
		var rem []doctor.Remediation
		describe := doctor.Remediation{Text: "read the controller's verdict on the Gateway", Command: fmt.Sprintf("kubectl describe gateway %s -n %s", gw.Name, gw.Namespace)}
		if classes[cls] == nil {
			avail := "the cluster has no GatewayClass"
			if len(classNames) > 0 {
				avail = "the cluster's classes are " + strings.Join(classNames, ", ")
			}
			why = fmt.Sprintf("names gatewayClassName %q, which no GatewayClass defines (%s): no controller implements it", cls, avail)
			rem = append(rem, doctor.Remediation{Text: "recreate the Gateway with a class the cluster has (gatewayClassName cannot be changed)", Command: "kubectl get gatewayclasses"})
		} else if w := conditionProblem(gw.Status.Conditions, gw.Generation, gw.CreationTimestamp, p.Now,
			string(gatewayv1.GatewayConditionAccepted), string(gatewayv1.GatewayConditionProgrammed)); w != "" {
			why = w
			rem = append(rem, describe)
		}
		if why == "" {
			continue
		}
		brokenGateway[key] = true
		msg := fmt.Sprintf("gateway %s %s", gw.Name, why)
		if n := len(attached[key]); n > 0 {
			msg += fmt.Sprintf("; the %s attached to it %s nothing", doctor.Plural(n, "route", "routes"), map[bool]string{true: "serves", false: "serve"}[n == 1])
		}
		p.Report(doctor.Finding{Object: ref, Cause: "gateway-not-ready", Count: max(len(attached[key]), 1), Message: msg, Remediation: rem})
	}

	// Routes.
	svcs := kube.ServicesOf(p.Snapshot)
	for _, r := range routes {
		ref := doctor.ObjectRef{APIVersion: "gateway.networking.k8s.io/v1", Kind: r.kind, Namespace: r.meta.Namespace, Name: r.meta.Name}
		var problems []string
		gatewayParents, rejected, upstream := 0, 0, 0
		for _, pr := range r.parents {
			key, ok := gatewayParent(pr, r.meta.Namespace)
			if !ok {
				continue
			}
			gw := gateways[key]
			gatewayParents++
			switch {
			case gw == nil && !p.Snapshot.Covers(strings.SplitN(key, "/", 2)[0]):
				// A Gateway of a namespace this scan did not list (-n):
				// the route's status still holds its controller's verdict.
			case gw == nil:
				rejected++
				problems = append(problems, fmt.Sprintf("its parent gateway %s does not exist", key))
				continue
			case brokenGateway[key]:
				upstream++ // told with the Gateway or its class
				continue
			}
			st := parentStatus(r.status, pr, r.meta.Namespace)
			if st == nil {
				if p.Now.Sub(r.meta.CreationTimestamp.Time) > gatewayGrace {
					rejected++
					problems = append(problems, fmt.Sprintf("gateway %s has not taken it up in %s (no status for that parent: its controller ignores this route kind or namespace)", key, since(p.Now, r.meta.CreationTimestamp)))
				}
				continue
			}
			if c := meta.FindStatusCondition(st.Conditions, string(gatewayv1.RouteConditionAccepted)); c != nil && c.Status == metav1.ConditionFalse {
				rejected++
				problems = append(problems, fmt.Sprintf("gateway %s rejects it (%s: %s)", key, c.Reason, quote(c.Message)))
			}
			if c := meta.FindStatusCondition(st.Conditions, string(gatewayv1.RouteConditionResolvedRefs)); c != nil && c.Status == metav1.ConditionFalse &&
				c.Reason != string(gatewayv1.RouteReasonBackendNotFound) { // computed below, with the port
				problems = append(problems, fmt.Sprintf("gateway %s cannot resolve its references (%s: %s)", key, c.Reason, quote(c.Message)))
			}
		}
		if upstream > 0 && upstream == gatewayParents {
			continue // every parent is broken upstream: one finding there
		}
		brokenBackends, services := 0, 0
		seen := map[string]bool{}
		for _, b := range r.backends {
			if (b.Group != nil && *b.Group != "") || (b.Kind != nil && *b.Kind != "Service") {
				continue
			}
			ns := r.meta.Namespace
			if b.Namespace != nil && *b.Namespace != "" {
				ns = string(*b.Namespace)
			}
			k := fmt.Sprintf("%s/%s:%v", ns, b.Name, portOf(b.Port))
			if seen[k] {
				continue
			}
			seen[k] = true
			services++
			svc := svcs.Get(ns, string(b.Name))
			switch {
			case svc == nil && !p.Snapshot.Covers(ns):
				// A backend in a namespace this scan did not list (-n).
			case svc == nil:
				brokenBackends++
				problems = append(problems, fmt.Sprintf("its backend service %s/%s does not exist", ns, b.Name))
			case b.Port != nil && !servicePort(svc.Spec.Ports, int32(*b.Port)) && svc.Spec.Type != "ExternalName":
				brokenBackends++
				problems = append(problems, fmt.Sprintf("its backend service %s/%s has no port %d", ns, b.Name, *b.Port))
			}
		}
		if len(problems) == 0 {
			continue
		}
		sev := doctor.Warning
		if (gatewayParents > 0 && rejected == gatewayParents) || (services > 0 && brokenBackends == services) {
			sev = doctor.Critical
		}
		lower := strings.ToLower(r.kind)
		p.Report(doctor.Finding{Severity: sev, Object: ref, Cause: "route",
			Message: fmt.Sprintf("%s %s: %s", lower, r.meta.Name, strings.Join(problems, "; ")),
			Remediation: []doctor.Remediation{
				{Text: "read each parent's verdict on the route", Command: fmt.Sprintf("kubectl get %s %s -n %s -o jsonpath='{range .status.parents[*]}{.parentRef.name}{\": \"}{.conditions}{\"\\n\"}{end}'", lower, r.meta.Name, r.meta.Namespace)},
				{Text: "compare the backends with the namespace's Services", Command: fmt.Sprintf("kubectl get services -n %s", r.meta.Namespace)},
				{Text: "fix the parentRefs or backendRefs", Command: fmt.Sprintf("kubectl edit %s %s -n %s", lower, r.meta.Name, r.meta.Namespace)}}})
	}
	return nil
}

// classProblem says why no controller serves the class, "" when one does
// (or may still, within the grace period).
func classProblem(gc *gatewayv1.GatewayClass, now time.Time) string {
	c := meta.FindStatusCondition(gc.Status.Conditions, string(gatewayv1.GatewayClassConditionStatusAccepted))
	switch {
	case c != nil && c.Status == metav1.ConditionTrue:
		return ""
	case c != nil && c.Status == metav1.ConditionFalse:
		return fmt.Sprintf("is rejected by its controller %s (%s: %s)", gc.Spec.ControllerName, c.Reason, quote(c.Message))
	case now.Sub(gc.CreationTimestamp.Time) > gatewayGrace:
		return fmt.Sprintf("has not been accepted by any controller in %s: no controller named %s runs in the cluster", since(now, gc.CreationTimestamp), gc.Spec.ControllerName)
	}
	return ""
}

// conditionProblem reads a Gateway's conditions in order: the first one
// that is False, or unset (Unknown) past the grace period, is the problem.
func conditionProblem(conds []metav1.Condition, generation int64, created metav1.Time, now time.Time, types ...string) string {
	for _, t := range types {
		c := meta.FindStatusCondition(conds, t)
		switch {
		case c != nil && c.Status == metav1.ConditionFalse:
			return fmt.Sprintf("is not %s (%s: %s)", strings.ToLower(t), c.Reason, quote(c.Message))
		case (c == nil || c.Status == metav1.ConditionUnknown) && now.Sub(created.Time) > gatewayGrace:
			return fmt.Sprintf("has not been %s by its controller in %s", strings.ToLower(t), since(now, created))
		}
	}
	return ""
}

func collectRoutes(s *snapshot.Snapshot) []route {
	var out []route
	hrs := s.HTTPRoutes()
	for i := range hrs {
		r := &hrs[i]
		rt := route{kind: "HTTPRoute", meta: &r.ObjectMeta, parents: r.Spec.ParentRefs, status: r.Status.Parents}
		for _, rule := range r.Spec.Rules {
			for _, b := range rule.BackendRefs {
				rt.backends = append(rt.backends, b.BackendObjectReference)
			}
		}
		out = append(out, rt)
	}
	if s.Err(snapshot.GRPCRoutes) == nil {
		grs := s.GRPCRoutes()
		for i := range grs {
			r := &grs[i]
			rt := route{kind: "GRPCRoute", meta: &r.ObjectMeta, parents: r.Spec.ParentRefs, status: r.Status.Parents}
			for _, rule := range r.Spec.Rules {
				for _, b := range rule.BackendRefs {
					rt.backends = append(rt.backends, b.BackendObjectReference)
				}
			}
			out = append(out, rt)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.kind+a.meta.Namespace+"/"+a.meta.Name < b.kind+b.meta.Namespace+"/"+b.meta.Name
	})
	return out
}

// gatewayParent is "ns/name" of a parentRef that names a Gateway.
func gatewayParent(pr gatewayv1.ParentReference, routeNS string) (string, bool) {
	if pr.Group != nil && *pr.Group != gatewayv1.GroupName {
		return "", false
	}
	if pr.Kind != nil && *pr.Kind != "Gateway" {
		return "", false
	}
	ns := routeNS
	if pr.Namespace != nil && *pr.Namespace != "" {
		ns = string(*pr.Namespace)
	}
	return ns + "/" + string(pr.Name), true
}

// parentStatus finds the route's status for a parentRef (same Gateway and
// section).
func parentStatus(sts []gatewayv1.RouteParentStatus, pr gatewayv1.ParentReference, routeNS string) *gatewayv1.RouteParentStatus {
	want, _ := gatewayParent(pr, routeNS)
	for i := range sts {
		got, ok := gatewayParent(sts[i].ParentRef, routeNS)
		if !ok || got != want {
			continue
		}
		if pr.SectionName != nil && (sts[i].ParentRef.SectionName == nil || *sts[i].ParentRef.SectionName != *pr.SectionName) {
			continue
		}
		return &sts[i]
	}
	return nil
}

func portOf(p *gatewayv1.PortNumber) string {
	if p == nil {
		return ""
	}
	return fmt.Sprint(*p)
}

func servicePort(ports []corev1.ServicePort, port int32) bool {
	for _, sp := range ports {
		if sp.Port == port {
			return true
		}
	}
	return false
}
