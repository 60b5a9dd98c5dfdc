package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Decoding a protobuf watch-list the way client-go does copies each event
// three times before the object exists: the frame, the WatchEvent's raw
// object (RawExtension.Unmarshal), then the envelope's raw bytes
// (Unknown.Unmarshal); at 150,000 pods that is most of what a scan
// allocates, and the garbage collector's work. streamSerializer decodes the
// same bytes in place: the event's object and the envelope's payload are
// sub-slices of the frame, which lives until the next event is read, and
// the object is unmarshalled straight from them (generated Unmarshal copies
// every string and byte field it keeps, so nothing of the frame survives).
// Anything it does not recognise (JSON, an encoded envelope, an unknown
// kind, a decode into a given object) goes to client-go's own decoders.
type streamSerializer struct {
	runtime.NegotiatedSerializer
	tr *Trimmer
}

// streamCodecs is Codecs().WithoutConversion() with the in-place protobuf
// decoders; pods decoded through it must then be trimmed by tr (nil: no
// spec cache).
func streamCodecs(tr *Trimmer) runtime.NegotiatedSerializer {
	return streamSerializer{Codecs().WithoutConversion(), tr}
}

func (s streamSerializer) SupportedMediaTypes() []runtime.SerializerInfo {
	infos := append([]runtime.SerializerInfo(nil), s.NegotiatedSerializer.SupportedMediaTypes()...)
	for i, info := range infos {
		if info.MediaType != runtime.ContentTypeProtobuf || info.StreamSerializer == nil {
			continue
		}
		stream := *info.StreamSerializer
		stream.Serializer = eventDecoder{stream.Serializer}
		info.StreamSerializer = &stream
		info.Serializer = objectDecoder{info.Serializer, s.tr}
		infos[i] = info
	}
	return infos
}

var protoMagic = []byte{0x6b, 0x38, 0x73, 0x00} // "k8s\x00": the envelope of a protobuf object

// objectDecoder decodes an enveloped protobuf object in place; with a
// Trimmer, pods read their spec from its cache (podspecs.go).
type objectDecoder struct {
	runtime.Serializer
	tr *Trimmer
}

func (d objectDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if into == nil && bytes.HasPrefix(data, protoMagic) {
		if gvk, raw, ok := parseEnvelope(data[len(protoMagic):]); ok {
			if obj, err := Scheme().New(gvk); err == nil {
				if u, ok := obj.(interface{ Unmarshal([]byte) error }); ok {
					var err error
					if metadataFirst(obj) {
						scratch := scratchPool.Get().(*[]byte)
						if cap(*scratch) < 3*len(raw) {
							// Room for the object, then a pod's bytes
							// without its spec and its spec's key
							// (decodePod): nothing is allocated again.
							*scratch = make([]byte, 0, 3*len(raw))
						}
						if trimmed, ok := withoutManagedFields((*scratch)[:0], raw); ok {
							if pod, isPod := obj.(*corev1.Pod); isPod && d.tr != nil {
								var rest []byte
								rest, err = d.tr.decodePod(pod, trimmed, trimmed[len(trimmed):])
								if cap(rest) > cap(trimmed) {
									trimmed = rest
								}
							} else {
								err = u.Unmarshal(trimmed)
							}
							*scratch = trimmed[:0]
						} else {
							err = u.Unmarshal(raw)
						}
						scratchPool.Put(scratch)
					} else {
						err = u.Unmarshal(raw)
					}
					if err != nil {
						return nil, nil, err
					}
					obj.GetObjectKind().SetGroupVersionKind(gvk)
					return obj, &gvk, nil
				}
			}
		}
	}
	return d.Serializer.Decode(data, defaults, into)
}

// managedFieldsNumber is ObjectMeta's field managedFields.
const managedFieldsNumber = 17

var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// withoutManagedFields appends to out the object raw without its metadata's
// managedFields: the largest part of most objects, which Trim would drop
// anyway, is then never decoded. ok is false when raw is malformed.
func withoutManagedFields(out, raw []byte) (_ []byte, ok bool) {
	start := len(out)
	err := eachFieldRaw(raw, func(num int, field, v []byte) error {
		if num != 1 {
			out = append(out, field...)
			return nil
		}
		out = binary.AppendUvarint(out, 1<<3|2)
		lenAt := len(out)
		out = append(out, make([]byte, binary.MaxVarintLen64)...) // room for the length
		body := len(out)
		err := eachFieldRaw(v, func(num int, field, _ []byte) error {
			if num != managedFieldsNumber {
				out = append(out, field...)
			}
			return nil
		})
		n := len(out) - body
		l := binary.PutUvarint(out[lenAt:], uint64(n))
		out = append(out[:lenAt+l], out[body:]...)
		return err
	})
	if err != nil {
		return nil, false
	}
	return out[start:], true
}

