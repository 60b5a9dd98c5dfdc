package kube

import (
	"os"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestEventCorpus reads every Warning message of testdata/events/corpus.yaml
// (in the forms the kubelet, the controllers and the admission plugins write
// them) and checks its class, subject and holders (checks' TestEventDetail
// checks the detail said from them).
func TestEventCorpus(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/events/corpus.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var corpus []struct {
		Source, Reason, Message, Class, Subject, Detail string
		Holders                                         []string
	}
	if err := yaml.Unmarshal(raw, &corpus); err != nil {
		t.Fatal(err)
	}
	if len(corpus) < 40 {
		t.Fatalf("corpus has %d messages, want at least 40", len(corpus))
	}
	classes := map[string]int{}
	for _, c := range corpus {
		got := ClassifyEvent(c.Reason, c.Message)
		classes[c.Class]++
		if string(got.Class) != c.Class || got.Subject != c.Subject || !slices.Equal(got.Holders, c.Holders) {
			t.Errorf("%s %s %q:\n got class %s subject %q holders %q\nwant class %s subject %q holders %q",
				c.Source, c.Reason, c.Message, got.Class, got.Subject, got.Holders, c.Class, c.Subject, c.Holders)
		}
	}
	t.Logf("%d messages in %d classes", len(corpus), len(classes))
}
