package envelope

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

const fullEnv = `{"schema":"openab.turn.v1","messages":[{"id":"a","text":"hi"}],"next":{"type":"stop"}}`

func TestStripFragments(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"NoJSON", "just words", "just words"},
		{"UnrelatedSchema", `use {"schema": "my-db-schema"} here`, `use {"schema": "my-db-schema"} here`},
		{"UnrelatedSchemaTruncated", `use {"schema": "my-db`, `use {"schema": "my-db`},
		{"UnrelatedMessages", `OpenAI wants {"messages":[{"role":"user","content":"hi"}]}`, `OpenAI wants {"messages":[{"role":"user","content":"hi"}]}`},
		{"OtherKeysTruncated", `config: {"name": "x", "messa`, `config: {"name": "x", "messa`},
		{"CodeBraces", "func f() { return }\nif (x) {y}", "func f() { return }\nif (x) {y}"},
		// A bare "{" at the very end could be an envelope cut short: it goes.
		{"TrailingBrace", "func f() { return }\nif x {", "func f() { return }\nif x"},
		{"Complete", "before " + fullEnv + " after", "before after"},
		{"CompleteParagraphs", "before\n\n" + fullEnv + "\n\nafter", "before\n\nafter"},
		{"CompleteLine", "before\n" + fullEnv + " after", "before\nafter"},
		{"Glued", "see" + fullEnv + ".", "see."},
		{"OnlyEnvelope", "  " + fullEnv + "\n", ""},
		{"NoSchemaShape", `a {"messages":[{"id":"x","text":"hi"}]} b`, "a b"},
		{"MarkerOtherVersion", `a {"schema":"openab.turn.v9","whatever":1} b`, "a b"},
		{"MarkerCase", `a {"schema":"OPENAB.TURN.V1"} b`, "a b"},
		{"Truncated", "Checking.\n\n" + fullEnv[:40], "Checking."},
		{"TruncatedInKey", `Checking. {"sche`, "Checking."},
		{"TruncatedBrace", "Checking. {", "Checking."},
		{"TruncatedMarkerPartial", `Checking. {"schema":"open`, "Checking."},
		{"Broken", "Sure. " + fullEnv[:27] + " broken} tail", "Sure. tail"},
		{"BrokenOpenString", "Sure. " + fullEnv[:30] + "\" broken, more\"} tail", "Sure."},
		{"BrokenUnbalanced", "Sure. " + fullEnv[:30] + "\n oops", "Sure."},
		{"MarkerAfterBreak", `x {"next":{"q":"\U0001"}, "schema":"openab.turn.v1","messages":[]} y`, "x y"},
		{"EnvelopeInsideBroken", `x {"schema":"openab.turn.v1","messages":[{"id":"a","text":"hi` + fullEnv + " y", "x"},
		{"Nested", `{"data": ` + fullEnv + `}`, `{"data": }`},
		{"Fenced", "Here:\n```json\n" + fullEnv + "\n```\nDone.", "Here:\n\nDone."},
		{"FencedTruncated", "Here:\n```json\n" + fullEnv[:50], "Here:"},
		{"InlineCode", "Here: `" + fullEnv + "` ok", "Here: ok"},
		{"Encoded", `"` + strings.ReplaceAll(fullEnv, `"`, `\"`) + `"`, ""},
		{"TwoEnvelopes", fullEnv + "\n" + fullEnv, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, removed := stripFragments(c.in)
			if got != c.want {
				t.Fatalf("stripFragments(%q) = %q, want %q", c.in, got, c.want)
			}
			if removed != (got != strings.TrimSpace(c.in)) {
				t.Fatalf("removed = %v", removed)
			}
			if hasFragment(got, detectProse) {
				t.Fatalf("%q still holds a fragment", got)
			}
		})
	}
}

// The parser accepts exactly what encoding/json accepts, less what strict
// mode refuses (duplicate keys, invalid Unicode), and decodes the same.
func TestParserMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range jsonSeeds {
		checkAgainstEncodingJSON(t, []byte(s))
	}
}

var jsonSeeds = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e+3`, `-12.25E-2`, `"x"`,
	`{"a":[1,2,{"b":null}],"c":"\u00e9\ud83d\ude00\n\t\"\\\/"}`,
	`{"a":1,"a":2}`, `"\ud800"`, `"\udc00x"`, "\"\xff\"", `01`, `1.`, `.5`, `1e`, `-`, `+1`,
	`{"a" 1}`, `{"a":1,}`, `[1,]`, `[1 2]`, `"a` + "\n" + `b"`, `"\x"`, `"\u12"`, `tru`, `nul`,
	`{"a":1} x`, ` [ ] `, `{"":""}`, `"\u0000"`, strings.Repeat("[", 70) + strings.Repeat("]", 70),
}

func checkAgainstEncodingJSON(t *testing.T, b []byte) {
	t.Helper()
	p := parser{b: b, maxDepth: 1 << 20, build: true, strict: true}
	n, err := p.value()
	trailing := false
	if err == nil {
		p.ws()
		if p.i != len(b) {
			err, trailing = &syntaxError{reason: ReasonSyntax}, true
		}
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
		return
	}
	se := err.(*syntaxError)
	// Strict mode may refuse what encoding/json takes (it reads the last
	// duplicate, and replaces bad Unicode), never anything else.
	if stdOK && se.reason != ReasonDuplicateKey && se.reason != ReasonInvalidUnicode {
		t.Fatalf("%q: rejected (%v), encoding/json accepts", b, err)
	}
	// Probe mode follows the same grammar: truncation is reported only when
	// the input is a prefix of something valid.
	if len(b) > 0 && b[0] == '{' && !trailing {
		_, st, _ := scan(b, 0)
		if st == statusComplete && (se.reason == ReasonSyntax || se.reason == ReasonTruncated) {
			t.Fatalf("%q: probe says complete, parser says %s", b, se.reason)
		}
	}
}

func toAny(n *node) any {
	switch n.kind {
	case kindNull:
		return nil
	case kindBool:
		return n.b
	case kindNumber:
		return json.Number(n.str)
	case kindString:
		return n.str
	case kindArray:
		out := make([]any, 0, len(n.elems))
		for _, e := range n.elems {
			out = append(out, toAny(e))
		}
		return out
	}
	out := map[string]any{}
	for _, m := range n.members {
		out[m.key] = toAny(m.val)
	}
	return out
}
