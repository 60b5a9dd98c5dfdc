package offline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// errNotObjects marks a document that is valid JSON or YAML but no
// Kubernetes object: an error in strict inputs, skipped in bundles.
var errNotObjects = errors.New("not Kubernetes objects")

// decoder files the objects of one input into a snapshot builder.
type decoder struct {
	b      *snapshot.Builder
	stats  *Stats
	ns     string // -n: drop namespaced objects of other namespaces
	clock  newest
	header *Header // the dump header, once read
	limits *limits
	seen   map[dedupeKey]bool
	// keepGoing passes over files that do not parse (Options.KeepGoing).
	keepGoing bool
	// nullStrings: the file being read spells empty values as the string
	// "null" (Rancher's support-bundle-kit); they are read as null.
	nullStrings bool
	// finished is the dump's end of capture, when it records one.
	finished time.Time
	// eps are the capture's core/v1 Endpoints (see endpoints.go).
	//lint:ignore SA1019 captures from before EndpointSlices hold them
	eps []*corev1.Endpoints
}

// stream is the state of one file or stream being decoded.
type stream struct {
	d       *decoder
	name    string
	lenient bool
	// hint is the resource the file's path names (a support bundle's
	// cluster-resources/pods/NS.json): it types array elements that carry
	// no apiVersion and kind, as bundles before 2021 wrote them.
	hint *snapshot.Resource
	doc  int
	seen int // documents with content so far
	// dump state: set when the stream opened with a dump header.
	dump      bool
	cur       *snapshot.Resource
	remaining int
	ended     bool
}

// decodeStream reads a JSON stream (objects or arrays, concatenated, as
// `kubectl get -o json` and `kubectl cluster-info dump` write them; the
// latter's pod log sections are skipped) or a YAML stream of documents.
// In a lenient stream a document without Kubernetes objects ends the file
// quietly (counted); in a strict one it is an error.
func (d *decoder) decodeStream(name string, r io.Reader, lenient bool, hint *snapshot.Resource) error {
	st := &stream{d: d, name: name, lenient: lenient, hint: hint}
	// Windows PowerShell 5.1's ">" writes UTF-16 with a byte order mark:
	// read it as kubectl does, transcoded to UTF-8 (a UTF-8 mark is
	// dropped; text without a mark passes as it is).
	r = transform.NewReader(r, unicode.BOMOverride(encoding.Nop.NewDecoder()))
	br := bufio.NewReaderSize(r, 64<<10)
	first, err := peekNonSpace(br)
	if errors.Is(err, io.EOF) {
		return nil // an empty file holds nothing
	}
	if err != nil {
		return &InputError{File: name, Msg: err.Error()}
	}
	if binary(first) {
		return &InputError{File: name, Msg: "binary data, not JSON or YAML"}
	}
	if first == '{' || first == '[' {
		dec := json.NewDecoder(&logFilter{r: br})
		for {
			st.doc++
			var raw json.RawMessage
			d.limits.startDocument()
			if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
				break
			} else if le, ok := limitError(err); ok {
				return &InputError{File: st.name, Doc: st.doc, Msg: le.Error(), Err: le}
			} else if err != nil {
				return st.fail(fmt.Sprintf("not valid JSON: %v", jsonErr(err)))
			}
			if err := st.value(raw); errors.Is(err, errNotObjects) && lenient {
				d.stats.NotObjects++
				return nil
			} else if err != nil {
				return err
			}
		}
	} else {
		yr := utilyaml.NewYAMLReader(br)
		for {
			st.doc++
			d.limits.startDocument()
			doc, err := yr.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if le, ok := limitError(err); ok {
				return &InputError{File: st.name, Doc: st.doc, Msg: le.Error(), Err: le}
			}
			if err != nil {
				return st.fail(fmt.Sprintf("not valid YAML: %v", err))
			}
			if blank(doc) {
				continue
			}
			j, err := yaml.YAMLToJSON(doc)
			if err != nil {
				return st.fail(fmt.Sprintf("not valid YAML: %v", strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")))
			}
			if err := st.value(j); errors.Is(err, errNotObjects) && lenient {
				d.stats.NotObjects++
				return nil
			} else if err != nil {
				return err
			}
		}
	}
	if st.dump && !st.ended {
		return &InputError{File: name, Msg: "the dump ends before its DumpEnd record: it was cut short"}
	}
	return nil
}

func (st *stream) fail(msg string) error { return &InputError{File: st.name, Doc: st.doc, Msg: msg} }

func (st *stream) notObjects(what string) error {
	if st.lenient {
		return errNotObjects
	}
	return st.fail(what + ": not a Kubernetes object (no apiVersion and kind)")
}

// internalList: raw is a list as kubectl 1.13 and older printed it in a
// cluster-info dump, its internal types' field names capitalised
// ("Items", and in each item "ObjectMeta" or "Spec"), not the API's.
func internalList(raw []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	_, items := m["Items"]
	_, lower := m["items"]
	return items && !lower
}

type typeMeta struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Items      json.RawMessage `json:"items"`
}

