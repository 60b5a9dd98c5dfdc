package offline_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/offline"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// tarOf is a tar archive of files, with or without its end-of-archive
// blocks.
func tarOf(t *testing.T, files map[string]string, close bool) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if close {
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
	} else if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gz(t *testing.T, data []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestUntrustedInput: every bad input is one line naming the input and
// what is wrong, never a crash, an unbounded read or a smaller capture.
func TestUntrustedInput(t *testing.T) {
	bundle := map[string]string{"bundle/cluster-resources/pods/d.json": podList("d", "a")}
	whole := tarOf(t, bundle, true)
	for name, c := range map[string]struct {
		data []byte
		opts offline.Options
		want string
	}{
		"zeros (/dev/zero)":          {data: make([]byte, 1<<20), want: "-: binary data, not JSON or YAML"},
		"tar cut at a file boundary": {data: tarOf(t, bundle, false), want: "-: the tar archive is truncated: it ends without its end-of-archive blocks"},
		"tar cut inside a file":      {data: whole[:700], want: "(truncated?)"},
		"tar.gz cut":                 {data: gz(t, whole)[:200], want: "ends early (truncated?)"},
		"xz":                         {data: []byte{0xfd, '7', 'z', 'X', 'Z', 0, 1, 2}, want: "-: xz-compressed: not supported; decompress it first (e.g. xz -d FILE)"},
		"zstd":                       {data: []byte{0x28, 0xb5, 0x2f, 0xfd, 1, 2}, want: "-: zstd-compressed: not supported"},
		"document over the limit": {data: []byte(podList("d", manyNames(3000)...)), opts: offline.Options{MaxDocument: 1 << 10},
			want: "-: document 1: larger than the document size limit of 1,024 bytes (raise it with --max-document-size)"},
		"input over the limit": {data: []byte(strings.Repeat(podList("d", "a")+"\n", 2000)), opts: offline.Options{MaxInput: 64 << 10},
			want: "-: document "},
		"gzip bomb over the limit": {data: gz(t, bytes.Repeat([]byte(" "), 4<<20)), opts: offline.Options{MaxInput: 1 << 20},
			want: "larger than the input size limit of 1Mi (raise it with --max-input-size)"},
		"one endless line": {data: bytes.Repeat([]byte("a"), 2<<20), opts: offline.Options{MaxDocument: 1 << 10},
			want: "-: document 1: larger than the document size limit of 1,024 bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			c.opts.Stdin = bytes.NewReader(c.data)
			_, err := offline.Load("-", c.opts)
			var ie *offline.InputError
			if err == nil || !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v, want an input error containing %q", err, c.want)
			}
		})
	}
	// The whole archive reads.
	res, err := offline.Load("-", offline.Options{Stdin: bytes.NewReader(gz(t, whole))})
	if err != nil || res.Stats.Objects != 1 {
		t.Errorf("whole archive: %v", err)
	}
}

// TestSymlinks: a capture directory reached through a symlink reads; a
// link inside the capture to a file in it is followed, one leading out of
// it is not.
func TestSymlinks(t *testing.T) {
	root := writeTree(t, map[string]string{"capture/pods.json": podList("d", "a")})
	outside := writeTree(t, map[string]string{"secret.json": podList("x", "leak")})
	if err := os.Symlink(filepath.Join(root, "capture"), filepath.Join(root, "link")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(root, "capture", "escape.json")))
	must(os.Symlink("pods.json", filepath.Join(root, "capture", "again.json")))
	res := mustLoad(t, filepath.Join(root, "link"), offline.Options{})
	var names []string
	for _, p := range res.Snapshot.Pods() {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	if strings.Join(names, ",") != "d/a" || res.Stats.Duplicates != 1 {
		t.Errorf("pods %v, %d duplicates: want d/a once (the link to it is the same object), never x/leak", names, res.Stats.Duplicates)
	}
}

func manyNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "pod-" + strings.Repeat("x", 20) + string(rune('a'+i%26)) + strings.Repeat("y", i%7) + "-" + itoa(i)
	}
	return out
}

func itoa(i int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
		if i == 0 {
			return string(b)
		}
	}
}

// TestMustGatherLayouts: an OpenShift must-gather holds a namespace's
// objects twice (namespaces/NS/core/pods.yaml, a List, and
// namespaces/NS/pods/POD/POD.yaml); each is read once. An empty List in a
// file named after its resource is "read, zero objects".
func TestMustGatherLayouts(t *testing.T) {
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"shop","uid":"u1","creationTimestamp":"2024-03-01T11:00:00Z"},"spec":{"containers":[{"name":"c","image":"i"}]},"status":{"phase":"Running"}}`
	root := writeTree(t, map[string]string{
		"must-gather.local.1/quay-io-image/cluster-scoped-resources/core/nodes/n1.yaml": "apiVersion: v1\nkind: Node\nmetadata: {name: n1, uid: n1}\n",
		"must-gather.local.1/quay-io-image/namespaces/shop/core/pods.yaml":              `{"apiVersion":"v1","kind":"List","items":[` + pod + `]}`,
		"must-gather.local.1/quay-io-image/namespaces/shop/pods/web-1/web-1.yaml":       pod,
		"must-gather.local.1/quay-io-image/namespaces/shop/apps/daemonsets.yaml":        "apiVersion: v1\nkind: List\nitems: []\n",
		"must-gather.local.1/quay-io-image/namespaces/shop/apps/statefulsets.yaml":      "apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: \"\"\n",
	})
	res := mustLoad(t, root, offline.Options{})
	if n := len(res.Snapshot.Pods()); n != 1 || res.Stats.Objects != 2 || res.Stats.Duplicates != 1 {
		t.Errorf("%d pods, %d objects, %d duplicates: want 1 pod, 2 objects (pod, node), 1 duplicate", n, res.Stats.Objects, res.Stats.Duplicates)
	}
	for _, r := range []snapshot.Resource{snapshot.DaemonSets, snapshot.StatefulSets, snapshot.Pods, snapshot.Nodes} {
		if err := res.Snapshot.Err(r); err != nil {
			t.Errorf("%s: %v, want read", r, err)
		}
	}
	if err := res.Snapshot.Err(snapshot.Jobs); err == nil {
		t.Error("jobs: read, want absent")
	}
}
