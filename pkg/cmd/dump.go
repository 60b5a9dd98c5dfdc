package cmd

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/connect"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/offline"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// DumpOptions is `kubectl doctor dump`: what a scan reads, written to a file
// that `kubectl doctor --from` scans anywhere later.
type DumpOptions struct {
	cluster *connect.Options
	// Output is the file to write; it is gzip-compressed when its name ends
	// in .gz; "-" is stdout.
	Output string
	genericiooptions.IOStreams
}

// NewDumpOptions returns dump's options, with the cluster flags the root
// command shares.
func NewDumpOptions(streams genericiooptions.IOStreams, cluster *connect.Options) *DumpOptions {
	return &DumpOptions{cluster: cluster, IOStreams: streams}
}

func newDumpCommand(streams genericiooptions.IOStreams, cluster *connect.Options) *cobra.Command {
	o := NewDumpOptions(streams, cluster)
	cmd := &cobra.Command{
		Use:   "dump -o FILE",
		Short: "Write what a scan reads to a file, to scan later with --from",
		Long: `dump reads exactly what a scan reads (the same resources, each listed once
from the API server's watch cache, trimmed; /version and /metrics; never a
Secret) and writes it, object by object, to one YAML file with a header that
names the server, its version, the capture time and the kubectl-doctor
version. Attach it to an incident ticket; anyone can then run every check on
it, with ages as of the capture, without access to the cluster:

  kubectl doctor --from FILE

Reads go one resource at a time, so memory stays that of the largest one.
A resource you may not list is recorded as such, and the checks that need it
are skipped when the dump is scanned.

` + exitCodesHelp,
		Example: `  # Capture, compressed
  kubectl doctor dump -o snapshot.yaml.gz

  # One namespace, to stdout
  kubectl doctor dump -n shop -o - | gzip > shop.yaml.gz

  # Scan it later, anywhere
  kubectl doctor --from snapshot.yaml.gz`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Complete(cmd)
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// AddFlags registers -o; the cluster flags are the root's.
func (o *DumpOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Write the dump to this `FILE` (gzip when it ends in .gz; - for stdout)")
}

// Complete records what the cluster flags say; Run reads the kubeconfig.
func (o *DumpOptions) Complete(cmd *cobra.Command) {
	o.cluster.Complete(cmd)
}

// Validate requires an output: a dump is never written to a terminal by
// accident.
func (o *DumpOptions) Validate() error {
	if o.Output == "" {
		return usageError("--output is required: a file name (.gz to compress) or - for stdout")
	}
	if o.Output != "-" {
		if err := writableFile(o.Output); err != nil {
			return usageError("--output: %v", err)
		}
	}
	return couldNotRun(o.cluster.Validate())
}

// Run connects, reads each planned resource in turn and streams it out.
func (o *DumpOptions) Run(ctx context.Context) error {
	if err := o.cluster.Connect(); err != nil {
		return couldNotRun(err)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, o.cluster.Timeout)
	defer cancel()
	cfg, v, err := o.cluster.Open(ctx, o.ErrOut)
	if err != nil {
		return couldNotRun(err)
	}
	if err := o.cluster.NamespaceExists(ctx, cfg); err != nil {
		return couldNotRun(err)
	}

	out, commit, abort, err := o.open()
	if err != nil {
		return &exitError{Code: ExitError, Err: err}
	}
	defer abort()
	w, err := offline.NewWriter(out, offline.Header{Server: cfg.Host, ServerVersion: v,
		CapturedAt: start.UTC().Truncate(time.Second), DoctorVersion: versionString(), Namespace: o.cluster.Namespace})
	if err != nil {
		return o.writeError(err)
	}
	plan := snapshot.Plan(doctor.Reads(checks.All()))
	progress := connect.NewProgress(o.ErrOut, len(plan))
	objects := 0
	var failed []string
	for _, r := range plan {
		progress.Step(r)
		// One resource at a time, dropped once written: the same reads as a
		// scan (snapshot.Load), the memory of the largest list.
		s, err := snapshot.Load(ctx, cfg, []snapshot.Resource{r}, snapshot.LoadOptions{Namespace: o.cluster.Namespace})
		if err != nil {
			progress.Done()
			return couldNotRun(o.cluster.Unreachable(ctx, cfg, err))
		}
		s.ServerVersion = v
		if err := s.Err(r); err != nil {
			failed = append(failed, err.Error())
		}
		n, err := w.WriteRead(r, s)
		if err != nil {
			progress.Done()
			return o.writeError(err)
		}
		objects += n
	}
	progress.Done()
	if objects == 0 && len(failed) > 0 {
		// A capture of nothing is no capture: no file, exit 2.
		return couldNotRun(fmt.Errorf("nothing dumped: %d of %d reads could not be read (%s)", len(failed), len(plan), report.Esc(strings.Join(failed, "; "))))
	}
	w.Finished = time.Now().UTC().Truncate(time.Second)
	if err := w.Close(); err != nil {
		return o.writeError(err)
	}
	if err := commit(); err != nil {
		return o.writeError(err)
	}
	msg := fmt.Sprintf("kubectl doctor: dumped %s, %s, from %s to %s in %s", doctor.Plural(len(plan), "read", "reads"),
		doctor.Plural(objects, "object", "objects"), report.Esc(cfg.Host), o.Output, time.Since(start).Round(10*time.Millisecond))
	if len(failed) > 0 {
		msg += fmt.Sprintf("; %d could not be read (%s): checks that need them will be skipped", len(failed), report.Esc(strings.Join(failed, "; ")))
	}
	fmt.Fprintln(o.ErrOut, msg)
	return nil
}

func (o *DumpOptions) writeError(err error) error {
	return &exitError{Code: ExitError, Err: fmt.Errorf("writing %s: %v", o.Output, err)}
}

// open returns the dump's writer, a commit that flushes it and puts the
// file in place, and an abort that removes a partial file: a failed dump
// never leaves a truncated file under the name asked for.
func (o *DumpOptions) open() (io.Writer, func() error, func(), error) {
	var sink io.Writer = o.Out
	var f *os.File
	if o.Output != "-" {
		var err error
		f, err = os.CreateTemp(filepath.Dir(o.Output), "."+filepath.Base(o.Output)+".tmp-*")
		if err != nil {
			return nil, nil, nil, fmt.Errorf("creating %s: %v", o.Output, plainErr(err))
		}
		sink = f
	}
	bw := bufio.NewWriterSize(sink, 256<<10)
	var out io.Writer = bw
	var zw *gzip.Writer
	if strings.HasSuffix(o.Output, ".gz") {
		zw = gzip.NewWriter(bw)
		out = zw
	}
	done := false
	commit := func() error {
		if zw != nil {
			if err := zw.Close(); err != nil {
				return err
			}
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if f == nil {
			done = true
			return nil
		}
		if err := f.Close(); err != nil {
			return err
		}
		if err := os.Rename(f.Name(), o.Output); err != nil {
			return err
		}
		done = true
		return nil
	}
	abort := func() {
		if !done && f != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}
	return out, commit, abort, nil
}

func plainErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
