// Package config reads kubectl-doctor's config file: per-check switches and
// severity overrides, ignore entries with a reason and an optional expiry,
// and custom checks written in CEL. The file has a versioned schema and is
// validated strictly, line by line, because a typo in a suppression must
// fail the CI job that relies on it, not silently suppress nothing.
package config

import (
	"path"
	"strings"
	"time"

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
