package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// jsonSeeds cover the grammar's corners; FuzzParse starts from them, the
// shared envelope fixtures and testdata/fuzz/FuzzParse.
var jsonSeeds = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e+3`, `-12.25E-2`, `"x"`,
	`{"a":[1,2,{"b":null}],"c":"\u00e9\ud83d\ude00\n\t\"\\\/"}`,
	`{"a":1,"a":2}`, `"\ud800"`, `"\udc00x"`, "\"\xff\"", `01`, `1.`, `.5`, `1e`, `-`, `+1`,
	`{"a" 1}`, `{"a":1,}`, `[1,]`, `[1 2]`, `"a` + "\n" + `b"`, `"\x"`, `"\u12"`, `tru`, `nul`,
	`{"a":1} x`, ` [ ] `, `{"":""}`, `"\u0000"`, strings.Repeat("[", 70) + strings.Repeat("]", 70),
	`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"a":10}`, // a duplicate past the set threshold
}

// The parser accepts exactly what encoding/json accepts, less what strict
// mode refuses (duplicate names, invalid Unicode), and decodes the same.
func TestParseMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range jsonSeeds {
		checkAgainstEncodingJSON(t, []byte(s))
	}
}

// FuzzParse: the parser agrees with encoding/json, and the lenient
// tokenizer with the strict parser.
func FuzzParse(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	for _, b := range fixtures(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkAgainstEncodingJSON(t, b)
	})
}

const fixtureDir = "../../../../docs/fixtures"

// fixtures are the shared envelope sample replies (prose and JSON alike).
func fixtures(tb testing.TB) map[string][]byte {
	tb.Helper()
	entries, err := os.ReadDir(fixtureDir)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() || e.Name() == "manifest.json" || e.Name() == "README.md" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(fixtureDir, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		out[e.Name()] = b
	}
	if len(out) == 0 {
		tb.Fatal("no fixtures")
	}
	return out
}

func checkAgainstEncodingJSON(t *testing.T, b []byte) {
	t.Helper()
	n, end, err := Parse(b, 0, Options{MaxDepth: 1 << 20, Strict: true})
	trailing := false
	if err == nil && len(bytes.TrimLeft(b[end:], " \t\r\n")) > 0 {
		err, trailing = &Error{Kind: ErrSyntax}, true
	}
	stdOK := json.Valid(b)
	if err == nil {
		if !stdOK {
			t.Fatalf("%q: accepted, encoding/json rejects", b)
		}
		var want any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if dec.Decode(&want) != nil {
			t.Fatalf("%q: encoding/json cannot decode", b)
		}
		if got := toAny(n); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: decoded %#v, encoding/json %#v", b, got, want)
		}
		checkSpans(t, b, n)
		return
	}
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("%q: error %T is not an *Error", b, err)
	}
	// Strict mode may refuse what encoding/json takes (it reads the last
	// duplicate, and replaces bad Unicode), never anything else.
	if stdOK && se.Kind != ErrDuplicateName && se.Kind != ErrInvalidUnicode {
		t.Fatalf("%q: rejected (%v), encoding/json accepts", b, err)
	}
	if trailing {
		return
	}
	// A lenient tokenizer follows the same grammar: it completes where the
	// strict parser refused only for strictness, and reports truncation
	// only when the input is a prefix of something valid.
	lend, lerr := walk(b, Options{MaxDepth: 1 << 20})
	switch {
	case lerr == nil && (se.Kind == ErrSyntax || se.Kind == ErrTruncated):
		t.Fatalf("%q: the tokenizer completes at %d, the parser says %v", b, lend, err)
	case lerr != nil && (se.Kind == ErrSyntax || se.Kind == ErrTruncated) && (lerr.Kind != se.Kind || lerr.Off != se.Off):
		t.Fatalf("%q: the tokenizer says %v, the parser %v", b, lerr, err)
	case lerr != nil && lerr.Kind == ErrTruncated && !truncatedPrefix(b):
		t.Fatalf("%q: reported truncated, but no completion makes it valid", b)
	}
}

// truncatedPrefix reports whether some completion of b is valid JSON, as
// encoding/json's streaming decoder tells it: io.ErrUnexpectedEOF, or io.EOF
// for nothing but whitespace.
func truncatedPrefix(b []byte) bool {
	var v any
	err := json.NewDecoder(bytes.NewReader(b)).Decode(&v)
	return errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF
}

// walk reads one value with a tokenizer, decoding nothing.
func walk(b []byte, opt Options) (int, *Error) {
	var tz Tokenizer
	tz.Reset(b, 0, opt)
	for {
		tok, err := tz.Next(0)
		if err != nil {
			return 0, err.(*Error)
		}
		if tz.Depth() == 0 {
			return tok.End, nil
		}
	}
}

// checkSpans holds every node to its bytes: a value's span re-parses to the
// same value, and a member's Off is the opening quote of its name.
func checkSpans(t *testing.T, b []byte, n *Node) {
	t.Helper()
	raw := b[n.Off:n.End]
	got, err := decodeNumbers(raw)
	if err != nil {
		t.Fatalf("%q: span [%d,%d) %q is not a value: %v", b, n.Off, n.End, raw, err)
	}
	if want := toAny(n); !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: span %q decodes to %#v, node is %#v", b, raw, got, want)
	}
	for _, m := range n.Members {
		var key string
		if b[m.Off] != '"' || json.NewDecoder(bytes.NewReader(b[m.Off:])).Decode(&key) != nil || key != m.Key {
			t.Fatalf("%q: member %q at %d does not start its name", b, m.Key, m.Off)
		}
		checkSpans(t, b, m.Val)
	}
	for _, e := range n.Elems {
		checkSpans(t, b, e)
	}
}

func toAny(n *Node) any {
	switch n.Kind {
	case Null:
		return nil
	case Bool:
		return n.Bool
	case Number:
		return json.Number(n.Str)
	case String:
		return n.Str
	case Array:
		out := make([]any, 0, len(n.Elems))
		for _, e := range n.Elems {
			out = append(out, toAny(e))
		}
		return out
	}
	out := map[string]any{}
	for _, m := range n.Members {
		out[m.Key] = toAny(m.Val)
	}
	return out
}

// decodeNumbers decodes one value as toAny represents it: numbers as
// json.Number (1e700 is a valid literal, not a float64).
func decodeNumbers(b []byte) (any, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one value")
	}
	return v, nil
}

func TestParseTree(t *testing.T) {
	t.Parallel()
	b := []byte(` {"z": [1, "a\u00e9", true], "a": {"k": null}, "n": -1.5e3} `)
	n, end, err := Parse(b, 0, Options{MaxDepth: 8, Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if end != len(b)-1 || n.Kind != Object || n.Off != 1 || n.End != len(b)-1 {
		t.Fatalf("root %v [%d,%d), end %d", n.Kind, n.Off, n.End, end)
	}
	var keys []string
	for _, m := range n.Members {
		keys = append(keys, m.Key)
	}
	if !reflect.DeepEqual(keys, []string{"z", "a", "n"}) {
		t.Fatalf("keys %q: document order lost", keys)
	}
	z := n.Get("z")
	if z.Kind != Array || len(z.Elems) != 3 || z.Elems[1].Str != "aé" || string(b[z.Elems[1].Off:z.Elems[1].End]) != `"a\u00e9"` || !z.Elems[2].Bool {
		t.Fatalf("z = %+v", z)
	}
	if num := n.Get("n"); num.Kind != Number || num.Str != "-1.5e3" {
		t.Fatalf("n = %+v: a number keeps its literal", num)
	}
	if n.Get("missing") != nil || n.Get("a").Get("k").Kind != Null {
		t.Fatal("Get")
	}
	if n.Members[1].Off != strings.Index(string(b), `"a"`) {
		t.Fatalf("member offset %d", n.Members[1].Off)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		strict   bool
		depth    int
		kind     ErrorKind
		off      int
		path     []PathElem
	}{
		{"DuplicateName", `{"a":1,"b":{"c":1,"c":2}}`, true, 8, ErrDuplicateName, 18, []PathElem{{"b", -1}, {"c", -1}}},
		{"DuplicateAllowedLenient", `{"a":1,"a":2} `, false, 8, 0, 0, nil},
		{"DuplicatePastEight", `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"b":0}`, true, 8, ErrDuplicateName, 55, []PathElem{{"b", -1}}},
		{"TruncatedInString", `{"a":["x`, true, 8, ErrTruncated, 8, []PathElem{{"a", -1}, {"", 0}}},
		{"TruncatedAfterColon", `{"a":`, true, 8, ErrTruncated, 5, []PathElem{{"a", -1}}},
		{"TruncatedBeforeColon", `{"a"`, true, 8, ErrTruncated, 4, nil},
		{"ColonMissing", `{"a" 1}`, true, 8, ErrSyntax, 5, nil},
		{"CommaMissing", `[1 2]`, true, 8, ErrSyntax, 3, nil},
		{"SecondElement", `[1,}`, true, 8, ErrSyntax, 3, []PathElem{{"", 1}}},
		{"InvalidUTF8Strict", "[\"\xff\"]", true, 8, ErrInvalidUnicode, 2, []PathElem{{"", 0}}},
		{"InvalidUTF8Lenient", "[\"\xff\"]", false, 8, 0, 0, nil},
		{"LoneSurrogateStrict", `{"t":"\ud800"}`, true, 8, ErrInvalidUnicode, 6, []PathElem{{"t", -1}}},
		{"TooDeep", `{"a":[[1]]}`, true, 2, ErrTooDeep, 6, []PathElem{{"a", -1}, {"", 0}}},
		{"EscapeInvalid", `"\q"`, true, 8, ErrSyntax, 2, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := Parse([]byte(c.in), 0, Options{MaxDepth: c.depth, Strict: c.strict})
			if c.kind == 0 {
				if err != nil {
					t.Fatalf("Parse(%q) = %v, want success", c.in, err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%q) = %v, want an *Error", c.in, err)
			}
			if e.Kind != c.kind || e.Off != c.off || !samePath(e.Path, c.path) {
				t.Fatalf("Parse(%q) = kind %d at %d path %+v (%v), want kind %d at %d path %+v", c.in, e.Kind, e.Off, e.Path, e, c.kind, c.off, c.path)
			}
		})
	}
}

func samePath(a, b []PathElem) bool { return len(a) == 0 && len(b) == 0 || reflect.DeepEqual(a, b) }

func TestKindString(t *testing.T) {
	t.Parallel()
	want := map[Kind]string{Null: "null", Bool: "boolean", Number: "number", String: "string", Array: "array", Object: "object"}
	for k, s := range want {
		if k.String() != s {
			t.Errorf("%d.String() = %q, want %q", k, k.String(), s)
		}
	}
}
