package checks

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// createFailure is a controller that creates fewer pods than it wants and
// says why (its ReplicaFailure condition, its FailedCreate events).
type createFailure struct {
	obj       metav1.Object
	kind      string
	want, has int32
	message   string // as the API server wrote it
	last      time.Time
	events    []*kube.Warning
	conds     []string
}

// createFailures finds ReplicaSets, StatefulSets and DaemonSets with fewer
// pods than desired and a FailedCreate event (or ReplicaFailure condition).
func createFailures(p *doctor.Pass) []createFailure {
	x := kube.WarningEventsOf(p.Snapshot)
	var out []createFailure
	newest := func(kind string, m metav1.Object) []*kube.Warning {
		var ws []*kube.Warning
		for _, w := range x.About(kind, m.GetNamespace(), m.GetName(), m.GetUID()) {
			if w.Reason == "FailedCreate" {
				ws = append(ws, w)
			}
		}
		return ws
	}
	add := func(cf createFailure) {
		if cf.has >= cf.want {
			return
		}
		if len(cf.events) > 0 {
			cf.message, cf.last = cf.events[0].Message, cf.events[0].Last
		}
		if cf.message != "" {
			out = append(out, cf)
		}
	}
	for _, rs := range p.Snapshot.ReplicaSets() {
		cf := createFailure{obj: &rs, kind: "ReplicaSet", want: replicasOf(rs.Spec.Replicas), has: rs.Status.Replicas, events: newest("ReplicaSet", &rs), conds: failingConditions(&rs)}
		for _, c := range rs.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
				cf.message, cf.last = c.Message, c.LastTransitionTime.Time
			}
		}
		add(cf)
	}
	for _, st := range p.Snapshot.StatefulSets() {
		add(createFailure{obj: &st, kind: "StatefulSet", want: replicasOf(st.Spec.Replicas), has: st.Status.Replicas, events: newest("StatefulSet", &st), conds: failingConditions(&st)})
	}
	for _, ds := range p.Snapshot.DaemonSets() {
		add(createFailure{obj: &ds, kind: "DaemonSet", want: ds.Status.DesiredNumberScheduled, has: ds.Status.CurrentNumberScheduled, events: newest("DaemonSet", &ds), conds: failingConditions(&ds)})
	}
	// A CronJob whose Jobs the API server refuses never has a Job to look
	// at: its own FailedCreate events ("Error creating job: ...") are the
	// only trace. It wants its next run; it has it when a Job of it was
	// created after the newest refusal.
	crons := kube.CronJobsOf(p.Snapshot)
	jobs := p.Snapshot.Jobs()
	cjs := p.Snapshot.CronJobs()
	for i := range cjs {
		cj := &cjs[i]
		if cj.Spec.Suspend != nil && *cj.Spec.Suspend {
			continue
		}
		evs := newest("CronJob", cj)
		if len(evs) == 0 {
			continue
		}
		cf := createFailure{obj: cj, kind: "CronJob", want: 1, events: evs}
		for j := range jobs {
			if crons.RunOf(&jobs[j]) == cj && jobs[j].CreationTimestamp.After(evs[0].Last) {
				cf.has = 1
			}
		}
		add(cf)
	}
	return out
}

