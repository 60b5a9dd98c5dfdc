package offline

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// dumpMagic is the first line of every kubectl-doctor dump (NewWriter).
const dumpMagic = "# kubectl-doctor dump"

// isDump says whether the file at p is a kubectl-doctor dump, gzipped or
// not, by its first line; it reads a few bytes and never fails.
func isDump(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if head, err := br.Peek(2); err == nil && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return false
		}
		defer zr.Close()
		r = zr
	}
	buf := make([]byte, len(dumpMagic))
	if _, err := io.ReadFull(r, buf); err != nil {
		return false
	}
	return bytes.Equal(buf, []byte(dumpMagic))
}

// DumpDir lists the dumps of a fleet directory: a directory whose entries
// are all kubectl-doctor dumps (hidden files aside), at least two of them,
// sorted by name. It returns nil for anything else — a single file, a
// cluster-info dump tree, a support bundle — which Load reads as one
// cluster.
func DumpDir(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if !e.Type().IsRegular() || !isDump(p) {
			return nil
		}
		out = append(out, p)
	}
	if len(out) < 2 {
		return nil
	}
	sort.Strings(out)
	return out
}

// ClusterName names the cluster a capture file holds after the file:
// its base name without the extensions a capture is written with
// (prod-eu.yaml.gz is prod-eu).
func ClusterName(p string) string {
	name := filepath.Base(filepath.Clean(p))
	for {
		ext := filepath.Ext(name)
		switch strings.ToLower(ext) {
		case ".gz", ".tgz", ".yaml", ".yml", ".json", ".tar", ".dump":
			if trimmed := strings.TrimSuffix(name, ext); trimmed != "" {
				name = trimmed
				continue
			}
		}
		return name
	}
}
