// Command vulndb builds a local Go vulnerability database, the layout
// govulncheck reads with -db file://DIR, from the OSV entries of the
// golang.org/x/vulndb module at a pinned version, fetched through the Go
// module proxy (checksum-verified like any module). It exists because
// vuln.go.dev, govulncheck's default source, is not reachable from every
// build machine, while the module proxy is: `make vulncheck` never skips.
//
//	go run ./vulndb -version v0.0.0-... -out DIR
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/mod/semver"
)

// entry is the part of an OSV entry the index needs.
type entry struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Aliases  []string  `json:"aliases,omitempty"`
	Affected []struct {
		Package struct {
			Name string `json:"name"`
		} `json:"package"`
		Ranges []struct {
			Events []struct {
				Fixed string `json:"fixed,omitempty"`
			} `json:"events"`
		} `json:"ranges"`
	} `json:"affected"`
}

type moduleVuln struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Fixed    string    `json:"fixed,omitempty"`
}

type module struct {
	Path  string       `json:"path"`
	Vulns []moduleVuln `json:"vulns"`
}

func main() {
	version := flag.String("version", "", "the golang.org/x/vulndb module version (pinned in the Makefile)")
	out := flag.String("out", "", "directory to write the database to")
	flag.Parse()
	if *version == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "vulndb: -version and -out are required")
		os.Exit(2)
	}
	if err := run(*version, *out); err != nil {
		fmt.Fprintln(os.Stderr, "vulndb:", err)
		os.Exit(1)
	}
}

func run(version, out string) error {
	dl, err := exec.Command("go", "mod", "download", "-json", "golang.org/x/vulndb@"+version).Output()
	if err != nil {
		return fmt.Errorf("go mod download golang.org/x/vulndb@%s: %w", version, err)
	}
	var mod struct{ Dir, Info string }
	if err := json.Unmarshal(dl, &mod); err != nil {
		return err
	}
	var info struct{ Time time.Time }
	if b, err := os.ReadFile(mod.Info); err == nil {
		_ = json.Unmarshal(b, &info)
	}
	files, err := filepath.Glob(filepath.Join(mod.Dir, "data", "osv", "*.json"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no OSV entries in %s/data/osv", mod.Dir)
	}
	tmp := out + ".tmp"
	_ = os.RemoveAll(tmp)
	for _, d := range []string{"ID", "index"} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			return err
		}
	}
	modules := map[string]*module{}
	var vulns []map[string]any
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var e entry
		if err := json.Unmarshal(b, &e); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if e.Modified.IsZero() { // the repository's entries carry no date; the database's do
			e.Modified = info.Time
		}
		if err := os.WriteFile(filepath.Join(tmp, "ID", e.ID+".json"), b, 0o644); err != nil {
			return err
		}
		vulns = append(vulns, map[string]any{"id": e.ID, "modified": e.Modified, "aliases": e.Aliases})
		for _, a := range e.Affected {
			m := modules[a.Package.Name]
			if m == nil {
				m = &module{Path: a.Package.Name}
				modules[a.Package.Name] = m
			}
			v := moduleVuln{ID: e.ID, Modified: e.Modified}
			for _, r := range a.Ranges {
				for _, ev := range r.Events {
					if ev.Fixed != "" && (v.Fixed == "" || semver.Compare("v"+ev.Fixed, "v"+v.Fixed) > 0) {
						v.Fixed = ev.Fixed
					}
				}
			}
			if n := len(m.Vulns); n > 0 && m.Vulns[n-1].ID == e.ID { // the module again, for another package
				if v.Fixed == "" || semver.Compare("v"+v.Fixed, "v"+m.Vulns[n-1].Fixed) < 0 {
					v.Fixed = m.Vulns[n-1].Fixed
				}
				m.Vulns[n-1] = v
				continue
			}
			m.Vulns = append(m.Vulns, v)
		}
	}
	index := make([]*module, 0, len(modules))
	for _, m := range modules {
		sort.Slice(m.Vulns, func(i, j int) bool { return m.Vulns[i].ID < m.Vulns[j].ID })
		index = append(index, m)
	}
	sort.Slice(index, func(i, j int) bool { return index[i].Path < index[j].Path })
	for name, v := range map[string]any{
		"db.json":      map[string]time.Time{"modified": info.Time},
		"modules.json": index,
		"vulns.json":   vulns,
	} {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, "index", name), b, 0o644); err != nil {
			return err
		}
	}
	_ = os.RemoveAll(out)
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	fmt.Printf("%s: %d entries, %d modules (golang.org/x/vulndb@%s)\n", strings.TrimSuffix(out, "/"), len(files), len(index), version)
	return nil
}
