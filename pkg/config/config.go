// Package config reads kubectl-doctor's config file: per-check switches and
// severity overrides, ignore entries with a reason and an optional expiry,
// and custom checks written in CEL. The file has a versioned schema and is
// validated strictly, line by line, because a typo in a suppression must
// fail the CI job that relies on it, not silently suppress nothing.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// APIVersion and Kind of the config file's schema.
const (
	APIVersion = "doctor.kubectl.io/v1alpha1"
	Kind       = "Config"
)

// Config is a parsed, validated config file.
type Config struct {
	// Path is the file it was read from.
	Path   string
	Checks map[string]CheckConfig
	Ignore []Ignore
	Custom []Custom
}

// CheckConfig switches one check off or overrides its findings' severity.
type CheckConfig struct {
	// Enabled is nil when the file does not say.
	Enabled *bool
	// Severity, when set, replaces the severity of every finding of the check.
	Severity doctor.Severity
	Line     int
}

// Ignore suppresses the findings of one check on the objects it matches.
// Empty Namespace, Kind and Name match everything; Namespace and Name are
// globs (path.Match: *, ?, [a-z]).
type Ignore struct {
	Check string
	// Cluster, when set, scopes the entry to the clusters of a fleet run
	// (kubeconfig context or --from file name) it matches, a glob; a
	// single-cluster scan matches it against the current context's name.
	Cluster   string
	Namespace string
	Kind      string
	Name      string
	Reason    string
	// Expires is the last day the entry applies (UTC), as written; zero
	// ExpiresAt means never.
	Expires   string
	ExpiresAt time.Time
	Line      int
}

// Expired says whether the entry no longer applies at now: after the last
// moment of its expiry day, in UTC.
func (ig *Ignore) Expired(now time.Time) bool {
	return !ig.ExpiresAt.IsZero() && !now.Before(ig.ExpiresAt.AddDate(0, 0, 1))
}

// Matches says whether the entry covers finding f (ignoring expiry).
func (ig *Ignore) Matches(f *doctor.Finding) bool {
	if ig.Check != f.Check {
		return false
	}
	if ig.Kind != "" && !strings.EqualFold(ig.Kind, f.Object.Kind) {
		return false
	}
	for _, p := range [][2]string{{ig.Namespace, f.Object.Namespace}, {ig.Name, f.Object.Name}} {
		if p[0] == "" {
			continue
		}
		if ok, _ := path.Match(p[0], p[1]); !ok {
			return false
		}
	}
	return true
}

// Custom is a check declared in the config file: a CEL rule evaluated on
// every object of one resource, reporting the objects where it is false.
type Custom struct {
	Name        string
	Title       string
	Description string
	Severity    doctor.Severity
	Resource    snapshot.Resource
	Rule        string
	// Message is an optional CEL expression of type string.
	Message string
	// Remediation is a command or a sentence, with {{name}},
	// {{namespace}} and {{kind}} replaced by the object's.
	Remediation string
	Line        int
	// RuleLine and MessageLine locate the expressions, for CEL errors.
	RuleLine, MessageLine int
}

// Problem is one mistake in a config file.
type Problem struct {
	Line  int
	Field string
	Msg   string
}

func (p Problem) String() string {
	s := ""
	if p.Line > 0 {
		s = fmt.Sprintf("line %d: ", p.Line)
	}
	if p.Field != "" {
		s += p.Field + ": "
	}
	return s + p.Msg
}

// Error lists every mistake found in a config file, on one line.
type Error struct {
	Path     string
	Problems []Problem
}

func (e *Error) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	if len(parts) == 1 {
		return fmt.Sprintf("config %s: %s", e.Path, parts[0])
	}
	return fmt.Sprintf("config %s: %d mistakes: %s", e.Path, len(parts), strings.Join(parts, "; "))
}

