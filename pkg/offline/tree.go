package offline

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// tree reads the files of one input. Support bundles and must-gathers mix
// Kubernetes objects with other JSON and YAML (discovery documents, access
// reviews, analyses): inside their resource directories a file without
// objects is skipped and counted; elsewhere in them any such file is; in a
// plain directory of objects it is an error.
type tree struct {
	d             *decoder
	bundle        bool      // saw a cluster-resources or cluster-scoped-resources directory
	pending       []error   // errors of files outside those directories whose path names no resource: skipped if this is a bundle
	serverVersion string    // from a bundle's cluster-info/cluster_version.json
	capturedAt    time.Time // from a must-gather's timestamp file
	sonobuoy      bool      // saw a Sonobuoy archive's resources/cluster or resources/ns
	mustGatherDir bool      // saw a cluster-scoped-resources directory
	otherFiles    int       // logs and other files that are not JSON or YAML
	inArchive     bool      // reading a tar archive, whose reader is limited already
}

// markers are the directories that make a tree a support bundle
// (troubleshoot.sh) or a must-gather (OpenShift).
var markers = []string{"cluster-resources", "cluster-scoped-resources"}

// mustGather: the tree is an OpenShift must-gather (its resources are under
// cluster-scoped-resources, or it has a must-gather timestamp file), not a
// troubleshoot.sh support bundle.
func (t *tree) mustGather() bool { return t.mustGatherDir || !t.capturedAt.IsZero() }

func (t *tree) dir(root string) error {
	return filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return &InputError{File: p, Msg: plainPathError(err)}
		}
		target := p
		if e.Type()&fs.ModeSymlink != 0 {
			// Followed only to a regular file inside the capture: a
			// link out of it (../../etc/passwd) or to a directory (a
			// loop) is skipped and counted.
			resolved, err := filepath.EvalSymlinks(p)
			if err != nil || !within(root, resolved) {
				t.otherFiles++
				return nil
			}
			fi, err := os.Stat(resolved)
			if err != nil || !fi.Mode().IsRegular() {
				t.otherFiles++
				return nil
			}
			target = resolved
		} else if !e.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		return t.file(p, filepath.ToSlash(rel), func() (io.ReadCloser, error) { return os.Open(target) })
	})
}

// within says whether path p lies inside directory root.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

func (t *tree) openFile(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return &InputError{File: p, Msg: plainPathError(err)}
	}
	defer f.Close()
	return t.stream(p, f)
}

// stream reads one file or stdin: gzip is undone, a tar archive (a .tar.gz
// support bundle) is walked as a tree, anything else is one stream.
func (t *tree) stream(name string, r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(6)
	if c := unsupportedCompression(head); c != "" {
		return &InputError{File: name, Msg: fmt.Sprintf("%s-compressed: not supported; decompress it first (e.g. %s)", c, decompressHint[c])}
	}
	gzipped := false
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return &InputError{File: name, Msg: "not valid gzip: " + err.Error()}
		}
		defer zr.Close()
		br = bufio.NewReaderSize(t.d.limits.reader(&gzipErrors{r: zr}), 64<<10)
		gzipped = true
	} else {
		br = bufio.NewReaderSize(t.d.limits.reader(br), 64<<10)
	}
	if head, _ := br.Peek(512); len(head) == 512 && bytes.Equal(head[257:262], []byte("ustar")) {
		if err := t.tar(name, br); err != nil {
			return err
		}
		if gzipped {
			// Read to the end of the gzip stream, so that its checksum and
			// length are verified even when the tar ended first.
			if _, err := io.Copy(io.Discard, br); err != nil {
				return &InputError{File: name, Msg: err.Error()}
			}
		}
		return nil
	}
	t.d.stats.Files++
	return t.d.decodeStream(name, br, false, nil)
}

var decompressHint = map[string]string{"xz": "xz -d FILE", "zstd": "zstd -d FILE", "bzip2": "bunzip2 FILE", "zip": "unzip FILE, then --from the directory"}

func (t *tree) tar(name string, r io.Reader) error {
	tail := &tailReader{r: r}
	tr := tar.NewReader(tail)
	t.inArchive = true
	defer func() { t.inArchive = false }()
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			if !tail.endsWithZeroBlocks() {
				return &InputError{File: name, Msg: "the tar archive is truncated: it ends without its end-of-archive blocks"}
			}
			return nil
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return &InputError{File: name, Msg: "the tar archive is truncated: " + err.Error()}
		}
		if err != nil {
			return &InputError{File: name, Msg: "reading the tar archive: " + err.Error()}
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		rel := strings.TrimPrefix(path.Clean(h.Name), "./")
		if err := t.file(name+":"+rel, rel, func() (io.ReadCloser, error) { return io.NopCloser(tr), nil }); err != nil {
			return err
		}
	}
}

