package checks

import (
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// This file holds what workload-pods reads from the cluster's Warning
// events and conditions: the cause of pods that never start, probe kills,
// controllers that create no pods, and the evidence quoted for an
// unavailable workload no rule explains.

// evidence is the newest distinct Warning events of the objects (the
// owner, its ReplicaSets, the pods) and their failing conditions, at most
// three of each kind; a line saying the events could not be read when the
// scan could not list them.
func evidence(p *doctor.Pass, refs []doctor.ObjectRef, pods []*corev1.Pod, conds []string) []string {
	const most = 3
	if err := p.Snapshot.Err(kube.WarningEventReads); err != nil {
		return append([]string{"(Warning events could not be read: " + err.Error() + ")"}, clip(conds, most)...)
	}
	x := kube.WarningEventsOf(p.Snapshot)
	var lists [][]*kube.Warning
	for _, r := range refs {
		lists = append(lists, x.About(r.Kind, r.Namespace, r.Name, ""))
	}
	for _, pod := range pods {
		lists = append(lists, x.AboutPod(pod))
	}
	out := eventEvidence(p.Now, most, lists...)
	return append(out, clip(conds, most-min(len(out), most-1))...)
}

func clip(lines []string, n int) []string {
	if len(lines) > n {
		return lines[:n]
	}
	return lines
}

// failingConditions are the conditions that say something is wrong, as
// "Progressing=False (ProgressDeadlineExceeded): message".
func failingConditions(obj any) []string {
	var out []string
	add := func(typ string, status corev1.ConditionStatus, reason, msg string, bad bool) {
		if !bad {
			return
		}
		s := fmt.Sprintf("%s=%s", typ, status)
		if reason != "" {
			s += " (" + reason + ")"
		}
		if msg != "" {
			s += ": " + clipLine(msg, 200)
		}
		out = append(out, s)
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		for _, c := range o.Status.Conditions {
			add(string(c.Type), c.Status, c.Reason, c.Message, c.Status != corev1.ConditionTrue || c.Type == appsv1.DeploymentReplicaFailure)
		}
	case *appsv1.ReplicaSet:
		for _, c := range o.Status.Conditions {
			add(string(c.Type), c.Status, c.Reason, c.Message, c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue)
		}
	case *appsv1.StatefulSet:
		for _, c := range o.Status.Conditions {
			add(string(c.Type), c.Status, c.Reason, c.Message, c.Status != corev1.ConditionFalse)
		}
	case *appsv1.DaemonSet:
		for _, c := range o.Status.Conditions {
			add(string(c.Type), c.Status, c.Reason, c.Message, c.Status != corev1.ConditionFalse)
		}
	case *corev1.Pod:
		for _, c := range o.Status.Conditions {
			// Ready/ContainersReady False only repeat the container states.
			skip := c.Type == corev1.PodReady || c.Type == corev1.ContainersReady
			add(string(c.Type), c.Status, c.Reason, c.Message, !skip && c.Status != corev1.ConditionTrue)
		}
	}
	return out
}

// probeOf is the container's probe of that kind ("liveness", "startup",
// "readiness"), nil when it declares none.
func probeOf(c *corev1.Container, kind string) *corev1.Probe {
	if c == nil {
		return nil
	}
	switch kind {
	case "liveness":
		return c.LivenessProbe
	case "startup":
		return c.StartupProbe
	}
	return c.ReadinessProbe
}

// describeProbe is "httpGet :8080/healthz, timeout 1s, every 10s, 3 failures".
func describeProbe(pr *corev1.Probe) string {
	var what string
	switch h := pr.ProbeHandler; {
	case h.HTTPGet != nil:
		what = fmt.Sprintf("httpGet :%s%s", h.HTTPGet.Port.String(), h.HTTPGet.Path)
	case h.TCPSocket != nil:
		what = "tcpSocket :" + h.TCPSocket.Port.String()
	case h.GRPC != nil:
		what = fmt.Sprintf("grpc :%d", h.GRPC.Port)
	case h.Exec != nil:
		what = "exec " + clipLine(strings.Join(h.Exec.Command, " "), 60)
	default:
		what = "probe"
	}
	orDefault := func(v, d int32) int32 {
		if v == 0 {
			return d
		}
		return v
	}
	return fmt.Sprintf("%s, timeout %ds, every %ds, %d failures", what, orDefault(pr.TimeoutSeconds, 1), orDefault(pr.PeriodSeconds, 10), orDefault(pr.FailureThreshold, 3))
}

func specContainer(pod *corev1.Pod, name string) *corev1.Container {
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// containerOfField reads "spec.containers{app}" (an event's fieldPath).
func containerOfField(fp string) string {
	_, rest, ok := strings.Cut(fp, "{")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "}")
	return name
}

// probeKill says whether the kubelet killed the group's container after
// failed liveness or startup probes (its Killing and Unhealthy events), with
// the probe's spec and the newest failure message: a SIGKILL exit 137 with
// reason Error is such a kill or a stop that ignored SIGTERM, never an OOM
// kill (that is reason OOMKilled).
func probeKill(p *doctor.Pass, g *kube.OwnerProblem, container string) (kind, phrase string, ok bool) {
	if p.Snapshot.Err(kube.WarningEventReads) != nil {
		return "", "", false
	}
	x := kube.WarningEventsOf(p.Snapshot)
	var failure *kube.Warning
	for _, pod := range g.Pods {
		for _, w := range x.AboutPod(pod) {
			if c := containerOfField(w.FieldPath); c != "" && c != container {
				continue
			}
			ec := kube.ClassifyEvent(w.Reason, w.Message)
			if ec.Class != kube.EventLivenessKill && ec.Class != kube.EventStartupKill {
				continue
			}
			if kind == "" {
				kind = "liveness"
				if ec.Class == kube.EventStartupKill {
					kind = "startup"
				}
			}
			if w.Reason == "Unhealthy" && (failure == nil || w.Last.After(failure.Last)) {
				failure = w
			}
		}
	}
	if kind == "" {
		return "", "", false
	}
	phrase = "the kubelet kills it after failed " + kind + " probes"
	if pr := probeOf(specContainer(g.Pods[0], container), kind); pr != nil {
		phrase += " (" + describeProbe(pr) + ")"
	}
	if failure != nil {
		phrase += ": " + quote(failure.Message)
		if failure.Count > 1 {
			phrase += fmt.Sprintf(" (x%d)", failure.Count)
		}
	}
	return kind, phrase, true
}

// readinessFailure quotes the newest readiness probe failure of the group.
func readinessFailure(p *doctor.Pass, g *kube.OwnerProblem, container string) string {
	if p.Snapshot.Err(kube.WarningEventReads) != nil {
		return ""
	}
	x := kube.WarningEventsOf(p.Snapshot)
	var newest *kube.Warning
	for _, pod := range g.Pods {
		for _, w := range x.AboutPod(pod) {
			if c := containerOfField(w.FieldPath); c != "" && c != container {
				continue
			}
			if kube.ClassifyEvent(w.Reason, w.Message).Class == kube.EventReadiness && (newest == nil || w.Last.After(newest.Last)) {
				newest = w
			}
		}
	}
	s := ""
	if pr := probeOf(specContainer(g.Pods[0], container), "readiness"); pr != nil {
		s = " (" + describeProbe(pr) + ")"
	}
	if newest != nil {
		s += ": " + quote(newest.Message)
	}
	return s
}

// pullFromEvents refines an image pull failure the waiting message does not
// decide ("Back-off pulling image ...") with the newest Failed event.
func pullFromEvents(p *doctor.Pass, g *kube.OwnerProblem, ex kube.ContainerProblem) (kube.PullFailure, string) {
	if ex.Pull != kube.PullUnknown || p.Snapshot.Err(kube.WarningEventReads) != nil {
		return ex.Pull, ""
	}
	x := kube.WarningEventsOf(p.Snapshot)
	for _, pod := range g.Pods {
		for _, w := range x.AboutPod(pod) {
			if w.Reason != "Failed" || !strings.Contains(w.Message, "pull") {
				continue
			}
			if f := kube.ClassifyPull("", w.Message); f != kube.PullUnknown {
				return f, w.Message
			}
		}
	}
	return ex.Pull, ""
}

// pullSecretsPhrase names the pull secrets the pod declares (names only).
func pullSecretsPhrase(pod *corev1.Pod) string {
	var names []string
	for _, r := range pod.Spec.ImagePullSecrets {
		names = append(names, r.Name)
	}
	if len(names) == 0 {
		return "the pod declares no imagePullSecrets"
	}
	return "imagePullSecrets " + strings.Join(names, ", ")
}

// notStarted explains pods that never start from the newest Warning event
// of the example pod: which volume and source, the node and pod holding a
// ReadWriteOnce volume, the sandbox error; the event quoted otherwise. via
// names the objects whose own finding is the cause (the node whose
// sandbox fails, the claim pvc-pending reports).
func notStarted(p *doctor.Pass, g *kube.OwnerProblem) (details string, via []doctor.ObjectRef, rem []doctor.Remediation) {
	ex := g.Example()
	pod := g.Pods[0]
	for i, pr := range g.Problems {
		if pr.Event != nil {
			ex, pod = pr, g.Pods[i]
			break
		}
	}
	ns := pod.Namespace
	states := containerStates(pod)
	if ex.Event == nil {
		details = "its containers stay in " + ex.Reason + " and no Warning event says why"
		if p.Snapshot.Err(kube.WarningEventReads) != nil {
			details = "its containers stay in " + ex.Reason + " (the Warning events that would say why could not be read)"
		}
		return details + states, nil, []doctor.Remediation{{Text: "see the pod's events and volumes", Command: fmt.Sprintf("kubectl describe pod -n %s %s", ns, pod.Name)}}
	}
	ec := kube.ClassifyEvent(ex.Event.Reason, ex.Event.Message)
	quoted := fmt.Sprintf("%s: %s", ex.Event.Reason, quote(ex.Event.Message))
	describe := doctor.Remediation{Text: "see the pod's events", Command: fmt.Sprintf("kubectl describe pod -n %s %s", ns, pod.Name)}
	switch ec.Class {
	case kube.EventMultiAttach:
		claim := claimOfPV(p.Snapshot, ns, ec.Subject)
		details = fmt.Sprintf("volume %s", ec.Subject)
		if claim != "" {
			details = fmt.Sprintf("claim %s (volume %s)", claim, ec.Subject)
			via = append(via, doctor.ObjectRef{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: ns, Name: claim})
		}
		details += " is ReadWriteOnce and still attached to another node"
		if holders := holdersOf(p.Snapshot, pod, claim, ec.Holders); len(holders) > 0 {
			details += ", used by " + strings.Join(holders, ", ")
		}
		details += " (" + quoted + ")"
		if d, ok := g.Owner.Object.(*appsv1.Deployment); ok && d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			rem = append(rem, doctor.Remediation{Text: "a rolling update starts the new pod before the old one releases the volume: use strategy Recreate",
				Command: fmt.Sprintf(`kubectl patch deployment %s -n %s -p '{"spec":{"strategy":{"type":"Recreate","rollingUpdate":null}}}'`, d.Name, ns)})
		}
		rem = append(rem, doctor.Remediation{Text: "see which node the volume is attached to", Command: "kubectl get volumeattachments"})
	case kube.EventVolumeMissing:
		details = eventDetail(ec) + " (" + ex.Event.Reason + ")"
		kind, name, _ := strings.Cut(ec.Subject, " ")
		switch kind {
		case "configmap":
			rem = append(rem, doctor.Remediation{Text: "create the ConfigMap the volume references (or fix the reference)", Command: fmt.Sprintf("kubectl create configmap %s -n %s --from-file=<path>", name, ns)})
		case "secret":
			rem = append(rem, doctor.Remediation{Text: "create the Secret the volume references (or fix the reference)", Command: fmt.Sprintf("kubectl create secret generic %s -n %s --from-literal=<key>=<value>", name, ns)})
		case "persistentvolumeclaim":
			via = append(via, doctor.ObjectRef{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: ns, Name: name})
		}
		rem = append(rem, describe)
	case kube.EventVolumeAttach, kube.EventVolumeMount:
		details = "volume " + orUnknown(ec.Subject) + volumeSource(pod, ec.Subject) + " cannot be "
		if ec.Class == kube.EventVolumeAttach {
			details += "attached"
		} else {
			details += "mounted"
		}
		details += " (" + quoted + ")"
		for _, c := range kube.ClaimNames(&pod.Spec) {
			via = append(via, doctor.ObjectRef{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: ns, Name: c})
		}
		rem = append(rem, describe)
	case kube.EventSandbox:
		details = fmt.Sprintf("node %s cannot create the pod sandbox: %s (%s)", pod.Spec.NodeName, ec.Subject, quoted)
		via = append(via, kube.NodeRef(pod.Spec.NodeName))
		rem = append(rem, describe)
	default:
		details = "the newest Warning event says " + quoted
		rem = append(rem, describe)
	}
	return details + states, via, rem
}

