package offline

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
)

// Captures come from customers and from anywhere: reading one must never
// exhaust memory or accept a damaged archive as a smaller capture. These
// are the bounds, raised with --max-document-size and --max-input-size.
const (
	// DefaultMaxDocument bounds one JSON value or YAML document: a
	// `kubectl get pods -A -o json` of 30,000 pods is one ~400 MiB List.
	DefaultMaxDocument int64 = 1 << 30
	// DefaultMaxInput bounds the bytes of the whole input, decompressed.
	DefaultMaxInput int64 = 16 << 30
)

// errLimit is returned by a limited reader past a bound.
type errLimit struct {
	what  string // "document", "input"
	limit int64
	flag  string
}

func (e *errLimit) Error() string {
	return fmt.Sprintf("larger than the %s size limit of %s (raise it with %s)", e.what, sizeString(e.limit), e.flag)
}

func sizeString(n int64) string {
	switch {
	case n%(1<<30) == 0:
		return fmt.Sprintf("%dGi", n>>30)
	case n%(1<<20) == 0:
		return fmt.Sprintf("%dMi", n>>20)
	}
	return doctor.Thousands(int(n)) + " bytes"
}

// limits counts what an input's decoders read: the total, and the bytes
// since the current document began (mark). It is shared by every file of
// one input.
type limits struct {
	maxDoc, maxTotal int64
	total, mark      int64
}

func newLimits(o Options) *limits {
	l := &limits{maxDoc: o.MaxDocument, maxTotal: o.MaxInput}
	if l.maxDoc <= 0 {
		l.maxDoc = DefaultMaxDocument
	}
	if l.maxTotal <= 0 {
		l.maxTotal = DefaultMaxInput
	}
	return l
}

// reader wraps r so that reading past a bound fails. The decoders buffer
// ahead (64 KiB), so a document is allowed that much slack.
func (l *limits) reader(r io.Reader) io.Reader { return &limitedReader{l: l, r: r} }

// startDocument marks where the next document begins.
func (l *limits) startDocument() { l.mark = l.total }

type limitedReader struct {
	l *limits
	r io.Reader
}

const decoderSlack = 128 << 10

func (lr *limitedReader) Read(p []byte) (int, error) {
	l := lr.l
	if l.total >= l.maxTotal {
		return 0, &errLimit{what: "input", limit: l.maxTotal, flag: "--max-input-size"}
	}
	if l.total-l.mark >= l.maxDoc+decoderSlack {
		return 0, &errLimit{what: "document", limit: l.maxDoc, flag: "--max-document-size"}
	}
	if rest := l.maxTotal - l.total; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := lr.r.Read(p)
	l.total += int64(n)
	return n, err
}

// limitError finds a size-limit error in err's chain.
func limitError(err error) (*errLimit, bool) {
	var le *errLimit
	return le, errors.As(err, &le)
}

// Magic numbers of compressions a capture may come in.
var (
	xzMagic   = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
	bzipMagic = []byte("BZh")
	zipMagic  = []byte("PK\x03\x04")
)

// unsupportedCompression names a compression Load does not read, "" for
// others.
func unsupportedCompression(head []byte) string {
	switch {
	case bytes.HasPrefix(head, xzMagic):
		return "xz"
	case bytes.HasPrefix(head, zstdMagic):
		return "zstd"
	case bytes.HasPrefix(head, bzipMagic) && len(head) > 3 && head[3] >= '1' && head[3] <= '9':
		return "bzip2"
	case bytes.HasPrefix(head, zipMagic):
		return "zip"
	}
	return ""
}

// binary says whether a stream's first significant byte cannot begin JSON
// or YAML text: NUL and other control bytes (/dev/zero, an image, a core).
func binary(first byte) bool {
	return first < 0x20 && first != '\t' && first != '\n' && first != '\r'
}

// tailReader remembers the last 1,024 bytes read through it: a tar archive
// ends with two zero blocks, and an archive cut at a file boundary, which
// archive/tar reports as a clean end, lacks them.
type tailReader struct {
	r    io.Reader
	tail [1024]byte
	n    int64
}

func (t *tailReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	for _, b := range p[:n] {
		t.tail[t.n%1024] = b
		t.n++
	}
	return n, err
}

// endsWithZeroBlocks says whether the last two blocks read were zero.
func (t *tailReader) endsWithZeroBlocks() bool {
	if t.n < 1024 {
		return false
	}
	for _, b := range t.tail {
		if b != 0 {
			return false
		}
	}
	return true
}
