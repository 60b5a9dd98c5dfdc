package snapshot

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// Trim drops, from one decoded object, what no check reads: managedFields,
// the last-applied-configuration annotation, and in pod specs (pods and
// workload templates) container env, commands, probe headers and arguments, and the
// sources of volumes other than hostPath and persistentVolumeClaim (of a
// configMap or secret volume only the object's name is kept). Container
// ports are kept (name, number, protocol: a Service's targetPort is judged by
// them) and shared between the pods of a template. Of a ready pod's
// conditions, those its Ready condition implies are dropped (readyConditions).
// Container resources are kept: OOM kills and scheduling are judged by them. At 30,000 pods this is most of
// the memory a scan holds. A check that needs a trimmed field must keep it
// here: fixture snapshots are trimmed the same way, so a fixture test fails
// first.
func Trim(obj runtime.Object) { (*Trimmer)(nil).Trim(obj) }

// Trimmer trims like Trim and, in addition, shares what is equal between
// the objects it trims (see share.go): the pods of one template carry equal
// containers, resource lists, tolerations, labels and owner references, and
// the pods of one node the same node name; a snapshot is read-only, so
// 30,000 pods of 300 templates keep 300 container lists instead of 30,000.
// Use one Trimmer per snapshot; it is safe for concurrent use.
type Trimmer struct {
	mu     sync.Mutex
	lists  map[string]corev1.ResourceList
	probes map[string]*corev1.Probe
	ports  map[string][]corev1.ContainerPort
	// strs interns repeated strings; shared holds shared slices, maps
	// and pointers by kind and content.
	strs   map[string]string
	shared map[string]any
	vals   map[any]any
	// specs are trimmed pod specs by the key of their bytes, marks what
	// the decoder noted of the pods it read (podspecs.go).
	specs map[specKey]*corev1.PodSpec
	marks map[*corev1.Pod]podSpecMark
}

// NewTrimmer returns a Trimmer with empty tables.
func NewTrimmer() *Trimmer {
	return &Trimmer{lists: map[string]corev1.ResourceList{}, strs: map[string]string{}, shared: map[string]any{},
		specs: map[specKey]*corev1.PodSpec{}, marks: map[*corev1.Pod]podSpecMark{}}
}

// Trim trims obj in place (see Trim); a nil Trimmer shares nothing.
func (tr *Trimmer) Trim(obj runtime.Object) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
		// Checks never compare versions of an object; the string is one
		// allocation per object.
		m.SetResourceVersion("")
		if a := m.GetAnnotations(); a != nil {
			if _, ok := a[corev1.LastAppliedConfigAnnotation]; ok {
				delete(a, corev1.LastAppliedConfigAnnotation)
				m.SetAnnotations(a)
			}
		}
	}
	var mark podSpecMark
	var marked bool
	if p, ok := obj.(*corev1.Pod); ok && tr != nil {
		mark, marked = tr.takeMark(p)
	}
	if spec, _ := PodSpecOf(obj); spec != nil && !mark.hit {
		renamed := tr.trimPodSpec(spec)
		tr.sharePodSpec(spec)
		if marked {
			tr.cacheSpec(mark, spec, renamed)
		}
	}
	if p, ok := obj.(*corev1.Pod); ok {
		p.Status.Conditions = readyConditions(p.Status.Conditions)
	}
	if tr == nil {
		return
	}
	if m, err := meta.Accessor(obj); err == nil {
		tr.shareMeta(m)
	}
	if p, ok := obj.(*corev1.Pod); ok {
		tr.sharePodStatus(&p.Status)
	}
}

// PodSpecOf returns the pod spec an object carries and its JSON pointer
// ("/spec" for a pod, "/spec/template/spec" for workloads,
// "/spec/jobTemplate/spec/template/spec" for a CronJob); nil for objects
// without one. It is the one list of the kinds that carry a pod template.
func PodSpecOf(obj runtime.Object) (*corev1.PodSpec, string) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return &o.Spec, "/spec"
	case *appsv1.ReplicaSet:
		return &o.Spec.Template.Spec, "/spec/template/spec"
	case *appsv1.Deployment:
		return &o.Spec.Template.Spec, "/spec/template/spec"
	case *appsv1.DaemonSet:
		return &o.Spec.Template.Spec, "/spec/template/spec"
	case *appsv1.StatefulSet:
		return &o.Spec.Template.Spec, "/spec/template/spec"
	case *batchv1.Job:
		return &o.Spec.Template.Spec, "/spec/template/spec"
	case *batchv1.CronJob:
		return &o.Spec.JobTemplate.Spec.Template.Spec, "/spec/jobTemplate/spec/template/spec"
	}
	return nil, ""
}