// containerStates is "; containers: app waiting (ContainerCreating)".
func containerStates(pod *corev1.Pod) string {
	var parts []string
	for _, lists := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, cs := range lists {
			s := cs.Name
			switch {
			case cs.State.Waiting != nil:
				s += " waiting (" + orUnknown(cs.State.Waiting.Reason) + ")"
			case cs.State.Terminated != nil:
				s += fmt.Sprintf(" terminated (exit code %d)", cs.State.Terminated.ExitCode)
			}
			if t := cs.LastTerminationState.Terminated; t != nil {
				s += fmt.Sprintf(", last exit code %d", t.ExitCode)
			}
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; containers: " + strings.Join(doctor.Examples(parts), ", ")
}

// volumeSource is " (claim data-db-0)" or " (configmap app)" for the pod's
// volume of that name, "" when it is not one of the pod's volumes.
func volumeSource(pod *corev1.Pod, name string) string {
	for _, v := range pod.Spec.Volumes {
		if v.Name != name {
			continue
		}
		switch {
		case v.PersistentVolumeClaim != nil:
			return " (claim " + v.PersistentVolumeClaim.ClaimName + ")"
		case v.ConfigMap != nil:
			return " (configmap " + v.ConfigMap.Name + ")"
		case v.Secret != nil:
			return " (secret " + v.Secret.SecretName + ")"
		case v.NFS != nil:
			return " (nfs " + v.NFS.Server + ":" + v.NFS.Path + ")"
		case v.CSI != nil:
			return " (csi " + v.CSI.Driver + ")"
		}
	}
	return ""
}

// claimOfPV is the claim in namespace ns bound to volume pv, "" when the
// claims were not read or none is.
func claimOfPV(s *snapshot.Snapshot, ns, pv string) string {
	if s.Err(snapshot.PersistentVolumeClaims) != nil {
		return ""
	}
	for _, c := range s.PersistentVolumeClaims() {
		if c.Namespace == ns && (c.Spec.VolumeName == pv || c.Name == pv) {
			return c.Name
		}
	}
	return ""
}

// holdersOf names the pods (and their nodes) that hold the volume: those the
// Multi-Attach error names, else the other running pods using the claim on
// another node.
func holdersOf(s *snapshot.Snapshot, stuck *corev1.Pod, claim string, named []string) []string {
	var out []string
	for _, pod := range s.Pods() {
		if pod.Namespace != stuck.Namespace || pod.UID == stuck.UID || pod.Spec.NodeName == "" || kube.Terminal(pod) {
			continue
		}
		hit := slices.Contains(named, pod.Name)
		if !hit && claim != "" && len(named) == 0 && pod.Spec.NodeName != stuck.Spec.NodeName {
			hit = slices.Contains(kube.ClaimNames(&pod.Spec), claim)
		}
		if hit {
			out = append(out, fmt.Sprintf("pod %s on node %s", pod.Name, pod.Spec.NodeName))
		}
	}
	if len(out) == 0 {
		for _, n := range named {
			out = append(out, "pod "+n)
		}
	}
	return doctor.Examples(out)
}

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
	return out
}

