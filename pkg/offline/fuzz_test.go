package offline_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/offline"
)

// FuzzLoad feeds arbitrary bytes to the stream reader (YAML, JSON,
// cluster-info dump streams, kubectl-doctor dumps, gzip, tar archives):
// it must never panic, and must either build a snapshot or fail with one
// line naming the input. Seeds: testdata/fuzz/FuzzLoad.
func FuzzLoad(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: d}\n"))
	f.Add([]byte(podList("d", "a") + nodeList))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := offline.Load("-", offline.Options{Stdin: bytes.NewReader(data)})
		if err != nil {
			var ie *offline.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("not an input error: %T %v", err, err)
			}
			if !strings.HasPrefix(err.Error(), "-") {
				t.Fatalf("error does not name the input: %q", err)
			}
			return
		}
		if res.Snapshot == nil || res.Stats == nil {
			t.Fatal("no snapshot and no error")
		}
	})
}
