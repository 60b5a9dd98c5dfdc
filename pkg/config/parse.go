package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

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
