// Command kubectl-doctor is the kubectl plugin `kubectl doctor`. main only
// wires the process to the library: streams, signals, auth plugins, klog and
// the exit code.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	_ "time/tzdata" // CronJobs' spec.timeZone, also in images without a zoneinfo database

	"k8s.io/cli-runtime/pkg/genericiooptions"
	_ "k8s.io/client-go/plugin/pkg/client/auth" // exec, OIDC and other kubeconfig auth plugins
	"k8s.io/klog/v2"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/cmd"
)

func main() {
	// A scan holds one snapshot and exits: trade GC work for a smaller
	// peak (the heap may grow to 1.15x the live snapshot, not 2x). At 30,000
	// pods this is about 0.5 s more CPU than GOGC=50 for 25 MiB less; the
	// pod spec cache (pkg/snapshot/podspecs.go) saved more CPU than that
	// (docs/performance.md). GOGC in the environment still wins.
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(15)
	}
	// client-go logs through klog; the user gets our one-line errors instead.
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)

	// The first Ctrl-C ends the reads still running and prints what was
	// read; a second one exits at once, as the default handler does.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := cmd.Execute(ctx, genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, os.Args[1:])
	stop()
	os.Exit(code)
}
