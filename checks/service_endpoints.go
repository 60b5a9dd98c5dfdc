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

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// ServiceEndpoints reports Services that route to nothing: a selector that
// matches no pod (usually a label typo, which it names), pods that match
// but are not ready, or a LoadBalancer Service that never got its external
// address. Clients see connection refused or 503, and nothing in the
// Service itself says why.
var ServiceEndpoints = &doctor.Check{
	Name:     "service-endpoints",
	Severity: doctor.Warning,
	Origin:   "everyday",
	// Deployments and StatefulSets tell a Service of a workload scaled to
	// zero (quiet) from one whose pods are gone; other owners only name.
	Reads: append([]snapshot.Resource{snapshot.Pods, snapshot.Deployments, snapshot.StatefulSets}, kube.ServiceReads...),
	// APIServices and webhooks: their findings already name a broken
	// backend Service, which is folded into them (Via). With Ingresses and
	// Gateway routes they also tell a Service something depends on from a
	// dormant one.
	// Warning events quote why the pods of a Service are not ready.
	Optional: append([]snapshot.Resource{snapshot.APIServices, snapshot.ReplicaSets, snapshot.DaemonSets, snapshot.Jobs, snapshot.CronJobs,
		snapshot.Ingresses, snapshot.HTTPRoutes, snapshot.GRPCRoutes, kube.WarningEventReads}, kube.WebhookConfigReads...),
	Run: runServiceEndpoints,
	Doc: `Services whose selector matches no pod, whose pods are not ready, or whose load balancer never came

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
  lack); for a selector of one label, pods carrying that label with a value
  that looks like a typo of the selector's (letter case, a separated prefix or
  suffix such as ` + "`checkout-svc`" + ` for ` + "`checkout`" + `, one or two letters off) —
  grouped by their owning workload, with the patch that selects them;
- pods match but none is Ready, for more than five minutes, and the Service's
  EndpointSlices hold no ready endpoint: a finding with the pods' owner and
  phases, quoting the newest Warning events about the pods (a failing
  readiness probe) or, when there are none, their Ready condition (a
  readiness gate); when workload-pods names the pods' cause, this finding
  folds into that one (Via) (` + "`publishNotReadyAddresses`" + ` Services publish them
  anyway and are skipped);
- only finished pods (a Job's Succeeded pods) match: info, a Service in front
  of a batch workload is unusual.

A Service of type ` + "`LoadBalancer`" + ` with no address in ` + "`status.loadBalancer.ingress`" + `
ten minutes after its creation is a warning of its own, whatever its pods: the
newest Warning event about the Service says why (the cloud controller
manager's ` + "`SyncLoadBalancerFailed`" + `, MetalLB's ` + "`AllocationFailed`" + `; the EndpointSlice
controllers' and the ClusterIP allocator's events do not count); with none, no
load-balancer controller has acted on it (no cloud controller manager, no
MetalLB, nothing serving its ` + "`spec.loadBalancerClass`" + `, which is named).

A Service whose selector matches the pod template of a Deployment or
StatefulSet scaled to zero on purpose is quiet: it has no endpoint by design.

A Service that matches no pod is only a warning when something depends on
it: an Ingress or Gateway route sends traffic to it, an APIService or an
admission webhook calls it, a StatefulSet names it as its serviceName, pods
nearly match its selector (a typo, never dormant), or its EndpointSlices still list
endpoints; the finding names the referrers. Otherwise it is ` + "`info`" + `: platforms
and charts ship Services for components that are not installed (dormant).
When Ingresses, routes, APIServices or webhook configurations could not be
read, nothing can be ruled out and it stays a warning.

A Service behind an unavailable APIService or an admission webhook whose
backend is broken is reported with that object as its cause (Via): the
engine folds it into the apiservice-unavailable or admission-webhooks
finding, which names the Service, so one root cause gets one finding. When
those checks did not run (skipped, or the user may not list APIServices and
webhook configurations), this finding stands on its own.

## How to fix
Fix the selector (` + "`kubectl patch service`" + `, shown with the value the pods carry)
or the pods' labels in their workload's template; for unready pods, find why
readiness fails (` + "`kubectl describe pod`" + `, the pod checks' findings).
For a load balancer without an address, fix what its controller reports
(cloud credentials and permissions, quota, annotations), or install a
load-balancer controller (MetalLB or kube-vip on bare metal), or expose the
Service otherwise (NodePort, an Ingress).

## Example
On the ` + "`" + `everyday-causes` + "`" + ` scenario (` + "`" + `testdata/scenarios` + "`" + `), in the table output: the Ingress routing to ` + "`" + `search` + "`" + ` is folded into its finding, and a Service nothing refers to is info.

` + "```" + `
CRITICAL
  ec-web/Service/search  [service-endpoints]
    service search selects app=search-v2, but no pod in namespace ec-web matches: it has no endpoint; yet ingress ec-site routes to it
      explains ingress-backends ec-web/ingress/ec-site: ingress ec-site: its only backend is broken, it can only answer 503; search:http (ec.example.com/search): service search has no ready endpoint
    → compare the selector with the labels of the namespace's pods
      $ kubectl get pods -n ec-web --show-labels
INFO
  ec-web/Service/metrics-dormant  [service-endpoints]
    service metrics-dormant selects app.kubernetes.io/name=kube-state-metrics-shard, which matches no pod in namespace ec-web, and nothing refers to it (no Ingress, Gateway route, APIService, webhook or StatefulSet): a dormant Service
    → if the component it fronts was removed, delete the Service
      $ kubectl delete service metrics-dormant -n ec-web
    → compare the selector with the labels of the namespace's pods
      $ kubectl get pods -n ec-web --show-labels
` + "```" + `

## References
- https://kubernetes.io/docs/concepts/services-networking/service/#services-without-selectors
- https://kubernetes.io/docs/tasks/debug/debug-application/debug-service/
- https://kubernetes.io/docs/concepts/services-networking/endpoint-slices/
- https://kubernetes.io/docs/concepts/services-networking/service/#loadbalancer`,
}

