package checks

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

// Evictions are judged by how many happened recently, not by how many
// Failed pods are left: a workload that is healthy now but lost dozens of
// pods to the kubelet in the last day runs on an overcommitted node, or
// without the requests that would protect it.
const (
	evictedRecentWindow  = 24 * time.Hour
	evictedRecentWarning = 20 // "dozens" in the last day: a warning
	evictedRecentInfo    = 3  // a few in the last day: info
)

// evictionGroup is the evictions of one top owner (or of the bare pods of
// one namespace).
type evictionGroup struct {
	owner         *kube.Workload
	ns            string
	pods          map[string]bool // pod UIDs (or namespace/name) counted
	names         []string
	nodes         map[string]int
	kinds         map[string]int // evictionShort -> count
	resources     map[string]int
	times         []time.Time
	newest        kube.Eviction
	newestAt      time.Time
	newestMsg     string
	newestPod     string
	spec          *corev1.PodSpec // the newest evicted pod's spec
	fromEventOnly int
}

func (g *evictionGroup) add(p *doctor.Pass, key, name, node string, at time.Time, e kube.Eviction, msg string, spec *corev1.PodSpec) {
	if g.pods[key] {
		return
	}
	g.pods[key] = true
	if len(g.names) < 50 {
		g.names = append(g.names, name)
	}
	if node != "" {
		g.nodes[node]++
	}
	g.kinds[evictionShort(e)]++
	if e.Resource != "" {
		g.resources[e.Resource]++
	}
	g.times = append(g.times, at)
	if g.newestAt.IsZero() || at.After(g.newestAt) {
		g.newestAt, g.newest, g.newestMsg, g.newestPod = at, e, msg, name
		if spec != nil {
			g.spec = spec
		}
	}
	if g.spec == nil {
		g.spec = spec
	}
}

// collectEvictions groups evicted pods at their top owner, from the pods'
// statuses, and from the kubelet's Evicted events for pods that are gone
// (a StatefulSet or DaemonSet deletes each evicted pod and recreates it,
// so only the event is left).
func collectEvictions(p *doctor.Pass, own *kube.Owners) map[string]*evictionGroup {
	groups := map[string]*evictionGroup{}
	groupOf := func(o *kube.Workload, ns string) *evictionGroup {
		key := "ns|" + ns
		if o != nil {
			key = fmt.Sprintf("%s|%s/%s", o.Ref.Kind, ns, o.Ref.Name)
		}
		g := groups[key]
		if g == nil {
			g = &evictionGroup{owner: o, ns: ns, pods: map[string]bool{}, nodes: map[string]int{}, kinds: map[string]int{}, resources: map[string]int{}}
			groups[key] = g
		}
		return g
	}
	seen := map[types.UID]bool{}
	type nsName struct{ ns, name string }
	byName := make(map[nsName]*corev1.Pod, len(p.Snapshot.Pods()))
	pods := p.Snapshot.Pods()
	for i := range pods {
		pod := pods[i]
		byName[nsName{pod.Namespace, pod.Name}] = pod
		var e kube.Eviction
		var at time.Time
		msg := pod.Status.Message
		switch {
		case kube.PodEvicted(pod):
			e, at = kube.EvictionOf(pod), kube.EvictedAt(pod)
		default:
			var ok bool
			if e, at, msg, ok = kube.DisruptionOf(pod); !ok {
				continue
			}
		}
		seen[pod.UID] = true
		o, ok := own.Top(pod)
		if !ok {
			o = nil
		}
		g := groupOf(o, pod.Namespace)
		key := string(pod.UID)
		if key == "" {
			key = pod.Namespace + "/" + pod.Name
		}
		g.add(p, key, pod.Namespace+"/"+pod.Name, pod.Spec.NodeName, at, e, msg, &pod.Spec)
	}
	warnings := kube.WarningEventsOf(p.Snapshot)
	for _, reason := range []string{"Evicted", "Preempting"} {
		for _, w := range warnings.Reason(reason) {
			if w.Kind != "Pod" || (w.UID != "" && seen[w.UID]) {
				continue
			}
			if cur := byName[nsName{w.Namespace, w.Name}]; cur != nil && (w.UID == "" || cur.UID == w.UID) {
				continue // the pod is listed: counted from its status, or not evicted
			}
			e, ok := kube.ParseEviction(w.Message)
			if !ok && reason != "Preempting" {
				continue
			}
			o := ownerByPodName(p, own, w.Namespace, w.Name)
			g := groupOf(o, w.Namespace)
			key := string(w.UID)
			if key == "" {
				key = w.Namespace + "/" + w.Name + "@" + w.Last.String()
			}
			before := len(g.pods)
			var spec *corev1.PodSpec
			if o != nil {
				spec = o.Spec
			}
			g.add(p, key, w.Namespace+"/"+w.Name, w.Host, w.Last, e, w.Message, spec)
			if len(g.pods) > before {
				g.fromEventOnly++
			}
		}
	}
	return groups
}

