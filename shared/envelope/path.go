package envelope

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/envelope/internal/jsonscan"
)

// reasonOf names a JSON error as a ParseError reason.
func reasonOf(k jsonscan.ErrorKind) Reason {
	switch k {
	case jsonscan.ErrTruncated:
		return ReasonTruncated
	case jsonscan.ErrDuplicateName:
		return ReasonDuplicateKey
	case jsonscan.ErrTooDeep:
		return ReasonTooDeep
	case jsonscan.ErrInvalidUnicode:
		return ReasonInvalidUnicode
	}
	return ReasonSyntax
}

// formatPath renders a path as `messages[1].id`. Keys are the agent's member
// names, never values; long or odd ones are shortened and quoted so an error
// string stays small and cannot carry a bubble's text.
func formatPath(path []jsonscan.PathElem) string {
	var sb strings.Builder
	for i, e := range path {
		if i == maxPathElems {
			sb.WriteString("…")
			break
		}
		if e.Index >= 0 {
			sb.WriteByte('[')
			sb.WriteString(strconv.Itoa(e.Index))
			sb.WriteByte(']')
			continue
		}
		if plainKey(e.Key) {
			if i > 0 {
				sb.WriteByte('.')
			}
			sb.WriteString(e.Key)
			continue
		}
		k := e.Key
		if len(k) > maxPathKey {
			k = truncateUTF8(k, maxPathKey) + "…"
		}
		sb.WriteByte('[')
		sb.WriteString(strconv.Quote(k))
		sb.WriteByte(']')
	}
	return sb.String()
}

const (
	maxPathKey   = 32
	maxPathElems = 12
)

func plainKey(k string) bool {
	if k == "" || len(k) > maxPathKey {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c == '$' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// truncateUTF8 cuts s to at most n bytes without splitting a rune.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
