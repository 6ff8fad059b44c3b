package envelope

import (
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
