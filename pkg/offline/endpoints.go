//lint:file-ignore SA1019 captures from before EndpointSlices hold core/v1 Endpoints: this file reads them, deprecated or not

package offline

import (
	"encoding/json"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// Captures from before EndpointSlices, and collectors that list only
// core/v1 Endpoints (Sonobuoy, many `kubectl get all,ep` pastes), hold a
// Service's endpoints as Endpoints objects; the checks read EndpointSlices.
// When a capture holds Endpoints and no EndpointSlice at all, each
// Endpoints subset becomes the slice the API server's EndpointSlice
// mirroring controller would write for it: ready addresses are ready
// endpoints, notReadyAddresses not ready ones, the subset's ports its
// ports, labelled with the Service's name. A capture that holds slices
// keeps them alone (the Endpoints would only repeat them).

// endpoints keeps an Endpoints object until the end of the capture.
func (d *decoder) endpoints(body []byte) error {
	var ep corev1.Endpoints
	if err := json.Unmarshal(body, &ep); err != nil {
		return fmt.Errorf("decoding v1 Endpoints: %v", jsonErr(err))
	}
	if d.ns != "" && ep.Namespace != d.ns {
		d.stats.OutOfScope++
		return nil
	}
	d.eps = append(d.eps, &ep)
	return nil
}

// mirrorEndpoints files the slices of the kept Endpoints when the capture
// has no EndpointSlice.
func (d *decoder) mirrorEndpoints() {
	if len(d.eps) == 0 {
		return
	}
	if d.b.Holds(snapshot.EndpointSlices) {
		d.stats.Ignored["Endpoints"] += len(d.eps)
		return
	}
	seen := map[string]bool{}
	for _, ep := range d.eps {
		if key := ep.Namespace + "/" + ep.Name; seen[key] {
			d.stats.Duplicates++
			continue
		} else {
			seen[key] = true
		}
		for i, sub := range ep.Subsets {
			d.b.Add(snapshot.EndpointSlices, mirrorSubset(ep, i, sub))
			d.stats.Objects++
		}
		if len(ep.Subsets) == 0 {
			// No endpoint at all: the controller writes no slice either,
			// and the Service is judged as having none.
			d.b.Present(snapshot.EndpointSlices)
		}
		d.stats.Mirrored++
	}
}

func mirrorSubset(ep *corev1.Endpoints, i int, sub corev1.EndpointSubset) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-mirrored-%d", ep.Name, i), Namespace: ep.Namespace,
			CreationTimestamp: ep.CreationTimestamp,
			Labels: map[string]string{discoveryv1.LabelServiceName: ep.Name,
				discoveryv1.LabelManagedBy: "endpointslicemirroring-controller.k8s.io"}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	add := func(addrs []corev1.EndpointAddress, ready bool) {
		for _, a := range addrs {
			if ip, err := netip.ParseAddr(a.IP); err == nil && ip.Is6() {
				s.AddressType = discoveryv1.AddressTypeIPv6
			}
			e := discoveryv1.Endpoint{Addresses: []string{a.IP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)},
				TargetRef: a.TargetRef, NodeName: a.NodeName}
			if a.Hostname != "" {
				e.Hostname = ptr.To(a.Hostname)
			}
			s.Endpoints = append(s.Endpoints, e)
		}
	}
	add(sub.Addresses, true)
	add(sub.NotReadyAddresses, false)
	for _, p := range sub.Ports {
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr.To(p.Name), Port: ptr.To(p.Port), Protocol: ptr.To(p.Protocol), AppProtocol: p.AppProtocol})
	}
	return s
}
