package platformtest

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/split"
)

// TestFill: the limit check's texts are exactly n units the declared way
// and a different length any other way, so a wrong Counting shows.
func TestFill(t *testing.T) {
	t.Parallel()
	all := []message.Counting{message.CountRunes, message.CountUTF16, message.CountBytes}
	for _, c := range all {
		for _, n := range []int{1, 2, 3, 5, 4000, 4096, 40000} {
			s := fill(n, c)
			if got := split.Count(s, c); got != n || !utf8.ValidString(s) {
				t.Fatalf("fill(%d, %s) counts %d", n, c, got)
			}
			if n < 4000 {
				continue
			}
			for _, other := range all {
				if other != c && split.Count(s, other) == n {
					t.Errorf("fill(%d, %s) is %d %s as well: a wrong Counting would pass", n, c, n, other)
				}
			}
		}
	}
}

func TestTamperAndFlip(t *testing.T) {
	t.Parallel()
	for _, b := range [][]byte{[]byte(`{"type":"event_callback","text":"hello"}`), []byte("payload=%7B%7D"), []byte("{}")} {
		if got := tamper(b); bytes.Equal(got, b) {
			t.Errorf("tamper(%s) left it as it was", b)
		}
	}
	for _, s := range []string{"a", "secret", "8f742231b10e8888abcd99yyyzzz85a5"} {
		if f := flipLast(s); f == s || len(f) != len(s) || f[:len(f)-1] != s[:len(s)-1] {
			t.Errorf("flipLast(%q) = %q", s, f)
		}
	}
}
