package checks

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

// setStorm is what events say about one StatefulSet's rejected pods.
type setStorm struct {
	ns, name      string
	recreations   int
	uids          map[string]bool
	reasons       map[string]int
	nodes         map[string]int
	pods          map[string]bool
	first, newest time.Time
}

func (g *setStorm) seen(first, last time.Time) {
	if !first.IsZero() && (g.first.IsZero() || first.Before(g.first)) {
		g.first = first
	}
	if last.After(g.newest) {
		g.newest = last
	}
}

// recreatedPod reads the pod name from "StatefulSet ns/web is recreating failed Pod web-0".
func recreatedPod(msg string) string {
	if i := strings.LastIndex(msg, " Pod "); i >= 0 {
		return strings.TrimSpace(msg[i+len(" Pod "):])
	}
	return ""
}

// statefulSetOfPod finds the StatefulSet whose pods are named NAME-ORDINAL.
func statefulSetOfPod(byKey map[string]*setStorm, sets map[string]bool, ns, pod string) *setStorm {
	i := strings.LastIndex(pod, "-")
	if i <= 0 {
		return nil
	}
	for _, r := range pod[i+1:] {
		if r < '0' || r > '9' {
			return nil
		}
	}
	key := ns + "/" + pod[:i]
	if !sets[key] {
		return nil
	}
	g := byKey[key]
	if g == nil {
		g = &setStorm{ns: ns, name: pod[:i], uids: map[string]bool{}, reasons: map[string]int{}, nodes: map[string]int{}, pods: map[string]bool{}}
		byKey[key] = g
	}
	return g
}

// reportStatefulSetStorms finds StatefulSets that recreate the same-named
// pod after each kubelet rejection (Pinniped #1507 through a StatefulSet):
// only one Failed pod exists at a time, so the storm is in the events.
func reportStatefulSetStorms(p *doctor.Pass, reported map[string]bool) {
	sets := map[string]bool{}
	stss := p.Snapshot.StatefulSets()
	for i := range stss {
		sets[stss[i].Namespace+"/"+stss[i].Name] = true
	}
	byKey := map[string]*setStorm{}
	warnings := kube.WarningEventsOf(p.Snapshot)
	for _, w := range warnings.Reason("RecreatingFailedPod") {
		e := w.Event
		if e.InvolvedObject.Kind != "StatefulSet" {
			continue
		}
		key := w.Namespace + "/" + w.Name
		g := byKey[key]
		if g == nil {
			g = &setStorm{ns: w.Namespace, name: w.Name, uids: map[string]bool{}, reasons: map[string]int{}, nodes: map[string]int{}, pods: map[string]bool{}}
			byKey[key] = g
		}
		first, last, n := w.First, w.Last, w.Count
		g.recreations += n
		g.seen(first, last)
		if pod := recreatedPod(w.Message); pod != "" {
			g.pods[pod] = true
		}
	}
	for _, reason := range []string{"OutOfcpu", "OutOfmemory"} {
		for _, w := range warnings.Reason(reason) {
			e := w.Event
			if e.InvolvedObject.Kind != "Pod" {
				continue
			}
			g := statefulSetOfPod(byKey, sets, w.Namespace, w.Name)
			if g == nil {
				continue
			}
			first, last, n := w.First, w.Last, w.Count
			g.seen(first, last)
			g.reasons[e.Reason] += n
			g.pods[e.InvolvedObject.Name] = true
			if e.InvolvedObject.UID != "" {
				g.uids[string(e.InvolvedObject.UID)] = true
			}
			if h := e.Source.Host; h != "" {
				g.nodes[h] += n
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		g := byKey[k]
		if reported[g.ns+"/StatefulSet/"+g.name] {
			continue
		}
		rejections := 0
		for _, n := range g.reasons {
			rejections += n
		}
		count := max(g.recreations, len(g.uids), rejections)
		if count < stormWarning {
			continue
		}
		span := g.newest.Sub(g.first)
		rate := float64(count)
		if span >= 10*time.Second {
			rate = float64(count) / span.Minutes()
		}
		ongoing := p.Now.Sub(g.newest) < stormOngoing
		sev := doctor.Warning
		if count >= stormCritical || (ongoing && rate >= stormRatePerMin) {
			sev = doctor.Critical
		}
		pods := slices.Sorted(maps.Keys(g.pods))
		what := "pod " + strings.Join(doctor.Examples(pods), ", ")
		if len(pods) > 1 {
			what = "pods " + strings.Join(doctor.Examples(pods), ", ")
		}
		msg := fmt.Sprintf("statefulset %s recreated its %s %s times in %s (~%.0f/min), newest %s ago",
			g.name, what, doctor.Thousands(count), human(span), rate, human(p.Now.Sub(g.newest)))
		if len(g.reasons) > 0 {
			msg += ": the kubelet rejects it for " + strings.Join(keysOf(g.reasons), ", ")
			if nodes := keysOf(g.nodes); len(nodes) > 0 {
				msg += " on " + strings.Join(doctor.Examples(nodes), ", ")
			}
		}
		msg += "; the StatefulSet controller deletes each Failed pod and recreates it under the same name, so only one Failed pod exists at a time and the storm shows only in events"
		ref := doctor.ObjectRef{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: g.ns, Name: g.name}
		rem := []doctor.Remediation{{Text: "read the rejections and the recreations",
			Command: fmt.Sprintf("kubectl get events -n %s --field-selector involvedObject.name=%s", g.ns, pods[0])}}
		if w := kube.OwnersOf(p.Snapshot).Find(ref); w != nil && w.Spec != nil && w.Spec.NodeName != "" {
			rem = append(rem, doctor.Remediation{Text: "the template pins spec.nodeName: let the scheduler place the pod, so it waits Pending instead of failing in a loop",
				Command: fmt.Sprintf(`kubectl patch statefulset/%s -n %s --type=merge -p '{"spec":{"template":{"spec":{"nodeName":null,"nodeSelector":{"kubernetes.io/hostname":"%s"}}}}}'`, g.name, g.ns, w.Spec.NodeName)})
		}
		if nodes := keysOf(g.nodes); len(nodes) > 0 {
			rem = append(rem, doctor.Remediation{Text: "see what the node has to give and what holds it",
				Command: "kubectl describe node " + strings.Join(doctor.Examples(nodes), " ")})
		}
		rem = append(rem, doctor.Remediation{Text: "or lower the pod's requests so the kubelet admits it",
			Command: fmt.Sprintf("kubectl set resources statefulset/%s -n %s --requests=cpu=<less>,memory=<less>", g.name, g.ns)})
		p.Report(doctor.Finding{Severity: sev, Object: ref, Message: msg, Count: count, Examples: doctor.Examples(pods), Remediation: rem})
	}
}