// file reads one file of a tree; rel is its slash-separated path in it.
func (t *tree) file(display, rel string, open func() (io.ReadCloser, error)) error {
	parts := strings.Split(rel, "/")
	inMarker := -1
	for i, part := range parts[:len(parts)-1] {
		for _, m := range markers {
			if part == m {
				inMarker, t.bundle = i, true
				t.mustGatherDir = t.mustGatherDir || m == "cluster-scoped-resources"
			}
		}
		// A Sonobuoy results archive: resources/cluster/FILE and
		// resources/ns/NS/FILE beside its hosts/, meta/ and plugins/.
		if part == "resources" && i+2 < len(parts) && (parts[i+1] == "cluster" || parts[i+1] == "ns") {
			inMarker, t.bundle, t.sonobuoy = i, true, true
		}
		// A Rancher support-bundle-kit bundle (Harvester, Rancher):
		// yamls/cluster/... and yamls/namespaced/NS/..., whose writer
		// spells empty strings and nulls as the string "null".
		if part == "yamls" && i+2 < len(parts) && (parts[i+1] == "cluster" || parts[i+1] == "namespaced") {
			inMarker, t.bundle = i, true
		}
	}
	t.d.nullStrings = inMarker >= 0 && parts[inMarker] == "yamls"
	base := parts[len(parts)-1]
	ext := strings.ToLower(path.Ext(base))
	switch {
	case base == "cluster_version.json" && len(parts) > 1 && parts[len(parts)-2] == "cluster-info":
		return t.clusterVersion(display, open)
	case base == "timestamp" && ext == "":
		t.timestamp(open)
		return nil
	case base == "query-time.json" && len(parts) > 1 && parts[len(parts)-2] == "meta":
		return t.sonobuoyQueries(display, open)
	case base == "serverversion.json" && len(parts) <= 2:
		t.sonobuoyVersion(open)
		return nil
	case ext != ".json" && ext != ".yaml" && ext != ".yml":
		t.otherFiles++ // pod logs, host collector output, ...
		return nil
	case inMarker >= 0 && slices.Contains(parts[inMarker:len(parts)-1], "logs"):
		return nil
	case inMarker >= 0 && strings.HasSuffix(base, "-errors.json"):
		return t.errorsFile(display, parts[inMarker+1:], open)
	}
	rc, err := open()
	if err != nil {
		return &InputError{File: display, Msg: plainPathError(err)}
	}
	defer rc.Close()
	t.d.stats.Files++
	var in io.Reader = rc
	if !t.inArchive {
		in = t.d.limits.reader(rc)
	}
	var hint *snapshot.Resource
	if r, ok := resourceOfFile(parts); ok && inMarker >= 0 {
		hint = &r
	}
	err = t.d.decodeStream(display, in, inMarker >= 0, hint)
	if _, ok := limitError(err); ok {
		return err // never skipped: a size limit is not a redaction
	}
	if err == nil {
		return nil
	}
	if r, ok := resourceOfFile(parts); ok {
		// A file of a resource checks read must be valid, in a bundle too:
		// dropping it would judge the cluster on part of its objects.
		return t.unreadable(err, r, true)
	}
	if inMarker >= 0 {
		// Custom resources, CRDs, RBAC, redacted copies: no check reads
		// them, and redaction may leave them invalid.
		t.d.stats.NotObjects++
		return nil
	}
	// Outside a bundle's resource directories: fatal only if this turns
	// out not to be a bundle.
	t.pending = append(t.pending, err)
	return nil
}

// unreadable handles a file that does not parse: the error, or with
// --keep-going a listed unreadable file whose resource (when its path
// names one) is marked failed, so that no check judges it from part of
// its objects and the scan is incomplete.
func (t *tree) unreadable(err error, r snapshot.Resource, known bool) error {
	var ie *InputError
	if !t.d.keepGoing || !errors.As(err, &ie) {
		return err
	}
	u := Unreadable{File: ie.File, Error: ie.Error()}
	if known {
		u.Resource = r.String()
		t.d.b.Fail(r, "unreadable in the input: "+ie.Error(), false)
	}
	t.d.stats.Unreadable = append(t.d.stats.Unreadable, u)
	return nil
}