// value handles one JSON value: an object, a list of objects, an array of
// objects (older support bundles), or a record of a kubectl-doctor dump.
func (st *stream) value(raw []byte) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if st.d.nullStrings && bytes.Contains(raw, []byte(`"null"`)) {
		raw = nullStringsAsNull(raw)
	}
	st.seen++
	switch raw[0] {
	case '[':
		var arr []json.RawMessage
		if err := json.Unmarshal(raw, &arr); err != nil {
			return st.fail(err.Error())
		}
		for _, el := range arr {
			var tm typeMeta
			err := json.Unmarshal(el, &tm)
			if err == nil && tm.Kind == "" && tm.APIVersion == "" && st.hint != nil && bytes.HasPrefix(bytes.TrimSpace(el), []byte("{")) {
				tm.APIVersion, tm.Kind = st.hint.Version, st.hint.Kind
				if st.hint.Group != "" {
					tm.APIVersion = st.hint.Group + "/" + st.hint.Version
				}
				st.d.stats.Typed++
			}
			if err != nil || tm.Kind == "" || tm.APIVersion == "" {
				return st.notObjects("an array element")
			}
			if err := st.object(el, tm.APIVersion, tm.Kind); err != nil {
				return err
			}
		}
		return nil
	case '{':
	default:
		return st.notObjects("a JSON scalar")
	}
	var tm typeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return st.notObjects("an object with a malformed apiVersion or kind")
	}
	if tm.APIVersion == APIVersion && strings.HasPrefix(tm.Kind, "Dump") {
		return st.record(raw, tm.Kind)
	}
	if st.dump && st.ended {
		return st.fail("data after the dump's DumpEnd record")
	}
	if tm.Kind == "" || tm.APIVersion == "" {
		if internalList(raw) {
			// Not lenient: the whole capture is in this form.
			return st.fail("a list in kubectl's internal form (\"Items\", no apiVersion and kind), as kubectl 1.13 and older wrote cluster-info dumps: dump again with a current kubectl")
		}
		if tm.Kind == "" && tm.APIVersion != "" && tm.Items != nil && !st.lenient {
			// kubectl get -o yaml writes a List's "kind: List" after its
			// items: a file cut short keeps apiVersion and items only.
			return st.fail("a list with apiVersion and items but no kind: kubectl writes \"kind: List\" after the items, so the file was likely cut short (truncated?)")
		}
		return st.notObjects("an object")
	}
	if strings.HasSuffix(tm.Kind, "List") && tm.Items != nil {
		return st.list(tm)
	}
	return st.object(raw, tm.APIVersion, tm.Kind)
}