// reportCreateFailures reports controllers that create no (or too few)
// pods at their top owner, with the admission error as the API server
// wrote it, parsed where its shape is known. A refusal by a webhook is
// folded into admission-webhooks' finding on that webhook (Via).
func reportCreateFailures(p *doctor.Pass, reported map[string]bool) {
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
		var via []doctor.ObjectRef
		var rem []doctor.Remediation
		ns := m.GetNamespace()
		switch ec.Class {
		case kube.EventQuota:
			msg += eventDetail(ec)
			rem = append(rem, doctor.Remediation{Text: "see the quota's use, then raise it or lower the pods' requests", Command: fmt.Sprintf("kubectl describe resourcequota %s -n %s", ec.Subject, ns)})
		case kube.EventLimitRange:
			msg += eventDetail(ec)
			rem = append(rem, doctor.Remediation{Text: "compare the pods' requests and limits with the namespace's LimitRange", Command: fmt.Sprintf("kubectl describe limitrange -n %s", ns)})
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
		// replica-failure reports a ReplicaSet's refusal from its condition,
		// and missing-references a ServiceAccount that does not exist, on
		// the same top owner: when they ran, this finding is theirs.
		var viaChecks []string
		if len(via) == 0 {
			via, viaChecks = []doctor.ObjectRef{top.Ref}, []string{"replica-failure", "missing-references"}
		}
		p.Report(doctor.Finding{Severity: severityFor(a), Object: top.Ref, Message: msg, Count: int(cf.want - cf.has), Cause: "create-failed",
			Evidence: ev, Via: via, ViaChecks: viaChecks, Remediation: rem})
	}
}

