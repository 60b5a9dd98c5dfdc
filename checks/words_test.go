package checks

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

// TestAPIServiceWhy pins how every check quotes the aggregator's verdict.
func TestAPIServiceWhy(t *testing.T) {
	with := func(c ...apiregistrationv1.APIServiceCondition) *apiregistrationv1.APIService {
		return &apiregistrationv1.APIService{Status: apiregistrationv1.APIServiceStatus{Conditions: c}}
	}
	for _, c := range []struct {
		name string
		a    *apiregistrationv1.APIService
		want string
	}{
		{"no condition", with(), "no Available condition"},
		{"reason only", with(apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Reason: "ServiceNotFound"}), "ServiceNotFound"},
		{"reason and message", with(apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Reason: "MissingEndpoints", Message: `endpoints for service/m in "kube-system" have no addresses`}),
			`MissingEndpoints: endpoints for service/m in "kube-system" have no addresses`},
		{"trailing period dropped", with(apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Reason: "FailedDiscoveryCheck", Message: "no response."}),
			"FailedDiscoveryCheck: no response"},
	} {
		if got := apiServiceWhy(c.a); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestNodeProblemWords: every node problem kube knows has its words and
// a fix, and the words name no taint kube does not know.
func TestNodeProblemWords(t *testing.T) {
	for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable, corev1.TaintNodeMemoryPressure,
		corev1.TaintNodeDiskPressure, corev1.TaintNodePIDPressure, corev1.TaintNodeNetworkUnavailable,
		"node.cloudprovider.kubernetes.io/uninitialized", corev1.TaintNodeOutOfService} {
		if _, ok := kube.ProblemTaint(key); !ok {
			t.Errorf("kube does not know %s", key)
		}
		if w, ok := nodeProblemWords[key]; !ok || w.Meaning == "" || len(w.Fix("a b", "a")) == 0 {
			t.Errorf("%s: no meaning or no fix", key)
		}
	}
	for key := range nodeProblemWords {
		if _, ok := kube.ProblemTaint(key); !ok {
			t.Errorf("words for %s, which kube does not know", key)
		}
	}
}

func TestExitCodeMeaning(t *testing.T) {
	for code, want := range map[int32]string{1: "application error", 137: "SIGKILL", 139: "SIGSEGV", 143: "SIGTERM", 130: "killed by signal 2", -1: "not an exit status of the application", -1073741819: "not an exit status of the application", 3: "application error"} {
		if got := exitCodeMeaning(code); len(got) < len(want) || got[:len(want)] != want {
			t.Errorf("exitCodeMeaning(%d) = %q, want prefix %q", code, got, want)
		}
	}
}

// TestTerminationWords: a SIGKILL that is not the OOM killer's says so.
func TestTerminationWords(t *testing.T) {
	for _, c := range []struct {
		t    kube.Termination
		want string
	}{
		{kube.Termination{ExitCode: 1, Reason: "Error"}, "exit code 1 (application error)"},
		{kube.Termination{ExitCode: 137, Reason: "OOMKilled"}, "exit code 137 (SIGKILL: killed, by the OOM killer or after ignoring SIGTERM), reason OOMKilled"},
		{kube.Termination{ExitCode: 137, Reason: "Error"}, "exit code 137 (SIGKILL, not an OOM kill: killed from outside, e.g. after failed liveness probes or ignoring SIGTERM)"},
		{kube.Termination{ExitCode: 0, Reason: "Completed"}, "exit code 0 (exited successfully, but the container is expected to keep running)"},
	} {
		if got := terminationWords(&c.t); got != c.want {
			t.Errorf("%+v: %q, want %q", c.t, got, c.want)
		}
	}
}

func TestFormatQuantity(t *testing.T) {
	for _, c := range []struct {
		r    corev1.ResourceName
		q    string
		want string
	}{
		{corev1.ResourceCPU, "1500m", "1.5 CPU"},
		{corev1.ResourceCPU, "250m", "0.25 CPU"},
		{corev1.ResourceMemory, "40Gi", "40Gi memory"},
		{corev1.ResourceMemory, "1536Mi", "1.5Gi memory"},
		{corev1.ResourceMemory, "300Mi", "300Mi memory"},
		{"nvidia.com/gpu", "8", "8 nvidia.com/gpu"},
	} {
		if got := formatQuantity(c.r, resource.MustParse(c.q)); got != c.want {
			t.Errorf("formatQuantity(%s, %s) = %q, want %q", c.r, c.q, got, c.want)
		}
	}
}

// TestExamplesEllipsis: sorted, three at most, ", ..." for the rest.
func TestExamplesEllipsis(t *testing.T) {
	for _, c := range []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{"b", "a"}, "a, b"},
		{[]string{"d", "c", "b", "a"}, "a, b, c, ..."},
	} {
		if got := examplesEllipsis(c.names); got != c.want {
			t.Errorf("%v: %q, want %q", c.names, got, c.want)
		}
	}
}

