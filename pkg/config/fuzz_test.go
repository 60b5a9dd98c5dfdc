package config

import (
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the config parser: a config file is
// untrusted input (a repository's .kubectl-doctor.yaml). It must never
// panic, and a rejected file is one error naming the file. The seed corpus
// is the README example here plus testdata/fuzz/FuzzParse; CI runs it
// briefly (make fuzz).
func FuzzParse(f *testing.F) {
	f.Add([]byte(example))
	f.Add([]byte(header + "checks: {pod-storm: {enabled: true, severity: warning}}\n"))
	f.Add([]byte(header + "ignore:\n- {check: pod-storm, expires: '2027-02-30', reason: x}\n"))
	f.Add([]byte(header + "custom:\n- {name: x, resource: pods, rule: 'object.', message: \"'m'\"}\n"))
	f.Add([]byte("a: &a [*a, *a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "fuzz.yaml", builtin)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for name := range cfg.Checks {
			_ = cfg.Enabled(name)
		}
	})
}