func runServiceEndpoints(p *doctor.Pass) error {
	svcs := p.Snapshot.Services()
	index := kube.ServicesOf(p.Snapshot)
	chained := kube.ChainedServices(p.Snapshot)
	for i := range svcs {
		svc := &svcs[i]
		reportNoLoadBalancer(p, svc)
		if len(svc.Spec.Selector) == 0 || svc.Spec.Type == corev1.ServiceTypeExternalName {
			continue
		}
		// The APIService's or webhook's finding names this backend: this
		// finding folds into it (and stands when that check did not run).
		via := chained[svc.Namespace+"/"+svc.Name]
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
					svc.Name, selStr, doctor.Plural(len(done), "pod", "pods"), strings.Join(ownerNames(p.Snapshot, done), "; ")),
				Remediation: []doctor.Remediation{{Text: "if nothing should reach the batch pods, delete the Service",
					Command: fmt.Sprintf("kubectl delete service %s -n %s", svc.Name, svc.Namespace)}}})
		case len(live) == 0:
			if kube.ScaledToZero(p.Snapshot, svc.Namespace, sel) != nil {
				continue // its workload is scaled to zero on purpose
			}
			reportNoMatch(p, svc, ref, selStr, via)
		default:
			reportNotReady(p, svc, ref, selStr, live, index, via)
		}
	}
	return nil
}

// chainedVia are the checks whose findings name a broken backend Service.
var chainedVia = []string{"apiservice-unavailable", "admission-webhooks"}

