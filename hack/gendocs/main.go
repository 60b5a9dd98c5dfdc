// Command gendocs writes docs/checks/ and the README's checks table from the
// registry and the checks' own docs (make docs).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

func main() {
	dir := "docs/checks"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := run(dir); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	all := checks.WithProfiles()
	if err := doctor.Validate(all); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, c := range all {
		if err := os.WriteFile(filepath.Join(dir, c.Name+".md"), []byte(c.Markdown()), 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(doctor.Index(all)), 0o644); err != nil {
		return err
	}
	// The README's checks table, when run from the repository root.
	readme, err := os.ReadFile("README.md")
	if err != nil {
		return err
	}
	out, err := checks.Readme(string(readme))
	if err != nil {
		return err
	}
	return os.WriteFile("README.md", []byte(out), 0o644)
}
