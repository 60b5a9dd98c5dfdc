package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/offline"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// offlineOptions is --from: the scan reads a dump, a support
// bundle or kubectl output instead of the cluster, needing no kubeconfig and
// sending no request.
type offlineOptions struct {
	From string
	// MaxDocument and MaxInput bound what --from reads (untrusted input):
	// one document, and the whole input decompressed.
	MaxDocument, MaxInput string
	// KeepGoing passes over files of the input that do not parse: they
	// are listed as unreadable and make the scan incomplete (exit 2 unless
	// --allow-incomplete) instead of stopping it.
	KeepGoing bool
	// namespace is -n, read from the flag itself: no kubeconfig is loaded.
	namespace string
	// unreadable are the files KeepGoing passed over, for the report.
	unreadable []string
	// agesAsOf is the input's newest timestamp when it does not say when
	// it was captured (doctor.Cluster.AgesAsOf).
	agesAsOf string
}

func (o *offlineOptions) addFlags(fs *pflag.FlagSet) {
	fs.Var((*onceString)(&o.From), "from", "Scan `PATH` instead of the cluster, with no kubeconfig: a file from 'kubectl doctor dump', "+
		"'kubectl cluster-info dump' output, 'kubectl get -o yaml|json' output, a directory of them, or a support bundle (- reads stdin)")
	fs.StringVar(&o.MaxDocument, "max-document-size", "1Gi", "With --from: the largest JSON value or YAML document read (a List counts as one)")
	fs.StringVar(&o.MaxInput, "max-input-size", "16Gi", "With --from: the most bytes read from the input, decompressed")
	fs.BoolVar(&o.KeepGoing, "keep-going", false, "With --from: pass over files of a capture directory or archive that do not parse, list them as unreadable "+
		"and scan the rest; the scan is then incomplete (exit 2 unless --allow-incomplete)")
}

// unreadableLines are the files a load passed over, as reports list them.
func unreadableLines(res *offline.Result) []string {
	var out []string
	for _, u := range res.Stats.Unreadable {
		out = append(out, u.String())
	}
	return out
}

// complete takes -n from its flag; unlike a live scan it reads no
// kubeconfig, so --from works where none exists.
func (o *offlineOptions) complete(cmd *cobra.Command) {
	all := cmd.Flags().Lookup("all-namespaces")
	if f := cmd.Flags().Lookup("namespace"); f != nil && f.Changed && (all == nil || !all.Changed) {
		o.namespace = f.Value.String()
	}
}

// load is the scan's read: --from's input, or else the cluster (reads
// must end by the read deadline of a scan started at start). It returns the
// snapshot and its source, the API server's URL or the input's. For an
// input it sets the scan's clock to the capture time unless --now-like
// tests set one.
func (o *ScanOptions) load(ctx context.Context, start time.Time) (*snapshot.Snapshot, string, error) {
	if o.offline.From == "" {
		if err := o.cluster.Connect(); err != nil {
			return nil, "", couldNotRun(err)
		}
		snap, err := o.cluster.Load(ctx, o.ErrOut, o.checks, o.cluster.ReadDeadline(start), true)
		if err != nil {
			return nil, "", couldNotRun(err)
		}
		return snap, o.cluster.Config.Host, nil
	}
	maxDoc, err := parseSize("--max-document-size", o.offline.MaxDocument)
	if err != nil {
		return nil, "", err
	}
	maxInput, err := parseSize("--max-input-size", o.offline.MaxInput)
	if err != nil {
		return nil, "", err
	}
	res, err := offline.Load(o.offline.From, offline.Options{Namespace: o.offline.namespace, Stdin: o.In, MaxDocument: maxDoc, MaxInput: maxInput, KeepGoing: o.offline.KeepGoing})
	if err != nil {
		var ie *offline.InputError
		if errors.As(err, &ie) {
			return nil, "", &exitError{Code: ExitError, Err: fmt.Errorf("--from %s", report.Esc(ie.Error()))}
		}
		return nil, "", &exitError{Code: ExitError, Err: fmt.Errorf("--from %s: %v", o.offline.From, err)}
	}
	if ns := o.offline.namespace; ns != "" && res.Stats.InScope == 0 && !hasNamespace(res.Snapshot, ns) {
		// A typo in -n must not read as a clean bill of health, as live.
		held := slices.Sorted(maps.Keys(res.Stats.OtherNamespaces))
		what := "no namespaced object at all"
		if len(held) > 0 {
			what = "objects of " + doctor.Plural(len(held), "namespace", "namespaces") + ": " + strings.Join(doctor.Examples(held), ", ")
			if len(held) > doctor.MaxExamples {
				what += ", ..."
			}
		}
		return nil, "", &exitError{Code: ExitError, Err: fmt.Errorf("namespace %q is not in --from %s: nothing in it to check (it holds %s)", ns, report.Esc(o.offline.From), report.Esc(what))}
	}
	source := o.offline.From
	if res.Header != nil && res.Header.Server != "" {
		source = res.Header.Server
	}
	if o.Now.IsZero() {
		o.Now = res.Now
		if res.Header == nil && res.CapturedAt.IsZero() && !res.Now.IsZero() {
			o.offline.agesAsOf = res.Now.UTC().Format(time.RFC3339)
		}
	}
	printInputSummary(o.ErrOut, o.offline.From, res, o.Now)
	o.offline.unreadable = unreadableLines(res)
	return res.Snapshot, source, nil
}

