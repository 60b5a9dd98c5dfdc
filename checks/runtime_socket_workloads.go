package checks

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

type runtimeMount struct {
	index      int // in spec.volumes, for JSON patches
	path       string
	kind       socketKind
	socketType bool // hostPath type Socket: the kubelet refuses a missing socket
}

type socketWorkload struct {
	*kube.Workload
	mounts []runtimeMount
	// fromPods: the controller is not in the input; Spec is one of its
	// pods' (a mirror pod's own, for a static pod).
	fromPods bool
	static   bool
}

func (w *socketWorkload) key() string { return w.Ref.Kind + "/" + w.Ref.Namespace + "/" + w.Ref.Name }

func (w *socketWorkload) sockets() string {
	var parts []string
	for _, m := range w.mounts {
		parts = append(parts, m.path)
	}
	return strings.Join(parts, ", ")
}

// runtimeMounts are the hostPath volumes of spec that reach a runtime socket
// and that some container mounts.
func runtimeMounts(spec *corev1.PodSpec) []runtimeMount {
	mounted := map[string]bool{}
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range cs {
			for _, vm := range c.VolumeMounts {
				mounted[vm.Name] = true
			}
		}
	}
	var out []runtimeMount
	for i, v := range spec.Volumes {
		if v.HostPath == nil || !mounted[v.Name] {
			continue
		}
		kind, ok := classifyHostPath(v.HostPath.Path)
		if !ok {
			continue
		}
		out = append(out, runtimeMount{index: i, path: v.HostPath.Path, kind: kind,
			socketType: v.HostPath.Type != nil && *v.HostPath.Type == corev1.HostPathSocket})
	}
	return out
}

func socketWorkloads(s *snapshot.Snapshot) []*socketWorkload {
	var out []*socketWorkload
	for w := range kube.TopWorkloads(s) {
		if mounts := runtimeMounts(w.Spec); len(mounts) > 0 {
			out = append(out, &socketWorkload{Workload: w, mounts: mounts})
		}
	}
	// Pods whose controller is not in the input: the pod's spec is the
	// template's (as far as volumes go), one workload per controller.
	own := kube.OwnersOf(s)
	seen := map[string]bool{}
	for _, pod := range s.Pods() {
		top, ok := own.Top(pod)
		if !ok || top.Spec != nil && !kube.MirrorPod(pod) || kube.Terminal(pod) {
			continue // a bare pod, or a listed controller: judged above
		}
		mounts := runtimeMounts(&pod.Spec)
		if len(mounts) == 0 {
			continue
		}
		w := &socketWorkload{Workload: &kube.Workload{Ref: top.Ref, Meta: &pod.ObjectMeta, Spec: &pod.Spec, SpecPath: "/spec/template/spec", Object: pod},
			mounts: mounts, fromPods: true}
		if top.Ref.Kind == "ReplicaSet" {
			// A Deployment's ReplicaSet is named after it and the template's hash.
			if hash := pod.Labels["pod-template-hash"]; hash != "" && strings.HasSuffix(top.Ref.Name, "-"+hash) {
				w.Ref = doctor.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: pod.Namespace, Name: strings.TrimSuffix(top.Ref.Name, "-"+hash)}
			}
		}
		if kube.MirrorPod(pod) { // its spec is a manifest on the node
			w.Workload = &kube.Workload{Ref: kube.Ref("v1", "Pod", &pod.ObjectMeta), Meta: &pod.ObjectMeta, Spec: &pod.Spec, SpecPath: "/spec", Object: pod}
			w.static = true
		}
		if seen[w.key()] {
			continue
		}
		seen[w.key()] = true
		out = append(out, w)
	}
	return out
}

func workloadMembers(ws []*socketWorkload) []doctor.ObjectRef {
	out := make([]doctor.ObjectRef, len(ws))
	for i, w := range ws {
		out[i] = w.Ref
	}
	return out
}