// reportUnavailable is the fallback: a Deployment, StatefulSet or
// DaemonSet with fewer available replicas than desired for five minutes,
// that no other rule of this check explained, is reported with the
// evidence the cluster holds (newest Warning events of it, its
// ReplicaSets and pods; its failing conditions) instead of a bare symptom.
// Via names the objects another check may report as its cause (itself,
// its pods' claims and nodes), so that finding takes it in.
func reportUnavailable(p *doctor.Pass, reported map[string]bool, chained map[string][]doctor.ObjectRef) {
	own := kube.OwnersOf(p.Snapshot)
	podsOf := map[string][]*corev1.Pod{}
	for _, pod := range p.Snapshot.Pods() {
		if w, ok := own.Top(pod); ok && !kube.Terminal(pod) {
			podsOf[kube.OwnerKey(w)] = append(podsOf[kube.OwnerKey(w)], pod)
		}
	}
	for w := range kube.TopWorkloads(p.Snapshot) {
		key := kube.OwnerKey(w)
		a := availabilityOf(w)
		if !a.known || a.desired == 0 || a.available >= a.desired || reported[key] {
			continue
		}
		pods := podsOf[key]
		since := unavailableSince(w, pods)
		if since.IsZero() || p.Now.Sub(since) < problemMinAge {
			continue
		}
		if d, ok := w.Object.(*appsv1.Deployment); ok && (stuckRollout(d) != nil || rollingWithinDeadline(d, p.Now, since)) {
			continue // reported as a stuck rollout, or still within its deadline
		}
		refs := []doctor.ObjectRef{w.Ref}
		via := []doctor.ObjectRef{w.Ref}
		conds := failingConditions(w.Object)
		for _, rs := range p.Snapshot.ReplicaSets() {
			if c := metav1.GetControllerOfNoCopy(&rs); c != nil && c.UID == w.Meta.UID && replicasOf(rs.Spec.Replicas) > 0 {
				refs = append(refs, kube.Ref("apps/v1", "ReplicaSet", &rs))
				conds = append(conds, failingConditions(&rs)...)
			}
		}
		var notReady []*corev1.Pod
		for _, pod := range pods {
			if !kube.Ready(pod) {
				notReady = append(notReady, pod)
				conds = append(conds, failingConditions(pod)...)
				via = append(via, kube.Ref("v1", "Pod", pod))
				if pod.Spec.NodeName != "" {
					via = append(via, kube.NodeRef(pod.Spec.NodeName))
				}
				for _, c := range kube.ClaimNames(&pod.Spec) {
					via = append(via, doctor.ObjectRef{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: pod.Namespace, Name: c})
				}
			}
		}
		slices.Sort(conds)
		conds = slices.Compact(conds)
		ev := evidence(p, refs, notReady, conds)
		msg := fmt.Sprintf("%s for %s", a, duration.HumanDuration(p.Now.Sub(since)))
		switch {
		case len(pods) == 0:
			msg += ": it has no pod"
		case len(notReady) > 0:
			msg += fmt.Sprintf(": %s not ready and no container problem explains it", doctor.Plural(len(notReady), "pod is", "pods are"))
		}
		if len(ev) == 0 {
			msg += "; no Warning event or failing condition says why"
		}
		var names []string
		for _, pod := range notReady {
			names = append(names, pod.Name)
		}
		rem := []doctor.Remediation{{Text: "read the workload's and its pods' events", Command: fmt.Sprintf("kubectl describe %s -n %s", w.KindName(), w.Ref.Namespace)}}
		if len(notReady) > 0 {
			rem = append(rem, doctor.Remediation{Text: "see one pod's state", Command: fmt.Sprintf("kubectl describe pod -n %s %s", w.Ref.Namespace, notReady[0].Name)})
		}
		f := doctor.Finding{Severity: severityFor(a), Object: w.Ref, Message: msg, Count: max(len(notReady), 1), Cause: "unavailable",
			Examples: doctor.Examples(names), Evidence: ev, Via: via, Remediation: rem}
		chain(&f, chained[key])
		p.Report(f)
	}
}

// unavailableSince is when the workload lost availability: its Available
// condition's transition (Deployments), else when its oldest unready pod
// stopped being ready (or was created), else zero (unknown).
func unavailableSince(w *kube.Workload, pods []*corev1.Pod) time.Time {
	if d, ok := w.Object.(*appsv1.Deployment); ok {
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status != corev1.ConditionTrue {
				return c.LastTransitionTime.Time
			}
		}
	}
	var t time.Time
	for _, pod := range pods {
		since := kube.NotReadySince(pod)
		if since.IsZero() {
			continue // ready
		}
		if t.IsZero() || since.Before(t) {
			t = since
		}
	}
	if t.IsZero() && len(pods) == 0 && w.Meta != nil {
		t = w.Meta.CreationTimestamp.Time // no pod at all
	}
	return t
}
