package checks

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// DeprecatedAPIs reports the deprecated API versions clients still call,
// from the API server's own record: after the upgrade that removes them
// those clients (CI pipelines, charts, operators) fail.
var DeprecatedAPIs = &doctor.Check{
	Name:     "deprecated-apis",
	Severity: doctor.Warning,
	Origin:   "peer coverage map",
	Reads:    []snapshot.Resource{snapshot.APIServerMetrics},
	Run:      runDeprecatedAPIs,
	Doc: `Deprecated API versions clients still call, and the release that removes them

## Why it matters
Kubernetes removes deprecated API versions on a published schedule. A
client that still calls one — a chart applied by CI, an operator built
against old client libraries, a ` + "`kubectl apply`" + ` of an old manifest — works
today and fails with ` + "`the server could not find the requested resource`" + ` right
after the upgrade that removes it. Listing objects does not show it: an
object written through a deprecated version is stored and served in the
current one.

## How it is detected
From the API server's ` + "`/metrics`" + ` (read once per scan):
` + "`apiserver_requested_deprecated_apis`" + ` is 1 for every deprecated group, version,
resource (and subresource) that was requested since this API server
started, labelled with ` + "`removed_release`" + `. A version removed in the next
minor release after the server's (or earlier) is a warning: the next
upgrade breaks its clients; one removed later is info; one without a
removal release is not reported. The count is per API server: in an HA
control plane, other servers may have seen other requests.

## How to fix
Find the clients (the audit log records the user agent of each request to
a deprecated API; ` + "`kubectl get --raw /metrics`" + ` shows the metric) and move them
to the current version: update charts and manifests (` + "`kubectl convert`" + `), and
upgrade operators and client libraries.

## References
- https://kubernetes.io/docs/reference/using-api/deprecation-guide/
- https://kubernetes.io/blog/2020/09/03/warnings/#deprecation-warnings
- https://kubernetes.io/docs/reference/instrumentation/metrics/`,
}

func runDeprecatedAPIs(p *doctor.Pass) error {
	mf := p.Snapshot.Metrics()["apiserver_requested_deprecated_apis"]
	if mf == nil {
		return nil
	}
	curMajor, curMinor, haveVersion := minorOf(p.Snapshot.ServerVersion)
	type api struct {
		name, ref, removed string
		sev                doctor.Severity
	}
	var apis []api
	for _, m := range mf.GetMetric() {
		if kube.MetricValue(m) == 0 {
			continue
		}
		l := kube.MetricLabels(m)
		removed := l["removed_release"]
		if removed == "" {
			continue
		}
		name := l["resource"]
		if l["subresource"] != "" {
			name += "/" + l["subresource"]
		}
		gv := l["version"]
		if l["group"] != "" {
			gv = l["group"] + "/" + l["version"]
		}
		ref := name + "." + l["version"]
		if l["group"] != "" {
			ref += "." + l["group"]
		}
		name = gv + " " + name
		sev := doctor.Info
		if maj, min, ok := minorOf(removed); ok && (!haveVersion || maj < curMajor || (maj == curMajor && min <= curMinor+1)) {
			sev = doctor.Warning
		}
		apis = append(apis, api{name, ref, removed, sev})
	}
	sort.Slice(apis, func(i, j int) bool { return apis[i].name < apis[j].name })
	for _, a := range apis {
		when := "in " + a.removed
		if a.sev == doctor.Warning {
			when = "in " + a.removed + ", the next upgrade or sooner"
		}
		gv, res, _ := strings.Cut(a.name, " ")
		p.Report(doctor.Finding{Severity: a.sev, Object: doctor.ObjectRef{Kind: "Resource", Name: a.ref},
			Message: fmt.Sprintf("clients still call the deprecated API %s (%s) since the API server started; it is removed %s, and those clients then fail", gv, res, when),
			Remediation: []doctor.Remediation{
				{Text: "find the clients by user agent in the audit log (or the API server's warnings), and move them to the current version of the resource", Command: "kubectl get --raw /metrics | grep apiserver_requested_deprecated_apis"},
				{Text: "convert manifests to the current version", Command: "kubectl convert -f MANIFEST --output-version NEW_GROUP/VERSION"}}})
	}
	return nil
}

// minorOf reads "1.32" or "v1.37.2" as (1, 32).
func minorOf(v string) (major, minor int, ok bool) {
	v = strings.TrimPrefix(v, "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	maj, err1 := strconv.Atoi(parts[0])
	min, err2 := strconv.Atoi(strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return maj, min, true
}
