package serve

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

func report(findings ...doctor.Finding) *doctor.Report {
	r := &doctor.Report{APIVersion: doctor.APIVersion, Kind: "Report", Findings: findings,
		Checks: []doctor.CheckResult{{Name: "pod-storm", Status: doctor.StatusFailed}, {Name: "node-taints", Status: doctor.StatusSkipped}}}
	r.Finalize()
	return r
}

func get(t *testing.T, h http.Handler, path string) (int, string, http.Header) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b), rec.Header()
}

func TestServeKeepsTheLastReportAndMarksItStale(t *testing.T) {
	s := New([]string{"prod"}, false)
	h := s.Handler()
	if code, _, _ := get(t, h, "/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before a scan: %d", code)
	}
	if code, _, _ := get(t, h, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d", code)
	}
	storm := doctor.Finding{Check: "pod-storm", Severity: doctor.Critical, Object: doctor.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}, Count: 4812}
	twin := storm // same labels: summed into one series
	twin.Count = 8
	s.Record(Scan{Cluster: "prod", Report: report(storm, twin), Started: time.Now(), Duration: 2 * time.Second, Requests: 30, Bytes: 1 << 20})
	if code, _, _ := get(t, h, "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after a scan: %d", code)
	}
	want := `
# HELP kubectl_doctor_finding One series per finding of the last report: its value is the number of objects the finding stands for (members are counted, never labelled).
# TYPE kubectl_doctor_finding gauge
kubectl_doctor_finding{cause="",check="pod-storm",cluster="prod",kind="Deployment",name="web",namespace="shop",severity="critical"} 4820
`
	if err := testutil.GatherAndCompare(s.Registry(), strings.NewReader(want), "kubectl_doctor_finding"); err != nil {
		t.Error(err)
	}
	_, body, hdr := get(t, h, "/report")
	if !strings.Contains(body, `"kind": "Report"`) || !strings.Contains(body, `"name": "web"`) || hdr.Get("X-Kubectl-Doctor-Stale") != "" {
		t.Errorf("/report: %s %v", body, hdr)
	}
	// /report is read-only.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/report", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /report: %d, want 405", rec.Code)
	}

	// A failed scan keeps the findings and says they are stale.
	s.Record(Scan{Cluster: "prod", Err: errors.New("cannot reach the API server"), Started: time.Now(), Duration: time.Second, Requests: 1, Errors: 1})
	stale := `
# HELP kubectl_doctor_report_stale 1 when the last scan failed and the findings served are those of an earlier scan.
# TYPE kubectl_doctor_report_stale gauge
kubectl_doctor_report_stale{cluster="prod"} 1
# HELP kubectl_doctor_last_scan_complete 1 when the last scan attempt produced a complete report, 0 when it failed or some check could not run.
# TYPE kubectl_doctor_last_scan_complete gauge
kubectl_doctor_last_scan_complete{cluster="prod"} 0
# HELP kubectl_doctor_scans_total Scans by result: complete, incomplete (a check could not run) or failed (no report; the previous one is kept).
# TYPE kubectl_doctor_scans_total counter
kubectl_doctor_scans_total{cluster="prod",result="complete"} 1
kubectl_doctor_scans_total{cluster="prod",result="failed"} 1
# HELP kubectl_doctor_apiserver_request_errors_total Requests of all scans answered with a status of 400 or more (but 404: the LIST of an add-on kind the cluster does not serve), or not answered.
# TYPE kubectl_doctor_apiserver_request_errors_total counter
kubectl_doctor_apiserver_request_errors_total{cluster="prod"} 1
`
	if err := testutil.GatherAndCompare(s.Registry(), strings.NewReader(stale), "kubectl_doctor_report_stale", "kubectl_doctor_last_scan_complete", "kubectl_doctor_scans_total", "kubectl_doctor_apiserver_request_errors_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(s.Registry(), "kubectl_doctor_finding"); n != 1 {
		t.Errorf("%d finding series after a failed scan, want the 1 kept", n)
	}
	if _, _, hdr := get(t, h, "/report"); hdr.Get("X-Kubectl-Doctor-Stale") != "true" {
		t.Error("stale report not marked")
	}
	_, metrics, _ := get(t, h, "/metrics")
	for _, m := range []string{`kubectl_doctor_check_status{check="node-taints",cluster="prod",status="skipped"} 1`, "go_goroutines", "kubectl_doctor_scan_duration_seconds_bucket"} {
		if !strings.Contains(metrics, m) {
			t.Errorf("/metrics lacks %s", m)
		}
	}

	// A fixed problem leaves no series behind.
	s.Record(Scan{Cluster: "prod", Report: report(), Started: time.Now(), Duration: time.Second})
	if n := testutil.CollectAndCount(s.Registry(), "kubectl_doctor_finding"); n != 0 {
		t.Errorf("%d finding series after the problem went away", n)
	}
}

func TestServeFleetReport(t *testing.T) {
	s := New([]string{"a", "b"}, true)
	s.Record(Scan{Cluster: "a", Report: report(), Started: time.Now()})
	if s.Ready() {
		t.Error("ready before every cluster's first scan")
	}
	s.Record(Scan{Cluster: "b", Err: errors.New("down"), Started: time.Now()})
	if !s.Ready() {
		t.Error("not ready after every first scan (a failed one counts: its alert needs scraping)")
	}
	_, body, _ := get(t, s.Handler(), "/report")
	if !strings.Contains(body, `"kind": "FleetReport"`) || !strings.Contains(body, `"error": "down"`) {
		t.Errorf("/report: %s", body)
	}
}
