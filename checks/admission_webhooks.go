package checks

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// AdmissionWebhooks judges every admission webhook by what happens to the
// requests it intercepts when its backend is unhealthy: rejected (Fail), or
// delayed by the timeout and then let through unchecked (Ignore).
var AdmissionWebhooks = &doctor.Check{
	Name:     "admission-webhooks",
	Severity: doctor.Warning,
	Origin:   "Snowball effect",
	Reads:    slices.Clone(kube.WebhookReads),
	// The backend's pods, to name why it has no ready endpoint, and the API
	// server's metrics, to show the harm of failing open.
	Optional: append([]snapshot.Resource{kube.WarningEventReads, snapshot.APIServerMetrics, snapshot.Namespaces}, kube.PodProblemReads...),
	Run:      runAdmissionWebhooks,
	Doc: `Admission webhooks with no healthy backend, long timeouts or cluster-wide scope

## Why it matters
Every matching API request waits for an admission webhook. With
` + "`failurePolicy: Fail`" + ` and no healthy backend, every matching request is rejected:
no pod can be created. With ` + "`failurePolicy: Ignore`" + ` each request first waits up to
` + "`timeoutSeconds`" + ` (default 10, maximum 30) and then silently skips the policy — in
"The Snowball effect" a 30-second timeout failing open delayed pod
creation by up to 80 minutes and let a CronJob pile up 3,000 Jobs. A webhook
that intercepts pods in every namespace, kube-system included, can take the
cluster's own components down with it.

## How it is detected
From one LIST each of Mutating- and ValidatingWebhookConfigurations, Services
and EndpointSlices, every webhook is checked for: a Service that does not
exist; no ready endpoint (EndpointSlices labelled
` + "`kubernetes.io/service-name`" + `, on the port the webhook calls); a ` + "`caBundle`" + ` that is
empty (with no cert-manager or OpenShift CA-injection annotation) or not PEM
certificates; URL webhooks, whose health cannot be seen from the API (info).
An unhealthy backend is critical with ` + "`failurePolicy: Fail`" + `, a warning with
` + "`Ignore`" + ` (the timeout is named when it exceeds 5s) — critical when the cluster
shows the harm: ` + "`FailedCreate`" + ` events whose message names the webhook, or, when
the scan reads the API server's /metrics, its
` + "`apiserver_admission_webhook_fail_open_count`" + ` or calling-error
` + "`apiserver_admission_webhook_rejection_count`" + `. Rules that intercept pods (or
everything) in kube-system are reported with what the existing selectors let
through ("its namespaceSelector excludes a, b but not kube-system"); on a
healthy backend that observation alone is info. The suggested JSON patch adds
a ` + "`matchExpressions`" + ` entry to an existing ` + "`namespaceSelector`" + ` (its terms are
ANDed), so it never widens the webhook's scope.

When the backend Service's pods have a container problem (crash loop, OOM
kill, image pull, missing configuration, never ready), the finding names it
after the backend's state, and workload-pods does not report that workload
again.

A scan of one namespace (` + "`-n shop`" + `) lists the Services of that namespace
only: a webhook whose backend lives elsewhere is not judged by its Service
(its absence from the scan says nothing), but the controllers' refusals in
shop that name it (` + "`FailedCreate`" + ` events, "failed calling webhook") still
tell that calling it fails. Webhooks whose ` + "`namespaceSelector`" + ` cannot match
shop are left out, judged on the namespace's labels, or on its
` + "`kubernetes.io/metadata.name`" + ` label when namespaces cannot be read.

## How to fix
Restore the webhook's backend, or delete the configuration if its controller
is gone. Keep ` + "`timeoutSeconds`" + ` short (1–5s) for fail-open webhooks, and exclude
kube-system (and the webhook's own namespace) with a ` + "`namespaceSelector`" + ` on
` + "`kubernetes.io/metadata.name`" + `.

## References
- https://blenderfox.com/2020/08/07/the-snowball-effect-in-kubernetes/
- https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#failure-policy
- https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#timeouts
- https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#avoiding-operating-on-the-kube-system-namespace`,
}

