package checks

import (
	"fmt"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// APIServerMetrics reads the API server's own counters: what it has suffered
// since it started, which no object in the cluster records.
var APIServerMetrics = &doctor.Check{
	Name:     "apiserver-metrics",
	Severity: doctor.Warning,
	Origin:   "all three stories",
	Reads:    []snapshot.Resource{snapshot.APIServerMetrics, snapshot.MutatingWebhooks, snapshot.ValidatingWebhooks, snapshot.PriorityLevels},
	Run:      runAPIServerMetrics,
	Doc: `The API server's own metrics: slow or failing webhooks, APF rejections, object explosions, expensive LISTs

## Why it matters
Some of the worst incidents leave no trace in any object: a webhook that
fails open skips its policy without an event; API Priority and Fairness
rejects requests with 429s that only the client sees; tens of thousands of
Failed pods or finished Jobs bloat etcd (Pinniped #1507, "The Snowball effect"); a client whose
LISTs filter after reading everything loads etcd (KubeCon NA 2020). The API server
counts all of it in its Prometheus metrics.

## How it is detected
One GET of ` + "`/metrics`" + ` (skipped, with the reason, when RBAC does not allow it),
parsed with the Prometheus text-format library. Counters are cumulative since
the API server (the one that answered) started.
- Webhooks: ` + "`apiserver_admission_webhook_fail_open_count`" + ` (policy skipped),
  ` + "`apiserver_admission_webhook_rejection_count`" + ` with ` + "`error_type=calling_webhook_error`" + `
  (requests rejected because the call failed), and the mean of
  ` + "`apiserver_admission_webhook_admission_duration_seconds`" + ` above one second — one
  finding per webhook configuration, linking to the admission-webhooks check;
  when that check reports the same configuration (its backend is down now),
  the counters are its history and fold into its finding: one finding.
- Aggregated APIs: ` + "`aggregator_unavailable_apiservice_total`" + `, APIServices that became
  unavailable three times or more (flapping).
- APF: ` + "`apiserver_flowcontrol_rejected_requests_total`" + ` per priority level, with the
  reasons and flow schemas.
- Object counts (` + "`apiserver_resource_objects`" + `, or ` + "`apiserver_storage_objects`" + ` on older
  servers): pods above 20,000, Jobs above 3,000, ReplicaSets above 10,000,
  events above 50,000, anything else above 50,000.
- LIST cost: ` + "`apiserver_storage_list_fetched_objects_total`" + ` against
  ` + "`..._returned_objects_total`" + `: more than 50 objects read for each returned (and
  over 100,000 read) means clients filter after reading everything.

## How to fix
Fix or scope the webhook (see admission-webhooks), find the heavy clients in
the audit log (` + "`kubectl doctor audit`" + `), give them a low-priority FlowSchema,
delete the debris that inflates object counts, and fix the APIService backend.

## References
- https://blenderfox.com/2020/08/07/the-snowball-effect-in-kubernetes/
- https://github.com/vmware-tanzu/pinniped/issues/1507
- https://kubernetes.io/docs/reference/instrumentation/metrics/
- https://kubernetes.io/docs/concepts/cluster-administration/flow-control/
- https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/`,
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func num(f float64) string { return doctor.Thousands(int(f)) }

func runAPIServerMetrics(p *doctor.Pass) error {
	mf := p.Snapshot.Metrics()
	reportWebhookMetrics(p, mf)
	reportAPIServiceFlaps(p, mf)
	reportAPFRejections(p, mf)
	reportObjectCounts(p, mf)
	reportListCost(p, mf)
	return nil
}

func webhookConfigs(s *snapshot.Snapshot) map[string]doctor.ObjectRef {
	out := map[string]doctor.ObjectRef{}
	for _, w := range kube.WebhookEntries(s) {
		out[w.Name] = w.Config
	}
	return out
}

func reportWebhookMetrics(p *doctor.Pass, mf map[string]*dto.MetricFamily) {
	failOpen, callErrors := kube.WebhookFailures(mf)
	count, sum := map[string]float64{}, map[string]float64{}
	if fam := mf["apiserver_admission_webhook_admission_duration_seconds"]; fam != nil {
		for _, m := range fam.GetMetric() {
			if h := m.GetHistogram(); h != nil {
				n := kube.MetricLabels(m)["name"]
				count[n] += float64(h.GetSampleCount())
				sum[n] += h.GetSampleSum()
			}
		}
	}
	configs := webhookConfigs(p.Snapshot)
	names := map[string]bool{}
	for _, m := range []map[string]float64{failOpen, callErrors, count} {
		for n := range m {
			names[n] = true
		}
	}
	for _, name := range sortedKeys(names) {
		var problems []string
		if failOpen[name] > 0 {
			problems = append(problems, fmt.Sprintf("failed open %s times: its policy was skipped for those requests", num(failOpen[name])))
		}
		if callErrors[name] > 0 {
			problems = append(problems, fmt.Sprintf("%s requests were rejected because calling it failed", num(callErrors[name])))
		}
		if c := count[name]; c >= 10 && sum[name]/c > 1 {
			problems = append(problems, fmt.Sprintf("took %.1fs on average over %s calls, which every matching request waits for", sum[name]/c, num(c)))
		}
		if len(problems) == 0 {
			continue
		}
		obj, known := configs[name]
		if !known {
			obj = doctor.ObjectRef{Kind: "Webhook", Name: name}
		}
		rem := []doctor.Remediation{{Text: "see the webhook's backend health and scope", Command: "kubectl doctor --check admission-webhooks"}}
		if known {
			rem = append(rem, doctor.Remediation{Text: "read its configuration (failurePolicy, timeoutSeconds, selectors)",
				Command: fmt.Sprintf("kubectl get %s %s -o yaml", strings.ToLower(obj.Kind), obj.Name)})
		}
		// When admission-webhooks reports the same configuration (its
		// backend is down now), these counters are its history: one
		// finding, theirs.
		p.Report(doctor.Finding{Object: obj, Message: fmt.Sprintf("webhook %s, since the API server started: %s", name, strings.Join(problems, "; ")), Remediation: rem,
			Via: []doctor.ObjectRef{obj}, ViaChecks: []string{"admission-webhooks"}})
	}
}

func reportAPIServiceFlaps(p *doctor.Pass, mf map[string]*dto.MetricFamily) {
	flaps := kube.SumBy(mf["aggregator_unavailable_apiservice_total"], "name", nil)
	now := kube.SumBy(mf["aggregator_unavailable_apiservice"], "name", nil)
	for _, name := range sortedKeys(flaps) {
		if flaps[name] < 3 {
			continue
		}
		state := "available now"
		if now[name] > 0 {
			state = "unavailable now"
		}
		p.Report(doctor.Finding{
			Object:  doctor.ObjectRef{APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService", Name: name},
			Message: fmt.Sprintf("apiservice %s became unavailable %s times since the API server started (%s): every flap breaks discovery for all clients", name, num(flaps[name]), state),
			Remediation: []doctor.Remediation{{Text: "read the aggregator's verdict and the backend's restarts", Command: "kubectl describe apiservice " + name},
				{Text: "see whether it is unavailable now", Command: "kubectl doctor --check apiservice-unavailable"}},
		})
	}
}

func reportAPFRejections(p *doctor.Pass, mf map[string]*dto.MetricFamily) {
	fam := mf["apiserver_flowcontrol_rejected_requests_total"]
	if fam == nil {
		return
	}
	type level struct {
		total   float64
		reasons map[string]float64
		schemas map[string]float64
	}
	levels := map[string]*level{}
	for _, m := range fam.GetMetric() {
		l, v := kube.MetricLabels(m), kube.MetricValue(m)
		if v == 0 {
			continue
		}
		lv := levels[l["priority_level"]]
		if lv == nil {
			lv = &level{reasons: map[string]float64{}, schemas: map[string]float64{}}
			levels[l["priority_level"]] = lv
		}
		lv.total += v
		lv.reasons[l["reason"]] += v
		lv.schemas[l["flow_schema"]] += v
	}
	for _, name := range sortedKeys(levels) {
		lv := levels[name]
		var reasons, schemas []string
		for _, r := range sortedKeys(lv.reasons) {
			reasons = append(reasons, fmt.Sprintf("%s ×%s", r, num(lv.reasons[r])))
		}
		schemas = append(schemas, sortedKeys(lv.schemas)...)
		p.Report(doctor.Finding{
			Object: doctor.ObjectRef{APIVersion: "flowcontrol.apiserver.k8s.io/v1", Kind: "PriorityLevelConfiguration", Name: name},
			Message: fmt.Sprintf("API Priority and Fairness rejected %s requests at priority level %s since the API server started (%s), from flow schemas %s: those clients got 429 Too Many Requests",
				num(lv.total), name, strings.Join(reasons, ", "), strings.Join(schemas, ", ")),
			Remediation: []doctor.Remediation{
				{Text: "find which clients send the most requests at that level", Command: "kubectl get --raw /debug/api_priority_and_fairness/dump_priority_levels"},
				{Text: "rank the heaviest clients from the audit log", Command: "kubectl doctor audit /var/log/kubernetes/audit/audit.log"},
			},
		})
	}
}

// objectLimits are the counts above which a resource has exploded.
var objectLimits = map[string]float64{"pods": 20000, "jobs.batch": 3000, "replicasets.apps": 10000, "events": 50000, "events.events.k8s.io": 50000}

const defaultObjectLimit = 50000

func objectCounts(mf map[string]*dto.MetricFamily) map[string]float64 {
	if fam := mf["apiserver_resource_objects"]; fam != nil {
		out := map[string]float64{}
		for _, m := range fam.GetMetric() {
			l := kube.MetricLabels(m)
			res := l["resource"]
			if l["group"] != "" {
				res += "." + l["group"]
			}
			out[res] += kube.MetricValue(m)
		}
		return out
	}
	return kube.SumBy(mf["apiserver_storage_objects"], "resource", nil)
}

func reportObjectCounts(p *doctor.Pass, mf map[string]*dto.MetricFamily) {
	counts := objectCounts(mf)
	for _, res := range sortedKeys(counts) {
		limit, ok := objectLimits[res]
		if !ok {
			limit = defaultObjectLimit
		}
		if counts[res] <= limit {
			continue
		}
		rem := []doctor.Remediation{{Text: "find which namespace holds them", Command: fmt.Sprintf("kubectl get %s -A --no-headers | awk '{print $1}' | sort | uniq -c | sort -rn | head", res)}}
		switch res {
		case "pods":
			rem = append(rem, doctor.Remediation{Text: "look for pod storms and Failed pods nobody collects", Command: "kubectl doctor --check pod-storm"})
		case "jobs.batch":
			rem = append(rem, doctor.Remediation{Text: "look for CronJob backlogs and Jobs without ttlSecondsAfterFinished", Command: "kubectl doctor --check job-backlog"})
		}
		p.Report(doctor.Finding{
			Object:      doctor.ObjectRef{Kind: "Resource", Name: res},
			Message:     fmt.Sprintf("%s %s objects are stored (more than %s): every LIST and every informer of them carries them all", num(counts[res]), res, num(limit)),
			Count:       int(counts[res]),
			Remediation: rem,
		})
	}
}

func reportListCost(p *doctor.Pass, mf map[string]*dto.MetricFamily) {
	fetched := kube.SumBy(mf["apiserver_storage_list_fetched_objects_total"], "resource", nil)
	returned := kube.SumBy(mf["apiserver_storage_list_returned_objects_total"], "resource", nil)
	for _, res := range sortedKeys(fetched) {
		f, r := fetched[res], returned[res]
		if f < 100000 || f < 50*max(r, 1) {
			continue
		}
		p.Report(doctor.Finding{
			Object: doctor.ObjectRef{Kind: "Resource", Name: res},
			Message: fmt.Sprintf("LISTs of %s read %s objects from storage to return %s (%.0f read for each returned) since the API server started: clients filter by label or field after reading everything",
				res, num(f), num(r), f/max(r, 1)),
			Remediation: []doctor.Remediation{{Text: "find the clients from the audit log and move them to informers or resourceVersion=0",
				Command: "kubectl doctor audit /var/log/kubernetes/audit/audit.log"}},
		})
	}
}
