package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stream is govulncheck -format json output cut down to what the gate reads:
// a stdlib vulnerability called and imported, one only required, and one in
// a required module.
const stream = `{"config":{"scanner_name":"govulncheck","go_version":"go1.26.8"}}
{"osv":{"id":"GO-1"}}
{"finding":{"osv":"GO-1","fixed_version":"v1.26.9","trace":[{"module":"stdlib","version":"v1.26.8","package":"net/http"}]}}
{"finding":{"osv":"GO-1","fixed_version":"v1.26.9","trace":[{"module":"stdlib","version":"v1.26.8","package":"net/http","function":"Get"}]}}
{"finding":{"osv":"GO-2","fixed_version":"v1.26.9","trace":[{"module":"stdlib","version":"v1.26.8"}]}}
{"finding":{"osv":"GO-3","fixed_version":"v0.62.0","trace":[{"module":"golang.org/x/net","version":"v0.61.0"}]}}
`

func TestGate(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "vuln.json")
	if err := os.WriteFile(in, []byte(stream), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, accepted, stream string
		code                   int
		want                   []string
	}{
		{"a module vulnerability fails even when listed", "GO-1 reason\nGO-2 reason\nGO-3 reason\n", stream, 1,
			[]string{"FAIL GO-3 required in golang.org/x/net@v0.61.0, fixed in v0.62.0: upgrade the module (go get golang.org/x/net@v0.62.0)",
				"accepted GO-1 called in stdlib@v1.26.8"}},
		{"an unlisted stdlib vulnerability fails", "GO-1 reason\n", stream[:strings.Index(stream, `{"finding":{"osv":"GO-3"`)], 1,
			[]string{"FAIL GO-2 required in stdlib@v1.26.8, fixed in v1.26.9: build with that Go, or accept it"}},
		{"every stdlib vulnerability accepted passes", "# comment\n\nGO-1 the client talks only to the API server\nGO-2 not used\n", stream[:strings.Index(stream, `{"finding":{"osv":"GO-3"`)], 0,
			[]string{"accepted GO-1 called in stdlib@v1.26.8, fixed in v1.26.9: the client talks only to the API server", "verdict pass"}},
		{"a stale acceptance fails", "GO-1 a\nGO-2 b\nGO-9 gone\n", stream[:strings.Index(stream, `{"finding":{"osv":"GO-3"`)], 1,
			[]string{"FAIL GO-9 is accepted in"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			acc := filepath.Join(dir, "accepted.txt")
			if err := os.WriteFile(acc, []byte(tc.accepted), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(in, []byte(tc.stream), 0o644); err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			code, err := run(acc, in, &out)
			if err != nil {
				t.Fatal(err)
			}
			if code != tc.code {
				t.Errorf("code %d, want %d:\n%s", code, tc.code, out.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

func TestGateRefusesWhatIsNotGovulncheckOutput(t *testing.T) {
	dir := t.TempDir()
	acc, in := filepath.Join(dir, "a"), filepath.Join(dir, "v")
	os.WriteFile(acc, []byte("GO-1 reason\n"), 0o644)
	for _, s := range []string{"", "not json", `{"finding":{"osv":"GO-1","trace":[{"module":"stdlib"}]}}`} {
		os.WriteFile(in, []byte(s), 0o644)
		if _, err := run(acc, in, &strings.Builder{}); err == nil {
			t.Errorf("input %q: no error", s)
		}
	}
	os.WriteFile(acc, []byte("GO-1\n"), 0o644)
	os.WriteFile(in, []byte(stream), 0o644)
	if _, err := run(acc, in, &strings.Builder{}); err == nil || !strings.Contains(err.Error(), "no reason") {
		t.Errorf("an acceptance without a reason: %v", err)
	}
}
