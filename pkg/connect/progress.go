package connect

import (
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/term"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// IsTerminal says whether w is a terminal (for colour and the progress
// line).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Progress is a one-line status on stderr, shown only on a terminal so that
// CI logs and pipes stay clean.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	total int
	n     int
	on    bool
}

// NewProgress counts total reads on w.
func NewProgress(w io.Writer, total int) *Progress {
	return &Progress{w: w, total: total, on: IsTerminal(w)}
}

// Step says that r is being read.
func (p *Progress) Step(r snapshot.Resource) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	fmt.Fprintf(p.w, "\r\033[Kkubectl doctor: listing %s (%d/%d)…", r, p.n, p.total)
}

// Done clears the line.
func (p *Progress) Done() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
