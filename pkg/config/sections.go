package config

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

var (
	kindRE = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	dateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
)

// maxExpressionLength bounds a CEL expression, as the API server bounds
// the expressions of a ValidatingAdmissionPolicy.
const maxExpressionLength = 5 * 1024

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
			case !doctor.ValidName(s):
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
			case len(s) > maxExpressionLength:
				p.add(v, field+"."+x.key, "expression is %d bytes, longer than the limit of %d", len(s), maxExpressionLength)
			}
			*x.dst, *x.line = s, v.Line
		}
		if ok {
			out = append(out, c)
		}
	}
	return out
}