// metadataFirst says whether obj's field 1 is its ObjectMeta, as in every
// generated Kubernetes type that has one.
func metadataFirst(obj runtime.Object) bool {
	t := reflect.TypeOf(obj)
	if v, ok := metadataFirstTypes.Load(t); ok {
		return v.(bool)
	}
	ok := false
	if t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
		if f, found := t.Elem().FieldByName("ObjectMeta"); found && f.Type == reflect.TypeOf(metav1.ObjectMeta{}) {
			ok = strings.HasPrefix(f.Tag.Get("protobuf"), "bytes,1,")
		}
	}
	metadataFirstTypes.Store(t, ok)
	return ok
}

var metadataFirstTypes sync.Map

// eventDecoder decodes a WatchEvent frame in place: Object.Raw points into
// the frame.
type eventDecoder struct{ runtime.Serializer }

func (d eventDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if ev, ok := into.(*metav1.WatchEvent); ok {
		if typ, raw, ok := parseWatchEvent(data); ok {
			ev.Type, ev.Object = typ, runtime.RawExtension{Raw: raw}
			return ev, nil, nil
		}
	}
	return d.Serializer.Decode(data, defaults, into)
}

// parseEnvelope reads a runtime.Unknown: typeMeta (1: apiVersion, kind),
// raw (2), contentEncoding (3), contentType (4). ok is false for an
// encoded payload or anything malformed.
func parseEnvelope(b []byte) (gvk schema.GroupVersionKind, raw []byte, ok bool) {
	var apiVersion, kind string
	err := eachField(b, func(num int, v []byte) error {
		switch num {
		case 1:
			return eachField(v, func(num int, v []byte) error {
				switch num {
				case 1:
					apiVersion = string(v)
				case 2:
					kind = string(v)
				}
				return nil
			})
		case 2:
			raw = v
		case 3:
			if len(v) > 0 {
				return errUnsupported
			}
		}
		return nil
	})
	if err != nil || kind == "" {
		return gvk, nil, false
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return gvk, nil, false
	}
	return gv.WithKind(kind), raw, true
}

// parseWatchEvent reads a metav1.WatchEvent: type (1), object (2: a
// RawExtension whose field 1 is the raw object).
func parseWatchEvent(b []byte) (typ string, raw []byte, ok bool) {
	err := eachField(b, func(num int, v []byte) error {
		switch num {
		case 1:
			typ = string(v)
		case 2:
			return eachField(v, func(num int, v []byte) error {
				if num == 1 {
					raw = v
				}
				return nil
			})
		}
		return nil
	})
	return typ, raw, err == nil && typ != "" && raw != nil
}

var (
	errUnsupported = errors.New("unsupported")
	errMalformed   = errors.New("malformed protobuf")
)

// eachFieldRaw calls f with the number, whole encoding (key included) and,
// for length-delimited fields, contents of every field of the message b.
func eachFieldRaw(b []byte, f func(num int, field, v []byte) error) error {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return errMalformed
		}
		num, wire := int(key>>3), key&7
		var end int
		var v []byte
		switch wire {
		case 0:
			_, m := binary.Uvarint(b[n:])
			if m <= 0 {
				return errMalformed
			}
			end = n + m
		case 1:
			end = n + 8
		case 5:
			end = n + 4
		case 2:
			l, m := binary.Uvarint(b[n:])
			if m <= 0 || uint64(len(b)-n-m) < l {
				return errMalformed
			}
			end = n + m + int(l)
			v = b[n+m : end]
		default:
			return errMalformed
		}
		if end > len(b) {
			return errMalformed
		}
		if err := f(num, b[:end], v); err != nil {
			return err
		}
		b = b[end:]
	}
	return nil
}

// eachField calls f with the number and contents of every length-delimited
// field of the message b, skipping varint and fixed-size fields.
func eachField(b []byte, f func(num int, v []byte) error) error {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return errMalformed
		}
		b = b[n:]
		num, wire := int(key>>3), key&7
		switch wire {
		case 0: // varint
			if _, n := binary.Uvarint(b); n > 0 {
				b = b[n:]
				continue
			}
			return errMalformed
		case 1: // fixed64
			if len(b) < 8 {
				return errMalformed
			}
			b = b[8:]
		case 5: // fixed32
			if len(b) < 4 {
				return errMalformed
			}
			b = b[4:]
		case 2: // length-delimited
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				return errMalformed
			}
			if err := f(num, b[n:n+int(l)]); err != nil {
				return err
			}
			b = b[n+int(l):]
		default:
			return errMalformed
		}
	}
	return nil
}
