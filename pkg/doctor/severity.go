package doctor

import "fmt"

// Severity orders findings; CI gates on it with --fail-on.
type Severity int

// Severities, mildest first. Never is only a --fail-on threshold.
const (
	Info Severity = iota + 1
	Warning
	Critical
	Never // --fail-on never: no finding fails the run
)

var severityNames = [...]string{"", "info", "warning", "critical", "never"}

func (s Severity) String() string {
	if s < Info || s > Never {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return severityNames[s]
}

// ParseSeverity accepts the lowercase names used on the command line and in JSON.
func ParseSeverity(name string) (Severity, error) {
	for i, n := range severityNames {
		if i > 0 && n == name {
			return Severity(i), nil
		}
	}
	return 0, fmt.Errorf("unknown severity %q (want critical, warning, info or never)", name)
}

// MarshalText makes severities appear by name in JSON and YAML.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText is the inverse of MarshalText, for reading reports back.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	*s = v
	return err
}
