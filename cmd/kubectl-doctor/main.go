// Command kubectl-doctor is the kubectl plugin `kubectl doctor`. main only
// wires the process to the library: streams, signals, auth plugins, klog and
// the exit code.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	_ "k8s.io/client-go/plugin/pkg/client/auth" // exec, OIDC and other kubeconfig auth plugins
	"k8s.io/klog/v2"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/cmd"
)

func main() {
	// client-go logs through klog; the user gets our one-line errors instead.
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cmd.Execute(ctx, genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, os.Args[1:])
	stop()
	os.Exit(code)
}
