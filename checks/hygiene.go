package checks

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// Hygiene is the sanitiser view popeye and k8sgpt give by default and
// kubectl-doctor only under `--profile hygiene`: nothing here is broken,
// so a default scan (and a CI gate) stays quiet about it.
var Hygiene = &doctor.Check{
	Name:     "hygiene",
	Severity: doctor.Info,
	Origin:   "peer coverage map",
	Reads:    append([]snapshot.Resource{snapshot.Pods}, kube.WorkloadReads...),
	Optional: []snapshot.Resource{snapshot.ServiceAccounts},
	Run:      runHygiene,
	Doc: `Workload hygiene (profile hygiene): floating image tags, no requests or limits, the default ServiceAccount, bare pods

## Why it matters
None of these breaks anything today, which is why a default scan does not
report them; teams that want popeye's sanitiser view turn them on with
` + "`kubectl doctor --profile hygiene`" + `. Each is a common cause of tomorrow's
incident: a ` + "`:latest`" + ` or untagged image makes two pods of one Deployment run
different code and a rollback impossible; a container without requests is
scheduled as if it needed nothing and is the first evicted under pressure,
one without a memory limit can take a node's memory; workloads on the
namespace's ` + "`default`" + ` ServiceAccount with its token mounted share whatever
anyone grants that account; a bare pod is not recreated when its node goes.

## How it is detected
Only with ` + "`--profile hygiene`" + `. For every workload users manage (Deployment,
StatefulSet, DaemonSet, Job, CronJob, bare pod; not in ` + "`kube-system`" + `,
` + "`kube-public`" + ` and ` + "`kube-node-lease`" + `, whose workloads are the platform's), from
the pod template: images with no tag or the ` + "`latest`" + ` tag and no digest;
containers (init containers included) without CPU or memory requests, or
without a memory limit; the ` + "`default`" + ` ServiceAccount with its token mounted
(` + "`automountServiceAccountToken`" + ` not false on the template nor on the account);
pods with no controller (mirror pods of static manifests excepted). One
info finding per workload and rule, with the containers named. Probes are
not judged: the snapshot drops them to stay small.

## How to fix
Pin images by version or digest (` + "`kubectl set image`" + `); set what is missing from
observed usage (` + "`kubectl set resources -c CONTAINER`" + `, only the missing requests;
a missing memory limit at least the memory request, never below it; a bare
pod is recreated, its resources do not change in place); give the workload
its own ServiceAccount, or set ` + "`automountServiceAccountToken: false`" + ` when it
does not call the API; run bare pods under a Deployment or Job.

## References
- https://kubernetes.io/docs/concepts/configuration/overview/#container-images
- https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/
- https://kubernetes.io/docs/tasks/configure-pod-container/configure-service-account/#opt-out-of-api-credential-automounting
- https://kubernetes.io/docs/concepts/workloads/pods/#working-with-pods`,
}

var systemNamespaces = map[string]bool{"kube-system": true, "kube-public": true, "kube-node-lease": true}

