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
		// As given, and with --keep-going, which passes over an archive's
		// files that do not parse but must fail the same way otherwise.
		for _, keepGoing := range []bool{false, true} {
			res, err := offline.Load("-", offline.Options{Stdin: bytes.NewReader(data), KeepGoing: keepGoing})
			if err != nil {
				var ie *offline.InputError
				if !errors.As(err, &ie) {
					t.Fatalf("not an input error: %T %v", err, err)
				}
				if !strings.HasPrefix(err.Error(), "-") || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error is not one line naming the input: %q", err)
				}
				continue
			}
			if res.Snapshot == nil || res.Stats == nil {
				t.Fatal("no snapshot and no error")
			}
			if !keepGoing && len(res.Stats.Unreadable) > 0 {
				t.Fatalf("files passed over without --keep-going: %v", res.Stats.Unreadable)
			}
			for _, u := range res.Stats.Unreadable {
				if !strings.HasPrefix(u.File, "-:") || !strings.HasPrefix(u.Error, u.File) || strings.Contains(u.String(), "\n") {
					t.Fatalf("unreadable file not named in one line: %+v", u)
				}
			}
		}
	})
}
