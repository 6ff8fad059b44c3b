package googlechat

import "strings"

// Google Chat renders a small markup in a message's text: *bold*,
// _italic_, ~strikethrough~, `monospace` and ```blocks```, and angle-bracket
// references: <users/123> and <users/all> mention (and notify) people,
// <https://…|text> masks a link. Google documents no escape. So Inert
// replaces what could render, one character for one look-alike no Chat
// client parses, as the WhatsApp adapter does (docs/adr/0010-whatsapp.md):
//
//	'*' → U+2217 '∗'   '_' → U+02CD 'ˍ'   '~' → U+223C '∼'   '`' → U+02CB 'ˋ'
//	'<' → U+2039 '‹'  (before "users/", or a link's scheme)
//
// An inline marker that occurs once cannot pair and is left as written.
// Links (http://, https:// up to a space) keep every character, so they
// still open.
func Inert(s string) string {
	inLink := linkMask(s)
	count := map[byte]int{}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte("*_~`", s[i]) >= 0 && !inLink[i] {
			count[s[i]]++
		}
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inLink[i]:
			b.WriteByte(c)
		case c == '<' && reference(s[i+1:]):
			b.WriteString("\u2039")
		case count[c] >= 2:
			b.WriteString(lookalike[c])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

var lookalike = map[byte]string{'*': "\u2217", '_': "\u02cd", '~': "\u223c", '`': "\u02cb"}

// reference reports whether s, after a '<', starts what Chat would read
// as a mention or a masked link.
func reference(s string) bool {
	for _, p := range []string{"users/", "http://", "https://", "mailto:"} {
		if hasPrefixFold(s, p) {
			return true
		}
	}
	return false
}

func hasPrefixFold(s, p string) bool { return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) }

// linkMask marks the bytes of s inside a bare link.
func linkMask(s string) []bool {
	mask := make([]bool, len(s))
	for i := 0; i < len(s); i++ {
		if i > 0 && s[i-1] == '<' {
			continue // a masked link is a reference, made inert above
		}
		if !hasPrefixFold(s[i:], "http://") && !hasPrefixFold(s[i:], "https://") {
			continue
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\n' && s[j] != '\t' && s[j] != '>' && s[j] != '|' {
			mask[j] = true
			j++
		}
		i = j
	}
	return mask
}
