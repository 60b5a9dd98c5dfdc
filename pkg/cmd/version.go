package cmd

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// Set by the release build (-ldflags -X); `go install` builds fall back to
// the module version recorded in the binary.
var (
	version = ""
	commit  = ""
	date    = ""
)

func versionString() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	// A build from a git checkout: its commit, as go build records it.
	var rev, modified string
	for _, st := range bi.Settings {
		switch st.Key {
		case "vcs.revision":
			rev = st.Value
		case "vcs.modified":
			modified = st.Value
		}
	}
	if len(rev) >= 12 {
		v := "dev-" + rev[:12]
		if modified == "true" {
			v += "-dirty"
		}
		return v
	}
	return "dev"
}

// versionLine is what `version` and `--version` print: the version, and
// the commit and date of a release build.
func versionLine() string {
	line := "kubectl-doctor " + versionString()
	if commit != "" {
		line += " (" + commit
		if date != "" {
			line += ", " + date
		}
		line += ")"
	}
	return line
}

// userAgent is how the API server's logs name kubectl-doctor.
func userAgent() string { return "kubectl-doctor/" + versionString() }

// VersionOptions is `kubectl doctor version`.
type VersionOptions struct {
	genericiooptions.IOStreams
}

func newVersionCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &VersionOptions{IOStreams: streams}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the kubectl-doctor version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context())
		},
	}
}

// Run prints the version, and the commit and date of a release build.
func (o *VersionOptions) Run(_ context.Context) error {
	_, err := fmt.Fprintln(o.Out, versionLine())
	return err
}