// reportCreateFailures reports controllers that create no (or too few)
// pods at their top owner, with the admission error as the API server
// wrote it, parsed where its shape is known. A refusal by a webhook is
// folded into admission-webhooks' finding on that webhook (Via). A
// Deployment in stuck (its rollout past the deadline, no pod problem) whose
// pods are refused is this one finding, the deadline its evidence; it is
// removed from stuck.
func reportCreateFailures(p *doctor.Pass, reported map[string]bool, stuck map[string]*appsv1.DeploymentCondition) {
	own := kube.OwnersOf(p.Snapshot)
	hooks := map[string]kube.Webhook{}
	if p.Snapshot.Err(snapshot.MutatingWebhooks) == nil && p.Snapshot.Err(snapshot.ValidatingWebhooks) == nil {
		for _, w := range kube.Webhooks(p.Snapshot) {
			hooks[w.Name] = w
		}
	}
	done := map[string]bool{}
	for _, cf := range createFailures(p) {
		m := cf.obj
		top := own.TopOf(&metav1.ObjectMeta{UID: m.GetUID()})
		if top == nil {
			continue
		}
		key := kube.OwnerKey(top)
		if done[key] || !cf.last.IsZero() && p.Now.Sub(cf.last) > time.Hour {
			continue // one finding per owner; an old refusal may have been fixed since
		}
		done[key] = true
		reported[key] = true
		a := availabilityOf(top)
		controller := strings.ToLower(cf.kind) + " " + m.GetName()
		ec := kube.ClassifyAdmission(cf.message)
		msg := fmt.Sprintf("%s has %d of %d pods: the API server refuses to create them: ", controller, cf.has, cf.want)
		if cf.kind == "CronJob" {
			msg = controller + " starts no run: the API server refuses to create its Jobs: "
		}
		var via []doctor.ObjectRef
		var rem []doctor.Remediation
		ns := m.GetNamespace()
		switch ec.Class {
		case kube.EventQuota:
			msg += eventDetail(ec)
			rem = append(rem, doctor.Remediation{Text: "see the quota's use, then raise it or lower the pods' requests", Command: fmt.Sprintf("kubectl describe resourcequota %s -n %s", ec.Subject, ns)})
		case kube.EventLimitRange:
			msg += eventDetail(ec)
			rem = append(rem, doctor.Remediation{Text: "see the namespace's LimitRanges: their bounds and defaults", Command: fmt.Sprintf("kubectl describe limitrange -n %s", ns)})
			if fit := limitRangeFit(top.KindName(), ns, ec.Limits); fit != nil {
				rem = append(rem, *fit)
			}
		case kube.EventPodSecurity:
			msg += eventDetail(ec)
			rem = append(rem, doctor.Remediation{Text: "fix the pod template's securityContext, or review the namespace's pod-security.kubernetes.io/enforce label", Command: fmt.Sprintf("kubectl get namespace %s --show-labels", ns)})
		case kube.EventServiceAccount:
			msg += eventDetail(ec)
			rem = append(rem, doctor.Remediation{Text: "create the service account (or fix serviceAccountName)", Command: fmt.Sprintf("kubectl create serviceaccount %s -n %s", ec.Subject, ns)})
		case kube.EventWebhookDenied, kube.EventWebhookFailed:
			if ec.Class == kube.EventWebhookDenied {
				msg += fmt.Sprintf("admission webhook %s denies them: ", ec.Subject)
			} else {
				msg += fmt.Sprintf("calling admission webhook %s fails: ", ec.Subject)
			}
			msg += quote(cf.message)
			if w, ok := hooks[ec.Subject]; ok {
				via = append(via, w.Config)
				rem = append(rem, doctor.Remediation{Text: "see the webhook's configuration and backend", Command: fmt.Sprintf("kubectl get %s %s -o yaml", w.KubectlKind(), w.Config.Name)})
			}
		default:
			msg += quote(cf.message)
		}
		rem = append(rem, doctor.Remediation{Text: "read the controller's events", Command: fmt.Sprintf("kubectl describe %s %s -n %s", strings.ToLower(cf.kind), m.GetName(), ns)})
		if a.known {
			msg = a.String() + ": " + msg
		}
		var ev []string
		for _, w := range cf.events {
			ev = append(ev, warningLine(p.Now, w))
			break // the newest refusal, as written; older ones are usually the same
		}
		ev = append(ev, clip(cf.conds, 1)...)
		if c, ok := stuck[key]; ok {
			ev = append(ev, deadlineLine(p.Now, c))
			delete(stuck, key)
		}
		// replica-failure reports a ReplicaSet's refusal from its condition,
		// and missing-references a ServiceAccount that does not exist, on
		// the same top owner: when they ran, this finding is theirs. Only a
		// refusal for the ServiceAccount is missing-references' (its
		// finding on a StatefulSet's missing governing Service explains
		// no refusal).
		var viaChecks []string
		if len(via) == 0 {
			via, viaChecks = []doctor.ObjectRef{top.Ref}, []string{"replica-failure"}
			if ec.Class == kube.EventServiceAccount {
				viaChecks = append(viaChecks, "missing-references")
			}
		}
		p.Report(doctor.Finding{Severity: severityFor(a), Object: top.Ref, Message: msg, Count: int(cf.want - cf.has), Cause: "create-failed",
			Evidence: ev, Via: via, ViaChecks: viaChecks, Remediation: rem})
	}
}