func (t *tree) finish(p string) error {
	if len(t.pending) > 0 && !t.bundle {
		for _, err := range t.pending {
			if err := t.unreadable(err, snapshot.Resource{}, false); err != nil {
				return err
			}
		}
	} else {
		t.d.stats.NotObjects += len(t.pending)
	}
	if t.d.header == nil && t.d.b.Empty() {
		if t.d.ns != "" && t.d.stats.OutOfScope > 0 {
			// Everything is in other namespaces: -n has a typo, or names
			// a namespace the capture does not hold.
			held := slices.Sorted(maps.Keys(t.d.stats.OtherNamespaces))
			if len(held) > 3 {
				held = append(held[:3:3], "...")
			}
			return &InputError{File: p, Msg: fmt.Sprintf("holds nothing in namespace %q: its objects are in %s", t.d.ns, strings.Join(held, ", "))}
		}
		return &InputError{File: p, Msg: "holds no Kubernetes objects"}
	}
	return nil
}

// mustGatherTime is how oc adm must-gather writes its timestamp file: Go's
// time.Time String, its start on the first line and its end on the last,
// each followed by the monotonic clock reading ("m=+81.015").
const mustGatherTime = "2006-01-02 15:04:05.999999999 -0700 MST"

// timestamp reads a must-gather's timestamp file: its last line is when the
// capture ended, the time ages are measured from. A file that says
// anything else is not one and is counted with the other files.
func (t *tree) timestamp(open func() (io.ReadCloser, error)) {
	t.otherFiles++
	rc, err := open()
	if err != nil {
		return
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, 4096))
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if i := strings.Index(last, " m="); i > 0 {
		last = last[:i]
	}
	at, err := time.Parse(mustGatherTime, last)
	if err != nil {
		return
	}
	if at.After(t.capturedAt) {
		t.capturedAt = at
	}
}

func (t *tree) clusterVersion(display string, open func() (io.ReadCloser, error)) error {
	rc, err := open()
	if err != nil {
		return &InputError{File: display, Msg: plainPathError(err)}
	}
	defer rc.Close()
	var v struct {
		Info struct {
			GitVersion string `json:"gitVersion"`
		} `json:"info"`
	}
	if err := json.NewDecoder(rc).Decode(&v); err != nil {
		return &InputError{File: display, Msg: "not the cluster's version: " + jsonErr(err)}
	}
	t.serverVersion = v.Info.GitVersion
	return nil
}

// resourceOfFile is the resource a capture file holds, read from its path
// (slash-separated parts): a file named after it (nodes.json, core/pods.yaml,
// a support bundle's pvcs.json), a file in a directory named after it
// (cluster-resources/pods/NS.json, cluster-scoped-resources/core/nodes/N.yaml,
// config.openshift.io/clusteroperators/NAME.yaml), a must-gather's per-pod
// copy (pods/NAME/NAME.yaml) or namespace (namespaces/NS/NS.yaml). False
// when the path names no resource checks read.
func resourceOfFile(parts []string) (snapshot.Resource, bool) {
	named := func(name string) (snapshot.Resource, bool) {
		if r, ok := snapshot.ForResource(name); ok {
			return r, true
		}
		r, ok := bundleDirs[name]
		return r, ok
	}
	n := len(parts)
	base := parts[n-1]
	base = strings.TrimSuffix(base, path.Ext(base))
	if n >= 3 && parts[n-3] == "resources" && parts[n-2] == "cluster" || n >= 4 && parts[n-4] == "resources" && parts[n-3] == "ns" {
		// Sonobuoy: resources/cluster/core_v1_nodes.json,
		// resources/ns/NS/apps_v1_deployments.json; before v0.13
		// resources/ns/NS/Pods.json.
		base = strings.ToLower(base[strings.LastIndex(base, "_")+1:])
	}
	if strings.HasSuffix(base, "-errors") {
		return snapshot.Resource{}, false
	}
	if r, ok := named(base); ok {
		return r, true
	}
	if n >= 3 && parts[n-2] == base {
		switch parts[n-3] {
		case "pods":
			return snapshot.Pods, true
		case "namespaces":
			return snapshot.Namespaces, true
		}
	}
	if n >= 2 {
		return named(parts[n-2])
	}
	return snapshot.Resource{}, false
}

