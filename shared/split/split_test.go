package split

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
	"github.com/rivo/uniseg"
)

func runes(n int) message.Capabilities {
	return message.Capabilities{TextLimit: n, Counting: message.CountRunes}
}

func TestText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		text string
		caps message.Capabilities
		want []string
	}{
		{"FitsWhole", "alpha\nbeta\ngamma", runes(20), []string{"alpha\nbeta\ngamma"}},
		{"EmptyHasNoParts", "", runes(20), nil},
		{"BlankThatFitsIsKept", " \n ", runes(20), []string{" \n "}},
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
			got := Text(c.text, c.caps)
			if !slices.Equal(got, c.want) {
				t.Fatalf("Text(%q) =\n%q\nwant\n%q", c.text, got, c.want)
			}
			checkText(t, c.text, c.caps)
		})
	}
}

// checkText holds for every split: Text returns the pieces' texts; each part
// is non-empty, fits (unless one code point alone is over the limit), is not
// blank when there are several, starts and ends on a grapheme boundary of the
// text (unless one cluster alone is over the limit); the pieces tile the text
// but for dropped whitespace; and what a piece adds is only fence lines: the
// reopened opener of the block it starts in, a closer of the block it ends in.
func checkText(t *testing.T, text string, caps message.Capabilities) {
	t.Helper()
	if t.Failed() {
		return
	}
	parts := Text(text, caps)
	defer func() {
		if t.Failed() {
			t.Logf("text %q, caps %+v, parts %q", text, caps, parts)
		}
	}()
	if text == "" {
		if parts != nil {
			t.Errorf("an empty text has parts %q", parts)
		}
		return
	}
	pieces := splitSpans(text, caps.TextLimit, caps.Counting)
	if len(parts) != len(pieces) {
		t.Fatalf("%d parts for %d pieces", len(parts), len(pieces))
	}
	bounds := graphemeBounds(text)
	prev := 0
	for i, p := range pieces {
		s := p.text(text)
		if parts[i] != s {
			t.Errorf("part %d = %q, piece %q", i, parts[i], s)
		}
		if s == "" {
			t.Errorf("part %d is empty", i)
		}
		if caps.TextLimit > 0 && Count(s, caps.Counting) > caps.TextLimit && !oneRuneOver(text[p.start:p.end], caps) {
			t.Errorf("piece %d %q has %d units, over %d", i, s, Count(s, caps.Counting), caps.TextLimit)
		}
		if len(pieces) > 1 && strings.TrimSpace(s) == "" {
			t.Errorf("piece %d is blank", i)
		}
		if !utf8.ValidString(text[p.start:p.end]) && utf8.ValidString(text) {
			t.Errorf("piece %d cuts a UTF-8 sequence", i)
		}
		if p.start < prev || p.start != prev && strings.TrimSpace(text[prev:p.start]) != "" {
			t.Errorf("piece %d starts at %d, after %d: text lost", i, p.start, prev)
		}
		if !bounds[p.end] && !clusterOver(text, p.end, bounds, caps) {
			t.Errorf("piece %d ends inside a grapheme cluster at %d", i, p.end)
		}
		if p.prefix != "" {
			if opener, _, ok := openFenceAt(text, p.start); !ok || p.prefix != opener+"\n" {
				t.Errorf("piece %d adds %q, not the opener of the block it starts in", i, p.prefix)
			}
		}
		if p.suffix != "" {
			_, f, ok := openFenceAt(text, p.end)
			if c := strings.TrimPrefix(p.suffix, "\n"); !ok || c != strings.Repeat(string(f.Char), f.Len) {
				t.Errorf("piece %d adds %q, not a closer of the block it ends in", i, p.suffix)
			}
		}
		prev = p.end
	}
	if strings.TrimSpace(text[prev:]) != "" {
		t.Errorf("text after the last piece lost: %q", text[prev:])
	}
	if !strings.Contains(text, "```") && !strings.Contains(text, "~~~") && !tiles(text, parts) {
		t.Errorf("parts joined do not give back the text, less whitespace runs")
	}
}

// openFenceAt follows the text's lines before pos with OpensFence and
// ClosedBy alone, and returns the opener line (without "\r") of the fenced
// block open at pos, if any.
func openFenceAt(text string, pos int) (string, Fence, bool) {
	var cur *Fence
	opener := ""
	for ls := 0; ls < pos; {
		le := strings.IndexByte(text[ls:], '\n')
		if le < 0 {
			le = len(text)
		} else {
			le += ls
		}
		line := text[ls:le]
		if cur == nil {
			if f, ok := OpensFence(line); ok {
				cur, opener = &f, strings.TrimSuffix(line, "\r")
			}
		} else if cur.ClosedBy(line) {
			cur = nil
		}
		ls = le + 1
	}
	if cur == nil {
		return "", Fence{}, false
	}
	return opener, *cur, true
}

