package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// xsdNode is a generic element of an XML document.
type xsdNode struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []xsdNode  `xml:",any"`
	Text     string     `xml:",chardata"`
}

func (n *xsdNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// elementRule is what the schema allows of one element.
type elementRule struct {
	children map[string]bool
	attrs    map[string]string // name -> type
	required []string
	text     bool // mixed or simple content
}

type junitSchema struct {
	elements map[string]*elementRule
	patterns map[string]*regexp.Regexp // simpleType name -> pattern
}

// loadJUnitSchema reads the vendored Jenkins schema into rules. It knows
// the XSD constructs that schema uses and fails on any other, so a schema
// update can never be half-enforced.
func loadJUnitSchema(t *testing.T) *junitSchema {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "junit", "jenkins-junit-10.xsd"))
	if err != nil {
		t.Fatal(err)
	}
	var root xsdNode
	if err := xml.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	s := &junitSchema{elements: map[string]*elementRule{}, patterns: map[string]*regexp.Regexp{}}
	complexTypes := map[string]*xsdNode{}
	for i := range root.Children {
		n := &root.Children[i]
		switch n.XMLName.Local {
		case "simpleType":
			for _, r := range n.Children {
				if r.XMLName.Local != "restriction" || r.attr("base") != "xs:string" {
					t.Fatalf("unsupported simpleType %s", n.attr("name"))
				}
				for _, p := range r.Children {
					if p.XMLName.Local != "pattern" {
						t.Fatalf("unsupported facet %s", p.XMLName.Local)
					}
					s.patterns[n.attr("name")] = regexp.MustCompile("^(?:" + p.attr("value") + ")$")
				}
			}
		case "complexType":
			complexTypes[n.attr("name")] = n
		}
	}
	var walk func(rule *elementRule, n *xsdNode)
	walk = func(rule *elementRule, n *xsdNode) {
		for i := range n.Children {
			c := &n.Children[i]
			switch c.XMLName.Local {
			case "sequence", "choice":
				walk(rule, c)
			case "element":
				name := c.attr("ref")
				if name == "" {
					name = c.attr("name") // a local element of simple type
				}
				rule.children[name] = true
			case "attribute":
				rule.attrs[c.attr("name")] = c.attr("type")
				if c.attr("use") == "required" {
					rule.required = append(rule.required, c.attr("name"))
				}
			default:
				t.Fatalf("unsupported XSD construct %s", c.XMLName.Local)
			}
		}
	}
	for i := range root.Children {
		n := &root.Children[i]
		if n.XMLName.Local != "element" {
			continue
		}
		rule := &elementRule{children: map[string]bool{}, attrs: map[string]string{}}
		switch typ := n.attr("type"); {
		case typ == "xs:string":
			rule.text = true
		case typ != "":
			ct := complexTypes[typ]
			if ct == nil {
				t.Fatalf("unknown type %s", typ)
			}
			rule.text = ct.attr("mixed") == "true"
			walk(rule, ct)
		default:
			for j := range n.Children {
				ct := &n.Children[j]
				if ct.XMLName.Local != "complexType" {
					t.Fatalf("unsupported element content %s", ct.XMLName.Local)
				}
				rule.text = ct.attr("mixed") == "true"
				walk(rule, ct)
			}
		}
		s.elements[n.attr("name")] = rule
	}
	return s
}

// validate returns every way doc breaks the schema.
func (s *junitSchema) validate(doc []byte) []string {
	var root xsdNode
	if err := xml.NewDecoder(bytes.NewReader(doc)).Decode(&root); err != nil && err != io.EOF {
		return []string{err.Error()}
	}
	var problems []string
	var check func(path string, n *xsdNode)
	check = func(path string, n *xsdNode) {
		name := n.XMLName.Local
		path += "/" + name
		rule := s.elements[name]
		if rule == nil {
			problems = append(problems, path+": element not in the schema")
			return
		}
		for _, a := range n.Attrs {
			typ, ok := rule.attrs[a.Name.Local]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: attribute %s not allowed", path, a.Name.Local))
				continue
			}
			if re := s.patterns[typ]; re != nil && !re.MatchString(a.Value) {
				problems = append(problems, fmt.Sprintf("%s: %s=%q does not match %s", path, a.Name.Local, a.Value, typ))
			}
		}
		for _, req := range rule.required {
			found := false
			for _, a := range n.Attrs {
				found = found || a.Name.Local == req
			}
			if !found {
				problems = append(problems, fmt.Sprintf("%s: required attribute %s missing", path, req))
			}
		}
		if !rule.text && strings.TrimSpace(n.Text) != "" {
			problems = append(problems, path+": text not allowed")
		}
		for i := range n.Children {
			c := &n.Children[i]
			if !rule.children[c.XMLName.Local] {
				problems = append(problems, fmt.Sprintf("%s: child %s not allowed", path, c.XMLName.Local))
				continue
			}
			check(path, c)
		}
	}
	if root.XMLName.Local != "testsuites" && root.XMLName.Local != "testsuite" {
		return []string{"root element " + root.XMLName.Local}
	}
	check("", &root)
	return problems
}

// TestJUnitValidatesAgainstJenkinsSchema validates -o junit of a report
// with every kind of check result (failing, known, suppressed, skipped,
// errored, disabled) against the vendored Jenkins JUnit schema.
func TestJUnitValidatesAgainstJenkinsSchema(t *testing.T) {
	schema := loadJUnitSchema(t)
	r := ciSample()
	r.Disable([]string{"d"}, "disabled by --skip")
	var b bytes.Buffer
	if err := Print(&b, r, ciOptions("junit")); err != nil {
		t.Fatal(err)
	}
	for _, p := range schema.validate(b.Bytes()) {
		t.Error(p)
	}
	if !strings.Contains(b.String(), `<skipped message="disabled by --skip">`) {
		t.Errorf("disabled check d is not a skipped testcase:\n%s", b.String())
	}
	// The validator itself must reject what the schema forbids.
	bad := []string{
		`<testsuites skipped="1"></testsuites>`,
		`<testsuites><testsuite name="a" tests="1" failures="0"></testsuite></testsuites>`,
		`<testsuites><testsuite name="a" tests="1" failures="0" errors="0" time="1s"></testsuite></testsuites>`,
		`<testsuites><testcase name="x"/></testsuites>`,
	}
	for _, doc := range bad {
		if len(schema.validate([]byte(doc))) == 0 {
			t.Errorf("validator accepted %s", doc)
		}
	}
}

// TestJUnitScanFailure: a scan that could not start still writes JUnit,
// valid, with one error testcase.
func TestJUnitScanFailure(t *testing.T) {
	schema := loadJUnitSchema(t)
	var b bytes.Buffer
	if err := Print(&b, doctor.FailedReport("connecting to the cluster: connection refused"), ciOptions("junit")); err != nil {
		t.Fatal(err)
	}
	for _, p := range schema.validate(b.Bytes()) {
		t.Error(p)
	}
	if !strings.Contains(b.String(), `<error message="connecting to the cluster: connection refused"`) {
		t.Errorf("no error testcase:\n%s", b.String())
	}
}