// list files the items of a typed list (PodList: its kind says what every
// item is, and marks the resource present even when empty) or a kubectl
// "List" (items say what they are).
func (st *stream) list(tm typeMeta) error {
	itemKind := strings.TrimSuffix(tm.Kind, "List")
	if itemKind != "" && !st.dump {
		if target, _, skip := convertTarget(tm.APIVersion, itemKind); skip == "" {
			if r, ok := resourceOf(target, itemKind); ok {
				if !st.d.secret(itemKind) {
					st.d.b.Present(r)
				}
			}
		}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(tm.Items, &items); err != nil {
		return st.fail(fmt.Sprintf("%s: items is not an array of objects", tm.Kind))
	}
	if len(items) == 0 && itemKind == "" && !st.dump {
		// An empty `kind: List` says nothing of its kind, but a capture
		// names its files after what they list (a must-gather's
		// namespaces/NS/apps/daemonsets.yaml): read, zero objects.
		base := path.Base(st.name)
		base = strings.TrimSuffix(base, path.Ext(base))
		if r, ok := snapshot.ForResource(base); ok && r.Kind != "Event" && !st.d.secret(r.Kind) {
			st.d.b.Present(r)
		}
	}
	for _, it := range items {
		var itm typeMeta
		if err := json.Unmarshal(it, &itm); err != nil {
			return st.fail(fmt.Sprintf("%s: an item is not an object", tm.Kind))
		}
		gv, kind := itm.APIVersion, itm.Kind
		if kind == "" && itemKind != "" {
			gv, kind = tm.APIVersion, itemKind
		}
		if gv == "" {
			gv = tm.APIVersion
		}
		if kind == "" {
			return st.fail(fmt.Sprintf("%s: an item has no kind", tm.Kind))
		}
		if err := st.object(it, gv, kind); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) secret(kind string) bool { return kind == "Secret" }

// object decodes one object into the type its resource holds, after
// converting removed API versions, and files it.
func (st *stream) object(raw []byte, apiVersion, kind string) error {
	d := st.d
	if d.secret(kind) {
		d.stats.Secrets++ // never decoded, never kept
		if st.dump && st.remaining > 0 {
			st.remaining--
		}
		return nil
	}
	target, body, skip, err := convert(apiVersion, kind, raw)
	if err != nil {
		return st.fail(fmt.Sprintf("converting %s %s: %v", apiVersion, kind, err))
	}
	r, known := resourceOf(target, kind)
	if st.dump {
		if st.cur == nil || st.remaining == 0 {
			return st.fail(fmt.Sprintf("%s %s outside the objects a DumpRead record announces", apiVersion, kind))
		}
		if st.cur.Kind != kind {
			return st.fail(fmt.Sprintf("a %s among the objects of %s", kind, st.cur))
		}
		r = *st.cur
		st.remaining--
	}
	switch {
	case skip != "":
		d.stats.Unconverted[skip]++
		return nil
	case !known && target == "v1" && kind == "Endpoints" && !st.dump:
		if err := d.endpoints(body); err != nil {
			return st.fail(err.Error())
		}
		return nil
	case !known:
		d.stats.Ignored[kindName(apiVersion, kind)]++
		return nil
	}
	obj, err := snapshot.Scheme().New(r.GVR().GroupVersion().WithKind(kind))
	if err != nil {
		return st.fail(err.Error())
	}
	if err := json.Unmarshal(body, obj); err != nil {
		return st.fail(fmt.Sprintf("decoding %s %s: %v", apiVersion, kind, jsonErr(err)))
	}
	if target != apiVersion {
		d.stats.Converted[apiVersion+" "+kind]++
	}
	if r.Namespaced && namespaceOf(obj) == "" {
		// kubectl get prints an object's namespace; a pasted manifest may
		// leave it out, and kubectl would apply it to the context's
		// namespace: "default" keeps commands whole ("-n default", not
		// "-n ").
		if m, err := meta.Accessor(obj); err == nil {
			m.SetNamespace(metav1.NamespaceDefault)
		}
	}
	if d.ns != "" && r.Namespaced {
		if ns := namespaceOf(obj); ns != d.ns {
			d.stats.OutOfScope++
			d.stats.OtherNamespaces[ns] = true
			return nil
		}
		d.stats.InScope++
	}
	// Captures hold some objects twice (a must-gather's namespaces/NS/core
	// files and its aggregated lists; a link and its target): each is
	// filed once, the first copy kept.
	key := dedupeKey{r: r, ns: namespaceOf(obj), name: nameOf(obj)}
	if d.seen == nil {
		d.seen = map[dedupeKey]bool{}
	}
	if d.seen[key] {
		d.stats.Duplicates++
		return nil
	}
	d.seen[key] = true
	d.clock.see(obj)
	d.b.Add(r, obj)
	d.stats.Objects++
	return nil
}

// dedupeKey identifies an object within an input: a resource's objects
// are unique by namespace and name (a UID names the same object).
type dedupeKey struct {
	r        snapshot.Resource
	ns, name string
}

func nameOf(obj runtime.Object) string {
	if m, err := meta.Accessor(obj); err == nil {
		if m.GetName() == "" {
			return "uid:" + string(m.GetUID())
		}
		return m.GetName()
	}
	return ""
}

// record handles the records of a kubectl-doctor dump.
func (st *stream) record(raw []byte, kind string) error {
	if kind == KindHeader {
		if st.seen != 1 || st.dump {
			return st.fail("a dump header that does not open its file")
		}
		var h Header
		if err := json.Unmarshal(raw, &h); err != nil {
			return st.fail(fmt.Sprintf("dump header: %v", jsonErr(err)))
		}
		if st.d.header != nil {
			return st.fail("a second dump: read one dump at a time")
		}
		st.dump, st.d.header = true, &h
		return nil
	}
	if !st.dump {
		return st.fail(fmt.Sprintf("a %s record without the dump header before it", kind))
	}
	if st.ended {
		return st.fail("data after the dump's DumpEnd record")
	}
	if st.remaining > 0 {
		return st.fail(fmt.Sprintf("%s ends after %d fewer objects than its record announces: the dump is damaged", st.cur, st.remaining))
	}
	switch kind {
	case KindRead:
		var rec readRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			return st.fail(fmt.Sprintf("DumpRead record: %v", jsonErr(err)))
		}
		r := rec.Resource.resource()
		if r.Kind == "" || r.Resource == "" {
			return st.fail("DumpRead record without a resource")
		}
		if rec.Count < 0 {
			return st.fail("DumpRead record with a negative count")
		}
		st.cur, st.remaining = &r, rec.Count
		switch {
		case rec.Error != "":
			st.d.b.Fail(r, rec.Error, rec.Skip)
			st.remaining = 0
		case r.Path != "":
			st.d.b.SetMetrics(strings.NewReader(rec.Metrics))
		default:
			st.d.b.Present(r)
		}
	case KindEnd:
		var end endRecord
		if err := json.Unmarshal(raw, &end); err != nil {
			return st.fail(fmt.Sprintf("DumpEnd record: %v", jsonErr(err)))
		}
		if end.FinishedAt != nil {
			st.d.finished = *end.FinishedAt
		}
		st.ended, st.cur = true, nil
	default:
		return st.fail(fmt.Sprintf("unknown dump record %q", kind))
	}
	return nil
}

func peekNonSpace(br *bufio.Reader) (byte, error) {
	for {
		c, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case 0xEF: // a UTF-8 byte order mark
			if b, err := br.Peek(2); err == nil && b[0] == 0xBB && b[1] == 0xBF {
				_, _ = br.Discard(2)
				continue
			}
		}
		return c, br.UnreadByte()
	}
}