func runAdmissionWebhooks(p *doctor.Pass) error {
	hooks := kube.Webhooks(p.Snapshot)
	harms := kube.WebhookHarms(p.Snapshot)
	sort.SliceStable(hooks, func(i, j int) bool { return hooks[i].Config.Name < hooks[j].Config.Name })
	for _, w := range hooks {
		if scope := p.Snapshot.Namespace; scope != "" && !reachesNamespace(p.Snapshot, w.NamespaceSelector, scope) {
			continue // a scan of one namespace (-n) that this webhook never sees
		}
		if s := w.Service; s != nil && w.Broken == nil && !p.Snapshot.Covers(s.Namespace) {
			// Its backend was not listed (-n): the controllers' refusals
			// in this namespace are what tells that calling it fails.
			if e := failedCall(p.Snapshot, w.Name); e != nil {
				_, detail, _ := kube.FailedWebhook(e.Message)
				w.Broken = &kube.BackendFault{Kind: kube.FaultCallFails, Service: s.Namespace + "/" + s.Name, Err: detail}
			}
		}
		var problems []string
		var rem []doctor.Remediation
		sev := doctor.Severity(0)
		raise := func(s doctor.Severity) {
			if s > sev {
				sev = s
			}
		}
		var harm string
		what := "requests"
		if len(w.Resources) > 0 {
			what = strings.Join(uniq(w.Operations), "/") + " of " + strings.Join(uniq(w.Resources), ", ")
		}
		if w.Broken != nil {
			broken := faultWords(w.Broken)
			// Name the backend's own failure: workload-pods folds it into this finding.
			var cause *kube.OwnerProblem
			if s := w.Service; s != nil {
				if g, ok := kube.BackendProblem(p.Snapshot, p.Now, s.Namespace, s.Name); ok {
					broken, cause = broken+" ("+backendSentence(g)+")", g
				}
			}
			if cause != nil {
				text, cmd := inspectProblem(cause)
				rem = append(rem, doctor.Remediation{Text: text + " (" + cause.Owner.KindName() + ")", Command: cmd})
			}
			if w.FailurePolicy == admissionregistrationv1.Fail {
				raise(doctor.Critical)
				problems = append(problems, fmt.Sprintf("%s: every matching %s is rejected", broken, what))
			} else {
				// Failing open is a warning until the cluster shows the harm.
				raise(doctor.Warning)
				if h := harms[w.Name]; h.Any() {
					raise(doctor.Critical)
					harm = "the harm shows: " + harmWords(h)
				}
				wait := ""
				if w.Timeout > 5 {
					wait = fmt.Sprintf(" may wait up to %ds, then", w.Timeout)
				}
				problems = append(problems, fmt.Sprintf("%s: every matching %s%s silently skips the policy", broken, what, wait))
			}
			if s := w.Service; s != nil {
				rem = append(rem, doctor.Remediation{Text: "restore the webhook's backend: its pods and ready endpoints",
					Command: fmt.Sprintf("kubectl get endpointslices -n %s -l kubernetes.io/service-name=%s", s.Namespace, s.Name)})
			}
			rem = append(rem, doctor.Remediation{Text: "if the webhook's controller is gone for good, remove its configuration",
				Command: fmt.Sprintf("kubectl delete %s %s", w.KubectlKind(), w.Config.Name)})
			if w.FailurePolicy == admissionregistrationv1.Ignore && w.Timeout > 5 {
				rem = append(rem, doctor.Remediation{Text: "fail open fast: a short timeout bounds the delay of every request",
					Command: fmt.Sprintf(`kubectl patch %s %s --type=json -p '[{"op":"replace","path":"/webhooks/%d/timeoutSeconds","value":3}]'`, w.KubectlKind(), w.Config.Name, w.Index)})
			}
		}
		if w.InterceptsKubeSystem {
			// Scope alone, on a healthy backend, is an observation.
			raise(doctor.Info)
			if w.NamespaceSelector == nil || len(w.NamespaceSelector.MatchLabels)+len(w.NamespaceSelector.MatchExpressions) == 0 {
				problems = append(problems, "it intercepts pods in every namespace, kube-system included, "+namespaceScope(w))
			} else {
				problems = append(problems, "it intercepts pods in kube-system: "+namespaceScope(w))
			}
			rem = append(rem, doctor.Remediation{Text: "exclude kube-system too (and the webhook's own namespace), keeping its other selectors",
				Command: fmt.Sprintf(`kubectl patch %s %s --type=json -p '%s'`, w.KubectlKind(), w.Config.Name, excludeKubeSystemPatch(w))})
		}
		if harm != "" {
			problems = append(problems, harm)
		}
		if w.URL != "" {
			raise(doctor.Info)
			problems = append(problems, fmt.Sprintf("it calls %s, whose health kubectl-doctor cannot see from the API", w.URL))
			rem = append(rem, doctor.Remediation{Text: "watch the API server's webhook metrics for it (apiserver_admission_webhook_*)",
				Command: fmt.Sprintf("kubectl get --raw /metrics | grep 'name=\"%s\"'", w.Name)})
		}
		if sev == 0 {
			continue
		}
		p.Report(doctor.Finding{Severity: sev, Object: w.Config, Message: webhookWords(w) + ": " + strings.Join(problems, "; "), Remediation: rem})
	}
	return nil
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// harmWords is a webhook's harm in words: "controllers failed to create
// objects 4 times because of it (FailedCreate events); the API server
// skipped it 120 times (...)".
func harmWords(h kube.WebhookHarm) string {
	var out []string
	if h.FailedCreates > 0 {
		out = append(out, fmt.Sprintf("controllers failed to create objects %d times because of it (FailedCreate events)", h.FailedCreates))
	}
	if h.FailedOpen > 0 {
		out = append(out, fmt.Sprintf("the API server skipped it %d times (apiserver_admission_webhook_fail_open_count)", int(h.FailedOpen)))
	}
	if h.Refused > 0 {
		out = append(out, fmt.Sprintf("the API server rejected %d requests because calling it failed", int(h.Refused)))
	}
	return strings.Join(out, "; ")
}

// namespaceScope says what the webhook's namespaceSelector lets through,
// for a webhook that reaches kube-system: "with no namespaceSelector or
// objectSelector excluding it", or "its namespaceSelector excludes a, b
// but not kube-system".
func namespaceScope(w kube.Webhook) string {
	sel := w.NamespaceSelector
	if sel == nil || len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		return "with no namespaceSelector or objectSelector excluding it"
	}
	if excluded := w.ExcludedNamespaces(); len(excluded) > 0 {
		return fmt.Sprintf("its namespaceSelector excludes %s but not kube-system", strings.Join(excluded, ", "))
	}
	return fmt.Sprintf("its namespaceSelector (%s) matches kube-system", metav1.FormatLabelSelector(sel))
}