// tiles reports whether parts, in order, are the text with only whitespace
// left out between them (the documented drop): the black-box form of the
// tiling, for texts without fences.
func tiles(text string, parts []string) bool {
	j := 0
	for _, p := range parts {
		k := j
		for k < len(text) && !strings.HasPrefix(text[k:], p) {
			k++
		}
		if k == len(text) && p != "" || strings.TrimSpace(text[j:k]) != "" {
			return false
		}
		j = k + len(p)
	}
	return strings.TrimSpace(text[j:]) == ""
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
	return Count(text[from:to], caps.Counting) > caps.TextLimit-fenceSlack(caps)
}

// fenceSlack is the room a reopened fence may take.
func fenceSlack(caps message.Capabilities) int { return caps.TextLimit / 2 }

func oneRuneOver(s string, caps message.Capabilities) bool {
	r, size := utf8.DecodeRuneInString(s)
	return size == len(s) && Count(string(r), caps.Counting) > caps.TextLimit
}

func TestCount(t *testing.T) {
	t.Parallel()
	cases := []struct {
		s                   string
		runes, utf16, bytes int
	}{
		{"", 0, 0, 0},
		{"abc", 3, 3, 3},
		{"héllo", 5, 5, 6},
		{"😀", 1, 2, 4},
		{"👩‍👩‍👧", 5, 8, 18},
		{"\xff", 1, 1, 1}, // an invalid byte counts as one replacement character
	}
	for _, c := range cases {
		for counting, want := range map[message.Counting]int{message.CountRunes: c.runes, message.CountUTF16: c.utf16, message.CountBytes: c.bytes, "": c.runes} {
			if got := Count(c.s, counting); got != want {
				t.Errorf("Count(%q, %q) = %d, want %d", c.s, counting, got, want)
			}
		}
	}
}

func TestOpensFence(t *testing.T) {
	t.Parallel()
	cases := []struct {
		line string
		want Fence
		ok   bool
	}{
		{"```", Fence{'`', 3}, true},
		{"```go", Fence{'`', 3}, true},
		{"   ~~~~ python\r", Fence{'~', 4}, true},
		{"    ```", Fence{}, false}, // four spaces: an indented code line
		{"``", Fence{}, false},
		{"``` a`b", Fence{}, false}, // a backtick in a backtick fence's info string
		{"~~~ a`b", Fence{'~', 3}, true},
		{"text ```", Fence{}, false},
	}
	for _, c := range cases {
		f, ok := OpensFence(c.line)
		if ok != c.ok || ok && f != c.want {
			t.Errorf("OpensFence(%q) = %+v, %v; want %+v, %v", c.line, f, ok, c.want, c.ok)
		}
	}
	f := Fence{'`', 4}
	for line, want := range map[string]bool{"````": true, "  `````  \t": true, "```": false, "~~~~": false, "```` x": false, "    ````": false} {
		if got := f.ClosedBy(line); got != want {
			t.Errorf("%+v.ClosedBy(%q) = %v, want %v", f, line, got, want)
		}
	}
}

// proseAtoms make random texts with what splitting must respect: paragraphs,
// CRLF, combining marks, emoji sequences and flags, fences of both kinds.
var proseAtoms = []string{
	"the", "flight", "moved", "to", "8pm", "gate", "B12", "über", "naïve", "日本語", "テキスト",
	"😀", "👩‍👩‍👧", "🇯🇵", "e\u0301", "\u0301", " ", " ", "  ", "\t", "\n", "\n", "\n\n", "\r\n",
	"{", "}", "`", "```", "```go\n", "\n```\n", "~~~\n", "\n~~~\n", "func f() { return }",
}

func randProse(r *rand.Rand, n int) string {
	var sb strings.Builder
	for range r.IntN(n + 1) {
		sb.WriteString(proseAtoms[r.IntN(len(proseAtoms))])
		if r.IntN(3) == 0 {
			sb.WriteByte(' ')
		}
	}
	return sb.String()
}

// Random text split at random limits: every checkText property holds. The
// generator is seeded, so a failure reproduces.
func TestPropertyText(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	countings := []message.Counting{message.CountRunes, message.CountUTF16, message.CountBytes}
	for range 3000 {
		text := randProse(r, 60)
		caps := message.Capabilities{TextLimit: 8 + r.IntN(120), Counting: countings[r.IntN(3)]}
		checkText(t, text, caps)
	}
}
