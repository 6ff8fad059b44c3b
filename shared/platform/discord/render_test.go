package discord

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
)

func TestInert(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"plain prose, as it is":                              "plain prose, as it is",
		"*b* **B** _i_ __u__ ~~s~~":                          `\*b\* \*\*B\*\* \_i\_ \_\_u\_\_ \~\~s\~\~`,
		"||spoiler|| `code`":                                 "\\|\\|spoiler\\|\\| \\`code\\`",
		"```\nblock\n```":                                    "\\`\\`\\`\nblock\n\\`\\`\\`",
		"[label](https://evil.example)":                      `\[label](https://evil.example)`,
		"<@123> <@&4> <#5> <t:1700000000:R> <:e:6> </ask:7>": `\<@123\> \<@&4\> \<#5\> \<t:1700000000:R\> \<:e:6\> \</ask:7\>`,
		"@everyone @here":                                    "@everyone @here", // allowed_mentions
		"# Title\n## Sub\n-# small":                          "\\# Title\n\\## Sub\n\\-# small",
		"- item\n  * nested\n+ plus":                         "\\- item\n  \\* nested\n\\+ plus",
		"1. first\n10. tenth\n3 apples":                      "1\\. first\n10\\. tenth\n3 apples",
		"> quote\n>>> block":                                 "\\> quote\n\\>\\>\\> block",
		"a - b # c 2. d":                                     "a - b # c 2. d", // only at the start of a line
		`C:\path`:                                            `C:\\path`,
		// URLs stay as written: a backslash inside one would be in the link.
		"see https://example.com/a_b-c_(d)*x*.": "see https://example.com/a_b-c_(d)*x*.",
		"(https://example.com/a_b)":             "(https://example.com/a_b)",
		"https://a.example/x<@1>":               "https://a.example/x<@1\\>",
		"HTTPS://A.example/a_b":                 "HTTPS://A.example/a\\_b", // Discord links lower case only
		"https:// *no*":                         "https\\:// \\*no\\*",
		"https://x":                             "https\\://x", // one character: no link
		"https://":                              "https\\://",
		"xhttps://a.example/_y_":                "xhttps://a.example/_y_",
		"emoji 😀 and ü *ok*":                    "emoji 😀 and ü \\*ok\\*",
	}
	for in, want := range cases {
		got := Inert(in)
		if got != want {
			t.Errorf("Inert(%q)\n got %q\nwant %q", in, got, want)
			continue
		}
		if view(got) != in {
			t.Errorf("Inert(%q) shows %q", in, view(got))
		}
		if err := live(got); err != nil {
			t.Errorf("Inert(%q): %v", in, err)
		}
	}
}

// TestInertAtMostDoubles: escaping adds a character per character at most,
// so TextLimit of text fits PlatformLimit.
func TestInertAtMostDoubles(t *testing.T) {
	t.Parallel()
	worst := strings.Repeat("*_~|`[<>\\", TextLimit/9+1)[:TextLimit]
	if n := utf8.RuneCountInString(Inert(worst)); n > PlatformLimit {
		t.Fatalf("%d code points of markup escape to %d, over %d", TextLimit, n, PlatformLimit)
	}
}

func choices(prefix string, labels ...string) []message.Choice {
	out := make([]message.Choice, len(labels))
	for i, l := range labels {
		out[i] = message.Choice{Label: l, Data: prefix + strconv.Itoa(i)}
	}
	return out
}

func labels(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "Option " + strconv.Itoa(i+1)
	}
	return out
}

// layout is components as rows of "B" (a button, with its label) and "S"
// (a select, with its options).
func layout(rows []DiscordComponent) []string {
	var out []string
	for _, r := range rows {
		var cells []string
		for _, c := range r.Components {
			switch c.Type {
			case DiscordComponentButton:
				cells = append(cells, "B:"+c.Label)
			case DiscordComponentStringSelect:
				cells = append(cells, "S:"+strconv.Itoa(len(c.Options))+":"+strconv.Itoa(*c.MinValues)+"-"+strconv.Itoa(*c.MaxValues))
			}
		}
		out = append(out, strings.Join(cells, " "))
	}
	return out
}

