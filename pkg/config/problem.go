package config

import (
	"fmt"
	"strings"
)

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
