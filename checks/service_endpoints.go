package checks

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// ServiceEndpoints reports Services that route to nothing: a selector that
// matches no pod (usually a label typo, which it names) or pods that match
// but are not ready. Clients see connection refused or 503, and nothing in
// the Service itself says why.
var ServiceEndpoints = &doctor.Check{
	Name:     "service-endpoints",
	Severity: doctor.Warning,
	Origin:   "everyday",
	// Deployments and StatefulSets tell a Service of a workload scaled to
	// zero (quiet) from one whose pods are gone; other owners only name.
	Reads: append([]snapshot.Resource{snapshot.Pods, snapshot.Deployments, snapshot.StatefulSets}, kube.ServiceReads...),
	// APIServices and webhooks: their findings already name a broken
	// backend Service, which is then not reported a second time here.
	Optional: append([]snapshot.Resource{snapshot.APIServices, snapshot.ReplicaSets, snapshot.DaemonSets, snapshot.Jobs, snapshot.CronJobs}, kube.WebhookConfigReads...),
	Run:      runServiceEndpoints,
	Doc: `Services whose selector matches no pod, or whose pods are not ready

## Why it matters
A Service with no ready endpoint accepts connections on its ClusterIP and
drops them: clients see timeouts, ` + "`connection refused`" + ` or an Ingress 503, and
the Service object looks perfectly normal. The two usual causes look the same
from outside: a selector that matches no pod at all (a label typo, a
` + "`version`" + ` label that changed with a release, a Deployment renamed) and pods that
match but fail their readiness probe.

## How it is detected
For every Service with a selector (Services without one keep hand-managed
EndpointSlices, and ` + "`ExternalName`" + ` Services have no endpoints: both are skipped),
the snapshot's pods of its namespace are matched against the selector:
- no live pod matches: a finding naming the pods that *nearly* match — every
  selector label but one, with the value they carry instead (or the label they
  lack) — grouped by their owning workload;
- pods match but none is Ready, for more than five minutes, and the Service's
  EndpointSlices hold no ready endpoint: a finding with the pods' owner and
  phases (` + "`publishNotReadyAddresses`" + ` Services publish them anyway and are
  skipped);
- only finished pods (a Job's Succeeded pods) match: info, a Service in front
  of a batch workload is unusual.

A Service whose selector matches the pod template of a Deployment or
StatefulSet scaled to zero on purpose is quiet: it has no endpoint by design.

A Service behind an unavailable APIService or an admission webhook whose
backend is broken is left to apiservice-unavailable and admission-webhooks:
their finding already names it (and the backend's cause), and one root cause
gets one finding. That needs APIServices and webhook configurations, read
when the user may list them (optional reads); without them those Services
are reported here like any other.

## How to fix
Fix the selector (` + "`kubectl patch service`" + `, shown with the value the pods carry)
or the pods' labels in their workload's template; for unready pods, find why
readiness fails (` + "`kubectl describe pod`" + `, the pod checks' findings).

## References
- https://kubernetes.io/docs/concepts/services-networking/service/#services-without-selectors
- https://kubernetes.io/docs/tasks/debug/debug-application/debug-service/
- https://kubernetes.io/docs/concepts/services-networking/endpoint-slices/`,
}

// notReadyGrace: pods of a rollout in progress get this long to become ready.
const notReadyGrace = 5 * time.Minute

func runServiceEndpoints(p *doctor.Pass) error {
	svcs := p.Snapshot.Services()
	index := kube.ServicesOf(p.Snapshot)
	chained := kube.ChainedServices(p.Snapshot)
	for i := range svcs {
		svc := &svcs[i]
		if len(svc.Spec.Selector) == 0 || svc.Spec.Type == corev1.ServiceTypeExternalName {
			continue
		}
		if _, ok := chained[svc.Namespace+"/"+svc.Name]; ok {
			continue // the APIService's or webhook's finding names this backend
		}
		sel := labels.SelectorFromSet(svc.Spec.Selector)
		pods := kube.Selected(p.Snapshot, svc.Namespace, sel)
		var live, done []*corev1.Pod
		for _, pod := range pods {
			if kube.Terminal(pod) {
				done = append(done, pod)
			} else {
				live = append(live, pod)
			}
		}
		ref := kube.Ref("v1", "Service", svc)
		selStr := kube.SelectorString(svc.Spec.Selector)
		switch {
		case len(live) == 0 && len(done) > 0:
			p.Report(doctor.Finding{Severity: doctor.Info, Object: ref,
				Message: fmt.Sprintf("service %s selects %s, which matches only finished pods (%s: %s): it has no endpoint to route to",
					svc.Name, selStr, doctor.Plural(len(done), "pod", "pods"), strings.Join(kube.OwnerNames(p.Snapshot, done), "; ")),
				Remediation: []doctor.Remediation{{Text: "if nothing should reach the batch pods, delete the Service",
					Command: fmt.Sprintf("kubectl delete service %s -n %s", svc.Name, svc.Namespace)}}})
		case len(live) == 0:
			if kube.ScaledToZero(p.Snapshot, svc.Namespace, sel) != nil {
				continue // its workload is scaled to zero on purpose
			}
			reportNoMatch(p, svc, ref, selStr)
		default:
			reportNotReady(p, svc, ref, selStr, live, index)
		}
	}
	return nil
}

