package jsonscan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The benchmarks of ADR 0006: this package against the jsontext equivalent
// (jsontext_test.go) on the same inputs, in the same run. Each pair is
// BenchmarkX/in=<input>/impl=jsonscan and …/impl=jsontext, so that
// `benchstat -col /impl` sets them side by side:
//
//   - Parse: the strict tree build the envelope validates (envelope.Parse);
//   - Walk: the lenient token walk of every '{' candidate, decoding
//     nothing, which fragment detection runs over prose and envelopes alike.
//
// Inputs: the shared fixtures (docs/fixtures), the envelope's checked-in
// fuzz corpora (shared/envelope/testdata/fuzz), and realistic 1 KB and 64 KB
// replies.

// benchInputs are the named input sets, each a list of documents.
func benchInputs(tb testing.TB) map[string][][]byte {
	tb.Helper()
	fx := fixtures(tb)
	var fixtureDocs [][]byte
	for _, name := range slices.Sorted(maps.Keys(fx)) {
		fixtureDocs = append(fixtureDocs, fx[name])
	}
	return map[string][][]byte{
		"fixtures":  fixtureDocs,
		"testdata":  corpus(tb, "../../testdata/fuzz/FuzzParse", "../../testdata/fuzz/FuzzStrip"),
		"reply1KB":  {realisticReply(1 << 10)},
		"reply64KB": {realisticReply(64 << 10)},
	}
}

// corpus reads the first value of each "go test fuzz v1" file in dirs.
func corpus(tb testing.TB, dirs ...string) [][]byte {
	tb.Helper()
	var out [][]byte
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			tb.Fatal(err)
		}
		for _, e := range entries {
			raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				tb.Fatal(err)
			}
			lines := strings.Split(string(raw), "\n")
			if len(lines) < 2 {
				tb.Fatalf("%s: not a corpus file", e.Name())
			}
			lit := lines[1]
			lit = lit[strings.IndexByte(lit, '(')+1 : strings.LastIndexByte(lit, ')')]
			s, err := strconv.Unquote(lit)
			if err != nil {
				tb.Fatalf("%s: %v", e.Name(), err)
			}
			out = append(out, []byte(s))
		}
	}
	if len(out) == 0 {
		tb.Fatal("empty corpus")
	}
	return out
}

// realisticReply is an envelope of about size bytes as agents write them:
// a few bubbles of prose with escaped line breaks and some non-ASCII, and,
// when there is room, a tool call whose arguments are a list of records.
func realisticReply(size int) []byte {
	para := "Your flight LH 1234 moved from 18:05 to 20:00 — gate B12, boarding 19:20.\n" +
		"I've updated the calendar entry and set a reminder two hours before. Café vouchers are at the desk 😀.\n\n"
	bubbles := 3
	textLen := size / 4
	args := size / 4
	if size < 4<<10 {
		textLen, args = (size-250)/3, 0
	}
	var b strings.Builder
	b.WriteString(`{"schema": "openab.turn.v1", "messages": [`)
	for i := range bubbles {
		if i > 0 {
			b.WriteString(", ")
		}
		var t strings.Builder
		for t.Len() < textLen {
			t.WriteString(para)
		}
		text, _ := json.Marshal(t.String()[:textLen-8])
		fmt.Fprintf(&b, `{"id": "bubble_%d", "text": %s}`, i+1, text)
	}
	b.WriteString(`]`)
	if args > 0 {
		b.WriteString(`, "next": {"type": "tool", "tool": {"name": "calendar.bulk_update", "arguments": {"events": [`)
		for i := 0; b.Len() < size-200; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, `{"id": %d, "title": "Flight LH %d", "start": "2026-12-0%dT20:00:00Z", "tags": ["travel", "work"], "done": false}`, i, 1000+i, 1+i%9)
		}
		b.WriteString(`]}}}`)
	} else {
		b.WriteString(`, "next": {"type": "wait", "wait": {"reason": "waiting for the airline", "seconds": 600}}`)
	}
	b.WriteString(`}`)
	return []byte(b.String())
}

func TestRealisticRepliesAreEnvelopes(t *testing.T) {
	t.Parallel()
	for _, size := range []int{1 << 10, 64 << 10} {
		b := realisticReply(size)
		n, end, err := Parse(b, 0, Options{MaxDepth: 64, Strict: true})
		if err != nil || end != len(b) || n.Get("schema") == nil || len(n.Get("messages").Elems) != 3 {
			t.Fatalf("reply of %d: %v", size, err)
		}
		if len(b) < size*9/10 || len(b) > size*11/10 {
			t.Fatalf("reply of %d is %d bytes", size, len(b))
		}
	}
}

// candidates are the offsets of every '{' in b.
func candidates(b []byte) []int {
	var out []int
	for i, c := range b {
		if c == '{' {
			out = append(out, i)
		}
	}
	return out
}

func BenchmarkParse(b *testing.B) {
	strict := Options{MaxDepth: 64, Strict: true}
	inputs := benchInputs(b)
	for _, name := range slices.Sorted(maps.Keys(inputs)) {
		docs := inputs[name]
		var starts []int
		var total int64
		for _, d := range docs {
			starts = append(starts, max(0, bytes.IndexByte(d, '{')))
			total += int64(len(d))
		}
		b.Run("in="+name+"/impl=jsonscan", func(b *testing.B) {
			b.SetBytes(total)
			b.ReportAllocs()
			for b.Loop() {
				for i, d := range docs {
					_, _, _ = Parse(d, starts[i], strict)
				}
			}
		})
		b.Run("in="+name+"/impl=jsontext", func(b *testing.B) {
			var j jtScanner
			b.SetBytes(total)
			b.ReportAllocs()
			for b.Loop() {
				for i, d := range docs {
					_, _, _ = j.parse(d, starts[i], strict)
				}
			}
		})
	}
}

func BenchmarkWalk(b *testing.B) {
	lenient := Options{MaxDepth: 256}
	inputs := benchInputs(b)
	for _, name := range slices.Sorted(maps.Keys(inputs)) {
		docs := inputs[name]
		var starts [][]int
		var total int64
		for _, d := range docs {
			starts = append(starts, candidates(d))
			total += int64(len(d))
		}
		b.Run("in="+name+"/impl=jsonscan", func(b *testing.B) {
			var tz Tokenizer
			b.SetBytes(total)
			b.ReportAllocs()
			for b.Loop() {
				for i, d := range docs {
					for _, s := range starts[i] {
						tz.Reset(d, s, lenient)
						for {
							if _, err := tz.Next(0); err != nil || tz.Depth() == 0 {
								break
							}
						}
					}
				}
			}
		})
		b.Run("in="+name+"/impl=jsontext", func(b *testing.B) {
			var j jtScanner
			b.SetBytes(total)
			b.ReportAllocs()
			for b.Loop() {
				for i, d := range docs {
					for _, s := range starts[i] {
						_, _ = j.walk(d, s, lenient)
					}
				}
			}
		})
	}
}
