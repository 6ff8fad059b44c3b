package emulator

import (
	"bytes"
	"io"
	"sync"
)

// tailSize is how much of an emulator's output is kept for error messages.
const tailSize = 4 << 10

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = b.buf[:copy(b.buf, b.buf[over:])]
	}
	return len(p), nil
}

// String returns the kept output, starting at a line boundary when cut.
func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.buf
	if len(out) == b.max {
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			out = out[i+1:]
		}
	}
	return string(bytes.TrimRight(out, "\n"))
}

// lineWriter prefixes every line with the emulator's name before passing it on
// to a writer shared by both emulators. It never fails: an error returned to
// os/exec's copying goroutine would stop the copy, the pipe would fill, and the
// emulator would block on its next log line.
type lineWriter struct {
	mu      *sync.Mutex // shared by the writers of one Options.Log
	w       io.Writer
	prefix  []byte
	midLine bool
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		if !l.midLine {
			_, _ = l.w.Write(l.prefix)
		}
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			_, _ = l.w.Write(p)
			l.midLine = true
			break
		}
		_, _ = l.w.Write(p[:i+1])
		p = p[i+1:]
		l.midLine = false
	}
	return n, nil
}