func reportNoMatch(p *doctor.Pass, svc *corev1.Service, ref doctor.ObjectRef, selStr string) {
	msg := fmt.Sprintf("service %s selects %s, but no pod in namespace %s matches: it has no endpoint", svc.Name, selStr, svc.Namespace)
	rem := []doctor.Remediation{}
	misses := kube.NearMisses(p.Snapshot, svc.Namespace, svc.Spec.Selector)
	if len(misses) > 0 {
		var parts []string
		for _, m := range misses {
			parts = append(parts, fmt.Sprintf("%s (%s) have %s", doctor.Plural(len(m.Pods), "pod", "pods"),
				strings.Join(kube.OwnerNames(p.Snapshot, m.Pods), "; "), m.Describe()))
		}
		msg += "; nearly matching: " + strings.Join(parts, "; ")
		best := misses[0]
		var patch any = best.Have
		what := fmt.Sprintf("select the label the pods carry (%s=%s)", best.Key, best.Have)
		if best.Have == "" {
			patch, what = nil, fmt.Sprintf("drop %s from the selector, which the pods do not carry", best.Key)
		}
		body, _ := json.Marshal(map[string]any{"spec": map[string]any{"selector": map[string]any{best.Key: patch}}})
		rem = append(rem, doctor.Remediation{Text: what + ", if the pods are the right backends",
			Command: fmt.Sprintf("kubectl patch service %s -n %s --type=merge -p '%s'", svc.Name, svc.Namespace, body)})
	} else {
		msg += ", and none nearly matches (all selector labels but one)"
	}
	rem = append(rem, doctor.Remediation{Text: "compare the selector with the labels of the namespace's pods",
		Command: fmt.Sprintf("kubectl get pods -n %s --show-labels", svc.Namespace)})
	p.Report(doctor.Finding{Object: ref, Message: msg, Remediation: rem})
}

func reportNotReady(p *doctor.Pass, svc *corev1.Service, ref doctor.ObjectRef, selStr string, live []*corev1.Pod, index *kube.Services) {
	if svc.Spec.PublishNotReadyAddresses || index.ReadyAny(svc.Namespace, svc.Name) > 0 {
		return
	}
	var since time.Time
	phases := map[string]int{}
	for _, pod := range live {
		ready, t := kube.PodReady(pod)
		if ready {
			// The EndpointSlices lag behind: a ready pod serves soon.
			return
		}
		if since.IsZero() || t.Time.Before(since) {
			since = t.Time
		}
		phases[string(pod.Status.Phase)]++
	}
	if since.IsZero() || p.Now.Sub(since) < notReadyGrace {
		return
	}
	var ph []string
	for k, n := range phases {
		if k == "" {
			k = "no phase"
		}
		ph = append(ph, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(ph)
	owners := kube.OwnerNames(p.Snapshot, live)
	msg := fmt.Sprintf("service %s has no ready endpoint for %s: %s match %s (%s), none is ready (%s)",
		svc.Name, duration.HumanDuration(p.Now.Sub(since)), doctor.Plural(len(live), "pod", "pods"), selStr, strings.Join(owners, "; "), strings.Join(ph, ", "))
	names := make([]string, 0, len(live))
	for _, pod := range live {
		names = append(names, pod.Name)
	}
	slices.Sort(names)
	p.Report(doctor.Finding{Object: ref, Message: msg, Examples: doctor.Examples(names),
		Remediation: []doctor.Remediation{
			{Text: "see why the pods are not ready (readiness probe, crash loop, pending)", Command: fmt.Sprintf("kubectl describe pods -n %s -l %s", svc.Namespace, selStr)},
			{Text: "watch the endpoints come back", Command: fmt.Sprintf("kubectl get endpointslices -n %s -l kubernetes.io/service-name=%s", svc.Namespace, svc.Name)},
		}})
}
