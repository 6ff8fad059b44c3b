package envelope

import (
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/message"
)

var telegram = message.Capabilities{TextLimit: 4096, Counting: message.CountUTF16}

func build(t *testing.T, body string, cfg Config, caps message.Capabilities) Plan {
	t.Helper()
	plan, err := Build(Reply{Body: []byte(body), ContentType: "application/json"}, cfg, caps)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	checkPlanInvariants(t, plan, caps)
	return plan
}

func texts(p Plan) []string {
	var out []string
	for _, u := range p.Units {
		out = append(out, u.ID+"="+u.Text)
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The acceptance list, one test each.
func TestAcceptance(t *testing.T) {
	t.Parallel()

	t.Run("NewlinesStayInOneBubble", func(t *testing.T) {
		p := build(t, `{"schema":"openab.turn.v1","messages":[{"id":"a","text":"alpha\nbeta\ngamma"}]}`, Config{}, telegram)
		if got, want := texts(p), []string{"a#1=alpha\nbeta\ngamma"}; !equal(got, want) {
			t.Fatalf("units = %q, want %q", got, want)
		}
		if p.Next.Type != NextStop || p.Outcome != OutcomeEnvelope {
			t.Fatalf("next %q outcome %q", p.Next.Type, p.Outcome)
		}
	})

	t.Run("ThreeEntriesThreeUnitsInOrder", func(t *testing.T) {
		p := build(t, `{"schema":"openab.turn.v1","messages":[{"id":"z","text":"alpha"},{"id":"a","text":"beta"},{"id":"m","text":"gamma"}]}`, Config{}, telegram)
		if got, want := texts(p), []string{"z#1=alpha", "a#1=beta", "m#1=gamma"}; !equal(got, want) {
			t.Fatalf("units = %q, want %q", got, want)
		}
	})

	t.Run("SilentWinsOverMessages", func(t *testing.T) {
		p := build(t, `{"schema":"openab.turn.v1","messages":[{"id":"a","text":"hi"}],"next":{"type":"silent"}}`, Config{}, telegram)
		if len(p.Units) != 0 || p.Outcome != OutcomeSilent || p.Next.Type != NextSilent {
			t.Fatalf("plan = %+v", p)
		}
	})

	t.Run("OverMaxBubblesRejectedWhole", func(t *testing.T) {
		for _, policy := range []ParseErrorPolicy{PolicyFallbackText, PolicyErrorMessage, PolicySilent} {
			body := `{"schema":"openab.turn.v1","messages":[{"id":"1","text":"a"},{"id":"2","text":"b"},{"id":"3","text":"c"}]}`
			p, err := Build(Reply{Body: []byte(body)}, Config{MaxBubbles: 2, OnParseError: policy}, telegram)
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != LimitMaxBubbles || le.Max != 2 || le.Got != 3 || len(p.Units) != 0 {
				t.Fatalf("%s: plan %+v err %v", policy, p, err)
			}
		}
	})

	t.Run("OverMaxBubbleCharsRejectedWhole", func(t *testing.T) {
		body := `{"schema":"openab.turn.v1","messages":[{"id":"ok","text":"fine"},{"id":"long","text":"` + strings.Repeat("é", 11) + `"}]}`
		p, err := Build(Reply{Body: []byte(body)}, Config{MaxBubbleChars: 10}, telegram)
		var le *LimitError
		if !errors.As(err, &le) || le.Limit != LimitMaxBubbleChars || le.Got != 11 || le.Max != 10 || le.BubbleID != "long" || len(p.Units) != 0 {
			t.Fatalf("plan %+v err %v", p, err)
		}
		if strings.Contains(err.Error(), "é") {
			t.Fatalf("error %q holds bubble text", err)
		}
		// Exactly at the limit (in code points, not bytes) passes.
		body = strings.Replace(body, strings.Repeat("é", 11), strings.Repeat("é", 10), 1)
		if _, err := Build(Reply{Body: []byte(body)}, Config{MaxBubbleChars: 10}, telegram); err != nil {
			t.Fatalf("at the limit: %v", err)
		}
	})

	t.Run("OverLongBubbleSplitsInPlace", func(t *testing.T) {
		long := strings.Repeat("word ", 30) // 150 runes
		body := `{"schema":"openab.turn.v1","messages":[{"id":"a","text":"first"},{"id":"b","text":"` + long + `"},{"id":"c","text":"last"}]}`
		p := build(t, body, Config{}, message.Capabilities{TextLimit: 60, Counting: message.CountRunes})
		var ids []string
		var joined strings.Builder
		for _, u := range p.Units {
			ids = append(ids, u.ID)
			if u.BubbleID == "b" {
				joined.WriteString(u.Text)
			}
		}
		if want := []string{"a#1", "b#1", "b#2", "b#3", "c#1"}; !equal(ids, want) {
			t.Fatalf("ids = %q, want %q", ids, want)
		}
		if joined.String() != long {
			t.Fatalf("parts join to %q", joined.String())
		}
	})

	t.Run("TruncatedEnvelopeStripped", func(t *testing.T) {
		full := `{"schema":"openab.turn.v1","messages":[{"id":"a","text":"your flight moved"}]}`
		for i := 1; i < len(full); i++ {
			for _, prefix := range []string{"", "Checking now.\n\n"} {
				body := prefix + full[:i]
				p := build(t, body, Config{}, telegram)
				if p.Outcome != OutcomeFallbackText {
					t.Fatalf("%q: outcome %q", body, p.Outcome)
				}
				want := []string(nil)
				if prefix != "" {
					want = []string{"fallback#1=Checking now."}
				}
				if got := texts(p); !equal(got, want) {
					t.Fatalf("%q: units %q, want %q", body, got, want)
				}
			}
		}
	})

	t.Run("ProseWithSchemaSnippetUnchanged", func(t *testing.T) {
		prose := `Set it like this: {"schema": "my-db-schema", "tables": ["a", "b"]} then restart.`
		for _, ct := range []string{"text/plain", "application/json"} {
			p, err := Build(Reply{Body: []byte(prose), ContentType: ct}, Config{}, telegram)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Units) != 1 || p.Units[0].Text != prose {
				t.Fatalf("%s: units %q", ct, texts(p))
			}
		}
	})
}

func TestNext(t *testing.T) {
	t.Parallel()
	env := func(next string) string {
		return `{"schema":"openab.turn.v1","messages":[{"id":"a","text":"hi"}],"next":` + next + `}`
	}
	t.Run("WaitIsStopAndRecorded", func(t *testing.T) {
		p := build(t, env(`{"type":"wait","wait":{"reason":"CI","seconds":90}}`), Config{}, telegram)
		if p.Next.Type != NextWait || p.Next.Wait == nil || p.Next.Wait.Reason != "CI" || p.Next.Wait.Seconds != 90 || len(p.Units) != 1 {
			t.Fatalf("plan = %+v", p)
		}
		p = build(t, env(`{"type":"wait"}`), Config{}, telegram)
		if p.Next.Wait == nil || *p.Next.Wait != (Wait{}) {
			t.Fatalf("bare wait = %+v", p.Next.Wait)
		}
	})
	t.Run("ToolIsRecordedWithRawArguments", func(t *testing.T) {
		p := build(t, env(`{"type":"tool","tool":{"name":"cal/create","arguments":{ "b": [1, 2], "a": {"x": null} }}}`), Config{}, telegram)
		if p.Next.Type != NextTool || p.Next.Tool.Name != "cal/create" || string(p.Next.Tool.Arguments) != `{"b":[1,2],"a":{"x":null}}` {
			t.Fatalf("tool = %+v %s", p.Next.Tool, p.Next.Tool.Arguments)
		}
		p = build(t, env(`{"type":"tool","tool":{"name":"ping"}}`), Config{}, telegram)
		if p.Next.Tool.Arguments != nil {
			t.Fatalf("arguments = %s, want nil", p.Next.Tool.Arguments)
		}
	})
	t.Run("AskMessageCountsAgainstMaxBubbleChars", func(t *testing.T) {
		body := `{"schema":"openab.turn.v1","next":{"type":"ask","request":{"message":"` + strings.Repeat("?", 21) +
			`","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}}`
		_, err := Build(Reply{Body: []byte(body)}, Config{MaxBubbleChars: 20}, telegram)
		var le *LimitError
		if !errors.As(err, &le) || le.BubbleID != "ask" {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("SilentSkipsLimits", func(t *testing.T) {
		body := `{"schema":"openab.turn.v1","messages":[{"id":"a","text":"1"},{"id":"b","text":"2"}],"next":{"type":"silent"}}`
		p, err := Build(Reply{Body: []byte(body)}, Config{MaxBubbles: 1}, telegram)
		if err != nil || p.Outcome != OutcomeSilent {
			t.Fatalf("plan %+v err %v", p, err)
		}
	})
}

// Every way an envelope can be invalid, with the reason and path it reports.
func TestParseRejects(t *testing.T) {
	t.Parallel()
	const pre = `{"schema":"openab.turn.v1",`
	cases := []struct {
		name, body string
		reason     Reason
		path       string
	}{
		{"Empty", "  \n", ReasonNotEnvelope, ""},
		{"Prose", "hello", ReasonNotEnvelope, ""},
		{"OtherJSON", `{"answer": 42}`, ReasonNotEnvelope, ""},
		{"Array", `[{"schema":"openab.turn.v1"}]`, ReasonEmbedded, ""},
		{"TrailingText", pre + `"messages":[]} thanks`, ReasonEmbedded, ""},
		{"TwoEnvelopes", pre + `"messages":[]}` + pre + `"messages":[]}`, ReasonEmbedded, ""},
		{"Encoded", `"{\"schema\":\"openab.turn.v1\"}"`, ReasonEncoded, ""},
		{"Truncated", pre + `"messages":[{"id":"a","te`, ReasonTruncated, ""},
		{"Syntax", pre + `"messages":[{"id":"a" "text":"x"}]}`, ReasonSyntax, ""},
		{"TrailingComma", pre + `"messages":[],}`, ReasonSyntax, ""},
		{"UnknownTop", pre + `"messages":[],"extra":1}`, ReasonUnknownField, "extra"},
		{"UnknownOddKey", pre + `"messages":[],"a b":1}`, ReasonUnknownField, `["a b"]`},
		{"UnknownInBubble", pre + `"messages":[{"id":"a","text":"x","markdown":true}]}`, ReasonUnknownField, "messages[0].markdown"},
		{"UnknownInNext", pre + `"next":{"type":"stop","why":"x"}}`, ReasonUnknownField, "next.why"},
		{"ToolOnStop", pre + `"next":{"type":"stop","tool":{"name":"x"}}}`, ReasonUnknownField, "next.tool"},
		{"UnknownInWait", pre + `"next":{"type":"wait","wait":{"until":"x"}}}`, ReasonUnknownField, "next.wait.until"},
		{"UnknownInTool", pre + `"next":{"type":"tool","tool":{"name":"x","args":{}}}}`, ReasonUnknownField, "next.tool.args"},
		{"DuplicateKeyTop", pre + `"schema":"openab.turn.v1"}`, ReasonDuplicateKey, "schema"},
		{"DuplicateKeyInArgs", pre + `"next":{"type":"tool","tool":{"name":"x","arguments":{"a":1,"a":2}}}}`, ReasonDuplicateKey, "next.tool.arguments.a"},
		{"MissingSchema", `{"messages":[{"id":"a","text":"x"}]}`, ReasonMissingField, "schema"},
		{"SchemaV2", `{"schema":"openab.turn.v2"}`, ReasonBadSchema, "schema"},
		{"SchemaCase", `{"schema":"OpenAB.turn.v1"}`, ReasonBadSchema, "schema"},
		{"SchemaNumber", `{"schema":1,"messages":[{"id":"a","text":"x"}]}`, ReasonWrongType, "schema"},
		{"MessagesNull", pre + `"messages":null}`, ReasonWrongType, "messages"},
		{"BubbleString", pre + `"messages":["hi"]}`, ReasonWrongType, "messages[0]"},
		{"MissingID", pre + `"messages":[{"text":"x"}]}`, ReasonMissingField, "messages[0].id"},
		{"MissingText", pre + `"messages":[{"id":"a"}]}`, ReasonMissingField, "messages[0].text"},
		{"NumericID", pre + `"messages":[{"id":1,"text":"x"}]}`, ReasonWrongType, "messages[0].id"},
		{"EmptyID", pre + `"messages":[{"id":"","text":"x"}]}`, ReasonBadID, "messages[0].id"},
		{"BlankID", pre + `"messages":[{"id":" \t","text":"x"}]}`, ReasonBadID, "messages[0].id"},
		{"HashID", pre + `"messages":[{"id":"a#2","text":"x"}]}`, ReasonBadID, "messages[0].id"},
		{"ControlID", pre + `"messages":[{"id":"a\u0007","text":"x"}]}`, ReasonBadID, "messages[0].id"},
		{"LongID", pre + `"messages":[{"id":"` + strings.Repeat("i", 65) + `","text":"x"}]}`, ReasonBadID, "messages[0].id"},
		{"DuplicateID", pre + `"messages":[{"id":"a","text":"x"},{"id":"b","text":"y"},{"id":"a","text":"z"}]}`, ReasonDuplicateID, "messages[2].id"},
		{"EmptyText", pre + `"messages":[{"id":"a","text":""}]}`, ReasonBlankText, "messages[0].text"},
		{"BlankText", pre + `"messages":[{"id":"a","text":"\n \u3000"}]}`, ReasonBlankText, "messages[0].text"},
		{"NestedEnvelope", pre + `"messages":[{"id":"a","text":"{\"schema\":\"openab.turn.v1\"}"}]}`, ReasonNestedEnvelope, "messages[0].text"},
		{"InvalidUTF8", pre + "\"messages\":[{\"id\":\"a\",\"text\":\"\xff\"}]}", ReasonInvalidUnicode, "messages[0].text"},
		{"LoneSurrogate", pre + `"messages":[{"id":"a","text":"\ud800"}]}`, ReasonInvalidUnicode, "messages[0].text"},
		{"TooDeep", pre + `"next":{"type":"tool","tool":{"name":"x","arguments":{"a":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}}}}`, ReasonTooDeep, "next.tool.arguments.a[0][0][0][0][0][0][0][0]…"},
		{"NextString", pre + `"next":"stop"}`, ReasonWrongType, "next"},
		{"NextNoType", pre + `"next":{}}`, ReasonMissingField, "next.type"},
		{"NextUnknownType", pre + `"next":{"type":"handoff"}}`, ReasonBadNext, "next.type"},
		{"WaitSecondsZero", pre + `"next":{"type":"wait","wait":{"seconds":0}}}`, ReasonBadNext, "next.wait.seconds"},
		{"WaitSecondsFraction", pre + `"next":{"type":"wait","wait":{"seconds":1.5}}}`, ReasonWrongType, "next.wait.seconds"},
		{"WaitSecondsHuge", pre + `"next":{"type":"wait","wait":{"seconds":86401}}}`, ReasonBadNext, "next.wait.seconds"},
		{"WaitReasonLong", pre + `"next":{"type":"wait","wait":{"reason":"` + strings.Repeat("r", 501) + `"}}}`, ReasonBadNext, "next.wait.reason"},
		{"ToolMissing", pre + `"next":{"type":"tool"}}`, ReasonMissingField, "next.tool"},
		{"ToolBadName", pre + `"next":{"type":"tool","tool":{"name":"rm -rf"}}}`, ReasonBadNext, "next.tool.name"},
		{"ToolArgsArray", pre + `"next":{"type":"tool","tool":{"name":"x","arguments":[]}}}`, ReasonWrongType, "next.tool.arguments"},
		{"AskMissingRequest", pre + `"next":{"type":"ask"}}`, ReasonMissingField, "next.request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env, err := Parse([]byte(c.body))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse = %+v, %v; want a ParseError", env, err)
			}
			if pe.Reason != c.reason || pe.Path != c.path {
				t.Fatalf("got %s at %q (%v), want %s at %q", pe.Reason, pe.Path, pe, c.reason, c.path)
			}
			// Under fallback_text nothing of an invalid envelope is delivered.
			p := build(t, c.body, Config{}, telegram)
			if p.Outcome != OutcomeFallbackText || !errors.As(p.Problem, &pe) {
				t.Fatalf("plan = %+v", p)
			}
		})
	}
}

// ParseError and LimitError strings never carry bubble text.
func TestErrorsHoldNoText(t *testing.T) {
	t.Parallel()
	secret := "SECRET-PASSPHRASE"
	bodies := []string{
		`{"schema":"openab.turn.v1","messages":[{"id":"a","text":"` + secret + `"},{"id":"a","text":"` + secret + `"}]}`,
		`{"schema":"openab.turn.v1","messages":[{"id":"a","text":"` + secret + `","x":"` + secret + `"}]}`,
		`{"schema":"openab.turn.v1","messages":[{"id":"a","text":"` + secret + `"}],"next":{"type":"wait","wait":{"reason":"` + secret + `","seconds":-1}}}`,
		`{"schema":"openab.turn.v1","messages":[{"id":"a","text":"` + secret,
		`{"schema":"openab.turn.v1","messages":[{"id":"a","text":"` + secret + `"}]} ` + secret,
		`{"schema":"openab.turn.v1","messages":[{"id":"a","text":"` + strings.Repeat(secret, 100) + `"}]}`,
	}
	for _, b := range bodies {
		p, err := Build(Reply{Body: []byte(b)}, Config{}, telegram)
		for _, e := range []error{err, p.Problem} {
			if e != nil && strings.Contains(e.Error(), secret) {
				t.Errorf("error %q holds bubble text", e)
			}
		}
		if err == nil && p.Problem == nil {
			t.Errorf("%q: no error", b)
		}
	}
}

func TestTextMode(t *testing.T) {
	t.Parallel()
	t.Run("ContentTypeSelectsText", func(t *testing.T) {
		for _, ct := range []string{"text/plain", "text/plain; charset=utf-8", "TEXT/PLAIN"} {
			p, err := Build(Reply{Body: []byte("hi\nthere\n"), ContentType: ct}, Config{}, telegram)
			if err != nil || p.Outcome != OutcomeText || !equal(texts(p), []string{"text#1=hi\nthere"}) {
				t.Fatalf("%q: plan %+v err %v", ct, p, err)
			}
		}
	})
	t.Run("ModeTextSelectsText", func(t *testing.T) {
		p := build(t, "plain", Config{Mode: ModeText}, telegram)
		if p.Outcome != OutcomeText || !equal(texts(p), []string{"text#1=plain"}) {
			t.Fatalf("plan %+v", p)
		}
	})
	t.Run("NoCharLimitOnlyPlatformSplit", func(t *testing.T) {
		long := strings.Repeat("x", 5000)
		p := build(t, long, Config{Mode: ModeText, MaxBubbleChars: 10}, message.Capabilities{TextLimit: 2000, Counting: message.CountRunes})
		if len(p.Units) != 3 || p.Units[2].ID != "text#3" {
			t.Fatalf("units %d", len(p.Units))
		}
	})
	t.Run("EmptyBodyNothingToSend", func(t *testing.T) {
		p := build(t, " \n", Config{Mode: ModeText}, telegram)
		if p.Outcome != OutcomeText || len(p.Units) != 0 {
			t.Fatalf("plan %+v", p)
		}
	})
	t.Run("EmbeddedEnvelopeGoesToPolicy", func(t *testing.T) {
		body := "Done.\n{\"schema\":\"openab.turn.v1\",\"messages\":[{\"id\":\"a\",\"text\":\"x\"}]}"
		p := build(t, body, Config{Mode: ModeText}, telegram)
		if p.Outcome != OutcomeFallbackText || !equal(texts(p), []string{"fallback#1=Done."}) {
			t.Fatalf("plan %+v", p)
		}
		p = build(t, body, Config{Mode: ModeText, OnParseError: PolicyErrorMessage, ErrorMessage: "oops"}, telegram)
		if p.Outcome != OutcomeErrorMessage || !equal(texts(p), []string{"error#1=oops"}) {
			t.Fatalf("plan %+v", p)
		}
	})
	t.Run("InvalidUTF8Replaced", func(t *testing.T) {
		p := build(t, "caf\xe9", Config{Mode: ModeText}, telegram)
		if !equal(texts(p), []string{"text#1=caf\uFFFD"}) {
			t.Fatalf("units %q", texts(p))
		}
	})
	t.Run("BOMIgnored", func(t *testing.T) {
		p := build(t, "\xef\xbb\xbf"+`{"schema":"openab.turn.v1","messages":[{"id":"a","text":"x"}]}`, Config{}, telegram)
		if p.Outcome != OutcomeEnvelope {
			t.Fatalf("plan %+v", p)
		}
		p = build(t, "\xef\xbb\xbfhello", Config{Mode: ModeText}, telegram)
		if !equal(texts(p), []string{"text#1=hello"}) {
			t.Fatalf("units %q", texts(p))
		}
	})
}

func TestConfig(t *testing.T) {
	t.Parallel()
	d := Config{}.WithDefaults()
	if d.Mode != ModeStructured || d.MaxBubbles != 4 || d.MaxBubbleChars != 1200 || d.MaxUnits != 10 || d.MaxReplyBytes != 64<<10 ||
		d.OnParseError != PolicyFallbackText || d.ErrorMessage == "" {
		t.Fatalf("defaults = %+v", d)
	}
	if err := d.Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	kept := Config{Mode: ModeText, MaxBubbles: 9, MaxBubbleChars: 99, MaxUnits: 3, MaxReplyBytes: 500, OnParseError: PolicySilent, ErrorMessage: "x"}
	if kept.WithDefaults() != kept {
		t.Fatalf("WithDefaults changed set fields: %+v", kept.WithDefaults())
	}
	bad := Config{Mode: "json", MaxBubbles: -1, MaxBubbleChars: -2, OnParseError: "retry",
		ErrorMessage: `{"schema":"openab.turn.v1","messages":[]}`}
	err := bad.Validate()
	for _, want := range []string{"mode", "max_bubbles", "max_bubble_chars", "on_parse_error", "error_message"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want a problem with %s", err, want)
		}
	}
	if _, err := Build(Reply{Body: []byte("x")}, bad, telegram); err == nil {
		t.Fatal("Build accepted an invalid config")
	}
	if _, err := Build(Reply{Body: []byte("x")}, Config{}, message.Capabilities{TextLimit: 10, Counting: "graphemes"}); !errors.Is(err, ErrCapabilities) {
		t.Fatalf("unknown counting: %v", err)
	}
}

