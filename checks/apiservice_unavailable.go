package checks

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// APIServiceUnavailable reports aggregated APIs the API server cannot reach.
// One dead extension breaks discovery for every client, and with it
// namespace deletion and garbage collection, silently and cluster-wide.
var APIServiceUnavailable = &doctor.Check{
	Name:     "apiservice-unavailable",
	Severity: doctor.Critical,
	Origin:   "OOM-Killer talk",
	// The aggregator's own Available condition is the verdict; the
	// backend's Service, endpoints and pods name why.
	Reads:    []snapshot.Resource{snapshot.APIServices},
	Optional: append(append([]snapshot.Resource{snapshot.Namespaces}, kube.ServiceReads...), kube.PodProblemReads...),
	Run:      runAPIServiceUnavailable,
	Doc: `Aggregated APIs (APIServices) that are unavailable

## Why it matters
An APIService registers an extension API server (metrics-server,
custom-metrics adapters, service catalogs...) behind the main API server. When
its backend is gone, its group fails discovery, and every client that needs
the full list of resources fails with it: the namespace controller cannot
prove a namespace empty, so namespace deletions hang in Terminating; the
garbage collector stops; for ` + "`metrics.k8s.io`" + `, HorizontalPodAutoscalers and
` + "`kubectl top`" + ` stop working. In "How the OOM-Killer deleted my namespace" (KubeCon
NA 2020) an unavailable metrics-server APIService blocked a namespace deletion for
four days — which then completed by surprise when metrics-server came back.

## How it is detected
From one LIST of APIServices: every APIService whose ` + "`Available`" + ` condition is not
True is a finding, with the reason and message the aggregator wrote
(` + "`EndpointsNotFound`, `MissingEndpoints`, `ServiceNotFound`, `FailedDiscoveryCheck`" + `, ...),
how long it has been so, what breaks for that group, and the namespaces whose
deletion it currently blocks (their ` + "`NamespaceDeletionDiscoveryFailure`" + ` condition
names the group). kubectl-doctor itself never uses discovery, so it keeps
working during this very incident.
When the backend Service's pods crash-loop, are OOM-killed, cannot pull their
image or start, or run without becoming ready, the finding names that cause
(` + "`deployment/metrics-server is crash-looping: its last termination message says ...`" + `)
and the command to inspect it; workload-pods then does not report the same
workload again.

## How to fix
Restore the backing service (its pods, its endpoints, its certificate), or,
if the extension was removed on purpose, delete its stale APIService. Know
that blocked namespace deletions then complete at once.

## References
- https://www.youtube.com/watch?v=MrNhdmyXXKg
- https://kubernetes.io/docs/concepts/extend-kubernetes/api-extension/apiserver-aggregation/
- https://kubernetes.io/docs/tasks/administer-cluster/namespaces/#deleting-a-namespace
- https://github.com/kubernetes-sigs/metrics-server#troubleshooting`,
}

// apiServiceConsequence says what breaks when a group is unavailable.
func apiServiceConsequence(group string) string {
	switch group {
	case "metrics.k8s.io":
		return "HPAs on CPU/memory and kubectl top stop working, and discovery of the group fails, so namespace deletion and garbage collection stall"
	case "custom.metrics.k8s.io", "external.metrics.k8s.io":
		return "HPAs on custom or external metrics stop scaling, and discovery of the group fails, so namespace deletion and garbage collection stall"
	}
	return "discovery of the group fails, so namespace deletion, garbage collection and every client that needs the full API list stall"
}

// unavailableAPIServices indexes the APIServices whose Available condition is
// not True, by name (VERSION.GROUP).
func unavailableAPIServices(s *snapshot.Snapshot) map[string]*apiregistrationv1.APIService {
	out := map[string]*apiregistrationv1.APIService{}
	svcs := s.APIServices()
	for i := range svcs {
		if kube.APIServiceDown(&svcs[i]) {
			out[svcs[i].Name] = &svcs[i]
		}
	}
	return out
}

func runAPIServiceUnavailable(p *doctor.Pass) error {
	blocked := namespacesBlockedBy(p.Snapshot)
	bad := unavailableAPIServices(p.Snapshot)
	for _, a := range bad {
		c := kube.APIServiceAvailable(a)
		backend := "served locally"
		if a.Spec.Service != nil {
			backend = "backed by service " + a.Spec.Service.Namespace + "/" + a.Spec.Service.Name
		}
		why := apiServiceWhy(a)
		var cause *kube.OwnerProblem
		if s := a.Spec.Service; s != nil {
			if g, ok := kube.BackendProblem(p.Snapshot, p.Now, s.Namespace, s.Name); ok {
				why, cause = why+"; "+backendSentence(g), g
			}
		}
		msg := fmt.Sprintf("apiservice %s (%s/%s, %s) has been unavailable%s: %s; %s",
			a.Name, a.Spec.Group, a.Spec.Version, backend, forDuration(p.Now, c.LastTransitionTime), why, apiServiceConsequence(a.Spec.Group))
		if ns := blocked[a.Spec.Group+"/"+a.Spec.Version]; len(ns) > 0 {
			sort.Strings(ns)
			msg += fmt.Sprintf("; it blocks the deletion of %s: %s", doctor.Plural(len(ns), "namespace", "namespaces"), strings.Join(doctor.Examples(ns), ", "))
		}
		rem := []doctor.Remediation{{Text: "read the aggregator's verdict", Command: "kubectl describe apiservice " + a.Name}}
		if cause != nil {
			text, cmd := inspectProblem(cause)
			rem = append(rem, doctor.Remediation{Text: text + " (" + cause.Owner.KindName() + ")", Command: cmd})
		}
		if s := a.Spec.Service; s != nil {
			rem = append(rem, doctor.Remediation{Text: "restore the backing service: its pods and ready endpoints",
				Command: fmt.Sprintf("kubectl get endpointslices -n %s -l kubernetes.io/service-name=%s", s.Namespace, s.Name)})
		}
		warn := ""
		if len(blocked[a.Spec.Group+"/"+a.Spec.Version]) > 0 {
			warn = " — the namespace deletions it blocks then complete at once"
		}
		rem = append(rem, doctor.Remediation{Text: "if the extension was removed on purpose, delete its stale registration" + warn,
			Command: "kubectl delete apiservice " + a.Name})
		p.Report(doctor.Finding{
			Object:      doctor.ObjectRef{APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService", Name: a.Name},
			Message:     msg,
			Remediation: rem,
		})
	}
	return nil
}

// namespacesBlockedBy maps "group/version" to the terminating namespaces
// whose deletion reports a discovery failure for it.
func namespacesBlockedBy(s *snapshot.Snapshot) map[string][]string {
	out := map[string][]string{}
	nss := s.Namespaces()
	for i := range nss {
		ns := &nss[i]
		if c := namespaceCondition(ns, corev1.NamespaceDeletionDiscoveryFailure); c != nil && c.Status == corev1.ConditionTrue {
			for _, gv := range failedGroupVersions(c.Message) {
				out[gv] = append(out[gv], ns.Name)
			}
		}
	}
	return out
}
