package checks

import (
	"encoding/json"
	"fmt"
	appsv1 "k8s.io/api/apps/v1"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// ServiceTargetPort reports Service ports whose targetPort no ready pod
// declares: the pods are up, the selector matches, and yet the Service has
// no endpoint on that port (a name) or sends to a port nothing declares (a
// number), so its clients get connection refused.
var ServiceTargetPort = &doctor.Check{
	Name:     "service-target-port",
	Severity: doctor.Critical,
	Origin:   "peer coverage map",
	Reads:    append([]snapshot.Resource{snapshot.Pods}, kube.ServiceReads...),
	Optional: kube.WorkloadReads,
	Run:      runServiceTargetPort,
	Doc: `Service ports whose targetPort (a name or a number) the ready pods do not declare

## Why it matters
A Service port may target a container port by name (` + "`targetPort: http`" + `). The
EndpointSlice controller resolves the name in each pod; a pod whose
containers declare no port of that name is left out of that port. Rename
the container port from ` + "`http`" + ` to ` + "`web`" + ` in a chart, and every pod is Ready,
the selector matches, ` + "`kubectl get endpoints`" + ` looks plausible for the other
ports — and the Service port answers nothing.

## How it is detected
For every Service with a selector whose pods have been Ready for more than
five minutes, each port's ` + "`targetPort`" + ` is resolved as the EndpointSlice
controller does, in the ports the selected pods' containers (and sidecar
init containers) declare, by name and protocol:
- a **name** that no ready pod declares for the port's protocol, when the
  Service's EndpointSlices hold no ready endpoint for that port: the port
  has no endpoint, critical when no port of the Service has one, a warning
  when others do. Pods that declare no port at all are judged by the slices
  alone (the controller's own verdict);
- a **number** that no container declares, where the containers declare
  other ports: a number always resolves, so the slices list the pods and
  connections reach a port nothing may listen on — a warning naming the
  ports they do declare (declaring a port is informational, so a process
  could still listen there; pods that declare no port are not judged).

Services whose pods are not ready are service-endpoints' findings.

When the ready pods belong to several workloads and some declare the
numeric target port while the pods of another declare other ports, the
selector spans workloads that do not serve the same thing (` + "`tier=cache`" + ` over
redis and memcached): named with the share of connections that reach the
wrong pods, and remediated by a selector narrowed with the label that tells
them apart.

A new target port is offered only when a declared port plausibly serves the
same purpose: the same name as the Service port, or the only declared port
for a nameless one. A number none declares with no such port (a metrics
endpoint that listens undeclared, CoreDNS's 9153 beside its declared 53) is
an info, and never "fixed" by pointing it at another protocol's port.

## How to fix
Name the container port as the Service expects (` + "`ports[].name`" + ` in the pod
template), or point the Service's ` + "`targetPort`" + ` at the name or number the
containers use: ` + "`kubectl get pods -l SELECTOR -o jsonpath='{..ports}'`" + `.

## Example
On the ` + "`" + `everyday-causes` + "`" + ` scenario (` + "`" + `testdata/scenarios` + "`" + `), in the table output:

` + "```" + `
WARNING
  ec-web/Service/storefront  [service-target-port]
    service storefront: port 80 (http) targets container port 8081, which none of its 2 ready pods (bare pods storefront-1, storefront-2) declares (they declare 8080/TCP (http)): connections reach a port the containers do not declare, and are refused unless a process listens there undeclared
    → point port 80 at 8080, the TCP port the pods declare
      $ kubectl patch service storefront -n ec-web --type=json -p '[{"op":"replace","path":"/spec/ports/0/targetPort","value":8080}]'
    → list the ports the pods declare
      $ kubectl get pods -n ec-web -l 'app=storefront' -o jsonpath='{range .items[0].spec.containers[*]}{.name}{": "}{.ports}{"\n"}{end}'
    → point targetPort at a name (or number) the containers use
      $ kubectl edit service storefront -n ec-web
` + "```" + `

## References
- https://kubernetes.io/docs/concepts/services-networking/service/#field-spec-ports
- https://kubernetes.io/docs/concepts/services-networking/endpoint-slices/`,
}

func runServiceTargetPort(p *doctor.Pass) error {
	type slices struct {
		any   bool
		ready map[string]int
	}
	bySvc := map[string]*slices{}
	for _, sl := range p.Snapshot.EndpointSlices() {
		name := sl.Labels["kubernetes.io/service-name"]
		if name == "" {
			continue
		}
		key := sl.Namespace + "/" + name
		if bySvc[key] == nil {
			bySvc[key] = &slices{ready: map[string]int{}}
		}
		s := bySvc[key]
		s.any = true
		n := 0
		for _, ep := range sl.Endpoints {
			if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
				n += len(ep.Addresses)
			}
		}
		for _, pt := range sl.Ports {
			pn := ""
			if pt.Name != nil {
				pn = *pt.Name
			}
			s.ready[pn] += n
		}
	}
	svcs := p.Snapshot.Services()
	for i := range svcs {
		svc := &svcs[i]
		sl := bySvc[svc.Namespace+"/"+svc.Name]
		if len(svc.Spec.Selector) == 0 || svc.Spec.Type == corev1.ServiceTypeExternalName {
			continue
		}
		var ready []*corev1.Pod
		for _, pod := range kube.Selected(p.Snapshot, svc.Namespace, labels.SelectorFromSet(svc.Spec.Selector)) {
			if ok, since := kube.PodReady(pod); ok && !kube.Terminal(pod) && p.Now.Sub(since.Time) > 5*time.Minute {
				ready = append(ready, pod)
			}
		}
		if len(ready) == 0 {
			continue
		}
		declared := declaredPorts(ready)
		who := fmt.Sprintf("%s (%s)", doctor.Plural(len(ready), "ready pod", "ready pods"), strings.Join(ownerNames(p.Snapshot, ready), "; "))
		var broken []string
		var fixes []doctor.Remediation
		working, certain, mixed, unsure := 0, 0, 0, 0
		fix := func(i int, sp corev1.ServicePort, proto corev1.Protocol) bool {
			c, ok := declared.candidate(sp.Name, proto)
			// A port the pods declare is offered only when it plausibly
			// serves the same purpose: the same name, or the only port of
			// a nameless Service port. Never a metrics port retargeted at
			// DNS because DNS is all the pods declare.
			if ok && (sp.Name != "" && c.Name != sp.Name || sp.Name == "" && c.Name != "" && declared.count(proto) > 1) {
				ok = false
			}
			if ok {
				var v any = c.ContainerPort
				what := fmt.Sprint(c.ContainerPort)
				if sp.TargetPort.StrVal != "" && c.Name != "" {
					v, what = c.Name, fmt.Sprintf("%q", c.Name)
				}
				body, _ := json.Marshal([]map[string]any{{"op": "replace", "path": fmt.Sprintf("/spec/ports/%d/targetPort", i), "value": v}})
				fixes = append(fixes, doctor.Remediation{Text: fmt.Sprintf("point port %d at %s, the %s port the pods declare", sp.Port, what, proto),
					Command: fmt.Sprintf("kubectl patch service %s -n %s --type=json -p '%s'", svc.Name, svc.Namespace, body)})
			}
			return ok
		}
		for i, sp := range svc.Spec.Ports {
			proto := sp.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			served := sl != nil && sl.ready[sp.Name] > 0
			switch {
			case sp.TargetPort.StrVal != "":
				// The EndpointSlice controller resolves a name in each
				// pod; the slices are its verdict, the containers'
				// ports the reason. Without slices the ports decide.
				if served || declared.hasName(sp.TargetPort.StrVal, proto) || (sl == nil && declared.none()) {
					working++
					continue
				}
				if sl != nil && !sl.any && declared.none() {
					continue
				}
				certain++
				fix(i, sp, proto)
				broken = append(broken, fmt.Sprintf("port %d%s targets the container port named %q, which none of its %s declares%s",
					sp.Port, portLabel(sp.Name), sp.TargetPort.StrVal, who, declared.they()))
			default:
				// A number always resolves: the slices list the pods,
				// and connections reach a port nothing may listen on.
				// Declared ports are informational, so only a number
				// none declares, where the containers declare others,
				// is named.
				target := sp.TargetPort.IntVal
				if target == 0 {
					target = sp.Port
				}
				if declared.none() {
					working++
					continue
				}
				if declared.hasNumber(target, proto) {
					// Some pods declare it; a selector spanning two
					// workloads may send a share of the traffic to pods
					// of one that serves another port.
					if m := mixedWorkloads(p.Snapshot, ready, target, proto, svc.Spec.Selector); m != nil {
						mixed++
						broken = append(broken, fmt.Sprintf("port %d%s targets container port %d, which %s %s not declare (they declare %s) while %s %s: its selector %s spans %d workloads, so about %d in %d connections reach pods that do not serve it",
							sp.Port, portLabel(sp.Name), target, m.badWhat, map[bool]string{true: "does", false: "do"}[m.bad == 1], m.badPorts, m.goodWhat,
							map[bool]string{true: "does", false: "do"}[m.good == 1], kube.SelectorString(svc.Spec.Selector), m.owners, m.bad, m.bad+m.good))
						if m.narrow != "" {
							fixes = append(fixes, doctor.Remediation{Text: "narrow the selector to the workload that serves the port",
								Command: fmt.Sprintf("kubectl set selector service %s -n %s '%s'", svc.Name, svc.Namespace, m.narrow)})
						}
						continue
					}
					working++
					continue
				}
				if !fix(i, sp, proto) {
					// A number none declares and no declared port like it:
					// most often a process that listens undeclared (a
					// metrics endpoint), sometimes a wrong number.
					unsure++
				}
				broken = append(broken, fmt.Sprintf("port %d%s targets container port %d, which none of its %s declares%s",
					sp.Port, portLabel(sp.Name), target, who, declared.they()))
			}
		}
		if len(broken) == 0 {
			continue
		}
		sev := doctor.Warning
		switch {
		case working == 0 && certain == len(broken):
			sev = doctor.Critical
		case unsure == len(broken):
			sev = doctor.Info
		}
		consequence := "the Service has no endpoint there and connections to it are refused"
		switch {
		case mixed == len(broken):
			consequence = "those pods refuse the connections unless a process listens there undeclared"
		case certain == 0:
			consequence = "connections reach a port the containers do not declare, and are refused unless a process listens there undeclared"
		case certain < len(broken):
			consequence = "connections to those ports are refused"
		}
		sel := kube.SelectorString(svc.Spec.Selector)
		p.Report(doctor.Finding{Severity: sev, Object: kube.Ref("v1", "Service", svc),
			Message: fmt.Sprintf("service %s: %s: %s", svc.Name, strings.Join(broken, "; "), consequence),
			Remediation: append(fixes, []doctor.Remediation{
				{Text: "list the ports the pods declare", Command: fmt.Sprintf("kubectl get pods -n %s -l '%s' -o jsonpath='{range .items[0].spec.containers[*]}{.name}{\": \"}{.ports}{\"\\n\"}{end}'", svc.Namespace, sel)},
				{Text: "point targetPort at a name (or number) the containers use", Command: fmt.Sprintf("kubectl edit service %s -n %s", svc.Name, svc.Namespace)}}...)})
	}
	return nil
}

