package split

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
	"github.com/rivo/uniseg"
)

// Text cuts text into parts that each fit caps.TextLimit, counted the way
// caps.Counting says (see Count). Text that fits (or a TextLimit of 0 or
// less) comes back as one part; an empty text has none.
//
// A cut prefers, within the second half of the room a part has: the end of
// a paragraph ("\n\n"), then of a line, then a space, then any grapheme
// cluster boundary; it never falls inside a UTF-8 sequence, a surrogate pair
// or (unless one cluster alone is over the limit) a grapheme cluster. The
// whitespace at a cut stays at the end of the earlier part, so the parts
// joined give back the text; the exceptions are a run of whitespace too long
// for any part, which is dropped, and code fences: a part cut inside a fenced
// block is closed with the fence and the next part reopens it with the same
// info string, within the limit.
func Text(text string, caps message.Capabilities) []string {
	if text == "" {
		return nil
	}
	spans := splitSpans(text, caps.TextLimit, caps.Counting)
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.text(text)
	}
	return out
}

// piece is one part of a split: text[start:end] wrapped in prefix and suffix
// (a reopened and a closed fence).
type piece struct {
	start, end     int
	prefix, suffix string
}

func (p piece) text(t string) string {
	if p.prefix == "" && p.suffix == "" {
		return t[p.start:p.end]
	}
	return p.prefix + t[p.start:p.end] + p.suffix
}

// Count is the length of s as a platform that counts by c does
// (message.Counting.Len): UTF-8 bytes, UTF-16 code units (an emoji is 2, as
// Telegram counts), or code points (CountRunes, and any Counting this
// package does not know).
func Count(s string, c message.Counting) int { return c.Len(s) }

// block is a fenced code block of the text: its opener line [openStart,
// openEnd) where openEnd is past the line break, and its closer line
// [closeStart, closeEnd) without the line break; both close offsets are
// len(text) when unclosed.
type block struct {
	openStart, openEnd, closeStart, closeEnd int
	opener                                   string // the opener line, as written
	ch                                       byte
	n                                        int
	repair                                   bool // reopening fits the limit comfortably
}

// Fence is how a fenced code block opens, as CommonMark reads its opener
// line: a run of Len (three or more) Char ('`' or '~'). It is exported so that
// code cutting other things out of Markdown agrees with the splitter on what
// a fence is.
type Fence struct {
	Char byte
	Len  int
}

// OpensFence reports whether line (without its line break; a trailing "\r"
// is ignored) opens a fenced code block: up to three spaces, then three or
// more '`' or '~'; a backtick fence's info string has no backtick.
func OpensFence(line string) (Fence, bool) {
	ch, n, ok := fenceLine(line)
	return Fence{Char: ch, Len: n}, ok
}

// ClosedBy reports whether line closes a block opened by f: up to three
// spaces, at least as many of the same character, then only blanks.
func (f Fence) ClosedBy(line string) bool { return closesFence(line, f.Char, f.Len) }

// fenceLine is OpensFence without the struct, for the splitter's loop.
func fenceLine(line string) (byte, int, bool) {
	line = strings.TrimSuffix(line, "\r")
	i := 0
	for i < 3 && i < len(line) && line[i] == ' ' {
		i++
	}
	if i >= len(line) || (line[i] != '`' && line[i] != '~') {
		return 0, 0, false
	}
	ch := line[i]
	n := 0
	for i+n < len(line) && line[i+n] == ch {
		n++
	}
	if n < 3 || (ch == '`' && strings.IndexByte(line[i+n:], '`') >= 0) {
		return 0, 0, false
	}
	return ch, n, true
}

// closesFence reports whether line closes a fence of n ch's.
func closesFence(line string, ch byte, n int) bool {
	line = strings.TrimRight(line, " \t\r")
	i := 0
	for i < 3 && i < len(line) && line[i] == ' ' {
		i++
	}
	m := 0
	for i+m < len(line) && line[i+m] == ch {
		m++
	}
	return m >= n && i+m == len(line)
}