// bundleDirs maps the file and directory names of a troubleshoot.sh bundle's
// cluster-resources to the resources they hold, for its *-errors.json files.
var bundleDirs = map[string]snapshot.Resource{
	"nodes": snapshot.Nodes, "namespaces": snapshot.Namespaces, "pods": snapshot.Pods, "services": snapshot.Services,
	"deployments": snapshot.Deployments, "replicasets": snapshot.ReplicaSets, "statefulsets": snapshot.StatefulSets,
	"daemonsets": snapshot.DaemonSets, "jobs": snapshot.Jobs, "cronjobs": snapshot.CronJobs, "ingress": snapshot.Ingresses,
	"storage-classes": snapshot.StorageClasses, "pvcs": snapshot.PersistentVolumeClaims,
	"pod-disruption-budgets": snapshot.PodDisruptionBudgets, "endpointslices": snapshot.EndpointSlices,
	"ingress-classes": snapshot.IngressClasses, "validating-webhook-configurations": snapshot.ValidatingWebhooks,
	"mutating-webhook-configurations": snapshot.MutatingWebhooks, "events": snapshot.Events(""),
}

// errorsFile reads a bundle's NAME-errors.json: the errors its collector met
// listing NAME. Any error makes the resource incomplete, and the checks that
// read it are skipped rather than judging part of the cluster.
func (t *tree) errorsFile(display string, parts []string, open func() (io.ReadCloser, error)) error {
	name := strings.TrimSuffix(strings.Join(parts, "/"), "-errors.json")
	name = strings.SplitN(name, "/", 2)[0]
	r, ok := bundleDirs[name]
	if !ok {
		return nil
	}
	rc, err := open()
	if err != nil {
		return &InputError{File: display, Msg: plainPathError(err)}
	}
	defer rc.Close()
	// A list of errors, or (newer collectors, per namespace) a map from
	// namespace to error.
	var raw json.RawMessage
	if err := json.NewDecoder(rc).Decode(&raw); err != nil {
		t.d.stats.NotObjects++
		return nil
	}
	var errs []string
	if err := json.Unmarshal(raw, &errs); err != nil {
		var byNS map[string]string
		if err := json.Unmarshal(raw, &byNS); err != nil {
			t.d.stats.NotObjects++
			return nil
		}
		for _, ns := range slices.Sorted(maps.Keys(byNS)) {
			errs = append(errs, byNS[ns]+" (namespace "+ns+")")
		}
		switch more := len(errs) - 1; {
		case more == 1:
			errs[0] += ", and 1 more namespace"
		case more > 1:
			errs[0] += fmt.Sprintf(", and %d more namespaces", more)
		}
	}
	if len(errs) > 0 {
		first := strings.Join(strings.Fields(errs[0]), " ")
		if len(first) > 200 {
			first = first[:200] + "…"
		}
		t.d.b.Fail(r, fmt.Sprintf("incomplete in the dump: the capture could not list %s: %s", r, first), true)
	}
	return nil
}

// gzipErrors names gzip's errors, which say nothing of the file otherwise.
type gzipErrors struct{ r io.Reader }

func (g *gzipErrors) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = errors.New("the compressed data ends early (truncated?)")
		} else {
			err = fmt.Errorf("not valid gzip: %w", err)
		}
	}
	return n, err
}

func plainPathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// sonobuoyQueries reads a Sonobuoy archive's meta/query-time.json: the
// queries it made. Sonobuoy writes no file for a list that came back empty,
// so a resource it queried without an error and wrote nothing of was read
// and is empty; one whose query failed is marked failed with its error.
func (t *tree) sonobuoyQueries(display string, open func() (io.ReadCloser, error)) error {
	rc, err := open()
	if err != nil {
		return &InputError{File: display, Msg: plainPathError(err)}
	}
	defer rc.Close()
	var queries []struct {
		Obj   string `json:"queryobj"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(rc, 16<<20)).Decode(&queries); err != nil {
		t.pending = append(t.pending, &InputError{File: display, Msg: "not a Sonobuoy query list: " + jsonErr(err)})
		return nil
	}
	t.otherFiles++
	t.sonobuoy = true
	for _, q := range queries {
		r, ok := snapshot.ForResource(strings.ToLower(q.Obj))
		if !ok || t.d.secret(r.Kind) || r.Kind == "Event" {
			continue
		}
		if q.Error != "" {
			t.d.b.Fail(r, "the capture could not read it: "+q.Error, true)
			continue
		}
		t.d.b.Present(r)
	}
	return nil
}

// sonobuoyVersion reads the server version a Sonobuoy archive keeps at its
// root; anything else in a file of that name is left alone.
func (t *tree) sonobuoyVersion(open func() (io.ReadCloser, error)) {
	t.otherFiles++
	rc, err := open()
	if err != nil {
		return
	}
	defer rc.Close()
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if json.NewDecoder(io.LimitReader(rc, 1<<20)).Decode(&v) == nil && strings.HasPrefix(v.GitVersion, "v") && t.serverVersion == "" {
		t.serverVersion = v.GitVersion
	}
}
