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
