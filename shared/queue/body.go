package queue

import (
	"unicode/utf16"
	"unicode/utf8"
)

// SQS refuses a whole message whose body holds a character outside
// #x9 | #xA | #xD | #x20–#xD7FF | #xE000–#xFFFD | #x10000–#x10FFFF
// (InvalidMessageContents), and fauxqs, the emulator `make run` uses,
// refuses every character above U+FFFF as well. A sender's display name
// with U+FFFF in it, or an emoji under `make run`, would lose the message:
// the webhook answers 503 on every retry until the platform gives up.
//
// Every body Parley enqueues is JSON text, where a character may always be
// written as a \u escape (above U+FFFF, as a UTF-16 surrogate pair) and
// decodes to the very same text. Body writes each character either queue
// would refuse that way, in this one place for every sender (Send and
// SendBatch call it): what a reader decodes is exactly what was encoded.

// Body is b as Parley puts it on a queue: b itself when it holds nothing SQS
// or fauxqs refuses, else a copy with every character above U+FFFD (U+FFFE,
// U+FFFF and everything above the Basic Multilingual Plane) written as a
// JSON \u escape, and every byte that is not UTF-8 as \ufffd, which is what
// a JSON decoder reads it as. b must be JSON text: in JSON such characters
// stand only inside strings, where the escape is exact. Control characters
// are left alone: JSON never holds them raw, and a body that does is not
// JSON, which SQS refuses as before.
func Body(b []byte) []byte {
	i := firstEscape(b)
	if i < 0 {
		return b
	}
	// An escaped character takes at most 12 bytes for its 4.
	out := make([]byte, 0, len(b)+len(b)/2+12)
	out = append(out, b[:i]...)
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf {
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = appendEscape(out, utf8.RuneError)
		case r > maxPlain:
			if hi, lo := utf16.EncodeRune(r); hi != utf8.RuneError {
				out = appendEscape(appendEscape(out, hi), lo)
			} else {
				out = appendEscape(out, r) // U+FFFE, U+FFFF
			}
		default:
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// maxPlain is the last character Body writes as it is: SQS refuses U+FFFE
// and U+FFFF, fauxqs everything above them.
const maxPlain = 0xFFFD

// firstEscape is the offset of the first byte Body must change, or -1.
func firstEscape(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r > maxPlain || (r == utf8.RuneError && n == 1) {
			return i
		}
		i += n
	}
	return -1
}

// appendEscape appends \uXXXX for a UTF-16 code unit.
func appendEscape(out []byte, u rune) []byte {
	const hex = "0123456789abcdef"
	return append(out, '\\', 'u', hex[u>>12&0xF], hex[u>>8&0xF], hex[u>>4&0xF], hex[u&0xF])
}
