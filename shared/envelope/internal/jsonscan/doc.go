// Package jsonscan is the envelope's own RFC 8259 reader: a Tokenizer that
// reads one JSON value token by token with exact byte offsets, and Parse,
// which builds a tree of it.
//
// It exists because the envelope needs what encoding/json does not give
// (docs/adr/0006-json-scanner.md weighs jsontext against it):
//
//   - object members in document order (ask fields become q0, q1, … in
//     property order) and duplicate names refused (two "text" members would
//     be read differently by different parsers);
//   - the byte span of every value, and the offset and path of every
//     problem, so errors locate it and fragment stripping can cut a value
//     out of prose;
//   - a value that breaks told apart from one the input ends inside
//     (ErrTruncated), with what was read of a string cut short, so a reply
//     cut off mid-envelope is recognised as one;
//   - a lenient mode for prose (invalid UTF-8 and lone surrogates pass) and
//     a strict one for envelopes.
//
// A Tokenizer reads one value and stops at its end, so the value may sit
// among other text: start it at the value's first byte, and it reports
// where the value ends, or where and how it broke.
//
//	var tz jsonscan.Tokenizer
//	tz.Reset(text, i, jsonscan.Options{MaxDepth: 256})
//	for {
//		tok, err := tz.Next(jsonscan.DecodeNames) // tz.Text() is a name's text
//		if err != nil { // *jsonscan.Error: Kind (ErrTruncated…), Off, Token, Partial
//			break
//		}
//		if tz.Depth() == 0 { // the value is text[i:tok.End]
//			break
//		}
//	}
//
// The package is internal to envelope: it reads only what an envelope
// needs, and its grammar is held to encoding/json's by a differential fuzz
// test.
package jsonscan
