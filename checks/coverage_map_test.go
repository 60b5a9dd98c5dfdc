package checks_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
)

var (
	checkLinkRE = regexp.MustCompile(`\]\(checks/([a-z0-9-]+)\.md\)`)
	proofRE     = regexp.MustCompile("`([^`]+)`")
)

// TestCoverage keeps docs/coverage.md honest: every row links only checks
// that are registered (by default or in a profile), names only proof paths
// that exist, and every rule that is real breakage has a check.
func TestCoverage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "coverage.md"))
	if err != nil {
		t.Fatal(err)
	}
	registered := map[string]bool{}
	for _, c := range checks.All() {
		registered[c.Name] = true
	}
	for _, c := range checks.Profile("hygiene") {
		registered[c.Name] = true
	}
	rows := map[string]int{}
	seen := map[string]bool{}
	linked := map[string]bool{}
	for i, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "| popeye ") && !strings.HasPrefix(line, "| k8sgpt ") {
			continue
		}
		// Cells are split on unescaped pipes (messages escape theirs).
		cells := strings.Split(strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "|"), "|"), `\|`, "\x00"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(strings.ReplaceAll(cells[j], "\x00", "|"))
		}
		if len(cells) != 5 {
			t.Errorf("line %d: %d cells, want 5 (rule, what, class, kubectl-doctor, proof): %s", i+1, len(cells), line)
			continue
		}
		rule, class, verdict, proof := cells[0], cells[2], cells[3], cells[4]
		peer, _, _ := strings.Cut(rule, " ")
		rows[peer]++
		if seen[rule] {
			t.Errorf("line %d: %s has two rows", i+1, rule)
		}
		seen[rule] = true
		switch class {
		case "breakage", "hygiene", "capacity", "third-party", "n/a":
		default:
			t.Errorf("%s: unknown class %q", rule, class)
		}
		links := checkLinkRE.FindAllStringSubmatch(verdict, -1)
		for _, m := range links {
			linked[m[1]] = true
			if !registered[m[1]] {
				t.Errorf("%s names check %s, which is not registered", rule, m[1])
			}
		}
		for _, m := range proofRE.FindAllStringSubmatch(proof, -1) {
			if _, err := os.Stat(filepath.Join("..", m[1])); err != nil {
				t.Errorf("%s: proof %s does not exist", rule, m[1])
			}
		}
		if strings.HasPrefix(strings.ToLower(verdict), "gap") {
			if class == "breakage" {
				t.Errorf("%s is real breakage and still a gap: %s", rule, verdict)
			}
			continue
		}
		if class == "breakage" && (len(links) == 0 || proof == "") {
			t.Errorf("%s is real breakage: it needs a check and a fixture or scenario that proves it (%q)", rule, verdict)
		}
	}
	// popeye 5d07838 has 117 codes; k8sgpt 05247a8 30 analyzers.
	if rows["popeye"] != 117 || rows["k8sgpt"] != 30 {
		t.Errorf("rows: %d popeye (want 117), %d k8sgpt (want 30)", rows["popeye"], rows["k8sgpt"])
	}
	for name := range registered {
		if !linked[name] {
			t.Logf("check %s covers no peer rule (fine: it goes beyond them)", name)
		}
	}
}