// podSuffix is the five characters the API server appends to a
// generateName (k8s.io/apimachinery/pkg/util/rand's alphabet).
func podSuffix(s string) bool {
	if len(s) != 5 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("bcdfghjklmnpqrstvwxz2456789", r) {
			return false
		}
	}
	return true
}

// ownerByPodName finds the owner of a pod that no longer exists from its
// name alone: NAME-ORDINAL of a listed StatefulSet, or NAME-xxxxx of a
// listed ReplicaSet, DaemonSet or Job (then climbed to its top owner).
// Nil when no listed workload has that name.
func ownerByPodName(p *doctor.Pass, own *kube.Owners, ns, pod string) *kube.Workload {
	i := strings.LastIndex(pod, "-")
	if i <= 0 {
		return nil
	}
	base, tail := pod[:i], pod[i+1:]
	ordinal := tail != ""
	for _, r := range tail {
		if r < '0' || r > '9' {
			ordinal = false
		}
	}
	if ordinal {
		if w := own.Find(doctor.ObjectRef{Kind: "StatefulSet", Namespace: ns, Name: base}); w != nil {
			return w
		}
	}
	if !podSuffix(tail) {
		return nil
	}
	for _, kind := range []string{"ReplicaSet", "DaemonSet", "Job"} {
		if w := own.Find(doctor.ObjectRef{Kind: kind, Namespace: ns, Name: base}); w != nil {
			if top := own.TopOf(w.Meta); top != nil {
				return top
			}
			return w
		}
	}
	return nil
}

// topCount is the most frequent key of a count map (ties by name).
func topCount(m map[string]int) string {
	best, n := "", -1
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] > n {
			best, n = k, m[k]
		}
	}
	return best
}

func reportEvictions(p *doctor.Pass, groups map[string]*evictionGroup) {
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		reportEvictionGroup(p, groups[k])
	}
}

func reportEvictionGroup(p *doctor.Pass, g *evictionGroup) {
	count := len(g.pods)
	sort.Slice(g.times, func(i, j int) bool { return g.times[i].Before(g.times[j]) })
	recent := 0
	for _, t := range g.times {
		if p.Now.Sub(t) <= evictedRecentWindow {
			recent++
		}
	}
	var sev doctor.Severity
	switch {
	case recent >= evictedRecentWarning || count >= evictedWarning:
		sev = doctor.Warning
	case count >= evictedInfo || recent >= evictedRecentInfo:
		sev = doctor.Info
	default:
		return // a few old evictions: the node had a bad day once
	}
	first, last := g.times[0], g.times[len(g.times)-1]
	var b strings.Builder
	fmt.Fprintf(&b, "%s evicted%s", doctor.Plural(count, "pod", "pods"), whereNodes(g.nodes))
	if last.Sub(first) < time.Minute {
		fmt.Fprintf(&b, " %s ago", human(p.Now.Sub(last)))
	} else {
		fmt.Fprintf(&b, " between %s and %s ago", human(p.Now.Sub(first)), human(p.Now.Sub(last)))
	}
	if recent > 0 && recent < count {
		fmt.Fprintf(&b, " (%d in the last %s)", recent, human(evictedRecentWindow))
	}
	if g.owner == nil {
		fmt.Fprintf(&b, " (bare pods in namespace %s)", g.ns)
	}
	b.WriteString(": " + evictionCauses(g))
	resource := topCount(g.resources)
	if d := declares(g.spec, resource); d != "" && g.newest.Kind == kube.EvictNodePressure {
		b.WriteString("; " + d)
	}
	if g.owner != nil && g.owner.Object != nil {
		if a := availabilityOf(g.owner); a.known && a.desired > 0 && a.available >= a.desired {
			fmt.Fprintf(&b, "; %s now", a)
		}
	}
	if g.fromEventOnly > 0 && g.fromEventOnly == count {
		b.WriteString(" (counted from the kubelet's Evicted events: the pods were deleted and recreated)")
	}
	ref := kube.NamespaceRef(g.ns)
	if g.owner != nil {
		ref = g.owner.Ref
	}
	var ev []string
	if g.newestMsg != "" {
		ev = append(ev, fmt.Sprintf("Evicted %s (%s ago): %s", g.newestPod, human(p.Now.Sub(g.newestAt)), clipLine(g.newestMsg, maxQuote)))
	}
	p.Report(doctor.Finding{Severity: sev, Object: ref, Message: b.String(), Count: count, Examples: doctor.Examples(g.names),
		Evidence: ev, Cause: "evicted", Remediation: evictionRemedies(g, resource)})
}

