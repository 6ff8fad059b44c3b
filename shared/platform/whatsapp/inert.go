package whatsapp

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// WhatsApp renders a small markup in every text body, on each of its
// clients: *bold*, _italic_, ~strikethrough~, ```monospace```, `inline
// code`, and a line starting with "> " as a quote (lists render as written).
// Meta documents no escape for it, and whether an invisible character (a
// zero-width space or joiner) next to a marker stops a client's parser is
// undocumented and differs between the Android, iOS, web and desktop
// renderers. So inert does not hide markers: it replaces them with
// look-alike characters no WhatsApp client parses, one for one in the Basic
// Multilingual Plane, so a text keeps its length in every counting (runes,
// UTF-16 units) and stays within the limit it was split to:
//
//	'*' → U+2217 ASTERISK OPERATOR          '∗'
//	'_' → U+02CD MODIFIER LETTER LOW MACRON 'ˍ'
//	'~' → U+223C TILDE OPERATOR             '∼'
//	'`' → U+02CB MODIFIER LETTER GRAVE      'ˋ'
//	'>' → U+203A SINGLE RIGHT ANGLE QUOTE   '›' (first on a line only)
//
// Only what could render changes: an inline marker that occurs once in the
// text cannot pair with another and is left as written ("5 * 3", "my_var"),
// as is every character of a link ("http://…", "https://…", "www.…" up to
// the next space), which WhatsApp links before it formats, so a URL with
// underscores still opens. An operator who wants the agent's formatting
// sets WHATSAPP_TRUST_AGENT_MARKUP=true.
var lookalike = map[rune]rune{
	'*': '\u2217',
	'_': '\u02cd',
	'~': '\u223c',
	'`': '\u02cb',
}

const quoteLookalike = '\u203a'

// inert returns s with WhatsApp's markup neutralised (see lookalike).
func inert(s string) string {
	links := linkSpans(s)
	// An inline marker renders only with a partner: count them outside
	// links.
	count := map[rune]int{}
	inLink := within(links)
	for i, r := range s {
		if _, ok := lookalike[r]; ok && !inLink(i) {
			count[r]++
		}
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	lineStart := true
	inLink = within(links)
	for i, r := range s {
		switch {
		case inLink(i):
		case lineStart && r == '>':
			r = quoteLookalike
		case count[r] >= 2:
			r = lookalike[r]
		}
		b.WriteRune(r)
		switch {
		case breaksLine(r):
			lineStart = true
		case r != ' ' && r != '\t':
			// A quote may be indented: only the first other character
			// of a line ends its start.
			lineStart = false
		}
	}
	return b.String()
}

// breaksLine reports whether a line starts after r. WhatsApp's clients
// find a quote's line start with their platform's regular expressions,
// whose multiline "^" follows "\r" as well as "\n", and U+2028 and U+2029
// (JavaScript, the web client), and U+0085 (Java, Android): one more
// look-alike costs nothing where a client would not have quoted.
func breaksLine(r rune) bool {
	switch r {
	case '\n', '\r', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

// within returns a test of whether a byte offset is inside one of spans,
// sorted and apart, for offsets asked about in increasing order.
func within(spans [][2]int) func(int) bool {
	next := 0
	return func(i int) bool {
		for next < len(spans) && spans[next][1] <= i {
			next++
		}
		return next < len(spans) && i >= spans[next][0]
	}
}

// linkSpans are the byte ranges of s that WhatsApp turns into links: from
// "http://", "https://" or "www." (any case) at the start of a word to the
// next white space.
func linkSpans(s string) [][2]int {
	var spans [][2]int
	for i := 0; i < len(s); {
		if i > 0 {
			if prev, _ := utf8.DecodeLastRuneInString(s[:i]); !unicode.IsSpace(prev) && !unicode.IsPunct(prev) && !unicode.IsSymbol(prev) {
				_, size := utf8.DecodeRuneInString(s[i:])
				i += size
				continue
			}
		}
		if rest := s[i:]; !hasPrefixFold(rest, "http://") && !hasPrefixFold(rest, "https://") && !hasPrefixFold(rest, "www.") {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			continue
		}
		end := strings.IndexFunc(s[i:], unicode.IsSpace)
		if end < 0 {
			end = len(s) - i
		}
		spans = append(spans, [2]int{i, i + end})
		i += end
	}
	return spans
}

// hasPrefixFold reports whether s starts with the ASCII prefix p, in any
// case.
func hasPrefixFold(s, p string) bool {
	return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p)
}