// trimPodSpec trims s in place and returns how many volume and mount names
// of the token volume's generated shape (kube-api-access-<5 characters>) it
// renamed (podspecs.go checks them against the masked bytes).
func (tr *Trimmer) trimPodSpec(s *corev1.PodSpec) (renamed int) {
	for _, cs := range [][]corev1.Container{s.InitContainers, s.Containers} {
		for i := range cs {
			tr.trimContainer(&cs[i])
		}
	}
	for i := range s.EphemeralContainers {
		tr.trimContainer((*corev1.Container)(&s.EphemeralContainers[i].EphemeralContainerCommon))
	}
	for i := range s.Volumes {
		v := &s.Volumes[i].VolumeSource
		if v.Projected != nil && strings.HasPrefix(s.Volumes[i].Name, tokenVolume+"-") {
			renamed += renameTokenVolume(s, s.Volumes[i].Name)
		}
		switch {
		case v.HostPath != nil, v.PersistentVolumeClaim != nil:
		case v.ConfigMap != nil:
			// Which ConfigMap a volume mounts names it in a mount failure;
			// its items and modes are not kept.
			*v = corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: v.ConfigMap.LocalObjectReference, Optional: v.ConfigMap.Optional}}
		case v.Secret != nil:
			*v = corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: v.Secret.SecretName, Optional: v.Secret.Optional}}
		default:
			*v = corev1.VolumeSource{}
		}
	}
	return renamed
}

// impliedByReady are the pod conditions a True Ready condition implies: a
// kubelet sets Ready only once the sandbox is up (PodReadyToStartContainers),
// the init containers have run (Initialized) and every container is ready
// (ContainersReady), and only bound pods run (PodScheduled).
var impliedByReady = map[corev1.PodConditionType]bool{corev1.PodReadyToStartContainers: true, corev1.PodInitialized: true,
	corev1.ContainersReady: true, corev1.PodScheduled: true}

// readyConditions drops, from the conditions of a ready pod, the True
// conditions its Ready condition implies. A v1.37 kubelet writes five
// conditions per pod (600 bytes), most pods are ready, and no check reads
// them there: checks judge the not-ready pods, whose conditions are all
// kept, and read a ready pod's Ready condition and its time (kept), and
// any other condition (readiness gates, DisruptionTarget; kept). A pod
// without a True Ready condition is returned as it is.
func readyConditions(cs []corev1.PodCondition) []corev1.PodCondition {
	ready, drop := false, 0
	for i := range cs {
		if cs[i].Type == corev1.PodReady && cs[i].Status == corev1.ConditionTrue {
			ready = true
		} else if impliedByReady[cs[i].Type] && cs[i].Status == corev1.ConditionTrue {
			drop++
		}
	}
	if !ready || drop == 0 {
		return cs
	}
	out := make([]corev1.PodCondition, 0, len(cs)-drop)
	for _, c := range cs {
		if !impliedByReady[c.Type] || c.Status != corev1.ConditionTrue {
			out = append(out, c)
		}
	}
	return out
}

// tokenVolume is the projected ServiceAccount token volume the API server's
// ServiceAccount admission adds to every pod that mounts a token, named
// kube-api-access-<5 random characters>.
const tokenVolume = "kube-api-access"

// renameTokenVolume drops the random suffix of a pod's token volume, in
// the volume and in every container's mount of it. The suffix is the only
// difference between the containers of one template's pods: without it
// they share one copy, like pods without a token. No check reads the name
// (the volume's source is dropped below).
//
// It returns how many names it renamed when name has the generated shape
// (the prefix, a dash and 5 characters), else 0.
func renameTokenVolume(s *corev1.PodSpec, name string) (renamed int) {
	count := 0
	if len(name) == len(tokenVolume)+6 {
		count = 1
	}
	for i := range s.Volumes {
		if s.Volumes[i].Name == name {
			s.Volumes[i].Name = tokenVolume
			renamed += count
		}
	}
	rename := func(ms []corev1.VolumeMount) {
		for i := range ms {
			if ms[i].Name == name {
				ms[i].Name = tokenVolume
				renamed += count
			}
		}
	}
	for _, cs := range [][]corev1.Container{s.InitContainers, s.Containers} {
		for i := range cs {
			rename(cs[i].VolumeMounts)
		}
	}
	for i := range s.EphemeralContainers {
		rename(s.EphemeralContainers[i].VolumeMounts)
	}
	return renamed
}

