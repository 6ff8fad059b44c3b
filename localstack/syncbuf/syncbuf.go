// Package syncbuf is a buffer safe for concurrent writers: what a test hands
// a logger, a server or a child process as its output, and reads while they
// may still write.
package syncbuf

import (
	"bytes"
	"strings"
	"sync"
)

// Buffer is a bytes.Buffer behind a mutex. Its zero value is empty and
// ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Lines is what was written so far, split into lines, without empty ones:
// one JSON record each, for a slog JSON handler's output.
func (b *Buffer) Lines() []string {
	var out []string
	for line := range strings.SplitSeq(b.String(), "\n") {
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}
