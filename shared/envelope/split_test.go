package envelope

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
	"github.com/rivo/uniseg"
)

func runes(n int) message.Capabilities {
	return message.Capabilities{TextLimit: n, Counting: message.CountRunes}
}

func TestSplit(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		text string
		caps message.Capabilities
		want []string
	}{
		{"FitsWhole", "alpha\nbeta\ngamma", runes(20), []string{"alpha\nbeta\ngamma"}},
		{"NoLimit", strings.Repeat("x", 10000), runes(0), []string{strings.Repeat("x", 10000)}},
		{"PrefersParagraph", "aaaa aaaa\n\nbbbb\ncccc dd", runes(20),
			[]string{"aaaa aaaa\n\n", "bbbb\ncccc dd"}},
		{"ThenLine", "aaaa aaaa\nbbbb bbbb cccc", runes(16),
			[]string{"aaaa aaaa\n", "bbbb bbbb cccc"}},
		{"ThenSpace", "aaaa bbbb cccc dddd", runes(12),
			[]string{"aaaa bbbb ", "cccc dddd"}},
		{"ThenGrapheme", "abcdefghijklmnop", runes(6),
			[]string{"abcdef", "ghijkl", "mnop"}},
		// A paragraph break too early to be worth it loses to a later space.
		{"EarlyParagraphLoses", "ab\n\ncccc dddd eeee ffff", runes(16),
			[]string{"ab\n\ncccc dddd ", "eeee ffff"}},
		{"CRLFStaysWhole", "aaaa\r\nbbbb\r\ncccc", runes(7),
			[]string{"aaaa\r\n", "bbbb\r\n", "cccc"}},
		{"CRLFParagraph", "aaaa\r\n\r\nbbbb", runes(9), []string{"aaaa\r\n\r\n", "bbbb"}},
		// é as e + combining acute: never separated.
		{"CombiningMark", "e\u0301e\u0301e\u0301e\u0301", runes(3),
			[]string{"e\u0301", "e\u0301", "e\u0301", "e\u0301"}},
		// A space followed by a combining mark is one cluster: no cut
		// between them.
		{"SpaceWithMark", "abcd \u0301efgh", runes(6), []string{"abcd \u0301", "efgh"}},
		{"SpaceWithMarkTight", "abcd \u0301efgh", runes(5), []string{"abcd", " \u0301efg", "h"}},
		// Telegram counts UTF-16: each emoji is a surrogate pair (2 units).
		{"SurrogatePairs", "😀😀😀😀😀", message.Capabilities{TextLimit: 5, Counting: message.CountUTF16},
			[]string{"😀😀", "😀😀", "😀"}},
		{"ZWJFamilyWhole", "ab👩‍👩‍👧 cd", message.Capabilities{TextLimit: 10, Counting: message.CountUTF16},
			[]string{"ab👩‍👩‍👧", " cd"}},
		{"FlagsWhole", "🇯🇵🇫🇷🇩🇪", message.Capabilities{TextLimit: 5, Counting: message.CountUTF16},
			[]string{"🇯🇵", "🇫🇷", "🇩🇪"}},
		{"Bytes", "héllo wörld", message.Capabilities{TextLimit: 8, Counting: message.CountBytes},
			[]string{"héllo ", "wörld"}},
		// One cluster over the limit: cut between code points, never
		// inside one.
		{"ClusterOverLimit", "a" + strings.Repeat("\u0301", 5), runes(3),
			[]string{"a\u0301\u0301", "\u0301\u0301\u0301"}},
		{"TrailingWhitespaceDropped", "abc" + strings.Repeat(" ", 20), runes(8),
			[]string{"abc     "}},
		{"FenceReopened", "intro\n```go\nline1\nline2\nline3\n```\nend", runes(22),
			[]string{"intro\n```go\nline1\n```", "```go\nline2\nline3\n```\n", "end"}},
		{"FenceTildeMidLine", "~~~\n" + strings.Repeat("x", 30) + "\n~~~", runes(20),
			[]string{"~~~\n" + strings.Repeat("x", 12) + "\n~~~", "~~~\n" + strings.Repeat("x", 12) + "\n~~~", "~~~\n" + strings.Repeat("x", 6) + "\n~~~"}},
		{"UnclosedFence", "```\naaaa\nbbbb\ncccc", runes(16),
			[]string{"```\naaaa\n```", "```\nbbbb\ncccc"}},
		// Reopening would take over half the room: split plainly.
		{"FenceTooCostly", "```\naaaa\nbbbb\ncccc", runes(14),
			[]string{"```\naaaa\nbbbb\n", "cccc"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := Split(c.text, c.caps)
			if !equal(got, c.want) {
				t.Fatalf("Split(%q) =\n%q\nwant\n%q", c.text, got, c.want)
			}
			checkSplit(t, c.text, c.caps)
		})
	}
}

// checkSplit holds for every split: each part fits, is not blank, starts
// and ends on a grapheme boundary of the text (unless one cluster alone is
// over the limit), and the pieces tile the text but for dropped whitespace.
func checkSplit(t *testing.T, text string, caps message.Capabilities) {
	t.Helper()
	if t.Failed() {
		return
	}
	defer func() {
		if t.Failed() {
			t.Logf("text %q, caps %+v, parts %q", text, caps, Split(text, caps))
		}
	}()
	pieces := splitSpans(text, caps.TextLimit, caps.Counting)
	bounds := graphemeBounds(text)
	prev := 0
	for i, p := range pieces {
		s := p.text(text)
		if caps.TextLimit > 0 && units(s, caps.Counting) > caps.TextLimit && !oneRuneOver(text[p.start:p.end], caps) {
			t.Errorf("piece %d %q has %d units, over %d", i, s, units(s, caps.Counting), caps.TextLimit)
		}
		if len(pieces) > 1 && strings.TrimSpace(s) == "" {
			t.Errorf("piece %d is blank", i)
		}
		if !utf8.ValidString(text[p.start:p.end]) && utf8.ValidString(text) {
			t.Errorf("piece %d cuts a UTF-8 sequence", i)
		}
		if p.start != prev && strings.TrimSpace(text[prev:p.start]) != "" {
			t.Errorf("piece %d starts at %d, after %d: text lost", i, p.start, prev)
		}
		if !bounds[p.end] && !clusterOver(text, p.end, bounds, caps) {
			t.Errorf("piece %d ends inside a grapheme cluster at %d", i, p.end)
		}
		prev = p.end
	}
	if strings.TrimSpace(text[prev:]) != "" {
		t.Errorf("text after the last piece lost: %q", text[prev:])
	}
}

func graphemeBounds(text string) map[int]bool {
	b := map[int]bool{0: true, len(text): true}
	g := uniseg.NewGraphemes(text)
	for g.Next() {
		_, to := g.Positions()
		b[to] = true
	}
	return b
}

// clusterOver reports whether the cluster around pos is itself over the
// limit, the one case where a cut may fall inside a cluster.
func clusterOver(text string, pos int, bounds map[int]bool, caps message.Capabilities) bool {
	from, to := pos, pos
	for from > 0 && !bounds[from] {
		from--
	}
	for to < len(text) && !bounds[to] {
		to++
	}
	return units(text[from:to], caps.Counting) > caps.TextLimit-fenceSlack(caps)
}

// fenceSlack is the room a reopened fence may take.
func fenceSlack(caps message.Capabilities) int { return caps.TextLimit / 2 }

func oneRuneOver(s string, caps message.Capabilities) bool {
	r, size := utf8.DecodeRuneInString(s)
	return size == len(s) && units(string(r), caps.Counting) > caps.TextLimit
}
