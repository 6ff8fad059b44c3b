package jsonscan

import (
	"bytes"
	"reflect"
	"testing"
)

// The comparison of ADR 0006: the same bytes through Parse and through the
// jsontext equivalent must agree on what the envelope relies on: valid or
// not, a truncated document told from a broken one, duplicate names refused
// (strict), invalid Unicode refused (strict), and the byte span of every
// value and member. Error offsets are compared apart (TestJSONTextErrorOffsets):
// they are reported, not relied on to match.

// FuzzJSONTextAgrees: Parse and jsontext agree, strict and lenient.
func FuzzJSONTextAgrees(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	for _, b := range fixtures(f) {
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkJSONText(t, b, true)
		checkJSONText(t, b, false)
	})
}

func TestJSONTextAgreesOnSeeds(t *testing.T) {
	t.Parallel()
	for _, s := range jsonSeeds {
		checkJSONText(t, []byte(s), true)
		checkJSONText(t, []byte(s), false)
	}
	for _, b := range fixtures(t) {
		for i := 0; i <= len(b); i++ {
			checkJSONText(t, b[:i], true)
		}
	}
}

// compareDepth keeps both readers' depth bound ours (jsontext's own is far
// deeper).
const compareDepth = 64

func checkJSONText(t *testing.T, b []byte, strict bool) {
	t.Helper()
	opt := Options{MaxDepth: compareDepth, Strict: strict}
	if !strict {
		checkWalk(t, b, opt)
	}
	n, end, err := Parse(b, 0, opt)
	var j jtScanner
	jn, jend, jerr := j.parse(b, 0, opt)
	switch {
	case err == nil && jerr == nil:
		if end != jend {
			t.Fatalf("%q strict=%v: value ends at %d, jsontext says %d", b, strict, end, jend)
		}
		if d := diffNodes(n, jn, strict); d != "" {
			t.Fatalf("%q strict=%v: trees differ: %s", b, strict, d)
		}
	case err == nil:
		t.Fatalf("%q strict=%v: accepted; jsontext says %v", b, strict, jerr)
	case jerr == nil:
		t.Fatalf("%q strict=%v: jsontext accepts; Parse says %v", b, strict, err)
	default:
		e, je := err.(*Error), jerr.(*Error)
		if e.Kind == ErrTooDeep || je.Kind == ErrTooDeep {
			// Which of two problems comes first depends on how far each
			// reader looks ahead; the depth bound is ours either way.
			return
		}
		if twoProblems(b, e.Kind, je.Kind) {
			return
		}
		if e.Kind != je.Kind {
			t.Fatalf("%q strict=%v: Parse says kind %d (%v), jsontext kind %d (%v)", b, strict, e.Kind, e, je.Kind, je)
		}
	}
}

// checkWalk holds the lenient token walks (the envelope probe's reading of
// a candidate in prose) to the same outcome: where the value ends, or that
// the input ends inside it, or that it breaks.
func checkWalk(t *testing.T, b []byte, opt Options) {
	t.Helper()
	end, err := walk(b, opt)
	var j jtScanner
	jend, jerr := j.walk(b, 0, opt)
	switch {
	case err == nil && jerr == nil:
		if end != jend {
			t.Fatalf("%q walk: value ends at %d, jsontext says %d", b, end, jend)
		}
	case err == nil || jerr == nil:
		t.Fatalf("%q walk: tokenizer %v, jsontext %v", b, err, jerr)
	case err.Kind == ErrTooDeep || jerr.(*Error).Kind == ErrTooDeep:
	case (err.Kind == ErrTruncated) != (jerr.(*Error).Kind == ErrTruncated):
		t.Fatalf("%q walk: tokenizer %v, jsontext %v: truncated or broken?", b, err, jerr)
	}
}

// twoProblems reports whether two different kinds are the two readers
// naming different problems of one input: a strict reader meets invalid
// Unicode in a string that also breaks or that the input ends inside
// (jsontext validates as it goes, Parse sometimes finds the break or the
// end first). The other problem is real when a lenient Parse, which passes
// the Unicode, reports it.
func twoProblems(b []byte, a, c ErrorKind) bool {
	other := a
	switch {
	case a == ErrInvalidUnicode:
		other = c
	case c != ErrInvalidUnicode:
		return false
	}
	if other != ErrTruncated && other != ErrSyntax {
		return false
	}
	_, _, err := Parse(b, 0, Options{MaxDepth: compareDepth})
	e, ok := err.(*Error)
	return ok && e.Kind == other
}

// diffNodes reports the first difference of kind, span, member name or
// order, and (strict only: lenient readers replace bad bytes differently)
// decoded value.
func diffNodes(a, b *Node, values bool) string {
	switch {
	case a.Kind != b.Kind || a.Off != b.Off || a.End != b.End:
		return a.Kind.String() + " vs " + b.Kind.String() + " span mismatch"
	case len(a.Members) != len(b.Members) || len(a.Elems) != len(b.Elems):
		return "member or element count"
	case values && (a.Str != b.Str || a.Bool != b.Bool):
		return "decoded value"
	}
	for i := range a.Members {
		ma, mb := a.Members[i], b.Members[i]
		if ma.Off != mb.Off || values && ma.Key != mb.Key {
			return "member " + ma.Key + " name span or text"
		}
		if d := diffNodes(ma.Val, mb.Val, values); d != "" {
			return d
		}
	}
	for i := range a.Elems {
		if d := diffNodes(a.Elems[i], b.Elems[i], values); d != "" {
			return d
		}
	}
	if values && !reflect.DeepEqual(toAny(a), toAny(b)) {
		return "values"
	}
	return ""
}

// Where the two readers place an error, over every prefix of the fixtures
// and every fixture with a stray 'x' or '"' inserted anywhere: they agree
// except inside a string (an escape: Parse names the byte after the
// backslash, jsontext the backslash; invalid UTF-8: Parse the start of the
// run, jsontext the bad byte) and for an empty input (jsontext's io.EOF has
// no offset). The counts are in ADR 0006.
func TestJSONTextErrorOffsets(t *testing.T) {
	t.Parallel()
	agree, differ := 0, 0
	for name, b := range fixtures(t) {
		for i := 0; i <= len(b); i++ {
			for _, in := range [][]byte{b[:i], insert(b, i, 'x'), insert(b, i, '"')} {
				_, _, err := Parse(in, 0, Options{MaxDepth: compareDepth, Strict: true})
				var j jtScanner
				_, _, jerr := j.parse(in, 0, Options{MaxDepth: compareDepth, Strict: true})
				if err == nil || jerr == nil {
					continue
				}
				e, je := err.(*Error), jerr.(*Error)
				if e.Off == je.Off {
					agree++
					continue
				}
				differ++
				inString := (e.Token == TokString || e.Token == TokName) && je.Off > e.TokenOff && je.Off <= len(in)
				if !inString && len(bytes.TrimSpace(in)) > 0 {
					t.Errorf("%s: %q: Parse places %v at %d, jsontext %v at %d", name, in, e, e.Off, je, je.Off)
				}
			}
		}
	}
	t.Logf("error offsets: %d agree, %d differ (inside a string, or empty input)", agree, differ)
	if agree == 0 {
		t.Fatal("no errors compared")
	}
}

func insert(b []byte, i int, c byte) []byte {
	out := append([]byte(nil), b[:i]...)
	out = append(out, c)
	return append(out, b[i:]...)
}