func whereNodes(nodes map[string]int) string {
	ns := keysOf(nodes)
	switch len(ns) {
	case 0:
		return ""
	case 1:
		return " on node " + ns[0]
	}
	return fmt.Sprintf(" on %d nodes (%s)", len(ns), strings.Join(doctor.Examples(ns), ", "))
}

// evictionCauses says why, from the kubelet's messages: each kind with its
// count, and the facts of the newest (threshold, who used what).
func evictionCauses(g *evictionGroup) string {
	type kv struct {
		k string
		v int
	}
	var list []kv
	for k, v := range g.kinds {
		list = append(list, kv{k, v})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].v != list[j].v {
			return list[i].v > list[j].v
		}
		return list[i].k < list[j].k
	})
	var parts []string
	for i, x := range list {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("%d more", len(list)-3))
			break
		}
		s := x.k
		if len(list) > 1 || x.v > 1 {
			s += fmt.Sprintf(" ×%d", x.v)
		}
		parts = append(parts, s)
	}
	s := strings.Join(parts, ", ")
	e := g.newest
	if e.Kind == kube.EvictUnknown {
		return s + " (the message has no shape we know: see the evidence)"
	}
	if e.Kind == kube.EvictNodePressure {
		var facts []string
		if e.Threshold != "" {
			facts = append(facts, fmt.Sprintf("threshold %s, %s left", e.Threshold, e.Available))
		}
		for i, c := range e.Containers {
			if i == 2 {
				break
			}
			facts = append(facts, fmt.Sprintf("container %s used %s with a request of %s", c.Name, c.Usage, c.Request))
		}
		if e.PodUsage != nil {
			facts = append(facts, fmt.Sprintf("the pod used %s with a request of %s", e.PodUsage.Usage, e.PodUsage.Request))
		}
		if len(facts) > 0 {
			s += " (newest: " + strings.Join(facts, "; ") + ")"
		}
	}
	return s
}

func evictionRemedies(g *evictionGroup, resource string) []doctor.Remediation {
	var rem []doctor.Remediation
	target, ns := "", g.ns
	if g.owner != nil && g.owner.Spec != nil {
		target = g.owner.KindName()
	}
	e := g.newest
	switch e.Kind {
	case kube.EvictNodePressure:
		switch resource {
		case "memory", "ephemeral-storage":
			r := doctor.Remediation{Text: fmt.Sprintf("request the %s the pods really use: the kubelet evicts first the pods using most above their request", resource)}
			if target != "" {
				r.Command = fmt.Sprintf("kubectl set resources %s -n %s --requests=%s=<usage>", target, ns, resource)
			}
			rem = append(rem, r)
		case "pids", "inodes":
			rem = append(rem, doctor.Remediation{Text: fmt.Sprintf("find what uses up %s on the node (a process or file leak) and fix it", resource)})
		}
	case kube.EvictContainerLimit:
		c := ""
		if len(e.Containers) > 0 {
			c = e.Containers[0].Name
		}
		r := doctor.Remediation{Text: fmt.Sprintf("write to a volume instead of the container's filesystem, or raise container %s's ephemeral-storage limit (%s)", c, e.Limit)}
		if target != "" && c != "" {
			r.Command = fmt.Sprintf("kubectl set resources %s -n %s -c %s --limits=ephemeral-storage=<more>", target, ns, c)
		}
		rem = append(rem, r)
	case kube.EvictPodLimit:
		r := doctor.Remediation{Text: fmt.Sprintf("the pod's logs, writable layers and emptyDirs passed its containers' ephemeral-storage limits (%s): raise them or move the data to a volume", e.Limit)}
		if target != "" {
			r.Command = fmt.Sprintf("kubectl set resources %s -n %s --limits=ephemeral-storage=<more>", target, ns)
		}
		rem = append(rem, r)
	case kube.EvictEmptyDirLimit:
		rem = append(rem, doctor.Remediation{Text: fmt.Sprintf("raise emptyDir %s's sizeLimit (%s) or give the data a PersistentVolumeClaim", e.Volume, e.Limit)})
	case kube.EvictCriticalPod:
		rem = append(rem, doctor.Remediation{Text: "the node had no room for a critical (system) pod: add capacity or reserve room for node agents"})
	}
	if nodes := keysOf(g.nodes); len(nodes) > 0 {
		rem = append(rem, doctor.Remediation{Text: "see the node's pressure conditions and what holds it", Command: "kubectl describe node " + strings.Join(doctor.Examples(nodes), " ")})
	}
	if g.owner != nil {
		rem = append(rem, doctor.Remediation{Text: "then delete the evicted pods: nothing garbage-collects them below --terminated-pod-gc-threshold", Command: cleanupCommand(ns, g.owner.Selector)})
	} else {
		rem = append(rem, doctor.Remediation{Text: "then delete the evicted pods", Command: cleanupCommand(ns, nil)})
	}
	return rem
}
