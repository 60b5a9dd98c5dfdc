package kube

import (
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// HostPort is a host port a container asks for: port, protocol and host
// IP ("0.0.0.0" when unset, as the scheduler reads it).
type HostPort struct {
	Port     int32
	Protocol corev1.Protocol
	IP       string
}

func (h HostPort) String() string { return fmt.Sprintf("%d/%s", h.Port, h.Protocol) }

// conflicts is the scheduler's NodePorts rule: the same port and protocol
// on host IPs that overlap (equal, or either is every address).
func (h HostPort) conflicts(o HostPort) bool {
	return h.Port == o.Port && h.Protocol == o.Protocol && (h.IP == o.IP || h.IP == "0.0.0.0" || o.IP == "0.0.0.0")
}

// HostPortHolder is a pod bound to a node that holds a host port.
type HostPortHolder struct {
	Port HostPort
	Pod  *corev1.Pod
}

// HostPorts are the host ports a pod spec asks for (containers and init
// containers, as the scheduler counts them).
func HostPorts(spec *corev1.PodSpec) []HostPort {
	var out []HostPort
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range cs {
			for _, p := range c.Ports {
				if p.HostPort <= 0 {
					continue
				}
				h := HostPort{Port: p.HostPort, Protocol: p.Protocol, IP: p.HostIP}
				if h.Protocol == "" {
					h.Protocol = corev1.ProtocolTCP
				}
				if h.IP == "" {
					h.IP = "0.0.0.0"
				}
				if !slices.Contains(out, h) {
					out = append(out, h)
				}
			}
		}
	}
	return out
}

type hostPortsKey struct{}

// hostPortIndex: per node, the host ports its pods that are not finished
// hold (few pods ask for any, so the index is small).
func hostPortIndex(s *snapshot.Snapshot) map[string][]HostPortHolder {
	return snapshot.Memo(s, hostPortsKey{}, func() map[string][]HostPortHolder {
		out := map[string][]HostPortHolder{}
		for _, p := range s.Pods() {
			if p.Spec.NodeName == "" || Terminal(p) {
				continue
			}
			for _, h := range HostPorts(&p.Spec) {
				out[p.Spec.NodeName] = append(out[p.Spec.NodeName], HostPortHolder{Port: h, Pod: p})
			}
		}
		return out
	})
}

// HostPortConflicts are the pods on the node that hold a host port the pod
// asks for: what the scheduler's "didn't have free ports for the requested
// pod ports" means there. Sorted by port, then pod.
func HostPortConflicts(s *snapshot.Snapshot, pod *corev1.Pod, node string) []HostPortHolder {
	want := HostPorts(&pod.Spec)
	if len(want) == 0 {
		return nil
	}
	var out []HostPortHolder
	for _, held := range hostPortIndex(s)[node] {
		if held.Pod.UID == pod.UID && held.Pod.Name == pod.Name && held.Pod.Namespace == pod.Namespace {
			continue
		}
		for _, w := range want {
			if w.conflicts(held.Port) {
				out = append(out, HostPortHolder{Port: w, Pod: held.Pod})
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Port.Port != out[j].Port.Port {
			return out[i].Port.Port < out[j].Port.Port
		}
		return out[i].Pod.Namespace+"/"+out[i].Pod.Name < out[j].Pod.Namespace+"/"+out[j].Pod.Name
	})
	return out
}