// hasNamespace says the snapshot holds the Namespace object ns (an empty
// namespace exists, and has nothing to report).
func hasNamespace(s *snapshot.Snapshot, ns string) bool {
	for _, n := range s.Namespaces() {
		if n.Name == ns {
			return true
		}
	}
	return false
}

// printInputSummary says on stderr what the input held and what the scan
// made of it: what was converted, ignored or dropped, and the clock ages are
// measured against.
func printInputSummary(w io.Writer, from string, res *offline.Result, now time.Time) {
	st := res.Stats
	var parts []string
	parts = append(parts, fmt.Sprintf("%s: %s", res.Format, doctor.Plural(st.Objects, "object", "objects")))
	if n := sum(st.Ignored); n > 0 {
		parts = append(parts, fmt.Sprintf("%s of kinds no check reads ignored (%s)", doctor.Thousands(n), topCounts(st.Ignored, 4)))
	}
	if st.Secrets > 0 {
		parts = append(parts, fmt.Sprintf("%s dropped unread", doctor.Plural(st.Secrets, "Secret", "Secrets")))
	}
	if n := sum(st.Converted); n > 0 {
		parts = append(parts, fmt.Sprintf("%s converted from removed API versions (%s)", doctor.Thousands(n), topCounts(st.Converted, 4)))
	}
	for reason, n := range st.Unconverted {
		parts = append(parts, fmt.Sprintf("%s skipped: %s", doctor.Thousands(n), reason))
	}
	if st.Mirrored > 0 {
		parts = append(parts, fmt.Sprintf("EndpointSlices derived from %s (the capture holds no slices)", doctor.Plural(st.Mirrored, "Endpoints object", "Endpoints objects")))
	}
	if st.Typed > 0 {
		parts = append(parts, fmt.Sprintf("%s without apiVersion and kind typed by their file's path (an older bundle)", doctor.Plural(st.Typed, "object", "objects")))
	}
	if st.NotObjects > 0 {
		parts = append(parts, fmt.Sprintf("%s without Kubernetes objects skipped", doctor.Plural(st.NotObjects, "document", "documents")))
	}
	if st.Duplicates > 0 {
		parts = append(parts, fmt.Sprintf("%s read twice, kept once", doctor.Plural(st.Duplicates, "object", "objects")))
	}
	if st.OutOfScope > 0 {
		parts = append(parts, fmt.Sprintf("%s outside the namespace", doctor.Thousands(st.OutOfScope)))
	}
	if n := len(st.Unreadable); n > 0 {
		parts = append(parts, fmt.Sprintf("%s unreadable, passed over (--keep-going)", doctor.Plural(n, "file", "files")))
	}
	sort.Strings(parts[1:])
	fmt.Fprintf(w, "kubectl doctor: read %s: %s\n", report.Esc(from), report.Esc(strings.Join(parts, "; ")))
	for _, u := range st.Unreadable {
		fmt.Fprintf(w, "kubectl doctor: unreadable, passed over: %s\n", report.Esc(u.String()))
	}
	switch {
	case res.Header != nil:
		fmt.Fprintf(w, "kubectl doctor: captured %s from %s (%s) by kubectl-doctor %s; ages are as of the capture\n",
			now.UTC().Format(time.RFC3339), report.Esc(res.Header.Server), report.Esc(res.Header.ServerVersion), report.Esc(res.Header.DoctorVersion))
	case !res.CapturedAt.IsZero():
		fmt.Fprintf(w, "kubectl doctor: captured %s (the must-gather's timestamp file); ages are as of the capture\n", now.UTC().Format(time.RFC3339))
	case !res.Now.IsZero():
		fmt.Fprintf(w, "kubectl doctor: no capture time in the input: ages are as of its newest timestamp, %s\n", now.UTC().Format(time.RFC3339))
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// topCounts is "ConfigMap ×20, ServiceAccount ×9, +3 more".
func topCounts(m map[string]int, max int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var out []string
	for i, k := range keys {
		if i == max {
			out = append(out, fmt.Sprintf("+%d more", len(keys)-max))
			break
		}
		out = append(out, fmt.Sprintf("%s ×%s", k, doctor.Thousands(m[k])))
	}
	return strings.Join(out, ", ")
}

// parseSize reads a size flag: "512Mi", "2G", "1048576".
func parseSize(flag, v string) (int64, error) {
	q, err := resource.ParseQuantity(v)
	if err != nil || q.Sign() <= 0 {
		return 0, usageError("%s: %q is not a size such as 512Mi or 2Gi", flag, v)
	}
	return q.Value(), nil
}

// onceString is a string flag given at most once: a second --from would
// silently replace the first, so that a user who meant both scans one.
type onceString string

func (s *onceString) String() string { return string(*s) }

func (s *onceString) Set(v string) error {
	if *s != "" {
		return fmt.Errorf("given twice (%s, %s): name several captures in one --from, comma-separated", *s, v)
	}
	*s = onceString(v)
	return nil
}

func (s *onceString) Type() string { return "string" }