// TestFaultWords: each backend fault said once.
func TestFaultWords(t *testing.T) {
	for _, c := range []struct {
		f    kube.BackendFault
		want string
	}{
		{kube.BackendFault{Kind: kube.FaultNoService, Service: "ns/hook"}, "service ns/hook does not exist"},
		{kube.BackendFault{Kind: kube.FaultNoPort, Service: "ns/hook", Port: 443}, "service ns/hook has no port 443"},
		{kube.BackendFault{Kind: kube.FaultNoEndpoint, Service: "ns/hook"}, "service ns/hook has no ready endpoint"},
		{kube.BackendFault{Kind: kube.FaultCABundleNotPEM}, "its caBundle is not PEM"},
		{kube.BackendFault{Kind: kube.FaultCABundleInvalid, Err: "x509: malformed"}, "its caBundle does not parse: x509: malformed"},
	} {
		if got := faultWords(&c.f); got != c.want {
			t.Errorf("%+v: %q, want %q", c.f, got, c.want)
		}
	}
}

// TestNamespaceScope: what a webhook reaching kube-system lets through.
func TestNamespaceScope(t *testing.T) {
	notIn := metav1.LabelSelectorRequirement{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"b", "a"}}
	for _, c := range []struct {
		sel  *metav1.LabelSelector
		want string
	}{
		{nil, "with no namespaceSelector or objectSelector excluding it"},
		{&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{notIn}}, "its namespaceSelector excludes a, b but not kube-system"},
		{&metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}}, "its namespaceSelector (team=x) matches kube-system"},
	} {
		if got := namespaceScope(kube.Webhook{NamespaceSelector: c.sel}); got != c.want {
			t.Errorf("%v: %q, want %q", c.sel, got, c.want)
		}
	}
}

func TestClipLine(t *testing.T) {
	if got := clipLine("a  b\n c", 10); got != "a b c" {
		t.Errorf("clipLine = %q", got)
	}
	// A long message keeps its end, where wrapped errors put the cause.
	nfs := "MountVolume.SetUp failed for volume \"share\" : mount failed: exit status 32 Mounting command: mount Mounting arguments: -t nfs 10.0.0.9:/exports/share /var/lib/kubelet/pods/1/volumes/kubernetes.io~nfs/share Output: mount.nfs: Connection timed out"
	got := clipLine(nfs, 120)
	if !strings.HasPrefix(got, "MountVolume.SetUp failed") || !strings.HasSuffix(got, "mount.nfs: Connection timed out") || len([]rune(got)) > 121 {
		t.Errorf("clipLine = %q (%d runes)", got, len([]rune(got)))
	}
}

// TestWarningLine: reason, the series' count and span, how long ago, the
// message on one line.
func TestWarningLine(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	w := &kube.Warning{Reason: "BackOff", Message: "BackOff of\n web-1", Count: 41, First: now.Add(-time.Hour), Last: now.Add(-time.Minute), Kind: "Pod"}
	if got := warningLine(now, w); got != "BackOff (x41 over 59m, 60s ago): BackOff of web-1" {
		t.Errorf("pod: %q", got)
	}
	w.Kind, w.Name, w.Count = "Job", "nightly", 1
	if got := warningLine(now, w); got != "job/nightly BackOff (60s ago): BackOff of web-1" {
		t.Errorf("job: %q", got)
	}
}

// TestDriftTitles: every field kube compares has its title.
func TestDriftTitles(t *testing.T) {
	for _, f := range kube.DriftFields {
		if driftTitles[f.Key] == "" {
			t.Errorf("no title for %s", f.Key)
		}
	}
}

// TestSoonestRoomWords: lowering the request is offered only when the node
// has something left to give.
func TestSoonestRoomWords(t *testing.T) {
	room := func(free string) *kube.SoonestFix {
		return &kube.SoonestFix{Kind: kube.FixRoom, Node: "node-1", Shortage: kube.Shortage{Resource: corev1.ResourceCPU,
			Request: resource.MustParse("2"), Free: resource.MustParse(free), Allocatable: resource.MustParse("4")}}
	}
	for free, want := range map[string]string{
		"500m": "free 1.5 CPU on node-1, or lower the request to 0.5 CPU (room is its only obstacle)",
		"0":    "free 2 CPU on node-1 (room is its only obstacle)",
		"-1":   "free 3 CPU on node-1 (room is its only obstacle)",
	} {
		if got := soonestWords(room(free)); got != want {
			t.Errorf("free %s: %q, want %q", free, got, want)
		}
	}
}

// TestMissedRunsInTimeZone: a CronJob's schedule is read in its
// spec.timeZone: 03:00 in New York is 07:00 UTC, so at 03:06 UTC the day's
// run is not overdue; at 07:10 UTC it is.
func TestMissedRunsInTimeZone(t *testing.T) {
	tz := "America/New_York"
	cj := &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", TimeZone: &tz},
		Status: batchv1.CronJobStatus{LastScheduleTime: &metav1.Time{Time: time.Date(2026, 6, 1, 7, 0, 0, 0, time.UTC)}}}
	for now, want := range map[time.Time]int{
		time.Date(2026, 6, 2, 3, 6, 0, 0, time.UTC):  0,
		time.Date(2026, 6, 2, 7, 10, 0, 0, time.UTC): 1,
	} {
		if n, _, ok := missedRuns(cj, now); !ok || n != want {
			t.Errorf("at %s: %d missed (ok %v), want %d", now, n, ok, want)
		}
	}
}
