package checks

import (
	"os"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

// TestEventDetail says, for every message of testdata/events/corpus.yaml
// with an expected detail, the cause in words from the facts kube read.
func TestEventDetail(t *testing.T) {
	raw, err := os.ReadFile("../testdata/events/corpus.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var corpus []struct {
		Reason, Message, Detail string
	}
	if err := yaml.Unmarshal(raw, &corpus); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range corpus {
		if c.Detail == "" {
			continue
		}
		n++
		if got := eventDetail(kube.ClassifyEvent(c.Reason, c.Message)); !regexp.MustCompile(c.Detail).MatchString(got) {
			t.Errorf("%s %q: detail %q does not match %q", c.Reason, c.Message, got, c.Detail)
		}
	}
	if n < 10 {
		t.Errorf("only %d messages with a detail", n)
	}
}

func TestDeclares(t *testing.T) {
	q := resource.MustParse
	spec := &corev1.PodSpec{Containers: []corev1.Container{
		{Name: "app", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"memory": q("512Mi")}}},
		{Name: "side"},
	}}
	if got := declares(spec, "memory"); got != "memory: app requests 512Mi; side declares none" {
		t.Errorf("got %q", got)
	}
	if got := declares(spec, "ephemeral-storage"); !strings.HasPrefix(got, "no container requests or limits ephemeral-storage") {
		t.Errorf("got %q", got)
	}
	if got := declares(spec, "pids"); !strings.Contains(got, "cannot be requested") {
		t.Errorf("got %q", got)
	}
}

// TestLimitRangeFit: the bounds per Container a pod breaks become one
// kubectl set resources with the real values; ratios and bounds per Pod
// have no single value and give none.
func TestLimitRangeFit(t *testing.T) {
	for _, tc := range []struct {
		msg, want string
	}{
		{`pods "x" is forbidden: maximum cpu usage per Container is 1, but limit is 2`, "kubectl set resources deployment/api -n shop --limits=cpu=1"},
		{`pods "x" is forbidden: maximum cpu usage per Container is 1.  No limit is specified`, "kubectl set resources deployment/api -n shop --limits=cpu=1"},
		{`pods "x" is forbidden: minimum memory usage per Container is 64Mi.  No request is specified`, "kubectl set resources deployment/api -n shop --requests=memory=64Mi"},
		{`pods "x" is forbidden: [maximum memory usage per Container is 1Gi, but limit is 2Gi, minimum cpu usage per Container is 100m, but request is 50m]`,
			"kubectl set resources deployment/api -n shop --limits=memory=1Gi --requests=cpu=100m"},
		{`pods "x" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000`, ""},
		{`pods "x" is forbidden: maximum cpu usage per Pod is 2, but limit is 3`, ""},
	} {
		ec := kube.ClassifyAdmission(tc.msg)
		if ec.Class != kube.EventLimitRange {
			t.Errorf("%q: class %s", tc.msg, ec.Class)
			continue
		}
		got := ""
		if r := limitRangeFit("deployment/api", "shop", ec.Limits); r != nil {
			got = r.Command
		}
		if got != tc.want {
			t.Errorf("%q: %q, want %q", tc.msg, got, tc.want)
		}
	}
}
