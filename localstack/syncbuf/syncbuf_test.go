package syncbuf_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/parleyhq/parley/localstack/syncbuf"
)

// TestConcurrentWritesAllLand: under -race, writers in parallel with a
// reader lose nothing and interleave no line.
func TestConcurrentWritesAllLand(t *testing.T) {
	var b syncbuf.Buffer
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 100 {
				fmt.Fprintf(&b, "w%d-%d\n", w, i)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	lines := b.Lines()
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	if !slices.Contains(lines, "w7-99") || !slices.Contains(lines, "w0-0") {
		t.Fatalf("lines lost: %q…", lines[:3])
	}
}

func TestLinesSkipsEmptyOnes(t *testing.T) {
	var b syncbuf.Buffer
	_, _ = b.Write([]byte("\na\n\nb"))
	if got := b.Lines(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("Lines() = %q", got)
	}
	var empty syncbuf.Buffer
	if got := empty.Lines(); len(got) != 0 {
		t.Fatalf("an empty buffer's lines: %q", got)
	}
}
