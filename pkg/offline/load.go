package offline

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// Absent is why a check is skipped when the input lacks what it reads.
const Absent = "not in the dump"

// Options tune a Load.
type Options struct {
	// Namespace, when set, keeps only that namespace's namespaced objects
	// (as -n does for a live scan).
	Namespace string
	// Stdin is read when the path is "-".
	Stdin io.Reader
	// MaxDocument and MaxInput bound one document and the whole input,
	// decompressed (0: DefaultMaxDocument, DefaultMaxInput).
	MaxDocument, MaxInput int64
	// KeepGoing (--keep-going) passes over a file of a directory or
	// archive that does not parse instead of failing the load: it is
	// listed in Stats.Unreadable, and the resource its path says it holds
	// is marked failed (its checks error: the scan is incomplete). Size
	// limits, archive damage and a single broken file or stream still fail.
	KeepGoing bool
}

// Unreadable is a file of the input that could not be parsed and was
// passed over (Options.KeepGoing).
type Unreadable struct {
	// File is the file as messages name it (ARCHIVE:MEMBER in an archive).
	File string `json:"file"`
	// Error is the one-line parse error, naming the file and document.
	Error string `json:"error"`
	// Resource is what the file's path says it holds ("pods",
	// "clusteroperators.config.openshift.io"), "" when its path does not
	// say: then anything may be missing.
	Resource string `json:"resource,omitempty"`
}

// String is one line for reports: "FILE (pods): document 3: not valid YAML: ...".
func (u Unreadable) String() string {
	msg := strings.TrimPrefix(u.Error, u.File+": ")
	if u.Resource != "" {
		return fmt.Sprintf("%s (%s): %s", u.File, u.Resource, msg)
	}
	return fmt.Sprintf("%s: %s", u.File, msg)
}

// Formats a Result may report.
const (
	FormatDump       = "kubectl-doctor dump"
	FormatBundle     = "support bundle"
	FormatMustGather = "must-gather"
	FormatSonobuoy   = "Sonobuoy results"
	FormatObjects    = "Kubernetes objects"
)

// Result is a snapshot read offline and what a scan of it needs to know.
type Result struct {
	Snapshot *snapshot.Snapshot
	// Header is the dump's header; nil unless Format is FormatDump.
	Header *Header
	// Now is the end of a dump's capture, or of a must-gather's (its
	// timestamp file), else the newest timestamp in the input (see
	// newest); zero when the input records no time at all.
	Now time.Time
	// CapturedAt is the end of a must-gather's capture, from its timestamp
	// file; zero otherwise (a dump's is in its Header).
	CapturedAt time.Time
	// Format is FormatDump, FormatBundle, FormatMustGather, FormatSonobuoy or
	// FormatObjects.
	Format string
	Stats  *Stats
}

