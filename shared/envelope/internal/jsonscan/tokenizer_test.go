package jsonscan

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func tokens(t *testing.T, b string, start int, d Decode) ([]string, error) {
	t.Helper()
	var tz Tokenizer
	tz.Reset([]byte(b), start, Options{MaxDepth: 100})
	var out []string
	for {
		tok, err := tz.Next(d)
		if err != nil {
			return out, err
		}
		out = append(out, fmt.Sprintf("%d:%s@%d-%d=%q", tz.Depth(), kindName[tok.Kind], tok.Off, tok.End, tz.Text()))
		if tz.Depth() == 0 {
			if _, err := tz.Next(d); err != io.EOF {
				t.Fatalf("after the value: %v, want io.EOF", err)
			}
			return out, nil
		}
	}
}

var kindName = map[TokenKind]string{TokObjectStart: "{", TokObjectEnd: "}", TokArrayStart: "[", TokArrayEnd: "]",
	TokName: "name", TokString: "str", TokNumber: "num", TokTrue: "true", TokFalse: "false", TokNull: "null"}

func TestTokenizerTokensAndSpans(t *testing.T) {
	t.Parallel()
	// A value among prose: the tokenizer starts at it and stops at its end.
	text := `see {"a": [1, "x\ny"], "b": {}} and more`
	got, err := tokens(t, text, 4, DecodeNames|DecodeStrings)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`1:{@4-5=""`, `1:name@5-8="a"`, `2:[@10-11=""`, `2:num@11-12=""`, `2:str@14-20="x\ny"`, `1:]@20-21=""`,
		`1:name@23-26="b"`, `2:{@28-29=""`, `1:}@29-30=""`, `0:}@30-31=""`,
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("tokens\n%s\nwant\n%s", strings.Join(got, " "), strings.Join(want, " "))
	}
	// Decoding is opt-in per kind.
	got, _ = tokens(t, `{"k":"v"}`, 0, DecodeNames)
	if got[1] != `1:name@1-4="k"` || got[2] != `1:str@5-8=""` {
		t.Fatalf("names only: %q", got)
	}
	got, _ = tokens(t, ` -0.5e+2 `, 0, 0)
	if len(got) != 1 || got[0] != `0:num@1-8=""` {
		t.Fatalf("scalar document: %q", got)
	}
}

func TestTokenizerErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		kind     ErrorKind
		off      int
		tok      TokenKind
		tokOff   int
		atValue  bool
		partial  string
	}{
		{"EndAtValue", `{"a": `, ErrTruncated, 6, TokNone, -1, true, ""},
		{"EndBeforeColon", `{"a"`, ErrTruncated, 4, TokNone, -1, false, ""},
		{"EndInName", `{"sch`, ErrTruncated, 5, TokName, 1, false, "sch"},
		{"EndInEscapedString", `{"s": "op\u0065n`, ErrTruncated, 16, TokString, 6, true, "open"},
		{"EndInEscape", `["ab\`, ErrTruncated, 5, TokString, 1, true, "ab"},
		{"EndInUnicodeEscape", `["ab\u00`, ErrTruncated, 8, TokString, 1, true, "ab"},
		{"EndBetweenSurrogates", `["\ud83d`, ErrTruncated, 8, TokString, 1, true, ""},
		{"EndInLiteral", `[tr`, ErrTruncated, 3, TokTrue, 1, true, ""},
		{"EndInNumber", `[1.`, ErrTruncated, 3, TokNumber, 1, true, ""},
		{"EndAfterComma", `[1,`, ErrTruncated, 3, TokNone, -1, true, ""},
		{"EndAfterValue", `{"a":1`, ErrTruncated, 6, TokNone, -1, false, ""},
		{"BadStart", `{"a": x}`, ErrSyntax, 6, TokNone, -1, true, ""},
		{"BadName", `{1: 2}`, ErrSyntax, 1, TokNone, -1, false, ""},
		{"TrailingComma", `{"a":1,}`, ErrSyntax, 7, TokNone, -1, false, ""},
		{"BadEscape", `["a\q"]`, ErrSyntax, 4, TokString, 1, true, ""},
		{"ControlInString", "[\"a\x01\"]", ErrSyntax, 3, TokString, 1, true, ""},
		{"BadLiteral", `[nulL]`, ErrSyntax, 4, TokNull, 1, true, ""},
		{"BadNumber", `[-x]`, ErrSyntax, 2, TokNumber, 1, true, ""},
		{"TooDeep", `[[[[`, ErrTooDeep, 2, TokArrayStart, 2, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var tz Tokenizer
			tz.Reset([]byte(c.in), 0, Options{MaxDepth: 2})
			var err error
			for err == nil {
				_, err = tz.Next(DecodeNames | DecodeStrings)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%q: %v, want an *Error", c.in, err)
			}
			if e.Kind != c.kind || e.Off != c.off || e.Token != c.tok || e.TokenOff != c.tokOff || e.AtValue != c.atValue || e.Partial != c.partial {
				t.Fatalf("%q: %+v, want kind %d off %d token %s at %d atValue %v partial %q",
					c.in, *e, c.kind, c.off, kindName[c.tok], c.tokOff, c.atValue, c.partial)
			}
			if _, again := tz.Next(0); again != err {
				t.Fatalf("Next after an error = %v, want the same error", again)
			}
		})
	}
}

// Nesting past 64 levels leaves the inline bit set; objects and arrays
// alternate so a wrong bit would expect the wrong closer.
func TestTokenizerDeepNesting(t *testing.T) {
	t.Parallel()
	const depth = 200
	var open, shut strings.Builder
	for i := range depth {
		if i%3 == 0 {
			open.WriteString(`{"k":`)
		} else {
			open.WriteString(`[`)
		}
	}
	for i := depth - 1; i >= 0; i-- {
		if i%3 == 0 {
			shut.WriteString(`}`)
		} else {
			shut.WriteString(`]`)
		}
	}
	doc := open.String() + "1" + shut.String()
	end, err := walk([]byte(doc), Options{MaxDepth: depth})
	if err != nil || end != len(doc) {
		t.Fatalf("walk = %d, %v; want %d", end, err, len(doc))
	}
	// The same closers swapped at level 130 must fail there.
	bad := []byte(doc)
	i := len(open.String()) + 1 + (depth - 1 - 130)
	if bad[i] == ']' {
		bad[i] = '}'
	} else {
		bad[i] = ']'
	}
	if _, err := walk(bad, Options{MaxDepth: depth}); err == nil || err.Off != i {
		t.Fatalf("swapped closer at %d: %v", i, err)
	}
	if _, err := walk([]byte(doc), Options{MaxDepth: depth - 1}); err == nil || err.Kind != ErrTooDeep {
		t.Fatalf("one level too deep: %v", err)
	}
}

func TestTokenizerReset(t *testing.T) {
	t.Parallel()
	var tz Tokenizer
	tz.Reset([]byte(`[`+strings.Repeat("[", 100)), 0, Options{MaxDepth: 200})
	for {
		if _, err := tz.Next(0); err != nil {
			break
		}
	}
	tz.Reset([]byte(`{"a":1}`), 0, Options{MaxDepth: 4})
	var last Token
	for tz.Depth() > 0 || last.Kind == TokNone {
		tok, err := tz.Next(0)
		if err != nil {
			t.Fatalf("after Reset: %v", err)
		}
		last = tok
	}
	if last.Kind != TokObjectEnd || last.End != 7 {
		t.Fatalf("after Reset, last token %+v", last)
	}
}