func reportNoMatch(p *doctor.Pass, svc *corev1.Service, ref doctor.ObjectRef, selStr string, via []doctor.ObjectRef) {
	msg := fmt.Sprintf("service %s selects %s, but no pod in namespace %s matches: it has no endpoint", svc.Name, selStr, svc.Namespace)
	rem := []doctor.Remediation{}
	misses := kube.NearMisses(p.Snapshot, svc.Namespace, svc.Spec.Selector)
	refs, unread := kube.ServiceReferrers(p.Snapshot)
	referrers := refs[svc.Namespace+"/"+svc.Name]
	if len(misses) == 0 && len(referrers) == 0 && len(unread) == 0 && !hasEndpoints(p.Snapshot, svc) {
		// Platforms ship Services for components not installed (a
		// metrics port, an optional webhook): with no pod nearly
		// matching, no endpoint and nothing pointing at it, it is
		// dormant, not an outage.
		p.Report(doctor.Finding{Severity: doctor.Info, Object: ref, Cause: "dormant",
			Message: fmt.Sprintf("service %s selects %s, which matches no pod in namespace %s, and nothing refers to it (no Ingress, Gateway route, APIService, webhook or StatefulSet): a dormant Service", svc.Name, selStr, svc.Namespace),
			Remediation: []doctor.Remediation{
				{Text: "if the component it fronts was removed, delete the Service", Command: fmt.Sprintf("kubectl delete service %s -n %s", svc.Name, svc.Namespace)},
				{Text: "compare the selector with the labels of the namespace's pods", Command: fmt.Sprintf("kubectl get pods -n %s --show-labels", svc.Namespace)}}})
		return
	}

	if len(misses) > 0 {
		var parts []string
		for _, m := range misses {
			verb := "have"
			if len(m.Pods) == 1 {
				verb = "has"
			}
			parts = append(parts, fmt.Sprintf("%s (%s) %s %s", doctor.Plural(len(m.Pods), "pod", "pods"),
				strings.Join(ownerNames(p.Snapshot, m.Pods), "; "), verb, nearMissWords(m)))
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
	} else if len(svc.Spec.Selector) > 1 {
		msg += ", and none nearly matches (all selector labels but one)"
	}
	if len(referrers) > 0 {
		var rs []string
		for _, r := range referrers {
			rs = append(rs, referrerWords(r))
		}
		msg += "; yet " + strings.Join(rs, ", ")
	}
	rem = append(rem, doctor.Remediation{Text: "compare the selector with the labels of the namespace's pods",
		Command: fmt.Sprintf("kubectl get pods -n %s --show-labels", svc.Namespace)})
	f := doctor.Finding{Object: ref, Message: msg, Remediation: rem, Via: via}
	if len(misses) == 0 && len(referrers) == 0 && len(unread) > 0 && !hasEndpoints(p.Snapshot, svc) {
		// Dormant, perhaps: what could refer to it was not all readable.
		var names []string
		for _, r := range unread {
			names = append(names, r.String())
		}
		f.Partial = "nothing readable refers to it, but " + strings.Join(names, ", ") + " could not be read: it is a warning, not a dormant Service (info), until they can"
	}
	if len(via) > 0 {
		f.ViaChecks = chainedVia
	}
	p.Report(f)
}

// hasEndpoints says the Service's EndpointSlices list any endpoint, ready
// or not: something serves (or served) behind it.
func hasEndpoints(s *snapshot.Snapshot, svc *corev1.Service) bool {
	for _, sl := range s.EndpointSlices() {
		if sl.Namespace == svc.Namespace && sl.Labels["kubernetes.io/service-name"] == svc.Name && len(sl.Endpoints) > 0 {
			return true
		}
	}
	return false
}

func reportNotReady(p *doctor.Pass, svc *corev1.Service, ref doctor.ObjectRef, selStr string, live []*corev1.Pod, index *kube.Services, via []doctor.ObjectRef) {
	if svc.Spec.PublishNotReadyAddresses || index.ReadyAny(svc.Namespace, svc.Name) > 0 {
		return
	}
	var since time.Time
	phases := map[string]int{}
	for _, pod := range live {
		t := kube.NotReadySince(pod)
		if t.IsZero() {
			// Ready: the EndpointSlices lag behind, a ready pod serves soon.
			return
		}
		if since.IsZero() || t.Before(since) {
			since = t
		}
		phases[string(pod.Status.Phase)]++
	}
	// Pods of a rollout in progress get kube.NotReadyAfter to become ready.
	if since.IsZero() || p.Now.Sub(since) < kube.NotReadyAfter {
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
	owners := ownerNames(p.Snapshot, live)
	verb := "match"
	if len(live) == 1 {
		verb = "matches"
	}
	msg := fmt.Sprintf("service %s has no ready endpoint for %s: %s %s %s (%s), none is ready (%s)",
		svc.Name, human(p.Now.Sub(since)), doctor.Plural(len(live), "pod", "pods"), verb, selStr, strings.Join(owners, "; "), strings.Join(ph, ", "))
	names := make([]string, 0, len(live))
	for _, pod := range live {
		names = append(names, pod.Name)
	}
	slices.Sort(names)
	// The pods' own finding (workload-pods: a crash loop, a probe) is the
	// cause: this one folds into it when that check names one, and
	// otherwise quotes why the pods are not ready.
	viaChecks := append(slices.Clone(chainedVia), "workload-pods")
	idx := kube.OwnersOf(p.Snapshot)
	events := kube.WarningEventsOf(p.Snapshot)
	var warnings [][]*kube.Warning
	var conds []string
	for _, pod := range live {
		if w, ok := idx.Top(pod); ok {
			if !slices.Contains(via, w.Ref) {
				via = append(via, w.Ref)
			}
		} else {
			via = append(via, kube.Ref("v1", "Pod", pod))
		}
		warnings = append(warnings, events.AboutPod(pod))
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status != corev1.ConditionTrue && (c.Reason != "" || c.Message != "") && len(conds) < doctor.MaxEvidence {
				conds = append(conds, fmt.Sprintf("pod/%s Ready=%s (%s): %s", pod.Name, c.Status, c.Reason, clipLine(c.Message, maxQuote)))
			}
		}
	}
	evidence := eventEvidence(p.Now, doctor.MaxEvidence, warnings...)
	if len(evidence) == 0 {
		evidence = conds
	}
	p.Report(doctor.Finding{Object: ref, Message: msg, Examples: doctor.Examples(names), Via: via, ViaChecks: viaChecks, Evidence: evidence,
		Remediation: []doctor.Remediation{
			{Text: "see why the pods are not ready (readiness probe, crash loop, pending)", Command: fmt.Sprintf("kubectl describe pods -n %s -l %s", svc.Namespace, selStr)},
			{Text: "watch the endpoints come back", Command: fmt.Sprintf("kubectl get endpointslices -n %s -l kubernetes.io/service-name=%s", svc.Namespace, svc.Name)},
		}})
}

// nearMissWords is "tier=frontend, not web" or "no label tier (the
// selector wants web)".
func nearMissWords(m kube.NearMiss) string {
	if m.Have == "" {
		return fmt.Sprintf("no label %s (the selector wants %s)", m.Key, m.Want)
	}
	return fmt.Sprintf("%s=%s, not %s", m.Key, m.Have, m.Want)
}

// referrerWords is "ingress storefront routes to it".
func referrerWords(r kube.Referrer) string {
	how := map[kube.RefersBy]string{kube.RoutesTo: "routes to it", kube.ServedBy: "is served by it",
		kube.CalledBy: "calls it", kube.NamesAsGoverning: "names it as its serviceName"}[r.How]
	return strings.ToLower(r.Ref.Kind) + " " + r.Ref.Name + " " + how
}

// loadBalancerAfter is how long a LoadBalancer Service may wait for its
// address: a cloud load balancer takes a minute or two to provision, ten
// minutes without one is a controller that failed or is absent.
const loadBalancerAfter = 10 * time.Minute

// reportNoLoadBalancer reports a Service of type LoadBalancer that has had
// no address (status.loadBalancer.ingress) for loadBalancerAfter since it
// was created: clients outside the cluster cannot reach it. The newest
// Warning event about the Service says why (the service controller's
// SyncLoadBalancerFailed, MetalLB's AllocationFailed); with none, nothing
// that provisions load balancers has acted on it.
func reportNoLoadBalancer(p *doctor.Pass, svc *corev1.Service) {
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || svc.DeletionTimestamp != nil || svc.CreationTimestamp.IsZero() {
		return
	}
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if in.IP != "" || in.Hostname != "" {
			return
		}
	}
	age := p.Now.Sub(svc.CreationTimestamp.Time)
	if age < loadBalancerAfter {
		return
	}
	class := ""
	if svc.Spec.LoadBalancerClass != nil {
		class = *svc.Spec.LoadBalancerClass
	}
	msg := fmt.Sprintf("service %s is of type LoadBalancer but has had no external address for %s (status.loadBalancer.ingress is empty): clients outside the cluster cannot reach it",
		svc.Name, human(age))
	describe := doctor.Remediation{Text: "see what the load-balancer controller reported",
		Command: fmt.Sprintf("kubectl describe service %s -n %s", svc.Name, svc.Namespace)}
	f := doctor.Finding{Object: kube.Ref("v1", "Service", svc), Cause: "no-load-balancer"}
	var ws []*kube.Warning
	for _, w := range kube.WarningEventsOf(p.Snapshot).About("Service", svc.Namespace, svc.Name, svc.UID) {
		if !notLoadBalancerSource(w.Source) {
			ws = append(ws, w)
		}
	}
	switch {
	case len(ws) > 0:
		w := ws[0]
		msg += fmt.Sprintf("; the %s says: %s: %s", eventSourceWords(w.Source), w.Reason, clipLine(w.Message, maxQuote))
		f.Evidence = eventEvidence(p.Now, doctor.MaxEvidence, ws)
		f.Remediation = []doctor.Remediation{{Text: "fix what the controller reports (cloud credentials and permissions, quota, subnet or load-balancer annotations), then it retries on its own"}, describe}
	case p.Snapshot.Err(kube.WarningEventReads) != nil:
		msg += "; Warning events could not be read to say why"
		f.Remediation = []doctor.Remediation{describe}
	case class != "":
		msg += fmt.Sprintf("; no Warning event from a load-balancer controller: no controller for its spec.loadBalancerClass %s has acted on it", class)
		f.Remediation = []doctor.Remediation{{Text: fmt.Sprintf("install or repair the load-balancer controller that serves class %s, or fix spec.loadBalancerClass (it cannot be changed: recreate the Service)", class)}, describe}
	default:
		msg += "; no Warning event from a load-balancer controller: none (a cloud controller manager, MetalLB, kube-vip...) has acted on it"
		f.Remediation = []doctor.Remediation{
			{Text: "install a load-balancer controller for this cluster (on bare metal: MetalLB or kube-vip with an address pool), or expose the Service as NodePort or behind an Ingress",
				Command: fmt.Sprintf("kubectl patch service %s -n %s -p '{\"spec\":{\"type\":\"NodePort\"}}'", svc.Name, svc.Namespace)},
			describe}
	}
	f.Message = msg
	p.Report(f)
}

// notLoadBalancerSource says a Warning event about a Service comes from a
// component that does not provision load balancers (the EndpointSlice
// controllers, the ClusterIP allocator's repair loop): it says nothing
// about the missing address.
func notLoadBalancerSource(src string) bool {
	src = strings.ToLower(src)
	return strings.Contains(src, "endpoint") || strings.Contains(src, "ipallocator") || strings.Contains(src, "portallocator")
}

// eventSourceWords names the component that wrote an event about a
// Service: "service-controller" is the cloud controller manager's.
func eventSourceWords(src string) string {
	switch src {
	case "":
		return "load-balancer controller"
	case "service-controller":
		return "cloud controller manager's service controller"
	}
	return src
}