// Load reads path: a kubectl-doctor dump, a YAML or JSON file or stream of
// objects or lists (gzip-compressed or not), a directory of such files read
// recursively (a `kubectl cluster-info dump` tree, a must-gather, a support
// bundle), or a .tar.gz support bundle; "-" reads opts.Stdin. Broken input
// is an *InputError naming the file and what is wrong.
func Load(p string, opts Options) (*Result, error) {
	d := &decoder{b: snapshot.NewBuilder(Absent), stats: newStats(), ns: opts.Namespace, limits: newLimits(opts), keepGoing: opts.KeepGoing}
	t := &tree{d: d}
	var err error
	switch fi, statErr := os.Stat(p); {
	case p == "-":
		if opts.Stdin == nil {
			return nil, &InputError{File: "-", Msg: "no standard input"}
		}
		err = t.stream("-", opts.Stdin)
	case statErr != nil:
		return nil, &InputError{File: p, Msg: plainPathError(statErr)}
	case fi.IsDir():
		// A capture directory may be a symlink (os.Stat followed it):
		// walk what it points to.
		root, rerr := filepath.EvalSymlinks(p)
		if rerr != nil {
			return nil, &InputError{File: p, Msg: plainPathError(rerr)}
		}
		err = t.dir(root)
	default:
		err = t.openFile(p)
	}
	if err == nil {
		d.mirrorEndpoints()
		err = t.finish(p)
	}
	if err != nil {
		return nil, err
	}
	res := &Result{Header: d.header, Stats: d.stats, Now: d.clock.t, Format: FormatObjects}
	ns, version := opts.Namespace, t.serverVersion
	switch {
	case d.header != nil:
		res.Format, res.Now, version = FormatDump, d.header.CapturedAt, d.header.ServerVersion
		if !d.finished.IsZero() {
			res.Now = d.finished
		}
		if ns == "" {
			ns = d.header.Namespace
		}
	case t.bundle:
		res.Format = FormatBundle
		switch {
		case t.mustGather():
			res.Format = FormatMustGather
		case t.sonobuoy:
			res.Format = FormatSonobuoy
		}
		if !t.capturedAt.IsZero() {
			res.CapturedAt, res.Now = t.capturedAt, t.capturedAt
		}
	}
	// A capture made by other tools holds the namespaces it has objects of
	// (a cluster-info dump without --all-namespaces, a bundle's or a
	// must-gather's chosen namespaces, kubectl get -n): the Services of a
	// namespace it never visited are unknown, not missing. kubectl-doctor's
	// own dump lists every namespace in its scope, as a live scan does.
	if d.header == nil {
		d.b.CoverCapturedNamespacesOnly()
	}
	res.Snapshot, err = d.b.Build(ns, version)
	if err != nil {
		return nil, &InputError{File: p, Msg: err.Error()}
	}
	return res, nil
}

// Stats says what an input held and what was made of it; the scan prints
// it on stderr so that a user knows what the findings stand on.
type Stats struct {
	Files   int // files read
	Objects int // objects filed into the snapshot
	// Ignored counts objects of kinds no check reads, by kind.
	Ignored map[string]int
	// Secrets counts Secrets dropped without being decoded.
	Secrets int
	// Converted counts objects of removed API versions converted to the
	// versions checks read, by "apiVersion kind".
	Converted map[string]int
	// Unconverted counts objects of removed API versions that could not be
	// converted, by reason.
	Unconverted map[string]int
	// NotObjects counts documents of a support bundle or must-gather that
	// hold no Kubernetes objects (API discovery, RBAC reviews, redactions).
	NotObjects int
	// Typed counts objects without apiVersion and kind (older support
	// bundles write bare arrays) typed by the path of their file.
	Typed int
	// Mirrored counts core/v1 Endpoints turned into EndpointSlices (a
	// capture without slices; see endpoints.go).
	Mirrored int
	// OutOfScope counts objects outside the namespace given with -n, and
	// InScope the namespaced objects in it; OtherNamespaces are the
	// namespaces of the objects left out.
	OutOfScope, InScope int
	OtherNamespaces     map[string]bool
	// Duplicates counts objects read a second time (same resource,
	// namespace and name) and filed once.
	Duplicates int
	// Unreadable lists the files passed over with --keep-going because
	// they do not parse.
	Unreadable []Unreadable
}

func newStats() *Stats {
	return &Stats{Ignored: map[string]int{}, Converted: map[string]int{}, Unconverted: map[string]int{}, OtherNamespaces: map[string]bool{}}
}

// InputError is broken input: the file (or "-"), the document (1-based; 0
// for the file as a whole) and what is wrong. It is one line.
type InputError struct {
	File string
	Doc  int
	Msg  string
	// Err is the cause when it matters to the caller (a size limit, which
	// is never passed over).
	Err error
}

// Unwrap is the cause, if kept.
func (e *InputError) Unwrap() error { return e.Err }

func (e *InputError) Error() string {
	if e.Doc == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s: document %d: %s", e.File, e.Doc, e.Msg)
}
