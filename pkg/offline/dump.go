// Package offline reads clusters that kubectl-doctor cannot reach: its own
// dumps (`kubectl doctor dump`), `kubectl cluster-info dump` trees and
// streams, `kubectl get -o yaml|json` output and troubleshoot.sh support
// bundles, into a snapshot the checks run on unchanged. It never makes a
// request: everything comes from the input.
package offline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// APIVersion marks the records of a kubectl-doctor dump that are not
// Kubernetes objects (the header, one record per read, the end).
const APIVersion = "doctor.kubectl.io/v1alpha1"

// Kinds of a dump's own records.
const (
	KindHeader = "Dump"
	KindRead   = "DumpRead"
	KindEnd    = "DumpEnd"
)

// Header is the first record of a dump: what was captured, when, by what.
// CapturedAt is when reading began; the end record's finishedAt, when it
// ended, is the clock a scan of the dump runs at (as a live scan judges ages
// once its reads are done), so that ages in the findings are those of the
// capture.
type Header struct {
	APIVersion    string    `json:"apiVersion"`
	Kind          string    `json:"kind"`
	Server        string    `json:"server"`
	ServerVersion string    `json:"serverVersion"`
	CapturedAt    time.Time `json:"capturedAt"`
	DoctorVersion string    `json:"doctorVersion"`
	// Namespace is the scope of namespaced reads ("" for the whole cluster).
	Namespace string `json:"namespace,omitempty"`
}

// readRecord opens the objects of one read: the resource, exactly as the
// scan planned it (field selector included), and how the read went.
type readRecord struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Resource   resourceRef `json:"resource"`
	// Error is why the read failed at capture time ("forbidden: ...");
	// Skip says whether checks needing it are skipped (else errored).
	Error string `json:"error,omitempty"`
	Skip  bool   `json:"skip,omitempty"`
	// Count is the number of objects that follow.
	Count int `json:"count"`
	// Metrics is the /metrics text, for the read of /metrics.
	Metrics string `json:"metrics,omitempty"`
}

type resourceRef struct {
	Group         string `json:"group,omitempty"`
	Version       string `json:"version,omitempty"`
	Resource      string `json:"resource"`
	Kind          string `json:"kind"`
	Namespaced    bool   `json:"namespaced,omitempty"`
	FieldSelector string `json:"fieldSelector,omitempty"`
	Path          string `json:"path,omitempty"`
}

func refOf(r snapshot.Resource) resourceRef {
	return resourceRef{Group: r.Group, Version: r.Version, Resource: r.Resource, Kind: r.Kind,
		Namespaced: r.Namespaced, FieldSelector: r.FieldSelector, Path: r.Path}
}

func (r resourceRef) resource() snapshot.Resource {
	return snapshot.Resource{Group: r.Group, Version: r.Version, Resource: r.Resource, Kind: r.Kind,
		Namespaced: r.Namespaced, FieldSelector: r.FieldSelector, Path: r.Path}
}

// endRecord closes a dump; a dump without one was cut short.
type endRecord struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Reads      int    `json:"reads"`
	Objects    int    `json:"objects"`
	// FinishedAt is when the last read ended.
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
}

// Writer writes a dump as a YAML stream, one document per record and per
// object, as it goes: nothing but the current object is held, so a dump of
// any size takes the memory of its largest read.
type Writer struct {
	w              io.Writer
	reads, objects int
	// Finished, when set before Close, is recorded as the end of the
	// capture: the clock a scan of the dump runs at.
	Finished time.Time
}

// NewWriter writes the header and returns the writer.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	h.APIVersion, h.Kind = APIVersion, KindHeader
	dw := &Writer{w: w}
	if _, err := io.WriteString(w, "# kubectl-doctor dump: read it with `kubectl doctor --from FILE`\n"); err != nil {
		return nil, err
	}
	return dw, dw.doc(h)
}

// WriteRead writes the record of read r and the objects s holds for it (or
// the error that kept it from being read) and returns how many objects it
// wrote. Secrets are refused: a dump is meant to be attached to tickets.
func (w *Writer) WriteRead(r snapshot.Resource, s *snapshot.Snapshot) (int, error) {
	if r.Kind == "Secret" {
		return 0, errors.New("dumps never hold secrets")
	}
	rec := readRecord{APIVersion: APIVersion, Kind: KindRead, Resource: refOf(r)}
	var objs []runtime.Object
	switch err := s.Err(r); {
	case err != nil:
		rec.Error, rec.Skip = err.Error(), snapshot.IsSkippable(err)
	case r.Path != "":
		var b strings.Builder
		for _, name := range sortedKeys(s.Metrics()) {
			if _, err := expfmt.MetricFamilyToText(&b, s.Metrics()[name]); err != nil {
				return 0, fmt.Errorf("writing %s: %w", r, err)
			}
		}
		rec.Metrics = b.String()
	default:
		objs = s.ReadObjects(r)
		rec.Count = len(objs)
	}
	w.reads++
	if err := w.doc(rec); err != nil {
		return 0, err
	}
	gv := r.GVR().GroupVersion().String()
	for _, o := range objs {
		body, err := json.Marshal(o)
		if err != nil {
			return 0, fmt.Errorf("writing %s: %w", r, err)
		}
		if err := w.raw(withTypeMeta(body, gv, r.Kind)); err != nil {
			return 0, err
		}
		w.objects++
	}
	return len(objs), nil
}

// Close writes the end record; it does not close the underlying writer.
func (w *Writer) Close() error {
	end := endRecord{APIVersion: APIVersion, Kind: KindEnd, Reads: w.reads, Objects: w.objects}
	if !w.Finished.IsZero() {
		end.FinishedAt = &w.Finished
	}
	return w.doc(end)
}

func (w *Writer) doc(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return w.raw(body)
}

func (w *Writer) raw(jsonBody []byte) error {
	y, err := yaml.JSONToYAML(jsonBody)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w.w, "---\n"); err != nil {
		return err
	}
	_, err = w.w.Write(y)
	return err
}

// withTypeMeta puts apiVersion and kind first in an object's JSON: decoded
// list items carry none, and every document of a dump must say what it is.
func withTypeMeta(body []byte, apiVersion, kind string) []byte {
	var probe struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if json.Unmarshal(body, &probe) == nil && probe.Kind != "" {
		return body
	}
	rest := bytes.TrimPrefix(bytes.TrimSpace(body), []byte("{"))
	head := fmt.Sprintf(`{"apiVersion":%q,"kind":%q`, apiVersion, kind)
	if len(bytes.TrimSpace(rest)) > 1 {
		head += ","
	}
	return append([]byte(head), rest...)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