// excludeKubeSystemPatch is a JSON patch that excludes kube-system from the
// webhook without widening it: with no namespaceSelector it adds one; with
// one it adds a matchExpressions entry (selector terms are ANDed), creating
// the list when the selector has none. It never replaces what is there.
func excludeKubeSystemPatch(w kube.Webhook) string {
	expr := map[string]any{"key": corev1.LabelMetadataName, "operator": "NotIn", "values": []string{"kube-system"}}
	var op map[string]any
	base := fmt.Sprintf("/webhooks/%d/namespaceSelector", w.Index)
	switch sel := w.NamespaceSelector; {
	case sel == nil:
		op = map[string]any{"op": "add", "path": base, "value": map[string]any{"matchExpressions": []any{expr}}}
	case len(sel.MatchExpressions) == 0:
		op = map[string]any{"op": "add", "path": base + "/matchExpressions", "value": []any{expr}}
	default:
		op = map[string]any{"op": "add", "path": base + "/matchExpressions/-", "value": expr}
	}
	b, _ := json.Marshal([]any{op})
	return string(b)
}

// reachesNamespace says whether a webhook's namespaceSelector may match
// namespace ns: false only when it provably cannot, judged on the
// namespace's labels when namespaces were read, else on the one label
// every namespace carries (kubernetes.io/metadata.name), and true (the
// benefit of the doubt) for a selector on labels that were not read.
func reachesNamespace(s *snapshot.Snapshot, sel *metav1.LabelSelector, ns string) bool {
	if sel == nil {
		return true
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil || selector.Empty() {
		return true
	}
	set := labels.Set{corev1.LabelMetadataName: ns}
	known := false
	if s.Err(snapshot.Namespaces) == nil {
		for _, n := range s.Namespaces() {
			if n.Name == ns {
				set, known = labels.Set(n.Labels), true
				if set[corev1.LabelMetadataName] == "" {
					set = labels.Merge(set, labels.Set{corev1.LabelMetadataName: ns})
				}
			}
		}
	}
	if !known {
		reqs, _ := selector.Requirements()
		for _, r := range reqs {
			if r.Key() != corev1.LabelMetadataName {
				return true
			}
		}
	}
	return selector.Matches(set)
}

// failedCall is the newest FailedCreate event whose refusal names the
// webhook ("failed calling webhook "NAME""), nil when none does.
func failedCall(s *snapshot.Snapshot, webhook string) *kube.Warning {
	for _, e := range kube.WarningEventsOf(s).Reason("FailedCreate") { // newest first
		if name, _, ok := kube.FailedWebhook(e.Message); ok && name == webhook {
			return e
		}
	}
	return nil
}
