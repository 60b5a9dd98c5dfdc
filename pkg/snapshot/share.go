package snapshot

import (
	"encoding/binary"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What a Trimmer shares between the objects it trims. Decoding gives every
// object its own copy of every string, slice, map and pointer; in a large
// cluster most of them are equal (the containers, tolerations and labels
// of one template's pods; the node name of one node's pods; the namespace,
// the image, the message of a thousand identical rejections). Sharing them
// keeps one copy each. Shared slices are clipped (cap == len), so that an
// append by a reader copies instead of writing into another object; checks
// never modify the snapshot.

// str interns s. The caller holds tr.mu.
func (tr *Trimmer) str(s string) string {
	if s == "" {
		return s
	}
	if v, ok := tr.strs[s]; ok {
		return v
	}
	tr.strs[s] = s
	return s
}

// strOf interns a string-typed value (phases, reasons, policies).
func strOf[S ~string](tr *Trimmer, s S) S { return S(tr.str(string(s))) }

// marshaler is what the generated API types implement: their protobuf
// encoding is a canonical key for their content.
type marshaler interface{ Marshal() ([]byte, error) }

// shareSlice returns the table's slice equal to s, adding s (clipped) when
// it is new. The caller holds tr.mu.
func shareSlice[T any, PT interface {
	*T
	marshaler
}](tr *Trimmer, kind string, s []T) []T {
	if len(s) == 0 {
		return s
	}
	key := []byte(kind)
	for i := range s {
		b, err := PT(&s[i]).Marshal()
		if err != nil {
			return s
		}
		key = binary.AppendUvarint(key, uint64(len(b)))
		key = append(key, b...)
	}
	if v, ok := tr.shared[string(key)].([]T); ok {
		return v
	}
	s = slices.Clip(s)
	tr.shared[string(key)] = s
	return s
}

// sharePtr returns the table's value equal to *p. The caller holds tr.mu.
func sharePtr[T any, PT interface {
	*T
	marshaler
}](tr *Trimmer, kind string, p PT) PT {
	if p == nil {
		return p
	}
	b, err := p.Marshal()
	if err != nil {
		return p
	}
	key := kind + string(b)
	if v, ok := tr.shared[key].(PT); ok {
		return v
	}
	tr.shared[key] = p
	return p
}

// shareVal shares a pointer to a comparable value (*int64 grace periods,
// *bool flags). The caller holds tr.mu.
func shareVal[T comparable](tr *Trimmer, p *T) *T {
	if p == nil {
		return p
	}
	if tr.vals == nil {
		tr.vals = map[any]any{}
	}
	if v, ok := tr.vals[*p].(*T); ok { // the dynamic type is part of the key
		return v
	}
	tr.vals[*p] = p
	return p
}

// shareMap returns the table's map equal to m. The caller holds tr.mu.
func (tr *Trimmer) shareMap(kind string, m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	key := []byte(kind)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		key = binary.AppendUvarint(key, uint64(len(k)))
		key = append(key, k...)
		key = binary.AppendUvarint(key, uint64(len(m[k])))
		key = append(key, m[k]...)
	}
	if v, ok := tr.shared[string(key)].(map[string]string); ok {
		return v
	}
	tr.shared[string(key)] = m
	return m
}

// shareStrings shares a string slice (finalizers). The caller holds tr.mu.
func (tr *Trimmer) shareStrings(kind string, s []string) []string {
	if len(s) == 0 {
		return s
	}
	key := []byte(kind)
	for _, x := range s {
		key = binary.AppendUvarint(key, uint64(len(x)))
		key = append(key, x...)
	}
	if v, ok := tr.shared[string(key)].([]string); ok {
		return v
	}
	s = slices.Clip(s)
	tr.shared[string(key)] = s
	return s
}

// shareMeta shares an object's namespace, labels, annotations, owner
// references and finalizers.
func (tr *Trimmer) shareMeta(m metav1.Object) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	m.SetNamespace(tr.str(m.GetNamespace()))
	m.SetGenerateName(tr.str(m.GetGenerateName()))
	if l := m.GetLabels(); len(l) > 0 {
		m.SetLabels(tr.shareMap("labels", l))
	}
	if a := m.GetAnnotations(); len(a) > 0 {
		m.SetAnnotations(tr.shareMap("annotations", a))
	}
	if o := m.GetOwnerReferences(); len(o) > 0 {
		m.SetOwnerReferences(shareSlice(tr, "owners", o))
	}
	if f := m.GetFinalizers(); len(f) > 0 {
		m.SetFinalizers(tr.shareStrings("finalizers", f))
	}
}