// podPorts are the container ports the ready pods of a Service declare.
type podPorts []corev1.ContainerPort

// declaredPorts collects the ports of the pods' containers and of their
// restartable init containers (sidecars), which a targetPort resolves in.
func declaredPorts(pods []*corev1.Pod) podPorts {
	var out podPorts
	seen := map[corev1.ContainerPort]bool{}
	for _, pod := range pods {
		cs := pod.Spec.Containers
		for _, ic := range pod.Spec.InitContainers {
			if ic.RestartPolicy != nil && *ic.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				cs = append(cs[:len(cs):len(cs)], ic)
			}
		}
		for _, c := range cs {
			for _, pt := range c.Ports {
				if pt.Protocol == "" {
					pt.Protocol = corev1.ProtocolTCP
				}
				if !seen[pt] {
					seen[pt] = true
					out = append(out, pt)
				}
			}
		}
	}
	return out
}

func (d podPorts) none() bool { return len(d) == 0 }

// candidate is the declared port a Service port most likely meant: the one
// of the same name, else the only one of its protocol.
func (d podPorts) candidate(name string, proto corev1.Protocol) (corev1.ContainerPort, bool) {
	var same []corev1.ContainerPort
	for _, p := range d {
		if p.Protocol != proto {
			continue
		}
		if name != "" && p.Name == name {
			return p, true
		}
		same = append(same, p)
	}
	if len(same) == 1 {
		return same[0], true
	}
	return corev1.ContainerPort{}, false
}

