package kube

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// ServiceReads are what ServicesOf reads.
var ServiceReads = []snapshot.Resource{snapshot.Services, snapshot.EndpointSlices}

// Services indexes Services and their ready endpoints, from EndpointSlices.
type Services struct {
	byKey map[string]*corev1.Service
	ready map[string]map[string]int // "ns/service" -> endpoint port name -> ready endpoints
}

type servicesKey struct{}

// ServicesOf returns the snapshot's Service index, built once per snapshot.
func ServicesOf(s *snapshot.Snapshot) *Services {
	return snapshot.Memo(s, servicesKey{}, func() *Services {
		e := &Services{byKey: map[string]*corev1.Service{}, ready: map[string]map[string]int{}}
		svcs := s.Services()
		for i := range svcs {
			e.byKey[svcs[i].Namespace+"/"+svcs[i].Name] = &svcs[i]
		}
		for _, sl := range s.EndpointSlices() {
			svc := sl.Labels["kubernetes.io/service-name"]
			if svc == "" {
				continue
			}
			n := 0
			for _, ep := range sl.Endpoints {
				if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
					n += len(ep.Addresses)
				}
			}
			key := sl.Namespace + "/" + svc
			if e.ready[key] == nil {
				e.ready[key] = map[string]int{}
			}
			for _, p := range sl.Ports {
				name := ""
				if p.Name != nil {
					name = *p.Name
				}
				e.ready[key][name] += n
			}
		}
		return e
	})
}

// Get returns the Service, or nil.
func (e *Services) Get(namespace, name string) *corev1.Service { return e.byKey[namespace+"/"+name] }

// Ready is how many ready endpoints the Service has for its port named
// portName ("" for an unnamed port).
func (e *Services) Ready(namespace, name, portName string) int {
	return e.ready[namespace+"/"+name][portName]
}

// ReadyAny is how many ready endpoints the Service has on its busiest port.
func (e *Services) ReadyAny(namespace, name string) int {
	best := 0
	for _, n := range e.ready[namespace+"/"+name] {
		best = max(best, n)
	}
	return best
}
