package checks

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

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
		// The scan reads Warning events only: an image pull that hangs or
		// crawls, or a volume still attaching, leaves Normal ones
		// ("Pulling image" with no "Pulled" after it).
		details = "its containers stay in " + ex.Reason + " and no Warning event says why: an image pull that hangs or crawls, or a volume still attaching, shows only in the pod's Normal events"
		if pod.Spec.NodeName != "" && ex.Image != "" {
			details += fmt.Sprintf(" (image %s, node %s)", ex.Image, pod.Spec.NodeName)
		}
		if p.Snapshot.Err(kube.WarningEventReads) != nil {
			details = "its containers stay in " + ex.Reason + " (the Warning events that would say why could not be read)"
		}
		return details + states, nil, []doctor.Remediation{{Text: "see the pod's events (a \"Pulling image\" with no \"Pulled\" after it is a pull that hangs: check the node's access to the registry) and volumes", Command: fmt.Sprintf("kubectl describe pod -n %s %s", ns, pod.Name)}}
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
		holders := holdersOf(p.Snapshot, pod, claim, ec.Holders)
		downAt := downHolderNodes(p.Snapshot, holders)
		down := slices.Sorted(maps.Keys(downAt))
		details += " is ReadWriteOnce and still attached to another node"
		if len(holders) > 0 {
			details += ", used by " + strings.Join(holderWords(p.Now, holders, downAt), ", ")
		}
		details += " (" + quoted + ")"
		if len(down) > 0 {
			// The attach/detach controller detaches a volume from a node
			// that is not ready only once the pod using it there is gone,
			// and then forcibly after its 6-minute wait for an unmount the
			// dead kubelet never reports.
			which := "node " + down[0] + " is"
			if len(down) > 1 {
				which = "nodes " + strings.Join(down, ", ") + " are"
			}
			details += "; " + which + " not ready: the volume stays attached there until the pod holding it is deleted and the attach/detach controller force-detaches it (6 minutes later), or its VolumeAttachment is deleted"
			for _, n := range down { // one outage, one finding: node-health's
				via = append(via, doctor.ObjectRef{APIVersion: "v1", Kind: "Node", Name: n})
			}
			for _, h := range holders {
				if slices.Contains(down, h.node) {
					rem = append(rem,
						doctor.Remediation{Text: fmt.Sprintf("if node %s is shut down for good, mark it out of service: its pods are deleted and their volumes detached without waiting", h.node),
							Command: fmt.Sprintf("kubectl taint nodes %s node.kubernetes.io/out-of-service=nodeshutdown:NoExecute", h.node)},
						doctor.Remediation{Text: fmt.Sprintf("or force-delete the holder, only if node %s is really down (two writers corrupt the volume)", h.node),
							Command: fmt.Sprintf("kubectl delete pod %s -n %s --grace-period=0 --force", h.pod, ns)})
					break
				}
			}
		}
		if d, ok := g.Owner.Object.(*appsv1.Deployment); ok && d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType && len(down) == 0 {
			rem = append(rem, doctor.Remediation{Text: "a rolling update starts the new pod before the old one releases the volume: use strategy Recreate",
				Command: fmt.Sprintf(`kubectl patch deployment %s -n %s -p '{"spec":{"strategy":{"type":"Recreate","rollingUpdate":null}}}'`, d.Name, ns)})
		}
		rem = append(rem, doctor.Remediation{Text: "see which node the volume is attached to",
			Command: fmt.Sprintf(`kubectl get volumeattachments -o jsonpath='{range .items[?(@.spec.source.persistentVolumeName=="%s")]}{.metadata.name}{" "}{.spec.nodeName}{"\n"}{end}'`, ec.Subject)})
	case kube.EventVolumeMissing:
		details = eventDetail(ec) + " (" + ex.Event.Reason + ")"
		kind, name, _ := strings.Cut(ec.Subject, " ")
		switch kind {
		case "configmap":
			rem = append(rem, doctor.Remediation{Text: "create the ConfigMap the volume references (or fix the reference)", Command: fmt.Sprintf("kubectl create configmap %s -n %s --from-file=<path>", name, ns)})
		case "secret":
			rem = append(rem, secretRemediation(p, ns, name, "the volume references"))
			if ref, _, ok := secretWriter(p, ns, name); ok {
				via = append(via, ref)
			}
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
		// A volume's items[] asks for a key its ConfigMap or Secret does
		// not have (a typo of the key's name): the volume's definition
		// names the object and the items to fix.
		if m := missingItemKey.FindStringSubmatch(ex.Event.Message); m != nil {
			details += fmt.Sprintf(": the volume's items ask for key %s, which its %s does not have", m[2], strings.ToLower(m[1]))
			target, path := "pod/"+pod.Name, ".spec"
			if g.Owner.Spec != nil && g.Owner.Ref.Kind != "Pod" {
				target, path = g.Owner.KindName(), strings.ReplaceAll(g.Owner.SpecPath, "/", ".")
			}
			rem = append(rem, doctor.Remediation{Text: fmt.Sprintf("fix the key in the volume's items (or add key %s to the %s): the volume names which one", m[2], strings.ToLower(m[1])),
				Command: fmt.Sprintf(`kubectl get %s -n %s -o jsonpath='{%s.volumes[?(@.name=="%s")]}'`, target, ns, path, ec.Subject)})
		}
		// The CSI driver itself: its node plugin not registered with this
		// node's kubelet, or its controller (the external attacher) silent.
		if m := csiNotRegistered.FindStringSubmatch(ex.Event.Message); m != nil {
			details += fmt.Sprintf(": CSI driver %s is not registered on node %s, so its node plugin (usually a DaemonSet) does not run there", m[1], orUnknown(pod.Spec.NodeName))
			rem = append(rem, doctor.Remediation{Text: "see which nodes have the driver registered, and the driver's node plugin pods",
				Command: fmt.Sprintf("kubectl get csinode %s -o jsonpath='{.spec.drivers[*].name}'; kubectl get pods -A -o wide | grep -i csi", orUnknown(pod.Spec.NodeName))})
		} else if m := csiAttacherSilent.FindStringSubmatch(ex.Event.Message); m != nil {
			details += fmt.Sprintf(": no attacher of CSI driver %s answered, so its controller (with its external-attacher sidecar) is not running or not installed", m[1])
			rem = append(rem, doctor.Remediation{Text: "see whether the driver is installed and its controller runs",
				Command: fmt.Sprintf("kubectl get csidriver %s; kubectl get pods -A | grep -i csi", m[1])})
		}
		rem = append(rem, describe)
	case kube.EventSandbox:
		details = fmt.Sprintf("node %s cannot create the pod sandbox: %s (%s)", pod.Spec.NodeName, sandboxShort[ec.Sandbox], quoted)
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

// volumeHolder is a pod that holds a ReadWriteOnce volume, and its node
// ("" when the pod is not in the snapshot).
type volumeHolder struct{ pod, node string }

// holdersOf finds the pods (and their nodes) that hold the volume: those the
// Multi-Attach error names, else the other running pods using the claim on
// another node.
func holdersOf(s *snapshot.Snapshot, stuck *corev1.Pod, claim string, named []string) []volumeHolder {
	var out []volumeHolder
	for _, pod := range s.Pods() {
		if pod.Namespace != stuck.Namespace || pod.UID == stuck.UID || pod.Spec.NodeName == "" || kube.Terminal(pod) {
			continue
		}
		hit := slices.Contains(named, pod.Name)
		if !hit && claim != "" && len(named) == 0 && pod.Spec.NodeName != stuck.Spec.NodeName {
			hit = slices.Contains(kube.ClaimNames(&pod.Spec), claim)
		}
		if hit {
			out = append(out, volumeHolder{pod: pod.Name, node: pod.Spec.NodeName})
		}
	}
	if len(out) == 0 {
		for _, n := range named {
			out = append(out, volumeHolder{pod: n})
		}
	}
	return out
}

// downHolderNodes are the holders' nodes whose Ready condition is not
// True (none when nodes were not read).
func downHolderNodes(s *snapshot.Snapshot, holders []volumeHolder) map[string]kube.NodeOutage {
	out := map[string]kube.NodeOutage{}
	nodes := kube.NodesByName(s)
	for _, h := range holders {
		if n := nodes[h.node]; n != nil {
			if d, down := kube.NodeOutageOf(n); down {
				out[h.node] = d
			}
		}
	}
	return out
}

// holderWords is "pod files-1-old on node node-1", with the node's state
// when it is not ready: "(unreachable for 25m)".
func holderWords(now time.Time, holders []volumeHolder, down map[string]kube.NodeOutage) []string {
	var out []string
	for _, h := range holders {
		w := "pod " + h.pod
		if h.node != "" {
			w += " on node " + h.node
			if d, ok := down[h.node]; ok {
				state := "not ready"
				if d.Unreachable {
					state = "unreachable"
				}
				if !d.Since.IsZero() && now.After(d.Since) {
					state += " for " + human(now.Sub(d.Since))
				}
				w += " (" + state + ")"
			}
		}
		out = append(out, w)
	}
	return doctor.Examples(out)
}

// missingItemKey is the kubelet's "configmap references non-existent config
// key: report.yaml" (and the Secret's "secret references non-existent secret
// key: tls.crt") for a volume whose items[] names a key its object lacks.
var missingItemKey = regexp.MustCompile(`(configmap|secret) references non-existent (?:config|secret) key: (\S+)`)

// secretRemediation creates a missing Secret, unless a controller is meant
// to write it: an ExternalSecret or a cert-manager Certificate that targets
// it, OpenShift's service-ca for a Service that asks for a serving
// certificate, cert-manager for an Ingress's TLS section. A Secret made by
// hand then blocks the real one (those controllers do not overwrite what
// they did not create), so the fix is to see why the controller has not.
func secretRemediation(p *doctor.Pass, ns, name, whose string) doctor.Remediation {
	if _, rem, ok := secretWriter(p, ns, name); ok {
		return rem
	}
	if p.Snapshot.Err(snapshot.Services) == nil {
		for _, svc := range p.Snapshot.Services() {
			if svc.Namespace != ns {
				continue
			}
			for _, a := range []string{"service.beta.openshift.io/serving-cert-secret-name", "service.alpha.openshift.io/serving-cert-secret-name"} {
				if svc.Annotations[a] == name {
					return doctor.Remediation{Text: fmt.Sprintf("do not create it by hand: OpenShift's service-ca operator writes it for service %s (%s); see whether the operator runs and what it reports on the Service", svc.Name, a),
						Command: fmt.Sprintf("oc get pods -n openshift-service-ca; oc get service %s -n %s -o jsonpath='{.metadata.annotations}'", svc.Name, ns)}
				}
			}
		}
	}
	if p.Snapshot.Err(snapshot.Ingresses) == nil {
		for _, ing := range p.Snapshot.Ingresses() {
			if ing.Namespace != ns || ing.Annotations["cert-manager.io/cluster-issuer"]+ing.Annotations["cert-manager.io/issuer"] == "" {
				continue
			}
			for _, t := range ing.Spec.TLS {
				if t.SecretName == name {
					return doctor.Remediation{Text: fmt.Sprintf("do not create it by hand: cert-manager issues it for ingress %s; see why its Certificate is not ready", ing.Name),
						Command: fmt.Sprintf("kubectl get certificate,certificaterequest -n %s", ns)}
				}
			}
		}
	}
	return doctor.Remediation{Text: fmt.Sprintf("create the Secret %s (or fix the reference)", whose),
		Command: fmt.Sprintf("kubectl create secret generic %s -n %s --from-literal=<key>=<value>", name, ns)}
}

// The kubelet's and the attach-detach controller's words for a CSI driver
// that is not there: "driver name efs.csi.aws.com not found in the list of
// registered CSI drivers"; "timed out waiting for external-attacher of
// csi.vsphere.vmware.com CSI driver to attach volume ...".
var (
	csiNotRegistered  = regexp.MustCompile(`driver name (\S+) not found in the list of registered CSI drivers`)
	csiAttacherSilent = regexp.MustCompile(`timed out waiting for external-attacher of (\S+) CSI driver`)
)