// count is how many ports of proto the pods declare.
func (d podPorts) count(proto corev1.Protocol) int {
	n := 0
	for _, p := range d {
		if p.Protocol == proto {
			n++
		}
	}
	return n
}

func (d podPorts) hasName(name string, proto corev1.Protocol) bool {
	for _, p := range d {
		if p.Name == name && p.Protocol == proto {
			return true
		}
	}
	return false
}

func (d podPorts) hasNumber(n int32, proto corev1.Protocol) bool {
	for _, p := range d {
		if p.ContainerPort == n && p.Protocol == proto {
			return true
		}
	}
	return false
}

// they is " (they declare 8080/TCP (http), 9090/TCP (metrics))" or
// " (they declare no port)".
func (d podPorts) they() string {
	if len(d) == 0 {
		return " (they declare no port)"
	}
	var out []string
	for _, p := range d {
		s := fmt.Sprintf("%d/%s", p.ContainerPort, p.Protocol)
		if p.Name != "" {
			s += " (" + p.Name + ")"
		}
		out = append(out, s)
	}
	if len(out) > 4 {
		out = append(out[:4], fmt.Sprintf("%d more", len(out)-4))
	}
	return " (they declare " + strings.Join(out, ", ") + ")"
}

func portLabel(name string) string {
	if name == "" {
		return ""
	}
	return " (" + name + ")"
}