// sharePodSpec shares a trimmed pod spec's parts: equal containers,
// tolerations, volumes, affinity and security context are one copy per
// template, the node name one per node.
func (tr *Trimmer) sharePodSpec(s *corev1.PodSpec) {
	if tr == nil {
		return
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	s.InitContainers = shareSlice(tr, "init", s.InitContainers)
	s.Containers = shareSlice(tr, "containers", s.Containers)
	s.EphemeralContainers = shareSlice(tr, "ephemeral", s.EphemeralContainers)
	s.Volumes = shareSlice(tr, "volumes", s.Volumes)
	s.Tolerations = shareSlice(tr, "tolerations", s.Tolerations)
	s.TopologySpreadConstraints = shareSlice(tr, "spread", s.TopologySpreadConstraints)
	s.ImagePullSecrets = shareSlice(tr, "pullsecrets", s.ImagePullSecrets)
	s.ReadinessGates = shareSlice(tr, "gates", s.ReadinessGates)
	s.HostAliases = shareSlice(tr, "hostaliases", s.HostAliases)
	s.ResourceClaims = shareSlice(tr, "claims", s.ResourceClaims)
	s.SchedulingGates = shareSlice(tr, "schedgates", s.SchedulingGates)
	s.SecurityContext = sharePtr(tr, "podsec", s.SecurityContext)
	s.Affinity = sharePtr(tr, "affinity", s.Affinity)
	s.DNSConfig = sharePtr(tr, "dns", s.DNSConfig)
	s.OS = sharePtr(tr, "os", s.OS)
	s.Resources = sharePtr(tr, "podres", s.Resources)
	s.NodeSelector = tr.shareMap("nodeselector", s.NodeSelector)
	s.Overhead = tr.shareList(s.Overhead)
	s.TerminationGracePeriodSeconds = shareVal(tr, s.TerminationGracePeriodSeconds)
	s.ActiveDeadlineSeconds = shareVal(tr, s.ActiveDeadlineSeconds)
	s.Priority = shareVal(tr, s.Priority)
	s.EnableServiceLinks = shareVal(tr, s.EnableServiceLinks)
	s.AutomountServiceAccountToken = shareVal(tr, s.AutomountServiceAccountToken)
	s.PreemptionPolicy = shareVal(tr, s.PreemptionPolicy)
	s.ShareProcessNamespace = shareVal(tr, s.ShareProcessNamespace)
	s.HostUsers = shareVal(tr, s.HostUsers)
	s.SetHostnameAsFQDN = shareVal(tr, s.SetHostnameAsFQDN)
	s.NodeName = tr.str(s.NodeName)
	s.ServiceAccountName = tr.str(s.ServiceAccountName)
	s.DeprecatedServiceAccount = tr.str(s.DeprecatedServiceAccount)
	s.SchedulerName = tr.str(s.SchedulerName)
	s.PriorityClassName = tr.str(s.PriorityClassName)
	s.RuntimeClassName = shareVal(tr, s.RuntimeClassName)
	s.RestartPolicy = strOf(tr, s.RestartPolicy)
	s.DNSPolicy = strOf(tr, s.DNSPolicy)
}

// sharePodStatus interns what repeats in pod status: phases, reasons and
// messages (a storm's thousand identical rejections), images, host IPs.
func (tr *Trimmer) sharePodStatus(st *corev1.PodStatus) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	st.Phase = strOf(tr, st.Phase)
	st.Reason = tr.str(st.Reason)
	st.Message = tr.str(st.Message)
	st.QOSClass = strOf(tr, st.QOSClass)
	st.HostIP = tr.str(st.HostIP)
	st.HostIPs = shareSlice(tr, "hostips", st.HostIPs)
	// PodIPs repeats PodIP (and adds the IPv6 address of a dual-stack
	// pod); checks read only whether a pod has an IP.
	st.PodIPs = nil
	st.NominatedNodeName = tr.str(st.NominatedNodeName)
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.Type, c.Status = strOf(tr, c.Type), strOf(tr, c.Status)
		c.Reason, c.Message = tr.str(c.Reason), tr.str(c.Message)
	}
	for _, cs := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses, st.EphemeralContainerStatuses} {
		for i := range cs {
			c := &cs[i]
			c.Name, c.Image, c.ImageID = tr.str(c.Name), tr.str(c.Image), tr.str(c.ImageID)
			// A container ID is unique and long (a runtime prefix and 64 hex
			// digits) and no check reads it; terminated states repeat it.
			c.ContainerID = ""
			// What a kubelet reports of a container's mounts, resources
			// (requested, allocated, their health), user and stop signal:
			// per pod, and no check reads it; the spec has what checks need.
			c.VolumeMounts, c.Resources, c.AllocatedResources, c.AllocatedResourcesStatus = nil, nil, nil, nil
			c.User, c.StopSignal = nil, nil
			for _, s := range []*corev1.ContainerState{&c.State, &c.LastTerminationState} {
				if s.Waiting != nil {
					s.Waiting.Reason, s.Waiting.Message = tr.str(s.Waiting.Reason), tr.str(s.Waiting.Message)
				}
				if s.Terminated != nil {
					s.Terminated.ContainerID = ""
					s.Terminated.Reason, s.Terminated.Message = tr.str(s.Terminated.Reason), tr.str(s.Terminated.Message)
				}
			}
		}
	}
}