// DefaultPaths are where a config is looked for when --config is not given,
// in order: the working directory (a repository's own policy), then the
// user's config directory ($XDG_CONFIG_HOME, else ~/.config).
func DefaultPaths() []string {
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

// Find returns the first of DefaultPaths that exists, "" when none does.
func Find() string {
	for _, p := range DefaultPaths() {
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

var (
	nameRE = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	kindRE = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	dateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
)

// MaxExpressionLength bounds a CEL expression, as the API server bounds
// the expressions of a ValidatingAdmissionPolicy.
const MaxExpressionLength = 5 * 1024

type parser struct {
	problems []Problem
	builtin  []string
}

func (p *parser) add(n *yaml.Node, field, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.problems = append(p.problems, Problem{Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// Parse validates data (the content of the file at path) and returns every
// mistake in one *Error.
func Parse(data []byte, file string, builtin []string) (*Config, error) {
	p := &parser{builtin: builtin}
	cfg := &Config{Path: file, Checks: map[string]CheckConfig{}}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.add(nil, "", "the file is empty: want apiVersion: %s and kind: %s", APIVersion, Kind)
			return nil, p.err(file)
		}
		p.add(nil, "", "not valid YAML: %s", yamlError(err))
		return nil, p.err(file)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		at := &extra
		if len(extra.Content) > 0 {
			at = extra.Content[0]
		}
		p.add(at, "", "a second YAML document: a config file holds one")
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		p.add(root, "", "want a mapping with apiVersion: %s and kind: %s", APIVersion, Kind)
		return nil, p.err(file)
	}
	fields := p.fields(root, "", "apiVersion", "kind", "checks", "ignore", "custom")
	switch av := fields["apiVersion"]; {
	case av == nil:
		p.add(root, "apiVersion", "required: want %s", APIVersion)
	case av.Value != APIVersion:
		p.add(av, "apiVersion", "unsupported %q: want %s", av.Value, APIVersion)
	}
	switch k := fields["kind"]; {
	case k == nil:
		p.add(root, "kind", "required: want %s", Kind)
	case k.Value != Kind:
		p.add(k, "kind", "unsupported %q: want %s", k.Value, Kind)
	}
	// Custom checks first: checks and ignore entries may name them.
	if n := fields["custom"]; n != nil {
		cfg.Custom = p.customs(n)
	}
	known := slices.Clone(builtin)
	for _, c := range cfg.Custom {
		known = append(known, c.Name)
	}
	if n := fields["checks"]; n != nil {
		p.checks(n, known, cfg)
	}
	if n := fields["ignore"]; n != nil {
		cfg.Ignore = p.ignores(n, known)
	}
	if len(p.problems) > 0 {
		return nil, p.err(file)
	}
	return cfg, nil
}

func (p *parser) err(file string) error {
	slices.SortStableFunc(p.problems, func(a, b Problem) int { return a.Line - b.Line })
	return &Error{Path: file, Problems: p.problems}
}

// yamlError is the YAML library's message without its "yaml: " prefix.
func yamlError(err error) string {
	return strings.TrimPrefix(strings.ReplaceAll(err.Error(), "\n", " "), "yaml: ")
}

// fields checks that n's keys are among allowed, each once, and returns
// their values.
func (p *parser) fields(n *yaml.Node, prefix string, allowed ...string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := join(prefix, k.Value)
		switch {
		case !slices.Contains(allowed, k.Value):
			p.add(k, name, "unknown field (want %s)", orList(allowed))
		case out[k.Value] != nil:
			p.add(k, name, "given twice")
		default:
			out[k.Value] = v
		}
	}
	return out
}

func join(prefix, field string) string {
	if prefix == "" {
		return field
	}
	return prefix + "." + field
}

func orList(s []string) string {
	switch len(s) {
	case 0:
		return "nothing"
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// str returns a scalar string value, reporting other node kinds.
func (p *parser) str(n *yaml.Node, field string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.add(n, field, "want a string")
		return "", false
	}
	return n.Value, true
}

func (p *parser) severity(n *yaml.Node, field string) doctor.Severity {
	s, ok := p.str(n, field)
	if !ok {
		return 0
	}
	sev, err := doctor.ParseSeverity(s)
	if err != nil || sev == doctor.Never {
		p.add(n, field, "unknown severity %q (want critical, warning or info)", s)
		return 0
	}
	return sev
}

func (p *parser) checks(n *yaml.Node, known []string, cfg *Config) {
	if n.Kind != yaml.MappingNode {
		p.add(n, "checks", "want a mapping of check name to {enabled, severity}")
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := "checks." + k.Value
		if !slices.Contains(known, k.Value) {
			p.add(k, field, "unknown check %q (known: %s)", k.Value, strings.Join(known, ", "))
			continue
		}
		if seen[k.Value] {
			p.add(k, field, "given twice")
			continue
		}
		seen[k.Value] = true
		if v.Kind != yaml.MappingNode {
			p.add(v, field, "want a mapping such as {enabled: false} or {severity: critical}")
			continue
		}
		cc := CheckConfig{Line: k.Line}
		f := p.fields(v, field, "enabled", "severity")
		if e := f["enabled"]; e != nil {
			var b bool
			if e.Kind != yaml.ScalarNode || e.Tag != "!!bool" || e.Decode(&b) != nil {
				p.add(e, field+".enabled", "want true or false, got %q", e.Value)
			} else {
				cc.Enabled = &b
			}
		}
		if s := f["severity"]; s != nil {
			cc.Severity = p.severity(s, field+".severity")
		}
		if len(v.Content) == 0 {
			p.add(v, field, "empty: set enabled or severity")
		}
		cfg.Checks[k.Value] = cc
	}
}

func (p *parser) ignores(n *yaml.Node, known []string) []Ignore {
	if n.Kind != yaml.SequenceNode {
		p.add(n, "ignore", "want a list of entries with check and reason")
		return nil
	}
	var out []Ignore
	for i, e := range n.Content {
		field := fmt.Sprintf("ignore[%d]", i)
		if e.Kind != yaml.MappingNode {
			p.add(e, field, "want a mapping with check and reason")
			continue
		}
		f := p.fields(e, field, "check", "cluster", "namespace", "kind", "name", "reason", "expires")
		ig := Ignore{Line: e.Line}
		if c := f["check"]; c == nil {
			p.add(e, field+".check", "required")
		} else if s, ok := p.str(c, field+".check"); ok {
			if !slices.Contains(known, s) {
				p.add(c, field+".check", "unknown check %q (known: %s)", s, strings.Join(known, ", "))
			}
			ig.Check = s
		}
		for _, g := range []struct {
			key string
			dst *string
		}{{"cluster", &ig.Cluster}, {"namespace", &ig.Namespace}, {"name", &ig.Name}} {
			v := f[g.key]
			if v == nil {
				continue
			}
			s, ok := p.str(v, field+"."+g.key)
			if !ok {
				continue
			}
			if _, err := path.Match(s, ""); err != nil || s == "" {
				p.add(v, field+"."+g.key, "invalid glob %q (use *, ? and [a-z]; omit the field to match all)", s)
				continue
			}
			*g.dst = s
		}
		if k := f["kind"]; k != nil {
			if s, ok := p.str(k, field+".kind"); ok {
				if !kindRE.MatchString(s) {
					p.add(k, field+".kind", "invalid kind %q (want a kind such as Deployment; no globs)", s)
				}
				ig.Kind = s
			}
		}
		if r := f["reason"]; r == nil {
			p.add(e, field+".reason", "required: say why this is ignored (a ticket, an owner, a plan)")
		} else if s, ok := p.str(r, field+".reason"); ok {
			if strings.TrimSpace(s) == "" {
				p.add(r, field+".reason", "must not be empty")
			}
			ig.Reason = s
		}
		if x := f["expires"]; x != nil {
			if s, ok := p.str(x, field+".expires"); ok {
				t, err := time.Parse(time.DateOnly, s)
				if !dateRE.MatchString(s) || err != nil {
					p.add(x, field+".expires", "invalid date %q (want YYYY-MM-DD)", s)
				}
				ig.Expires, ig.ExpiresAt = s, t
			}
		}
		out = append(out, ig)
	}
	return out
}

func (p *parser) customs(n *yaml.Node) []Custom {
	if n.Kind != yaml.SequenceNode {
		p.add(n, "custom", "want a list of checks with name, resource and rule")
		return nil
	}
	var out []Custom
	seen := map[string]bool{}
	for i, e := range n.Content {
		field := fmt.Sprintf("custom[%d]", i)
		if e.Kind != yaml.MappingNode {
			p.add(e, field, "want a mapping with name, resource and rule")
			continue
		}
		for j := 0; j+1 < len(e.Content); j += 2 {
			if e.Content[j].Value == "name" && e.Content[j+1].Kind == yaml.ScalarNode && e.Content[j+1].Value != "" {
				field = fmt.Sprintf("custom[%d](%s)", i, e.Content[j+1].Value)
			}
		}
		f := p.fields(e, field, "name", "title", "description", "severity", "resource", "rule", "message", "remediation")
		c := Custom{Line: e.Line, Severity: doctor.Warning}
		ok := true
		if v := f["name"]; v == nil {
			p.add(e, field+".name", "required")
			ok = false
		} else if s, good := p.str(v, field+".name"); good {
			switch {
			case !nameRE.MatchString(s):
				p.add(v, field+".name", "%q is not kebab-case (like replicas-at-least-2)", s)
				ok = false
			case slices.Contains(p.builtin, s):
				p.add(v, field+".name", "%q is a built-in check: choose another name", s)
				ok = false
			case seen[s]:
				p.add(v, field+".name", "%q is declared twice", s)
				ok = false
			}
			seen[s] = true
			c.Name = s
		} else {
			ok = false
		}
		for _, t := range []struct {
			key string
			dst *string
		}{{"title", &c.Title}, {"description", &c.Description}, {"remediation", &c.Remediation}} {
			if v := f[t.key]; v != nil {
				if s, good := p.str(v, field+"."+t.key); good {
					*t.dst = s
				}
			}
		}
		if v := f["severity"]; v != nil {
			if sev := p.severity(v, field+".severity"); sev != 0 {
				c.Severity = sev
			}
		}
		if v := f["resource"]; v == nil {
			p.add(e, field+".resource", "required (such as deployments.apps)")
		} else if s, good := p.str(v, field+".resource"); good {
			r, err := snapshot.Lookup(s)
			if err != nil {
				p.add(v, field+".resource", "%v", err)
			}
			c.Resource = r
		}
		for _, x := range []struct {
			key      string
			dst      *string
			line     *int
			required bool
		}{{"rule", &c.Rule, &c.RuleLine, true}, {"message", &c.Message, &c.MessageLine, false}} {
			v := f[x.key]
			if v == nil {
				if x.required {
					p.add(e, field+"."+x.key, "required: a CEL expression that is false for objects to report")
				}
				continue
			}
			s, good := p.str(v, field+"."+x.key)
			if !good {
				continue
			}
			switch {
			case strings.TrimSpace(s) == "":
				p.add(v, field+"."+x.key, "must not be empty")
			case len(s) > MaxExpressionLength:
				p.add(v, field+"."+x.key, "expression is %d bytes, longer than the limit of %d", len(s), MaxExpressionLength)
			}
			*x.dst, *x.line = s, v.Line
		}
		if ok {
			out = append(out, c)
		}
	}
	return out
}

// ForCluster is the config as it applies to the cluster named name: the
// ignore entries scoped to other clusters (by their cluster glob) left out.
// Entries without a cluster apply everywhere. A nil config stays nil.
func (c *Config) ForCluster(name string) *Config {
	if c == nil {
		return nil
	}
	out := *c
	out.Ignore = nil
	for _, ig := range c.Ignore {
		if ig.Cluster != "" {
			if ok, _ := path.Match(ig.Cluster, name); !ok {
				continue
			}
		}
		out.Ignore = append(out.Ignore, ig)
	}
	return &out
}
