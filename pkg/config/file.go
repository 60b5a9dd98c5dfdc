package config

import (
	"fmt"
	"os"
	"path/filepath"
)

// defaultPaths are where a config is looked for when --config is not given,
// in order: the working directory (a repository's own policy), then the
// user's config directory ($XDG_CONFIG_HOME, else ~/.config).
func defaultPaths() []string {
	paths := []string{".kubectl-doctor.yaml"}
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, ".config")
		}
	}
	if dir != "" {
		paths = append(paths, filepath.Join(dir, "kubectl-doctor", "config.yaml"))
	}
	return paths
}

// Find returns the first of defaultPaths that exists, "" when none does.
func Find() string {
	for _, p := range defaultPaths() {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// Load reads and validates the config file at p. checks are the built-in
// check names, which `checks` and `ignore` entries may name besides the
// file's own custom checks.
func Load(p string, checks []string) (*Config, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return Parse(data, p, checks)
}