func findFences(t string, limit int, c message.Counting) []block {
	if !strings.Contains(t, "```") && !strings.Contains(t, "~~~") {
		return nil
	}
	var out []block
	var cur *block
	for ls := 0; ls < len(t); {
		le := strings.IndexByte(t[ls:], '\n')
		next := len(t)
		if le < 0 {
			le = len(t)
		} else {
			le += ls
			next = le + 1
		}
		line := t[ls:le]
		if cur == nil {
			if ch, n, ok := fenceLine(line); ok {
				opener := strings.TrimSuffix(line, "\r")
				cost := Count(opener, c) + 1 + 1 + n // opener + "\n", and "\n" + closer
				out = append(out, block{openStart: ls, openEnd: next, closeStart: len(t), closeEnd: len(t),
					opener: opener, ch: ch, n: n, repair: 2*cost <= limit})
				cur = &out[len(out)-1]
			}
		} else if closesFence(line, cur.ch, cur.n) {
			cur.closeStart, cur.closeEnd = ls, le
			cur = nil
		}
		ls = next
	}
	return out
}

// fenceAt classifies a cut at pos: the fence it is strictly inside (nil when
// outside every fence) and whether the cut is allowed (not on a fence line,
// not right after an opener or right before a closer).
func fenceAt(fences []block, pos int) (*block, bool) {
	i := sort.Search(len(fences), func(i int) bool { return fences[i].closeEnd >= pos })
	if i == len(fences) {
		return nil, true
	}
	f := &fences[i]
	switch {
	case pos <= f.openStart || pos >= f.closeEnd:
		return nil, true
	case pos > f.openEnd && pos < f.closeStart:
		return f, true
	}
	return f, false
}

type cutKind int

const (
	cutGrapheme cutKind = iota
	cutSpace
	cutLine
	cutParagraph
	numCutKinds
)

type cutAt struct {
	pos, units int
	ok         bool
}

// splitSpans is Text's core; the pieces tile text except for dropped
// whitespace runs and added fences.
func splitSpans(t string, limit int, c message.Counting) []piece {
	// Every counting gives at most one unit per byte.
	if limit <= 0 || len(t) <= limit || Count(t, c) <= limit {
		return []piece{{0, len(t), "", ""}}
	}
	fences := findFences(t, limit, c)
	var out []piece
	for s := 0; s < len(t); {
		if strings.TrimSpace(t[s:]) == "" {
			break // trailing whitespace too long to fit anywhere
		}
		prefix := ""
		if f, ok := fenceAt(fences, s); f != nil && ok && f.repair && len(out) > 0 && out[len(out)-1].suffix != "" {
			prefix = f.opener + "\n" // reopen what the last part closed
		}
		budget := limit - Count(prefix, c)
		p, end := nextPiece(t, s, budget, c, fences)
		p.prefix = prefix
		out = append(out, p)
		if end {
			break
		}
		s = p.end
	}
	return out
}

