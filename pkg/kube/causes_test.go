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
		if got.Class == EventSandbox {
			got.Subject = sandboxCorpusNames[got.Sandbox]
		}
		if string(got.Class) != c.Class || got.Subject != c.Subject || !slices.Equal(got.Holders, c.Holders) {
			t.Errorf("%s %s %q:\n got class %s subject %q holders %q\nwant class %s subject %q holders %q",
				c.Source, c.Reason, c.Message, got.Class, got.Subject, got.Holders, c.Class, c.Subject, c.Holders)
		}
	}
	t.Logf("%d messages in %d classes", len(corpus), len(classes))
}

// sandboxCorpusNames: the corpus names a sandbox failure's cause in the
// subject column, as workload-pods words it.
var sandboxCorpusNames = map[SandboxCause]string{
	SandboxIPExhausted:    "pod IPs exhausted",
	SandboxCNINotReady:    "CNI not ready",
	SandboxRuntimeTimeout: "runtime timeout",
	SandboxOther:          "runtime error",
}

// TestClassifySandbox: the phrases of both families of messages, the
// CNI's and the runtime's, land in one cause each.
func TestClassifySandbox(t *testing.T) {
	for msg, want := range map[string]SandboxCause{
		"add cmd: failed to assign an IP address to container":                                    SandboxIPExhausted,
		"failed to allocate for range 0: no IP addresses available in range set":                  SandboxIPExhausted,
		"plugin type=\"aws-cni\" failed (add): add cmd: Error received from AddNetwork gRPC call": SandboxCNINotReady,
		"network plugin is not ready: cni config uninitialized":                                   SandboxCNINotReady,
		"rpc error: code = DeadlineExceeded desc = context deadline exceeded":                     SandboxRuntimeTimeout,
		"error getting ClusterInformation: connection is unauthorized: Unauthorized":              SandboxOther,
	} {
		if got := ClassifySandbox(msg); got != want {
			t.Errorf("ClassifySandbox(%q) = %d, want %d", msg, got, want)
		}
	}
}