// mixedPorts is a Service whose ready pods belong to several workloads, some
// of which do not declare its target port.
type mixedPorts struct {
	good, bad         int    // ready pods that declare the port, and that do not
	goodWhat, badWhat string // "deployment/redis's 1 pod", "deployment/memcached's 2 pods"
	badPorts          string // what the others declare: "11211/TCP"
	owners            int
	narrow            string // a selector that keeps only the good pods, "" when none is found
}

// mixedWorkloads: the ready pods span several top owners, and the pods of
// at least one declare ports but not target: a selector too wide (tier=cache
// over redis and memcached). nil otherwise, and for bare pods.
func mixedWorkloads(s *snapshot.Snapshot, ready []*corev1.Pod, target int32, proto corev1.Protocol, selector map[string]string) *mixedPorts {
	own := kube.OwnersOf(s)
	byOwner := map[string][]*corev1.Pod{}
	var names []string
	for _, pod := range ready {
		w, ok := own.Top(pod)
		if !ok {
			return nil
		}
		if byOwner[w.KindName()] == nil {
			names = append(names, w.KindName())
		}
		byOwner[w.KindName()] = append(byOwner[w.KindName()], pod)
	}
	if len(byOwner) < 2 {
		return nil
	}
	sort.Strings(names)
	m := &mixedPorts{owners: len(byOwner)}
	var goodPods, badPods []*corev1.Pod
	var goodNames, badNames []string
	var badDeclared podPorts
	for _, n := range names {
		pods := byOwner[n]
		d := declaredPorts(pods)
		switch {
		case d.hasNumber(target, proto):
			goodPods, goodNames = append(goodPods, pods...), append(goodNames, fmt.Sprintf("%s's %s", n, doctor.Plural(len(pods), "pod", "pods")))
		case !d.none():
			badPods, badNames = append(badPods, pods...), append(badNames, fmt.Sprintf("%s's %s", n, doctor.Plural(len(pods), "pod", "pods")))
			badDeclared = append(badDeclared, d...)
		default:
			return nil // it declares nothing: it may listen undeclared
		}
	}
	if len(badPods) == 0 || len(goodPods) == 0 {
		return nil
	}
	m.good, m.bad = len(goodPods), len(badPods)
	m.goodWhat, m.badWhat = strings.Join(goodNames, ", "), strings.Join(badNames, ", ")
	var ports []string
	for _, pt := range badDeclared {
		if x := fmt.Sprintf("%d/%s", pt.ContainerPort, pt.Protocol); !slices.Contains(ports, x) {
			ports = append(ports, x)
		}
	}
	m.badPorts = strings.Join(ports, ", ")
	// A label every good pod has with one value and no bad pod has with
	// it: added to the selector, it keeps only the good pods.
	var keys []string
	for k := range goodPods[0].Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := goodPods[0].Labels[k]
		if k == appsv1.DefaultDeploymentUniqueLabelKey || k == appsv1.ControllerRevisionHashLabelKey {
			continue // changes with every rollout
		}
		same := true
		for _, pod := range goodPods {
			same = same && pod.Labels[k] == v
		}
		for _, pod := range badPods {
			same = same && pod.Labels[k] != v
		}
		if _, in := selector[k]; same && !in {
			sel := maps.Clone(selector)
			sel[k] = v
			m.narrow = kube.SelectorString(sel)
			break
		}
	}
	return m
}