// nextPiece finds the piece starting at s with room for budget units. It
// reports whether the piece reaches the end of t.
func nextPiece(t string, s, budget int, c message.Counting, fences []block) (piece, bool) {
	var best [numCutKinds]cutAt
	var fallback cutAt // latest cluster boundary that has room for a closer
	var anyCut cutAt   // latest cluster boundary, fences disregarded
	used := 0
	pos := s
	content := false
	state := -1
	for pos < len(t) {
		var end, u int
		// A lone ASCII byte (not CR) is a cluster of one unit in every
		// counting: the common case skips the Unicode tables.
		if b := t[pos]; b < utf8.RuneSelf && b != '\r' && (pos+1 == len(t) || t[pos+1] < utf8.RuneSelf) {
			end, u, state = pos+1, 1, -1
		} else {
			end, state = nextCluster(t, pos, state)
			u = Count(t[pos:end], c)
		}
		if used+u > budget {
			break
		}
		used += u
		cl := t[pos:end]
		pos = end
		if !content && strings.TrimSpace(cl) != "" {
			content = true
		}
		if !content {
			continue
		}
		anyCut = cutAt{pos, used, true}
		if fences == nil {
			fallback = anyCut
			best[kindOfCut(t, s, pos)] = anyCut
			continue
		}
		f, allowed := fenceAt(fences, pos)
		if allowed && f != nil && f.repair && used+closerUnits(t, pos, f, c) > budget {
			continue // no room left to close the fence here
		}
		fallback = anyCut
		if allowed {
			best[kindOfCut(t, s, pos)] = anyCut
		}
	}
	if pos == len(t) {
		return piece{start: s, end: pos}, true
	}
	choice := cutAt{}
	for k := numCutKinds - 1; k >= 0; k-- {
		if best[k].ok && 2*best[k].units >= budget {
			choice = best[k]
			break
		}
	}
	if !choice.ok {
		for _, b := range best {
			if b.ok && b.units > choice.units {
				choice = b
			}
		}
	}
	if !choice.ok {
		choice = fallback
	}
	if !choice.ok {
		choice = anyCut // the fence stays open across this cut
	}
	if !choice.ok {
		// Whitespace that leaves no room for what follows cannot be a part
		// of its own: it is dropped.
		s2, st := s, -1
		for s2 < len(t) {
			e, st2 := nextCluster(t, s2, st)
			if strings.TrimSpace(t[s2:e]) != "" {
				break
			}
			s2, st = e, st2
		}
		if s2 > s {
			return nextPiece(t, s2, budget, c, fences)
		}
		// One grapheme cluster is over the limit: cut it between code
		// points (never inside one), and at least one code point.
		choice.pos = s
		for _, r := range t[s:] {
			size := utf8.RuneLen(r)
			if size < 0 {
				size = 1
			}
			if choice.pos > s && choice.units+Count(t[choice.pos:choice.pos+size], c) > budget {
				break
			}
			choice.units += Count(t[choice.pos:choice.pos+size], c)
			choice.pos += size
		}
	}
	p := piece{start: s, end: choice.pos}
	if f, allowed := fenceAt(fences, choice.pos); f != nil && allowed && f.repair && choice.units+closerUnits(t, choice.pos, f, c) <= budget {
		p.suffix = closer(t, choice.pos, f)
	}
	return p, false
}

func closer(t string, pos int, f *block) string {
	c := strings.Repeat(string(f.ch), f.n)
	if pos > 0 && t[pos-1] == '\n' {
		return c
	}
	return "\n" + c
}

func closerUnits(t string, pos int, f *block, c message.Counting) int {
	return Count(closer(t, pos, f), c)
}

// kindOfCut classifies a cut at pos by what ends just before it.
func kindOfCut(t string, s, pos int) cutKind {
	if b := t[pos-1]; b < utf8.RuneSelf && b != '\n' && b != ' ' && b != '\t' && b != '\r' && b != '\f' && b != '\v' {
		return cutGrapheme
	}
	switch {
	case pos-s >= 2 && t[pos-1] == '\n' && (t[pos-2] == '\n' || pos-s >= 3 && t[pos-2] == '\r' && t[pos-3] == '\n'):
		return cutParagraph
	case t[pos-1] == '\n':
		return cutLine
	}
	r, _ := utf8.DecodeLastRuneInString(t[s:pos])
	if unicode.IsSpace(r) {
		return cutSpace
	}
	return cutGrapheme
}

// nextCluster returns the end of the grapheme cluster starting at pos (a
// cluster boundary). Between two ASCII bytes there is always a boundary
// except inside CR LF, so ASCII text skips the Unicode tables.
func nextCluster(t string, pos, state int) (int, int) {
	if t[pos] < utf8.RuneSelf && (pos+1 == len(t) || t[pos+1] < utf8.RuneSelf) {
		if t[pos] == '\r' && pos+1 < len(t) && t[pos+1] == '\n' {
			return pos + 2, -1
		}
		return pos + 1, -1
	}
	cl, _, _, st := uniseg.FirstGraphemeClusterInString(t[pos:], state)
	return pos + len(cl), st
}
