package main_test

import (
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// causesWant holds what testdata/scenarios/everyday-causes must produce for
// Services and CronJobs (its pods' causes are in podsWant), in report order.
var causesWant = map[string][]wantFinding{
	// storefront's port targets 8081 where its pods declare 8080;
	// resolver's UDP port targets "dns", declared for TCP only.
	"service-target-port": {
		{doctor.Warning, "ec-web/service/resolver", `^service resolver: port 53 \(dns-udp\) targets the container port named "dns", which none of its 1 ready pod \(bare pod resolver-0\) declares \(they declare 5353/TCP \(dns\)\): the Service has no endpoint there and connections to it are refused$`, 1},
		{doctor.Warning, "ec-web/service/storefront", `^service storefront: port 80 \(http\) targets container port 8081, which none of its 2 ready pods \(bare pods storefront-1, storefront-2\) declares \(they declare 8080/TCP \(http\)\): connections reach a port the containers do not declare`, 1},
	},
	// search selects nothing and Ingress ec-site routes to it: the Ingress's
	// finding (its only backend is broken) folds into it, critical.
	// metrics-dormant selects nothing and nothing refers to it: info.
	"service-endpoints": {
		{doctor.Critical, "ec-web/service/search", `^service search selects app=search-v2, but no pod in namespace ec-web matches: it has no endpoint; yet ingress ec-site routes to it$`, 1},
		{doctor.Info, "ec-web/service/metrics-dormant", `^service metrics-dormant selects app\.kubernetes\.io/name=kube-state-metrics-shard, which matches no pod in namespace ec-web, and nothing refers to it .*: a dormant Service$`, 1},
	},
	// export's run due 1h ago (created first) was rejected by the kubelet
	// and failed BackoffLimitExceeded; the run due 2h ago (created later)
	// ran past its deadline. Its last success is only in its status.
	"job-failed": {
		{doctor.Warning, "ec-batch/cronjob/export", `^the latest run of cronjob/export, job export-29410260 \(scheduled [67]\dm ago\), failed \d+(?:m\d+s|[sm]) ago \(BackoffLimitExceeded: Job has reached the specified backoff limit\); the last 2 finished runs all failed, newest first: failed \(BackoffLimitExceeded\), failed \(DeadlineExceeded\); last success 26h ago \(the CronJob's lastSuccessfulTime; that Job is no longer kept\); its pod export-29410260-[a-z0-9]+ failed before any container ran: OutOfmemory: Pod was rejected`, 2},
	},
}

// TestEverydayCausesSilences: the look-alikes of everyday-causes stay
// quiet in every check, the dormant Service is only info, and the Ingress
// whose only problem is search's missing endpoints is folded into the
// Service's finding, not reported twice.
func TestEverydayCausesSilences(t *testing.T) {
	needCluster(t)
	rep := decodeReport(t, runDoctor(t, scenarios.Kubeconfig, "-o", "json", "--fail-on", "never").stdout)
	quiet := map[string]string{
		"ec-apps/pod/veteran":            "12 old restarts, ready for 3h",
		"ec-files/pod/files-holder":      "runs, holds the volume files-new waits for",
		"ec-batch/cronjob/nightly":       "suspended",
		"ec-apps/service/billing-api":    "ExternalName",
		"ec-web/service/mesh":            "its targetPort name is declared by a sidecar init container",
		"ec-web/service/legacy":          "a numeric targetPort on pods that declare no port",
		"ec-web/ingress/ec-site":         "folded into service search's finding",
		"ec-batch/job/export-29410260":   "a run of cronjob/export, reported there",
		"ec-batch/job/export-29410200":   "a run of cronjob/export, reported there",
		"ec-web/pod/storefront-1":        "ready; the Service's targetPort is the cause",
		"node/ec-batch-1":                "healthy; its kubelet rejected one pod",
		"ec-web/service/metrics-dormant": "",
	}
	var search *doctor.Finding
	for i, f := range rep.Findings {
		obj := f.Object.String()
		if why, ok := quiet[obj]; ok {
			if obj == "ec-web/service/metrics-dormant" {
				if f.Severity != doctor.Info {
					t.Errorf("dormant Service reported %s: %s", f.Severity, f.Message)
				}
				continue
			}
			t.Errorf("%s must stay quiet (%s): %s %s: %s", obj, why, f.Check, f.Severity, f.Message)
		}
		if obj == "ec-web/service/search" {
			search = &rep.Findings[i]
		}
	}
	for obj, cmd := range map[string]string{
		"ec-web/service/storefront": `kubectl patch service storefront -n ec-web --type=json -p '[{"op":"replace","path":"/spec/ports/0/targetPort","value":8080}]'`,
		"ec-batch/cronjob/export":   "kubectl describe job export-29410260 -n ec-batch",
	} {
		found := false
		for _, f := range rep.Findings {
			if f.Object.String() == obj && hasCommand(f, cmd) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no finding with the command %q", obj, cmd)
		}
	}
	if search == nil {
		t.Fatal("no finding on ec-web/service/search")
	}
	if len(search.Explains) != 1 || !strings.HasPrefix(search.Explains[0], "ingress-backends ec-web/ingress/ec-site: ingress ec-site: its only backend is broken") {
		t.Errorf("search's finding explains %q, want the Ingress's finding", search.Explains)
	}
}
