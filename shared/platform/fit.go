package platform

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
)

// Fit is text cut to at most limit, counted by c, ending in "…" when cut.
// It is for Parley's own text that may run long and is not worth a second
// message (a closed question's summary of its answers), never for an
// agent's bubble, which is split, not cut. The cut keeps whole characters,
// parts no mark, joiner or variation selector from the character before it
// (Joins), and drops the white space before the "…".
func Fit(text string, limit int, c message.Counting) string {
	const more = "…"
	if limit <= 0 || c.Len(text) <= limit {
		return text
	}
	room := limit - c.Len(more)
	if room <= 0 {
		return ""
	}
	n, end := 0, 0
	for i, r := range text {
		w := c.Len(string(r))
		if n+w > room {
			break
		}
		n, end = n+w, i+utf8.RuneLen(r)
	}
	for end > 0 {
		next, _ := utf8.DecodeRuneInString(text[end:])
		last, size := utf8.DecodeLastRuneInString(text[:end])
		if !Joins(next) && last != '\u200D' {
			break
		}
		end -= size
	}
	return strings.TrimRightFunc(text[:end], unicode.IsSpace) + more
}

// Joins reports whether r attaches to the character before it: a
// combining mark, a zero-width joiner, a variation selector, an emoji
// modifier or tag. A cut before it would part them.
func Joins(r rune) bool {
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc) || r == '\u200D' ||
		(r >= '\uFE00' && r <= '\uFE0F') || (r >= 0x1F3FB && r <= 0x1F3FF) || (r >= 0xE0020 && r <= 0xE007F)
}
