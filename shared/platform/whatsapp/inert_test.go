package whatsapp

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestInert(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"Bold", "*urgent*", "∗urgent∗"},
		{"Italic", "_maybe_", "ˍmaybeˍ"},
		{"Strike", "~not this~", "∼not this∼"},
		{"Monospace", "```rm -rf```", "ˋˋˋrm -rfˋˋˋ"},
		{"InlineCode", "run `make test`", "run ˋmake testˋ"},
		{"AcrossWords", "a *b c* d", "a ∗b c∗ d"},
		{"Quote", "> quoted\nnot > quoted", "› quoted\nnot > quoted"},
		{"IndentedQuote", "ok\n  > quoted", "ok\n  › quoted"},
		// One marker has no partner: it renders as written already.
		{"LoneAsterisk", "5 * 3 = 15", "5 * 3 = 15"},
		{"LoneUnderscore", "my_var", "my_var"},
		{"TwoUnderscores", "snake_case_name", "snakeˍcaseˍname"},
		// Links are linked before they are formatted: left whole, and not
		// counted as partners.
		{"LinkWithUnderscores", "see https://example.com/a_b_c now", "see https://example.com/a_b_c now"},
		{"LinkAndBold", "*see* https://x.test/~u/_a_", "∗see∗ https://x.test/~u/_a_"},
		{"WWWLink", "www.example.com/*x* and _y", "www.example.com/*x* and _y"},
		{"LinkInBrackets", "(https://x.test/a_b) _i_", "(https://x.test/a_b) ˍiˍ"},
		{"SchemeInsideAWord", "xhttps://a_b_", "xhttps://aˍbˍ"},
		{"UpperCaseScheme", "HTTPS://X.TEST/A_B_C", "HTTPS://X.TEST/A_B_C"},
		{"Plain", "nothing to see, héllo 😀", "nothing to see, héllo 😀"},
		{"Empty", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := inert(tc.in); got != tc.want {
				t.Fatalf("inert(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// checkInert holds what inert promises for any text.
func checkInert(t *testing.T, s string) {
	t.Helper()
	got := inert(s)
	if units(got) != units(s) || utf8.RuneCountInString(got) != utf8.RuneCountInString(s) {
		t.Fatalf("inert(%q) = %q changes the length: %d → %d units", s, got, units(s), units(got))
	}
	// Outside links no marker has a partner, and no line starts a quote.
	links := linkSpans(got)
	outside := []rune{}
	in := within(links)
	for i, r := range got {
		if !in(i) {
			outside = append(outside, r)
		}
	}
	rest := string(outside)
	for _, m := range "*_~`" {
		if strings.Count(rest, string(m)) >= 2 {
			t.Fatalf("inert(%q) = %q leaves %q to pair", s, got, m)
		}
	}
	for _, line := range strings.FieldsFunc(got, lineBreak) {
		if trimmed := strings.TrimLeft(line, " \t"); strings.HasPrefix(trimmed, ">") {
			t.Fatalf("inert(%q) = %q leaves a quote", s, got)
		}
	}
	// A text without markup is left as it is.
	if !strings.ContainsAny(s, "*_~`>") && got != s {
		t.Fatalf("inert(%q) = %q changed a text without markers", s, got)
	}
}

// TestInertQuoteAfterAnyLineBreak_Finding10 (issue 23, finding 10, on
// WhatsApp): a quote starts a line after "\n" only, but WhatsApp's clients
// find a line's start with their platform's regular expressions, which end
// a line at "\r" too (JavaScript's and Java's multiline "^"), and at
// U+2028, U+2029 and (Java) U+0085: "a\r> quote" rendered a quote.
func TestInertQuoteAfterAnyLineBreak_Finding10(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"a\r> quote", "a\r\n> quote", "a\u2028> quote", "a\u2029  > quote", "a\u0085> quote"} {
		checkInert(t, in)
	}
}

func FuzzInert(f *testing.F) {
	for _, s := range []string{"*b* _i_ ~s~ ```m``` `c`", "> q\n>> q", "https://x/_a_ *b*", "www.x *", "\xff*\xfe*", "a\u00a0https://x/*_*", "a\r> q\u2028> q"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			// Invalid bytes reach Graph as U+FFFD either way; the lengths
			// above are of valid text.
			s = strings.ToValidUTF8(s, "\ufffd")
		}
		checkInert(t, s)
	})
}

// lineBreak reports whether r ends a line for a multiline "^" in
// JavaScript (\n \r U+2028 U+2029) or Java (those and U+0085), the
// languages WhatsApp's clients find a line's start with.
func lineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}