func TestComponents(t *testing.T) {
	t.Parallel()
	skip := []message.Choice{{Label: "Skip", Data: "q:x"}}
	cases := []struct {
		name string
		p    message.Prompt
		want []string
	}{
		{"Closed", message.Prompt{Text: "Which city? Lisbon"}, nil},
		{"TwoButtons", message.Prompt{Options: choices("q:0:", "Lisbon", "Porto"), Select: "q:0:s"}, []string{"B:Lisbon B:Porto"}},
		{"RowsOfFiveThenActions", message.Prompt{Options: choices("q:0:", labels(7)...), Actions: skip, Select: "q:0:s"},
			[]string{"B:Option 1 B:Option 2 B:Option 3 B:Option 4 B:Option 5", "B:Option 6 B:Option 7", "B:Skip"}},
		{"TwentyFiveButtons", message.Prompt{Options: choices("q:0:", labels(25)...), Select: "q:0:s"},
			[]string{"B:Option 1 B:Option 2 B:Option 3 B:Option 4 B:Option 5", "B:Option 6 B:Option 7 B:Option 8 B:Option 9 B:Option 10",
				"B:Option 11 B:Option 12 B:Option 13 B:Option 14 B:Option 15", "B:Option 16 B:Option 17 B:Option 18 B:Option 19 B:Option 20",
				"B:Option 21 B:Option 22 B:Option 23 B:Option 24 B:Option 25"}},
		{"ManyIsASelect", message.Prompt{Options: choices("q:0:", labels(21)...), Actions: skip, Select: "q:0:s"}, []string{"S:21:1-1", "B:Skip"}},
		{"MultiIsASelect", message.Prompt{Options: choices("q:0:", "Mon", "Tue", "Wed"), Multi: true, Select: "q:0:s",
			Actions: []message.Choice{{Label: "Done", Data: "q:0:d"}, {Label: "Skip", Data: "q:x"}}}, []string{"S:3:0-3", "B:Done B:Skip"}},
		{"MultiWithoutASelectToggles", message.Prompt{Options: []message.Choice{{Label: "Mon", Data: "a", Selected: true}, {Label: "Tue", Data: "b"}}, Multi: true,
			Actions: []message.Choice{{Label: "Done", Data: "d"}}}, []string{"B:✓ Mon B:Tue", "B:Done"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := components(tc.p)
			if err != nil {
				t.Fatalf("components: %v", err)
			}
			if got == nil || !reflect.DeepEqual(layout(got), tc.want) {
				t.Fatalf("layout %q, want %q", layout(got), tc.want)
			}
		})
	}
}