func runHygiene(p *doctor.Pass) error {
	noAutomount := map[string]bool{} // "ns/sa" whose account opts out
	for _, sa := range p.Snapshot.ServiceAccounts() {
		if sa.AutomountServiceAccountToken != nil && !*sa.AutomountServiceAccountToken {
			noAutomount[sa.Namespace+"/"+sa.Name] = true
		}
	}
	for w := range kube.TopWorkloads(p.Snapshot) {
		ns := w.Ref.Namespace
		if w.Spec == nil || systemNamespaces[ns] {
			continue
		}
		if pod, ok := w.Object.(*corev1.Pod); ok && (pod.Annotations[corev1.MirrorPodAnnotationKey] != "" || kube.Terminal(pod)) {
			continue
		}
		kn := w.KindName()
		report := func(cause, msg string, rem ...doctor.Remediation) {
			p.Report(doctor.Finding{Object: w.Ref, Cause: cause, Message: kn + ": " + msg, Remediation: rem})
		}
		var floating, noRequests, noLimit []string
		all := append(append([]corev1.Container{}, w.Spec.InitContainers...), w.Spec.Containers...)
		for _, c := range all {
			if floatingTag(c.Image) {
				floating = append(floating, fmt.Sprintf("%s (%s)", c.Name, c.Image))
			}
			_, cpu := c.Resources.Requests[corev1.ResourceCPU]
			_, mem := c.Resources.Requests[corev1.ResourceMemory]
			if !cpu || !mem {
				noRequests = append(noRequests, c.Name)
			}
			if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
				noLimit = append(noLimit, c.Name)
			}
		}
		if len(floating) > 0 {
			report("floating-image", fmt.Sprintf("image without a fixed tag: %s; pods of one workload may run different code, and a rollback restores nothing", strings.Join(floating, ", ")),
				doctor.Remediation{Text: "pin the image by version or digest", Command: fmt.Sprintf("kubectl set image %s -n %s %s=IMAGE:VERSION", kn, ns, strings.SplitN(floating[0], " ", 2)[0])})
		}
		if len(noRequests) > 0 || len(noLimit) > 0 {
			var parts, why []string
			if len(noRequests) > 0 {
				parts = append(parts, "no CPU or memory request on "+strings.Join(noRequests, ", "))
				why = append(why, "the scheduler reserves nothing for what is not requested, and it is evicted first under pressure")
			}
			if len(noLimit) > 0 {
				parts = append(parts, "no memory limit on "+strings.Join(noLimit, ", "))
				why = append(why, "nothing bounds its memory: a leak grows until the node is under memory pressure")
			}
			report("resources", strings.Join(parts, "; ")+": "+strings.Join(why, "; "), resourcesRemediation(w, kn, ns, all))
		}
		sa := w.Spec.ServiceAccountName
		if sa == "" {
			sa = "default"
		}
		mounted := (w.Spec.AutomountServiceAccountToken == nil && !noAutomount[ns+"/"+sa]) ||
			(w.Spec.AutomountServiceAccountToken != nil && *w.Spec.AutomountServiceAccountToken)
		if sa == "default" && mounted {
			report("default-service-account", "runs as the namespace's default ServiceAccount with its API token mounted: it shares whatever anyone grants that account",
				doctor.Remediation{Text: "give it its own ServiceAccount", Command: fmt.Sprintf("kubectl create serviceaccount %s -n %s && kubectl set serviceaccount %s -n %s %s", w.Ref.Name, ns, kn, ns, w.Ref.Name)},
				doctor.Remediation{Text: "or stop mounting the token if it does not call the API", Command: fmt.Sprintf(`kubectl patch %s -n %s --type=json -p '[{"op":"add","path":"%s/automountServiceAccountToken","value":false}]'`, kn, ns, w.SpecPath)})
		}
		if w.Ref.Kind == "Pod" {
			report("bare-pod", "a pod with no controller: nothing recreates it when its node fails or drains",
				doctor.Remediation{Text: "run it under a Deployment (or a Job, if it finishes)", Command: fmt.Sprintf("kubectl get pod %s -n %s -o yaml", w.Ref.Name, ns)})
		}
	}
	return nil
}

// floatingTag says whether an image reference has no tag or the latest
// tag, and no digest.
func floatingTag(image string) bool {
	if strings.Contains(image, "@") {
		return false
	}
	name := image
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	_, tag, ok := strings.Cut(name, ":")
	return !ok || tag == "latest"
}

// profiles are the opt-in check sets: run only when `--profile NAME` asks.
var profiles = map[string]func() []*doctor.Check{
	"hygiene": func() []*doctor.Check { return []*doctor.Check{Hygiene} },
}

// Profile returns the checks of an opt-in profile (nil for an unknown one).
func Profile(name string) []*doctor.Check {
	if f := profiles[name]; f != nil {
		return f()
	}
	return nil
}

// Profiles names the opt-in profiles, sorted.
func Profiles() []string {
	out := make([]string, 0, len(profiles))
	for n := range profiles {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// resourcesRemediation sets what is missing on the first container that
// lacks something, and only that: requests it already has are kept, a
// missing memory limit is set to its memory request (never below it), and
// what the snapshot cannot know (usage) is a placeholder. A bare pod's
// resources cannot be set in place: it is recreated.
func resourcesRemediation(w *kube.Workload, kn, ns string, cs []corev1.Container) doctor.Remediation {
	if w.Ref.Kind == "Pod" {
		return doctor.Remediation{Text: "a running pod's resources do not change in place: recreate it (better, from a controller) with requests and a memory limit from observed usage",
			Command: fmt.Sprintf("kubectl get pod %s -n %s -o yaml", w.Ref.Name, ns)}
	}
	for _, c := range cs {
		var req, lim []string
		if _, ok := c.Resources.Requests[corev1.ResourceCPU]; !ok {
			req = append(req, "cpu=<usage>")
		}
		memReq, hasMem := c.Resources.Requests[corev1.ResourceMemory]
		if !hasMem {
			req = append(req, "memory=<usage>")
		}
		if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
			if hasMem {
				lim = append(lim, "memory="+memReq.String())
			} else {
				lim = append(lim, "memory=<usage+headroom>")
			}
		}
		if len(req)+len(lim) == 0 {
			continue
		}
		cmd := fmt.Sprintf("kubectl set resources %s -n %s -c %s", kn, ns, c.Name)
		if len(req) > 0 {
			cmd += " --requests=" + strings.Join(req, ",")
		}
		if len(lim) > 0 {
			cmd += " --limits=" + strings.Join(lim, ",")
		}
		return doctor.Remediation{Text: "set what is missing, from observed usage (kubectl top pod); the requests it has are kept, and a memory limit of its memory request never kills it below what it asks for", Command: cmd}
	}
	return doctor.Remediation{}
}
