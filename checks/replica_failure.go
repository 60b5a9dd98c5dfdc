package checks

import (
	"fmt"
	"regexp"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// The admission plugins' words for a pod that names a class that does not
// exist (Priority, RuntimeClass).
var (
	missingPriorityClass = regexp.MustCompile(`no PriorityClass with name (\S+) was found`)
	missingRuntimeClass  = regexp.MustCompile(`RuntimeClass "([^"]+)" not found`)
)

// ReplicaFailure reports ReplicaSets (named by their Deployment) whose pods
// the API server refuses to create — a ResourceQuota, a LimitRange, Pod
// Security admission — from the ReplicaFailure condition the controller
// writes: the workload has fewer pods than it asks for, and no pod exists
// to show why.
var ReplicaFailure = &doctor.Check{
	Name:     "replica-failure",
	Severity: doctor.Critical,
	Origin:   "peer coverage map",
	Reads:    []snapshot.Resource{snapshot.ReplicaSets, snapshot.Deployments},
	Run:      runReplicaFailure,
	Doc: `Deployments and ReplicaSets whose pods the API server refuses to create (quota, limits, Pod Security)

## Why it matters
When the API server refuses a pod — a namespace ResourceQuota is used up, a
LimitRange forbids the requests, Pod Security admission rejects the
template — there is no pod to look at: ` + "`kubectl get pods`" + ` shows fewer
replicas, nothing Pending, nothing crashing. The ReplicaSet controller
records the refusal in a ` + "`ReplicaFailure`" + ` condition (copied to the Deployment)
and retries forever.

## How it is detected
Every ReplicaSet with ` + "`ReplicaFailure=True`" + ` is reported on its Deployment (or
itself when it has none), with the API server's message and its class:
` + "`exceeded quota`" + ` (the quota and the resource), ` + "`violates PodSecurity`" + ` (the
level and what violates it), LimitRange (every bound the LimitRanger lists:
` + "`maximum`" + `/` + "`minimum`" + ` ... ` + "`per Container`" + ` or ` + "`per Pod`" + `, a limit or request not set that
the LimitRange has no default for, a limit/request ratio), or the message as
it is; a ` + "`priorityClassName`" + ` or ` + "`runtimeClassName`" + ` that names no class is said so
with the class's name and how to create it. LimitRanges themselves are not read (one more LIST for what
` + "`kubectl describe limitrange`" + ` shows): the API server's message names the
bound, and a bound per Container gets the ` + "`kubectl set resources`" + ` command
with its value. Refusals for a ServiceAccount that does not exist
are missing-references' (named before any pod is attempted), and refusals by
an admission webhook are admission-webhooks'. Critical when the ReplicaSet
has no ready replica, a warning otherwise. When the refusal has also left the
Deployment's rollout past its ` + "`progressDeadlineSeconds`" + ` (` + "`Progressing=False`" + `,
` + "`ProgressDeadlineExceeded`" + `), that condition is this finding's evidence and
workload-pods' stuck rollout is folded into it: one finding, at the cause.

## How to fix
Raise the quota or free it (` + "`kubectl describe resourcequota -n NS`" + `), fit the
requests and limits into the LimitRange (` + "`kubectl describe limitrange -n NS`" + `,
` + "`kubectl set resources`" + `), or make the template meet the namespace's Pod
Security level (or change the level, ` + "`pod-security.kubernetes.io/enforce`" + `).

## References
- https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#failed-deployment
- https://kubernetes.io/docs/concepts/policy/resource-quotas/
- https://kubernetes.io/docs/concepts/security/pod-security-admission/
- https://kubernetes.io/docs/concepts/policy/limit-range/`,
}

func runReplicaFailure(p *doctor.Pass) error {
	deps := map[string]*appsv1.Deployment{}
	ds := p.Snapshot.Deployments()
	for i := range ds {
		deps[string(ds[i].UID)] = &ds[i]
	}
	rss := p.Snapshot.ReplicaSets()
	for i := range rss {
		rs := &rss[i]
		var cond *appsv1.ReplicaSetCondition
		for j := range rs.Status.Conditions {
			if c := &rs.Status.Conditions[j]; c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
				cond = c
			}
		}
		if cond == nil || rs.Spec.Replicas == nil || *rs.Spec.Replicas == 0 {
			continue
		}
		msg := cond.Message
		low := strings.ToLower(msg)
		// A webhook's refusal reads "admission webhook "x" denied the
		// request", and a webhook that cannot be called "failed calling
		// webhook "x"" (no endpoints, a malformed caBundle, a timeout).
		if strings.Contains(low, "serviceaccount") && strings.Contains(low, "not found") || strings.Contains(low, "admission webhook") ||
			strings.Contains(low, "failed calling webhook") {
			continue // missing-references' and admission-webhooks'
		}
		ref, kn := kube.Ref("apps/v1", "ReplicaSet", rs), "replicaset/"+rs.Name
		var ev []string
		if c := metav1.GetControllerOfNoCopy(rs); c != nil && deps[string(c.UID)] != nil {
			d := deps[string(c.UID)]
			ref, kn = kube.Ref("apps/v1", "Deployment", d), "deployment/"+d.Name
			// The refusal is why its rollout passed the deadline: one
			// finding (workload-pods' stuck rollout folds into it).
			if stuck := stuckRollout(d); stuck != nil {
				ev = append(ev, deadlineLine(p.Now, stuck))
			}
		}
		why := "the API server refuses its pods"
		rem := []doctor.Remediation{{Text: "read the controller's events", Command: fmt.Sprintf("kubectl describe replicaset %s -n %s", rs.Name, rs.Namespace)}}
		switch {
		case strings.Contains(low, "exceeded quota"):
			why = "a ResourceQuota of the namespace is used up"
			rem = append([]doctor.Remediation{{Text: "see what the quota allows and uses; raise it or free it", Command: "kubectl describe resourcequota -n " + rs.Namespace}}, rem...)
		case strings.Contains(low, "violates podsecurity"):
			why = "Pod Security admission rejects its template"
			rem = append([]doctor.Remediation{{Text: "see the namespace's Pod Security level; make the template meet it", Command: "kubectl get namespace " + rs.Namespace + " --show-labels"}}, rem...)
		case strings.Contains(low, "per container") || strings.Contains(low, "limitrange") || strings.Contains(low, "per pod"):
			why = "a LimitRange of the namespace forbids its requests or limits"
			fix := []doctor.Remediation{{Text: "see the namespace's LimitRanges: their bounds and defaults", Command: "kubectl describe limitrange -n " + rs.Namespace}}
			if ec := kube.ClassifyAdmission(msg); ec.Class == kube.EventLimitRange {
				why += " (" + eventDetail(ec) + ")"
				if fit := limitRangeFit(kn, rs.Namespace, ec.Limits); fit != nil {
					fix = append(fix, *fit)
				}
			}
			rem = append(fix, rem...)
		case missingPriorityClass.MatchString(msg):
			name := missingPriorityClass.FindStringSubmatch(msg)[1]
			why = "its priorityClassName " + name + " names no PriorityClass"
			rem = append([]doctor.Remediation{
				{Text: "create the PriorityClass (with the value the workload should have) or fix priorityClassName: the classes that exist", Command: "kubectl get priorityclasses"},
				{Text: "create it", Command: fmt.Sprintf("kubectl create priorityclass %s --value=<priority> --description=<why>", name)}}, rem...)
		case missingRuntimeClass.MatchString(msg):
			name := missingRuntimeClass.FindStringSubmatch(msg)[1]
			why = "its runtimeClassName " + name + " names no RuntimeClass"
			rem = append([]doctor.Remediation{
				{Text: "install the runtime and its RuntimeClass on the nodes (gVisor, Kata, ...), or drop or fix runtimeClassName: the classes that exist", Command: "kubectl get runtimeclasses"}}, rem...)
		}
		sev := doctor.Critical
		if rs.Status.ReadyReplicas > 0 {
			sev = doctor.Warning
		}
		p.Report(doctor.Finding{Severity: sev, Object: ref, Cause: "replica-failure",
			Message: fmt.Sprintf("%s has %d of %d pods: %s (ReplicaFailure %s since %s ago): %s",
				kn, rs.Status.Replicas, *rs.Spec.Replicas, why, cond.Reason, since(p.Now, cond.LastTransitionTime), quote(msg)),
			Evidence: ev, Remediation: rem})
	}
	return nil
}