func blank(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") && l != "---" {
			return false
		}
	}
	return true
}

// jsonErr makes encoding/json's errors read as one plain line.
func jsonErr(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input (truncated?)"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// logFilter drops the pod log sections `kubectl cluster-info dump` writes
// between its JSON lists when it prints to stdout:
//
//	==== START logs for container C of pod NS/NAME ====
//	...
//	==== END logs for container C of pod NS/NAME ====
type logFilter struct {
	r     *bufio.Reader
	buf   []byte
	inLog bool
	err   error
}

func (f *logFilter) Read(p []byte) (int, error) {
	for len(f.buf) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, err := f.r.ReadBytes('\n')
		f.err = err
		switch {
		case bytes.HasPrefix(line, []byte("==== START logs for")):
			f.inLog = true
		case bytes.HasPrefix(line, []byte("==== END logs for")):
			f.inLog = false
		case !f.inLog:
			f.buf = line
		}
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	return n, nil
}

// kindName is "ConfigMap" for built-in kinds and "Node.longhorn.io" for
// others, so that a custom resource is not mistaken for the kind it shares
// a name with.
func kindName(apiVersion, kind string) string {
	group, _, ok := strings.Cut(apiVersion, "/")
	if !ok || !strings.Contains(group, ".") || strings.HasSuffix(group, ".k8s.io") {
		return kind
	}
	return kind + "." + group
}

// resourceOf is the resource that holds kind in apiVersion, if a check
// reads it (only in the version checks read: convert first).
func resourceOf(apiVersion, kind string) (snapshot.Resource, bool) {
	group, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		group = ""
	}
	r, found := snapshot.ResourceFor(group, kind)
	if !found || r.GVR().GroupVersion().String() != apiVersion {
		return snapshot.Resource{}, false
	}
	return r, true
}

// nullStringsAsNull rewrites every string value "null" of a JSON document
// as null: Rancher's support-bundle-kit writes empty strings and nulls so
// (creationTimestamp: "null" would not parse as a time; an EndpointSlice
// port named "null" would not match the Service's unnamed port). A document
// that does not parse is returned as it is, for the decoder to report.
func nullStringsAsNull(raw []byte) []byte {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	var walk func(any) any
	walk = func(x any) any {
		switch t := x.(type) {
		case string:
			if t == "null" {
				return nil
			}
		case map[string]any:
			for k, e := range t {
				t[k] = walk(e)
			}
		case []any:
			for i, e := range t {
				t[i] = walk(e)
			}
		}
		return x
	}
	out, err := json.Marshal(walk(v))
	if err != nil {
		return raw
	}
	return out
}
