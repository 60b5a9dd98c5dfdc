// Command vulngate turns govulncheck's JSON output into a gate that never
// skips: it fails on every vulnerability in a module the project requires
// (upgrading the module is in our hands), and on every vulnerability of the
// Go standard library that is not accepted, with a reason, in the accepted
// file. A standard-library vulnerability is fixed by a newer Go toolchain,
// which a build machine may not have: accepting it is a reviewed decision
// written in the repository, not a silent pass. An acceptance that no longer
// matches a finding is reported so that the file stays true.
//
//	govulncheck -format json ./... > vuln.json
//	vulngate -accepted hack/tools/vulngate/accepted.txt vuln.json
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
)

// message is one value of govulncheck's JSON stream; only the parts the gate
// reads are declared.
type message struct {
	Config *struct {
		ScannerName string `json:"scanner_name"`
		GoVersion   string `json:"go_version"`
	} `json:"config"`
	Finding *struct {
		OSV          string `json:"osv"`
		FixedVersion string `json:"fixed_version"`
		Trace        []struct {
			Module   string `json:"module"`
			Version  string `json:"version"`
			Package  string `json:"package"`
			Function string `json:"function"`
		} `json:"trace"`
	} `json:"finding"`
}

// finding is one vulnerability in one module, at the deepest level
// govulncheck saw it: the module is required, a package of it is imported,
// or a vulnerable function is called.
type finding struct {
	id, module, version, fixed string
	level                      int
}

var levels = []string{"required", "imported", "called"}

func main() {
	accepted := flag.String("accepted", "", "file of accepted standard-library vulnerabilities: `ID reason` per line")
	flag.Parse()
	if flag.NArg() != 1 || *accepted == "" {
		fmt.Fprintln(os.Stderr, "usage: vulngate -accepted FILE GOVULNCHECK.json")
		os.Exit(2)
	}
	code, err := run(*accepted, flag.Arg(0), os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulngate:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

func run(acceptedPath, jsonPath string, out io.Writer) (int, error) {
	accept, err := readAccepted(acceptedPath)
	if err != nil {
		return 0, err
	}
	f, err := os.Open(jsonPath)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	found, goVersion, err := parse(f)
	if err != nil {
		return 0, err
	}
	code := 0
	seen := map[string]bool{}
	for _, v := range found {
		seen[v.id] = true
		where := fmt.Sprintf("%s %s in %s@%s, fixed in %s", v.id, levels[v.level], v.module, v.version, v.fixed)
		switch reason, ok := accept[v.id]; {
		case v.module != "stdlib":
			fmt.Fprintf(out, "FAIL %s: upgrade the module (go get %s@%s)\n", where, v.module, v.fixed)
			code = 1
		case ok:
			fmt.Fprintf(out, "accepted %s: %s\n", where, reason)
		default:
			fmt.Fprintf(out, "FAIL %s: build with that Go, or accept it with a reason in %s\n", where, acceptedPath)
			code = 1
		}
	}
	for _, id := range slices.Sorted(maps.Keys(accept)) {
		if !seen[id] {
			fmt.Fprintf(out, "FAIL %s is accepted in %s but no longer found: remove the line\n", id, acceptedPath)
			code = 1
		}
	}
	fmt.Fprintf(out, "vulngate: %d vulnerabilities (%s), %d accepted, verdict %s\n", len(found), goVersion, countAccepted(found, accept), map[int]string{0: "pass", 1: "FAIL"}[code])
	return code, nil
}

// parse reads govulncheck's stream and keeps, per vulnerability and module,
// the deepest level it was found at. A stream without govulncheck's config
// message is not its output: an error, never a pass.
func parse(r io.Reader) ([]finding, string, error) {
	dec := json.NewDecoder(bufio.NewReader(r))
	byKey := map[string]*finding{}
	var order []string
	goVersion, sawConfig := "", false
	for {
		var m message
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, "", fmt.Errorf("reading govulncheck output: %w", err)
		}
		if m.Config != nil {
			sawConfig, goVersion = true, m.Config.GoVersion
		}
		if m.Finding == nil || len(m.Finding.Trace) == 0 {
			continue
		}
		top := m.Finding.Trace[0]
		level := 0
		switch {
		case top.Function != "":
			level = 2
		case top.Package != "":
			level = 1
		}
		key := m.Finding.OSV + " " + top.Module
		if f, ok := byKey[key]; ok {
			f.level = max(f.level, level)
			continue
		}
		byKey[key] = &finding{id: m.Finding.OSV, module: top.Module, version: top.Version, fixed: m.Finding.FixedVersion, level: level}
		order = append(order, key)
	}
	if !sawConfig {
		return nil, "", errors.New("no govulncheck config message: the input is not govulncheck -format json output")
	}
	slices.Sort(order)
	found := make([]finding, 0, len(order))
	for _, k := range order {
		found = append(found, *byKey[k])
	}
	return found, goVersion, nil
}

// readAccepted reads "ID reason…" lines; blank lines and # comments are
// skipped, and an acceptance without a reason is an error.
func readAccepted(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	accept := map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, reason, _ := strings.Cut(line, " ")
		if strings.TrimSpace(reason) == "" {
			return nil, fmt.Errorf("%s:%d: %s has no reason", path, i+1, id)
		}
		accept[id] = strings.TrimSpace(reason)
	}
	return accept, nil
}

func countAccepted(found []finding, accept map[string]string) int {
	n := 0
	for _, f := range found {
		if _, ok := accept[f.id]; ok && f.module == "stdlib" {
			n++
		}
	}
	return n
}
