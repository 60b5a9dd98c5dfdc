package offline_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/offline"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

const fixtureVersion = "v1.37.2"

// writeDump writes s as `kubectl doctor dump` would: every read of every
// check, in plan order, reading from a minute before now until now (the
// clock a scan of the dump must run at).
func writeDump(t *testing.T, s *snapshot.Snapshot, now time.Time) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := offline.NewWriter(&buf, offline.Header{Server: "https://cp.example:6443", ServerVersion: s.ServerVersion,
		CapturedAt: now.Add(-time.Minute), DoctorVersion: "v0.0.0-test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range snapshot.Plan(doctor.Reads(checks.All())) {
		if _, err := w.WriteRead(r, s); err != nil {
			t.Fatalf("writing %s: %v", r, err)
		}
	}
	w.Finished = now
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func loadBytes(t *testing.T, name string, data []byte) (*offline.Result, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return offline.Load(p, offline.Options{})
}

// TestRoundTrip: every check's fixtures, written as a dump and read back,
// give exactly the findings and check statuses of the snapshot they were
// written from, at the capture time the header carries.
func TestRoundTrip(t *testing.T) {
	all := checks.All()
	for _, c := range all {
		t.Run(c.Name, func(t *testing.T) {
			set, err := fixture.Load(filepath.Join("..", "..", "testdata", "checks", c.Name))
			if err != nil {
				t.Fatal(err)
			}
			live, err := set.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			live.ServerVersion = fixtureVersion
			want := doctor.Run(context.Background(), live, all, fixture.Now())
			if want.Summary.Critical+want.Summary.Warning+want.Summary.Info == 0 {
				t.Fatal("fixtures produce no finding: the round trip would prove nothing")
			}
			data := writeDump(t, live, fixture.Now())
			for _, name := range []string{"dump.yaml", "dump.yaml.gz"} {
				if strings.HasSuffix(name, ".gz") {
					var z bytes.Buffer
					zw := gzip.NewWriter(&z)
					_, _ = zw.Write(data)
					_ = zw.Close()
					data = z.Bytes()
				}
				res, err := loadBytes(t, name, data)
				if err != nil {
					t.Fatal(err)
				}
				if res.Format != offline.FormatDump || !res.Now.Equal(fixture.Now()) || res.Snapshot.ServerVersion != fixtureVersion {
					t.Errorf("%s: format %q, now %s, version %q", name, res.Format, res.Now, res.Snapshot.ServerVersion)
				}
				got := doctor.Run(context.Background(), res.Snapshot, all, res.Now)
				if !reflect.DeepEqual(got.Findings, want.Findings) {
					t.Errorf("%s: findings differ after the round trip:\n got %+v\nwant %+v", name, got.Findings, want.Findings)
				}
				if !reflect.DeepEqual(got.Checks, want.Checks) {
					t.Errorf("%s: check results differ:\n got %+v\nwant %+v", name, got.Checks, want.Checks)
				}
			}
		})
	}
}

// TestRoundTripKeepsReadErrors: a read that failed at capture time (RBAC)
// skips its checks with the same reason when the dump is scanned.
func TestRoundTripKeepsReadErrors(t *testing.T) {
	s, err := snapshot.FromObjects()
	if err != nil {
		t.Fatal(err)
	}
	s = snapshot.WithError(s, snapshot.Nodes, errors.New("boom"))
	res, err := loadBytes(t, "d.yaml", writeDump(t, s, fixture.Now()))
	if err != nil {
		t.Fatal(err)
	}
	got, want := res.Snapshot.Err(snapshot.Nodes), s.Err(snapshot.Nodes)
	if got == nil || got.Error() != want.Error() || snapshot.IsSkippable(got) != snapshot.IsSkippable(want) {
		t.Errorf("nodes error after round trip = %v, want %v", got, want)
	}
	if err := res.Snapshot.Err(snapshot.Pods); err != nil {
		t.Errorf("pods were listed (empty) at capture: %v", err)
	}
}

func TestDumpNeverHoldsSecrets(t *testing.T) {
	s, _ := snapshot.FromObjects()
	w, _ := offline.NewWriter(&bytes.Buffer{}, offline.Header{})
	if _, err := w.WriteRead(snapshot.Resource{Version: "v1", Resource: "secrets", Kind: "Secret", Namespaced: true}, s); err == nil {
		t.Error("a read of secrets was written")
	}
}

func TestDumpHeaderAndEnd(t *testing.T) {
	s, _ := snapshot.FromObjects()
	s.ServerVersion = "v1.37.2"
	out := string(writeDump(t, s, fixture.Now()))
	for _, want := range []string{"kind: Dump\n", "serverVersion: v1.37.2\n", "capturedAt: \"2026-06-01T11:59:00Z\"\n", "finishedAt: \"2026-06-01T12:00:00Z\"\n",
		"doctorVersion: v0.0.0-test\n", "server: https://cp.example:6443\n", "kind: DumpRead\n", "kind: DumpEnd\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("dump lacks %q", want)
		}
	}
}

// brokenDump returns a valid dump of the pod-storm fixtures, for damage.
func brokenDump(t *testing.T) string {
	set, err := fixture.Load(filepath.Join("..", "..", "testdata", "checks", "pod-storm"))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := set.Snapshot()
	return string(writeDump(t, s, fixture.Now()))
}

func TestBrokenDumps(t *testing.T) {
	dump := brokenDump(t)
	end := strings.LastIndex(dump, "---\n")
	podsAt := strings.Index(dump, "kind: Pod\n")
	for name, tc := range map[string]struct {
		data string
		want string
	}{
		"no end record":      {dump[:end], "the dump ends before its DumpEnd record: it was cut short"},
		"cut in an object":   {dump[:podsAt+40], "document "},
		"data after the end": {dump + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: x}\n", "data after the dump's DumpEnd record"},
		"record without header": {"apiVersion: doctor.kubectl.io/v1alpha1\nkind: DumpRead\nresource: {resource: pods, kind: Pod}\ncount: 0\n",
			"document 1: a DumpRead record without the dump header before it"},
		"object beyond count": {afterEmptyRead(dump, "---\napiVersion: v1\nkind: Node\nmetadata: {name: n}\n"),
			"outside the objects a DumpRead record announces"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadBytes(t, "d.yaml", []byte(tc.data))
			var ie *offline.InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "d.yaml") {
				t.Fatalf("err = %v, want an input error naming d.yaml with %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
	// A truncated gzip file.
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, _ = zw.Write([]byte(dump))
	_ = zw.Close()
	_, err := loadBytes(t, "d.yaml.gz", z.Bytes()[:z.Len()/2])
	if err == nil || !strings.Contains(err.Error(), "d.yaml.gz") || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated gzip: %v", err)
	}
}

// afterEmptyRead inserts doc after the first DumpRead record of no objects.
func afterEmptyRead(dump, doc string) string {
	i := strings.Index(dump, "count: 0\n")
	j := i + strings.Index(dump[i:], "---\n")
	return dump[:j] + doc + dump[j:]
}
