package checks

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// ServiceTargetPort reports Service ports whose named targetPort no ready
// pod declares: the pods are up, the selector matches, and yet the Service
// has no endpoint on that port, so its clients get connection refused.
var ServiceTargetPort = &doctor.Check{
	Name:     "service-target-port",
	Severity: doctor.Critical,
	Origin:   "peer coverage map",
	Reads:    append([]snapshot.Resource{snapshot.Pods}, kube.ServiceReads...),
	Optional: kube.WorkloadReads,
	Run:      runServiceTargetPort,
	Doc: `Service ports whose named targetPort the ready pods do not declare, so they have no endpoint

## Why it matters
A Service port may target a container port by name (` + "`targetPort: http`" + `). The
EndpointSlice controller resolves the name in each pod; a pod whose
containers declare no port of that name is left out of that port. Rename
the container port from ` + "`http`" + ` to ` + "`web`" + ` in a chart, and every pod is Ready,
the selector matches, ` + "`kubectl get endpoints`" + ` looks plausible for the other
ports — and the Service port answers nothing.

## How it is detected
For every Service with a selector, each port whose ` + "`targetPort`" + ` is a name is
checked when the Service's EndpointSlices exist (the controller has seen
it) and the selector matches pods that have been Ready for more than five
minutes: if the slices hold no ready endpoint for that port, the name
resolves in none of them (container ports themselves are not kept in the
snapshot: the slices are the controller's own verdict). Critical when no
port of the Service has an endpoint, a warning when others still do.
Services whose pods are not ready are service-endpoints' findings.

## How to fix
Name the container port as the Service expects (` + "`ports[].name`" + ` in the pod
template), or point the Service's ` + "`targetPort`" + ` at the name or number the
containers use: ` + "`kubectl get pods -l SELECTOR -o jsonpath='{..ports}'`" + `.

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
		if len(svc.Spec.Selector) == 0 || svc.Spec.Type == corev1.ServiceTypeExternalName || sl == nil || !sl.any {
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
		var broken []string
		working := 0
		for _, sp := range svc.Spec.Ports {
			if sl.ready[sp.Name] > 0 {
				working++
				continue
			}
			if sp.TargetPort.StrVal == "" {
				continue // a number always resolves
			}
			broken = append(broken, fmt.Sprintf("port %d%s targets the container port named %q", sp.Port, portLabel(sp.Name), sp.TargetPort.StrVal))
		}
		if len(broken) == 0 {
			continue
		}
		sev := doctor.Critical
		if working > 0 {
			sev = doctor.Warning
		}
		sel := kube.SelectorString(svc.Spec.Selector)
		p.Report(doctor.Finding{Severity: sev, Object: kube.Ref("v1", "Service", svc),
			Message: fmt.Sprintf("service %s: %s, which none of its %s (%s) declares: the Service has no endpoint there and connections to it are refused",
				svc.Name, strings.Join(broken, "; "), doctor.Plural(len(ready), "ready pod", "ready pods"), strings.Join(kube.OwnerNames(p.Snapshot, ready), "; ")),
			Remediation: []doctor.Remediation{
				{Text: "list the port names the pods declare", Command: fmt.Sprintf("kubectl get pods -n %s -l '%s' -o jsonpath='{range .items[0].spec.containers[*]}{.name}{\": \"}{.ports}{\"\\n\"}{end}'", svc.Namespace, sel)},
				{Text: "point targetPort at a name (or number) the containers use", Command: fmt.Sprintf("kubectl edit service %s -n %s", svc.Name, svc.Namespace)}}})
	}
	return nil
}

func portLabel(name string) string {
	if name == "" {
		return ""
	}
	return " (" + name + ")"
}
