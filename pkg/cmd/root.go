// Package cmd holds kubectl-doctor's cobra commands. Each command is an
// Options struct built by NewXOptions, whose AddFlags registers its flags,
// whose Complete fills it from flags and arguments, whose Validate rejects
// bad input naming the flag, and whose Run does the work: tests build the
// Options directly and call Run. Commands that read a cluster share one
// connect.Options (the kubeconfig is read by Run, so a bad flag is reported
// even where no cluster is configured); a command that gates on findings
// ends with decide (verdict.go), the one exit-code policy.
//
// One file per command: scan.go (with scan_ci.go, scan_offline.go and
// fleet.go for its CI, --from and multi-cluster parts), serve.go, dump.go,
// audit.go, taints.go, nodes.go and history.go (listing.go is what the three
// listings share), checks.go (checks, explain) and version.go; exit.go holds
// the exit codes.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
)

// NewRootCommand builds `kubectl doctor` with its subcommands.
func NewRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	scan := NewScanOptions(streams)
	root := &cobra.Command{
		Use:   "kubectl-doctor",
		Short: "Diagnose a Kubernetes cluster: what is wrong, why, and what to do about it",
		Long: `kubectl doctor scans the cluster of the current kubeconfig context and prints
findings by severity, each naming the root-cause object, the evidence and the
command that fixes or inspects it. It only reads: each resource is listed once
from the API server's watch cache, Secrets are never read, and a resource you
may not list only skips the checks that need it.

With --from it diagnoses a cluster it cannot reach, from a file or directory:
a 'kubectl doctor dump', 'kubectl cluster-info dump' output, 'kubectl get
-o yaml|json' output, a troubleshoot.sh support bundle, an OpenShift
must-gather or a Sonobuoy results archive (.tar.gz or unpacked). No kubeconfig is read and no request is made; checks whose
resources the input lacks are skipped ("not in the dump"), and broken input
exits 2 naming the file.

` + exitCodesHelp,
		Example: `  # Scan the current context
  kubectl doctor

  # Gate a CI job on warnings, machine-readable
  kubectl doctor -o json --fail-on warning

  # Only some checks, one namespace
  kubectl doctor --check rollout-history -n shop

  # Several clusters, one merged report, the worst cluster's exit code
  kubectl doctor --context prod,staging
  kubectl doctor --all-contexts -o json --fail-on warning

  # Capture now, diagnose later or elsewhere
  kubectl doctor dump -o snapshot.yaml.gz
  kubectl doctor --from snapshot.yaml.gz
  kubectl doctor --from support-bundle.tar.gz
  kubectl cluster-info dump --all-namespaces | kubectl doctor --from -`,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl doctor"},
		Version:       versionString(),
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		// -v is kubectl's log level, for every subcommand.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return scan.cluster.ApplyLogLevel(cmd.ErrOrStderr())
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			err := scan.Complete(cmd)
			if err == nil {
				err = scan.Validate()
			}
			if err == nil {
				err = scan.Run(cmd.Context())
			}
			return scan.reportFailure(err)
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{Code: ExitError, Err: err}
	})
	scan.AddFlags(root)
	root.SetVersionTemplate(versionLine() + "\n")
	root.AddCommand(
		newChecksCommand(streams),
		newExplainCommand(streams),
		newTaintsCommand(streams, scan.cluster),
		newHistoryCommand(streams, scan.cluster),
		newVersionCommand(streams),
		newAuditCommand(streams),
	)
	root.AddCommand(newNodesCommand(streams, scan.cluster))
	root.AddCommand(newDumpCommand(streams, scan.cluster))
	root.AddCommand(newServeCommand(streams, scan.cluster))
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	return root
}

// Execute runs the command line and returns the process exit code. Errors
// become one line on stderr; nothing panics out of here.
func Execute(ctx context.Context, streams genericiooptions.IOStreams, args []string) (code int) {
	defer func() {
		if v := recover(); v != nil {
			fmt.Fprintf(streams.ErrOut, "error: internal error: %v\n", v)
			code = ExitError
		}
	}()
	root := NewRootCommand(streams)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintln(streams.ErrOut, "error: "+oneLine(ee.Err.Error()))
		}
		return ee.Code
	}
	fmt.Fprintln(streams.ErrOut, "error: "+oneLine(err.Error()))
	return ExitError
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// checkNames completes --check, --skip and `explain` with check names.
func checkNames(_ *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, c := range checks.All() {
		out = append(out, c.Name+"\t"+c.Title())
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
