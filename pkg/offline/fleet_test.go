package offline

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
)

func TestDumpDirAndClusterName(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, gz bool) {
		var b bytes.Buffer
		w, err := NewWriter(&b, Header{Server: "https://x"})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		data := b.Bytes()
		if gz {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write(data)
			zw.Close()
			data = z.Bytes()
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("prod-eu.yaml.gz", true)
	if DumpDir(dir) != nil {
		t.Error("one dump is not a fleet")
	}
	write("staging.yaml", false)
	got := DumpDir(dir)
	if len(got) != 2 || ClusterName(got[0]) != "prod-eu" || ClusterName(got[1]) != "staging" {
		t.Errorf("DumpDir = %v", got)
	}
	os.WriteFile(filepath.Join(dir, "pods.yaml"), []byte("apiVersion: v1\nkind: Pod\n"), 0o600)
	if DumpDir(dir) != nil {
		t.Error("a directory with other files is one cluster's input, not a fleet")
	}
	for in, want := range map[string]string{"a/b/c.json": "c", "x.tar.gz": "x", "bundle": "bundle", ".gz": ".gz"} {
		if got := ClusterName(in); got != want {
			t.Errorf("ClusterName(%q) = %q, want %q", in, got, want)
		}
	}
}