// TestEveryPlanIsBounded (finding 8.6): a text or fallback reply was split at
// the platform limit with no bound on units, so a 500 KB reply exceeded
// DynamoDB's item limit (and looped, asking the agent again) and a smaller
// one flooded the chat. Over MaxUnits or MaxReplyBytes the reply is rejected
// whole, however it came about.
func TestEveryPlanIsBounded(t *testing.T) {
	t.Parallel()
	tg := message.Capabilities{TextLimit: 4096, Counting: message.CountUTF16}
	big := strings.Repeat("lorem ipsum ", 500_000/12) // ~500 KB
	cases := []struct {
		name  string
		reply Reply
		cfg   Config
		limit string
	}{
		{"TextOverBytes", Reply{Body: []byte(big), ContentType: "text/plain"}, Config{}, LimitMaxReplyBytes},
		{"TextOverUnits", Reply{Body: []byte(strings.Repeat("x", 4096*11)), ContentType: "text/plain"}, Config{}, LimitMaxUnits},
		{"FallbackOverBytes", Reply{Body: []byte(big)}, Config{}, LimitMaxReplyBytes},
		{"EnvelopeOverUnits", Reply{Body: []byte(`{"schema":"openab.turn.v1","messages":[{"id":"a","text":"` + strings.Repeat("y", 3000) + `"}]}`)},
			Config{MaxBubbleChars: 5000, MaxUnits: 1}, LimitMaxUnits},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			caps := tg
			if tc.name == "EnvelopeOverUnits" {
				caps.TextLimit = 2000
			}
			_, err := Build(tc.reply, tc.cfg, caps)
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != tc.limit {
				t.Fatalf("Build = %v, want a %s LimitError", err, tc.limit)
			}
		})
	}
	t.Run("WithinTheBoundsIsPlanned", func(t *testing.T) {
		t.Parallel()
		p, err := Build(Reply{Body: []byte(strings.Repeat("x", 4096*10)), ContentType: "text/plain"}, Config{}, tg)
		if err != nil || len(p.Units) != 10 {
			t.Fatalf("Build = %d units, %v; want 10", len(p.Units), err)
		}
	})
}
