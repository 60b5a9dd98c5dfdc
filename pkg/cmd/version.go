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
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "dev"
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
	line := "kubectl-doctor " + versionString()
	if commit != "" {
		line += " (" + commit
		if date != "" {
			line += ", " + date
		}
		line += ")"
	}
	_, err := fmt.Fprintln(o.Out, line)
	return err
}