// TestSelectOptions: a select's options carry Choice.Data as values and
// the chosen ones as defaults; buttons show what is chosen.
func TestSelectOptions(t *testing.T) {
	t.Parallel()
	got, err := components(message.Prompt{Multi: true, Select: "q2:0:s", Options: []message.Choice{
		{Label: "Monday", Data: "q2:0:0"}, {Label: "Tuesday", Data: "q2:0:1", Selected: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	const want = `[{"type":1,"components":[{"type":3,"custom_id":"q2:0:s","options":[{"label":"Monday","value":"q2:0:0"},{"label":"Tuesday","value":"q2:0:1","default":true}],"min_values":0,"max_values":2}]}]`
	if string(b) != want {
		t.Fatalf("select %s\nwant %s", b, want)
	}
	got, _ = components(message.Prompt{Multi: true, Options: []message.Choice{{Label: "Mon", Data: "a", Selected: true}}})
	if got[0].Components[0].Style != DiscordButtonSuccess {
		t.Fatalf("a chosen toggle is %+v", got[0].Components[0])
	}
}

func TestComponentsRefused(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", MaxCustomID+1)
	for name, p := range map[string]message.Prompt{
		"TooManyWithoutSelect": {Options: choices("q:", labels(26)...)},
		"TooManyForASelect":    {Options: choices("q:", labels(26)...), Select: "q:s"},
		"ActionsCrowdTheRow":   {Options: choices("q:", labels(30)...), Select: "q:s", Actions: choices("a:", labels(21)...)},
		"DataTooLong":          {Options: []message.Choice{{Label: "a", Data: long}}},
		"SelectDataTooLong":    {Options: choices("q:", "a"), Multi: true, Select: long},
		"NoData":               {Options: []message.Choice{{Label: "a", Data: " "}}},
		"SameData":             {Options: []message.Choice{{Label: "a", Data: "d"}, {Label: "b", Data: "d"}}},
		"SelectLikeAnOption":   {Options: choices("q:", "a", "b"), Multi: true, Select: "q:0"},
	} {
		if got, err := components(p); err == nil {
			t.Errorf("%s: components = %s", name, layout(got))
		} else {
			sendErr(t, err, message.FailInvalidPayload)
		}
	}
}

func TestShorten(t *testing.T) {
	t.Parallel()
	long := func(s string) string { return s + strings.Repeat(" and so on", 10) }
	cases := []struct {
		name string
		in   []string
		max  int
		want []string
	}{
		{"Fits", []string{"Lisbon", "Porto"}, 80, []string{"Lisbon", "Porto"}},
		{"Empty", []string{""}, 80, []string{"…"}},
		{"HeadWhenDistinct", []string{long("Lisbon"), long("Porto")}, 20, []string{"Lisbon and so on an…", "Porto and so on and…"}},
		{"HeadAndTailWhenHeadsClash", []string{long("Same start") + " A", long("Same start") + " B"}, 20, []string{"Same star…nd so on A", "Same star…nd so on B"}},
		{"NumberedWhenBothClash", []string{long("Same") + " X" + long(""), long("Same") + " Y" + long("")}, 20, []string{"1. Same and so on a…", "2. Same and so on a…"}},
		// Two labels the agent made alike stay alike: not the shortening's doing.
		{"AlikeFromTheStart", []string{long("Twin"), long("Twin")}, 20, []string{"Twin and so on and…", "Twin and so on and…"}},
		{"NeverInsideAnEmoji", []string{"ab👩‍👩‍👧xyz"}, 4, []string{"ab…"}},
		{"NeverBeforeACombiningMark", []string{"abce\u0301fgh"}, 5, []string{"abc…"}},
	}
	for _, tc := range cases {
		got := shorten(tc.in, tc.max)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: shorten = %q, want %q", tc.name, got, tc.want)
		}
		for _, l := range got {
			if utf8.RuneCountInString(l) > tc.max {
				t.Errorf("%s: %q is over %d", tc.name, l, tc.max)
			}
		}
	}
}

// TestInertCarriageReturnStartsALine_Finding10 (issue 23, finding 10):
// Discord's parser reads "\r" and "\r\n" as a line end (simple-markdown's
// preprocess turns /\r\n?/ into "\n" and drops "\f"), so a heading, a list
// or a subtext after one rendered: "a\r# Heading" showed a heading.
func TestInertCarriageReturnStartsALine_Finding10(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"a\r# Heading", "\r- item", "\r-# x", "a\r\n# Heading", "a\r\r1. first", "a\r  > quote",
		"a\n\f# Heading", "\f# Heading", "a\n \f+ plus", "http\f://a.example/*b*", "https://a.exa\f*b*",
	} {
		got := Inert(in)
		if err := live(got); err != nil {
			t.Errorf("Inert(%q) = %q: %v", in, got, err)
		}
		if view(got) != shown(in) {
			t.Errorf("Inert(%q) = %q shows %q, want %q", in, got, view(got), shown(in))
		}
	}
}
