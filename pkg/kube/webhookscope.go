package kube

import (
	"regexp"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// namespaceNameLabel is the label the API server sets on every namespace to
// its name, the one key a namespaceSelector can exclude a namespace by.
const namespaceNameLabel = "kubernetes.io/metadata.name"

// ExcludedNamespaces are the namespaces the webhook's namespaceSelector
// excludes by name (NotIn on the namespace name label), sorted.
func (w Webhook) ExcludedNamespaces() []string {
	if w.NamespaceSelector == nil {
		return nil
	}
	var excluded []string
	for _, e := range w.NamespaceSelector.MatchExpressions {
		if e.Key == namespaceNameLabel && e.Operator == metav1.LabelSelectorOpNotIn {
			excluded = append(excluded, e.Values...)
		}
	}
	sort.Strings(excluded)
	return excluded
}

// webhookInError finds the webhook a failed request names.
var webhookInError = regexp.MustCompile(`failed calling webhook "([^"]+)"`)

// FailedWebhook reads the webhook an API error names ("failed calling
// webhook "NAME": ..."), and what the API server said after the name;
// false when the message names none.
func FailedWebhook(message string) (name, detail string, ok bool) {
	m := webhookInError.FindStringSubmatch(message)
	if m == nil {
		return "", "", false
	}
	_, detail, _ = strings.Cut(message, m[0])
	return m[1], strings.TrimLeft(detail, ": "), true
}

// WebhookHarm is the evidence that a webhook's failures hurt: controllers'
// FailedCreate events that name it, and the API server's counters of
// requests that failed open or were rejected because calling it failed.
type WebhookHarm struct {
	FailedCreates       int     // FailedCreate events (with their counts) naming the webhook
	FailedOpen, Refused float64 // apiserver_admission_webhook_fail_open_count, rejection_count{error_type=calling_webhook_error}
}

// Any says whether there is evidence of harm.
func (h WebhookHarm) Any() bool { return h.FailedCreates+int(h.FailedOpen)+int(h.Refused) > 0 }

type webhookHarmKey struct{}

// WebhookHarms indexes WebhookHarm by webhook name. FailedCreate events come
// from the Warning events (declare WarningEventReads); the metrics are used when the scan
// read the API server's /metrics, and are simply absent otherwise.
func WebhookHarms(s *snapshot.Snapshot) map[string]WebhookHarm {
	return snapshot.Memo(s, webhookHarmKey{}, func() map[string]WebhookHarm {
		out := map[string]WebhookHarm{}
		for _, e := range WarningEventsOf(s).Reason("FailedCreate") {
			if name, _, ok := FailedWebhook(e.Message); ok {
				h := out[name]
				h.FailedCreates += e.Count
				out[name] = h
			}
		}
		failedOpen, refused := WebhookFailures(s.Metrics())
		for name, v := range failedOpen {
			h := out[name]
			h.FailedOpen += v
			out[name] = h
		}
		for name, v := range refused {
			h := out[name]
			h.Refused += v
			out[name] = h
		}
		return out
	})
}

// WebhookFailures reads the API server's counters of webhook calls that
// failed, by webhook name, since it started: requests let through because
// the webhook failed open, and requests rejected because calling it failed.
func WebhookFailures(mf map[string]*dto.MetricFamily) (failedOpen, refused map[string]float64) {
	failedOpen = SumBy(mf["apiserver_admission_webhook_fail_open_count"], "name", nil)
	refused = SumBy(mf["apiserver_admission_webhook_rejection_count"], "name", func(l map[string]string) bool {
		return l["error_type"] == "calling_webhook_error"
	})
	return failedOpen, refused
}