func (tr *Trimmer) trimContainer(c *corev1.Container) {
	c.Env, c.EnvFrom, c.Command, c.Args = nil, nil, nil, nil
	c.Lifecycle = nil
	c.LivenessProbe, c.ReadinessProbe, c.StartupProbe = tr.probe(c.LivenessProbe), tr.probe(c.ReadinessProbe), tr.probe(c.StartupProbe)
	c.Ports = tr.sharePorts(c.Ports)
	c.Resources.Requests = tr.share(c.Resources.Requests)
	c.Resources.Limits = tr.share(c.Resources.Limits)
}

// probe keeps what names a probe that kills or fails a container (its
// kind, port, path, timing, and an exec probe's program without its
// arguments) and drops HTTP headers and exec arguments, which may carry
// credentials; equal probes are shared, like resource lists.
func (tr *Trimmer) probe(pr *corev1.Probe) *corev1.Probe {
	if pr == nil {
		return nil
	}
	h := pr.ProbeHandler
	if h.HTTPGet != nil {
		g := *h.HTTPGet
		g.HTTPHeaders = nil
		h.HTTPGet = &g
	}
	if h.Exec != nil && len(h.Exec.Command) > 0 {
		h.Exec = &corev1.ExecAction{Command: h.Exec.Command[:1:1]}
	}
	out := &corev1.Probe{ProbeHandler: h, TimeoutSeconds: pr.TimeoutSeconds, PeriodSeconds: pr.PeriodSeconds,
		FailureThreshold: pr.FailureThreshold, InitialDelaySeconds: pr.InitialDelaySeconds}
	if tr == nil {
		return out
	}
	key := out.String()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.probes == nil {
		tr.probes = map[string]*corev1.Probe{}
	}
	if shared, ok := tr.probes[key]; ok {
		return shared
	}
	tr.probes[key] = out
	return out
}

// sharePorts keeps a container's ports as name, number and protocol (what
// resolves a Service's targetPort) and its host port and IP (what the
// scheduler's NodePorts filter compares), and shares equal lists between
// pods.
func (tr *Trimmer) sharePorts(ps []corev1.ContainerPort) []corev1.ContainerPort {
	if len(ps) == 0 {
		return nil
	}
	var key strings.Builder
	out := make([]corev1.ContainerPort, len(ps))
	for i, p := range ps {
		out[i] = corev1.ContainerPort{Name: p.Name, ContainerPort: p.ContainerPort, Protocol: p.Protocol, HostPort: p.HostPort, HostIP: p.HostIP}
		fmt.Fprintf(&key, "%s/%d/%s/%d/%s,", p.Name, p.ContainerPort, p.Protocol, p.HostPort, p.HostIP)
	}
	if tr == nil {
		return out
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.ports == nil {
		tr.ports = map[string][]corev1.ContainerPort{}
	}
	if shared, ok := tr.ports[key.String()]; ok {
		return shared
	}
	tr.ports[key.String()] = out
	return out
}

// share returns the table's list equal to l, adding l when it is new.
func (tr *Trimmer) share(l corev1.ResourceList) corev1.ResourceList {
	if tr == nil || len(l) == 0 {
		return l
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.shareList(l)
}

// shareList is share for a caller that holds tr.mu.
func (tr *Trimmer) shareList(l corev1.ResourceList) corev1.ResourceList {
	if len(l) == 0 {
		return l
	}
	var key strings.Builder
	for _, name := range slices.Sorted(maps.Keys(l)) {
		q := l[name]
		key.WriteString(string(name))
		key.WriteByte('=')
		key.WriteString(q.String())
		key.WriteByte(',')
	}
	if shared, ok := tr.lists[key.String()]; ok {
		return shared
	}
	tr.lists[key.String()] = l
	return l
}

// trimList trims every item of a list in place.
func (tr *Trimmer) trimList(list runtime.Object) {
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		tr.Trim(o)
		return nil
	})
}
