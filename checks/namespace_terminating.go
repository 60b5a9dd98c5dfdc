package checks

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// NamespaceStuckTerminating names why a deleted namespace does not go away,
// and links a discovery failure to the APIService that causes it.
var NamespaceStuckTerminating = &doctor.Check{
	Name:     "namespace-stuck-terminating",
	Severity: doctor.Warning,
	Origin:   "OOM-Killer talk",
	Reads:    []snapshot.Resource{snapshot.Namespaces},
	Optional: []snapshot.Resource{snapshot.APIServices},
	Run:      runNamespaceStuckTerminating,
	Doc: `Namespaces stuck in Terminating, and what holds them

## Why it matters
Deleting a namespace is asynchronous: the namespace controller discovers
every namespaced resource type, deletes the namespace's content, waits for
finalizers, and only then removes the namespace. When any step cannot finish
the namespace stays Terminating, indefinitely and without an alert; a new
namespace of the same name cannot be created, and when the blocker goes away
the deletion completes by surprise. In "How the OOM-Killer Deleted My Namespace" (KubeCon NA 2020) an unavailable metrics-server
APIService kept a namespace Terminating for four days.

## How it is detected
Every namespace in phase Terminating is read with its conditions, which the
namespace controller writes: ` + "`NamespaceDeletionDiscoveryFailure`" + ` (an API group
cannot be discovered), ` + "`NamespaceDeletionGroupVersionParsingFailure`" + `,
` + "`NamespaceDeletionContentFailure`" + ` (deleting content fails),
` + "`NamespaceContentRemaining`" + ` and ` + "`NamespaceFinalizersRemaining`" + ` (objects or their
finalizers remain). A discovery failure is linked by name to the APIService
that serves the failing group/version and to that APIService's own verdict;
it is critical. Other causes are warnings once the namespace has been
terminating for more than five minutes; a namespace deleted moments ago is
not reported.

A scan of one namespace (` + "`-n`" + `) reports only that namespace.

## How to fix
For a discovery failure, restore the APIService's backend or delete the stale
APIService — and expect the namespace deletion to complete at once. For
remaining content or finalizers, find the objects left and the controller
that owns their finalizers; remove a finalizer by hand only when that
controller is gone for good.

## References
- https://www.youtube.com/watch?v=MrNhdmyXXKg
- https://kubernetes.io/docs/tasks/administer-cluster/namespaces/#deleting-a-namespace
- https://kubernetes.io/docs/concepts/overview/working-with-objects/finalizers/
- https://www.youtube.com/results?search_query=How+the+OOM-Killer+deleted+my+namespace`,
}

// terminatingGrace is how long a deletion may run before it is news.
const terminatingGrace = 5 * time.Minute

var groupVersionRE = regexp.MustCompile(`\b([a-z0-9-]+(?:\.[a-z0-9-]+)+)/(v[0-9]+(?:(?:alpha|beta)[0-9]+)?)\b`)

// failedGroupVersions extracts "metrics.k8s.io/v1beta1" from the namespace
// controller's discovery-failure message, sorted and unique.
func failedGroupVersions(msg string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range groupVersionRE.FindAllStringSubmatch(msg, -1) {
		gv := m[1] + "/" + m[2]
		if !seen[gv] {
			seen[gv] = true
			out = append(out, gv)
		}
	}
	sort.Strings(out)
	return out
}

func namespaceCondition(ns *corev1.Namespace, t corev1.NamespaceConditionType) *corev1.NamespaceCondition {
	for i := range ns.Status.Conditions {
		if ns.Status.Conditions[i].Type == t {
			return &ns.Status.Conditions[i]
		}
	}
	return nil
}

// blockingConditions are the namespace controller's conditions that explain a
// stuck deletion, in the order an operator should read them.
var blockingConditions = []corev1.NamespaceConditionType{
	corev1.NamespaceDeletionDiscoveryFailure,
	corev1.NamespaceDeletionGVParsingFailure,
	corev1.NamespaceDeletionContentFailure,
	corev1.NamespaceContentRemaining,
	corev1.NamespaceFinalizersRemaining,
}

func runNamespaceStuckTerminating(p *doctor.Pass) error {
	unavailable := unavailableAPIServices(p.Snapshot)
	nss := p.Snapshot.Namespaces()
	for i := range nss {
		ns := &nss[i]
		if ns.Status.Phase != corev1.NamespaceTerminating || ns.DeletionTimestamp == nil {
			continue
		}
		// A scan of one namespace (-n) reports that namespace, not the
		// others a cluster-wide read of namespaces shows.
		if scope := p.Snapshot.Namespace; scope != "" && ns.Name != scope {
			continue
		}
		var causes []string
		sev := doctor.Warning
		var rem []doctor.Remediation
		for _, t := range blockingConditions {
			c := namespaceCondition(ns, t)
			if c == nil || c.Status != corev1.ConditionTrue {
				continue
			}
			if t != corev1.NamespaceDeletionDiscoveryFailure {
				causes = append(causes, fmt.Sprintf("%s: %s", t, c.Message))
				continue
			}
			sev = doctor.Critical
			for _, gv := range failedGroupVersions(c.Message) {
				group, version, _ := strings.Cut(gv, "/")
				name := version + "." + group
				if a, ok := unavailable[name]; ok {
					causes = append(causes, fmt.Sprintf("discovery of %s fails because apiservice %s is unavailable (%s)", gv, name, apiServiceWhy(a)))
				} else {
					causes = append(causes, fmt.Sprintf("discovery of %s fails (apiservice %s)", gv, name))
				}
				rem = append(rem,
					doctor.Remediation{Text: fmt.Sprintf("restore the backend of apiservice %s", name), Command: "kubectl describe apiservice " + name},
					doctor.Remediation{Text: fmt.Sprintf("or, if that extension is gone for good, delete its registration — namespace %s is then deleted at once, by surprise: make sure that is still wanted", ns.Name),
						Command: "kubectl delete apiservice " + name})
			}
			if len(failedGroupVersions(c.Message)) == 0 {
				causes = append(causes, "discovery failed: "+c.Message)
			}
		}
		age := p.Now.Sub(ns.DeletionTimestamp.Time)
		if sev != doctor.Critical && age < terminatingGrace {
			continue
		}
		if len(causes) == 0 {
			causes = append(causes, "the namespace controller has not reported a cause (is kube-controller-manager running?)")
		}
		if sev != doctor.Critical {
			rem = append(rem,
				doctor.Remediation{Text: "list what is left in the namespace",
					Command: fmt.Sprintf("kubectl api-resources --verbs=list --namespaced -o name | xargs -n 1 kubectl get --show-kind --ignore-not-found -n %s", ns.Name)},
				doctor.Remediation{Text: "find the finalizers that hold it, and the controller that should remove them",
					Command: fmt.Sprintf("kubectl get namespace %s -o jsonpath='{.status.conditions}'", ns.Name)})
		}
		p.Report(doctor.Finding{
			Severity: sev,
			Object:   kube.NamespaceRef(ns.Name),
			Message: fmt.Sprintf("namespace %s has been terminating for %s: %s", ns.Name, since(p.Now, *ns.DeletionTimestamp),
				strings.Join(causes, "; ")),
			Remediation: rem,
		})
	}
	return nil
}
