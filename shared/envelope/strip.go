package envelope

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/parleyhq/parley/shared/envelope/internal/jsonscan"
	"github.com/parleyhq/parley/shared/split"
)

// Envelope fragments: how Parley recognises envelope JSON inside text, so
// that it is never delivered (I5), while unrelated JSON in prose is left
// alone.
//
// A candidate is any '{' followed (after whitespace) by '"', '}' or the end
// of the text. From there the JSON grammar is followed as far as it holds,
// which ends one of three ways: a complete object, the end of the text inside
// the object (truncated), or a grammar violation (broken: the agent's JSON
// ran into prose). Only the object's top-level members are looked at:
//
//   - the schema marker: a member "schema" whose string value starts with
//     "openab.turn" (ASCII case-insensitive);
//   - the envelope shape: every top-level member is one of schema, messages,
//     next, and "messages" is an array of objects with a "text" member.
//
// A "schema" member decides: with the marker the object is a fragment, with
// any other value (`{"schema": "my-db-schema"}`) it is not. Otherwise a
// complete object is a fragment when it has the shape, and (prose rules
// only) a truncated or broken one when what was read before the end or the
// break could begin an envelope: every key so far is, or begins, one of
// schema/messages/next (a truncated object needs no key: a bare "{" at the
// very end counts; a broken one needs one). A broken object is also a
// fragment when the marker appears after the point where it broke. A fragment that closes is removed whole; one that
// breaks is removed up to where its brackets balance, counted leniently
// (strings and brackets only), or to the end of the text; every candidate
// inside it is still examined, so an envelope that starts within a broken
// one is found too.

// Last, whatever the JSON around it: no delivered text ever holds a
// `"schema": "openab.turn…"` member. Text that still has one after the
// rules above loses the object around it (or the rest of the text).

const envelopeMarker = "openab.turn"

// detection chooses how much evidence makes a fragment.
type detection uint8

const (
	// detectProse is for prose that stands in for a failed envelope and for
	// text-mode replies: truncated and broken objects shaped like an
	// envelope count too.
	detectProse detection = iota
	// detectStrong is for text inside a valid envelope (bubbles, questions)
	// and the configured error line: only complete envelope-shaped objects
	// and objects carrying the schema marker count, so a bubble that ends in
	// "{" is not mistaken for one.
	detectStrong
)

// probeDepth bounds how deep a candidate is followed. Past it the candidate
// counts as broken there; it also bounds the work to O(probeDepth × len).
const probeDepth = 256

// probe collects what the detector needs about one candidate's top level.
type probe struct {
	otherKey      bool   // a complete top-level key outside the envelope's
	keys          int    // complete top-level keys
	partialKey    string // the key being read when the text ended or broke
	hasPartialKey bool

	schemaSeen      bool
	schemaVal       string // complete or (schemaPartial) truncated value
	schemaPartial   bool
	schemaNotString bool

	messagesArray    bool // "messages" opened an array
	inMessages       bool
	msgElems         int // complete elements of messages
	msgElemsWithText int // of which objects with a "text" member
}

func (pr *probe) key(k string) {
	pr.keys++
	if !envelopeKey(k) {
		pr.otherKey = true
	}
}

func envelopeKey(k string) bool { return k == "schema" || k == "messages" || k == "next" }

// markerOK reports whether a schema value has the marker; partial values
// also pass while they could still grow into one.
func markerOK(v string, partial bool) bool {
	if hasPrefixFold(v, envelopeMarker) {
		return true
	}
	return partial && hasPrefixFold(envelopeMarker, v)
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

type status uint8

const (
	statusComplete status = iota
	statusTruncated
	statusBroken
)

// scan follows the candidate at b[start] ('{'). It returns how it ended and
// where: the offset past the object, len(b) when truncated, the offset of the
// violation when broken. Only the top level is decoded: its keys, a
// "schema" value, and the keys of "messages" elements.
func scan(b []byte, start int) (probe, status, int) {
	var pr probe
	var tz jsonscan.Tokenizer
	tz.Reset(b, start, jsonscan.Options{MaxDepth: probeDepth})
	member := ""    // the top-level member whose value comes next
	inElem := false // inside an element of messages
	elemText := false
	for {
		depth := tz.Depth()
		var d jsonscan.Decode
		switch {
		case member == "schema":
			d = jsonscan.DecodeStrings
		case depth == 1 || depth == 3 && inElem:
			d = jsonscan.DecodeNames
		}
		tok, err := tz.Next(d)
		if err != nil {
			se := err.(*jsonscan.Error)
			if se.Token == jsonscan.TokName && depth == 1 {
				// The key as far as it went (raw: enough to compare with
				// the envelope's plain ASCII keys).
				pr.partialKey, pr.hasPartialKey = string(rawPrefix(b, se)), true
			}
			if member != "" && se.AtValue {
				pr.value(member, se.Token, "", b, se)
			}
			if se.Kind == jsonscan.ErrTruncated {
				return pr, statusTruncated, len(b)
			}
			return pr, statusBroken, se.Off
		}
		if member != "" {
			pr.value(member, tok.Kind, tz.Text(), b, nil)
			member = ""
		}
		switch tok.Kind {
		case jsonscan.TokName:
			if depth == 1 {
				pr.key(tz.Text())
				member = tz.Text()
			} else if inElem && depth == 3 && tz.Text() == "text" {
				elemText = true
			}
		case jsonscan.TokObjectStart:
			if pr.inMessages && tz.Depth() == 3 {
				inElem, elemText = true, false
			}
		case jsonscan.TokObjectEnd:
			if inElem && tz.Depth() == 2 {
				inElem = false
				pr.msgElems++
				if elemText {
					pr.msgElemsWithText++
				}
			}
		case jsonscan.TokArrayEnd:
			if pr.inMessages && tz.Depth() == 1 {
				pr.inMessages = false
			}
		}
		if tz.Depth() == 0 {
			return pr, statusComplete, tok.End
		}
	}
}

// value records what the detector needs of a top-level member's value: k is
// the kind of its first token and text a string's decoded text or, when err
// is set, k is the kind of the token the text ended or broke in (TokNone:
// before the value began).
func (pr *probe) value(member string, k jsonscan.TokenKind, text string, b []byte, err *jsonscan.Error) {
	switch member {
	case "messages":
		if k == jsonscan.TokArrayStart {
			pr.messagesArray, pr.inMessages = true, err == nil
		}
	case "schema":
		pr.schemaSeen = true
		switch {
		case k == jsonscan.TokNone:
			// A break right at the value leaves it unknown.
			pr.schemaPartial = true
		case k != jsonscan.TokString:
			// Only a value that is valid JSON and not a string rules the
			// envelope out.
			pr.schemaNotString = true
		case err == nil:
			pr.schemaVal = text
		case err.Kind == jsonscan.ErrTruncated:
			pr.schemaPartial, pr.schemaVal = true, err.Partial
		default:
			// Broken inside the value: keep what came before the break.
			pr.schemaPartial, pr.schemaVal = true, string(rawPrefix(b, err))
		}
	}
}

// rawPrefix is the raw text of the string err broke or ended in, up to the
// break or its first escape.
func rawPrefix(b []byte, err *jsonscan.Error) []byte {
	from := err.TokenOff + 1
	v := b[from:max(min(err.Off, len(b)), from)]
	if e := bytes.IndexByte(v, '\\'); e >= 0 {
		v = v[:e]
	}
	return v
}

// isFragment applies the rules above.
//
// Under prose rules a truncated object that has not yet shown a key ("{" at
// the very end of the text) is a fragment too: a reply cut short before its
// first key. Text that merely ends in "{" loses that brace; that is the
// price of never showing a byte of a truncated envelope.
func isFragment(pr *probe, st status, d detection) bool {
	switch {
	case pr.schemaSeen && !pr.schemaNotString:
		// The marker decides; any other schema is someone else's JSON.
		return markerOK(pr.schemaVal, pr.schemaPartial)
	case pr.schemaSeen && st != statusComplete:
		return false // a non-string schema begins no envelope
	case st == statusComplete:
		return !pr.otherKey && pr.messagesArray && pr.msgElems > 0 && pr.msgElemsWithText == pr.msgElems
	}
	// Truncated or broken: the JSON read so far could begin an envelope.
	if d != detectProse || pr.otherKey {
		return false
	}
	if pr.hasPartialKey {
		return envelopePrefix(pr.partialKey)
	}
	return st == statusTruncated || pr.keys > 0
}

func envelopePrefix(k string) bool {
	return strings.HasPrefix("schema", k) || strings.HasPrefix("messages", k) || strings.HasPrefix("next", k)
}

type span struct{ start, end int }

// candidate reports whether b[i] ('{') may start an object: the next
// non-space byte is '"', '}' or the end.
func candidate(b []byte, i int) bool {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case ' ', '\t', '\n', '\r':
			continue
		case '"', '}':
			return true
		}
		return false
	}
	return true
}

// fragments returns the spans of envelope fragments in b, in order, possibly
// overlapping (a fragment inside a broken one).
func fragments(b []byte, d detection) []span {
	var out []span
	skipTo := 0      // candidates before this are inside a closed fragment
	lastMarker := -2 // offset of the last schema marker in b, -1 for none
	for i := 0; i < len(b); i++ {
		if b[i] != '{' || i < skipTo || !candidate(b, i) {
			continue
		}
		pr, st, end := scan(b, i)
		if !isFragment(&pr, st, d) {
			// A broken object may carry the marker after the point where it
			// broke ({"next": {…broken…}, "schema": "openab.turn.v1"}):
			// look for it within its lenient extent.
			if st != statusBroken {
				continue
			}
			if lastMarker == -2 {
				lastMarker = findMarker(b, true)
			}
			if lastMarker < i || findMarker(b[i:lenientEnd(b, i)], false) < 0 {
				continue
			}
		}
		if st == statusBroken {
			// The rest of a broken envelope is still envelope: remove up to
			// where its brackets balance (or the end of the text).
			end = lenientEnd(b, i)
		}
		out = append(out, span{i, end})
		if st != statusBroken {
			skipTo = end
		}
	}
	return out
}

// findMarker returns the offset of the first (or, when last is set, the
// last) `"schema"` member in b whose value starts with the marker, or -1.
func findMarker(b []byte, last bool) int {
	found := -1
	for i := 0; ; {
		k := bytes.Index(b[i:], []byte(`"schema"`))
		if k < 0 {
			return found
		}
		k += i
		j := k + len(`"schema"`)
		for j < len(b) && isSpaceByte(b[j]) {
			j++
		}
		if j < len(b) && b[j] == ':' {
			j++
			for j < len(b) && isSpaceByte(b[j]) {
				j++
			}
			if j < len(b) && b[j] == '"' && hasPrefixFold(string(b[j+1:min(len(b), j+1+len(envelopeMarker))]), envelopeMarker) {
				if !last {
					return k
				}
				found = k
			}
		}
		i = k + 1
	}
}

// lenientEnd follows b from start ('{') counting brackets outside strings,
// with no other grammar, and returns the offset past the bracket that closes
// the first one, or len(b).
func lenientEnd(b []byte, start int) int {
	depth := 0
	for i := start; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(b)
}

// hasFragment reports whether s holds an envelope fragment.
func hasFragment(s string, d detection) bool {
	b := []byte(s)
	return findMarker(b, false) >= 0 || len(fragments(b, d)) > 0 || encodedEnvelope(b)
}

// markerSpan is the last resort for a schema marker that no candidate
// covered (the JSON around it too broken to follow): it removes the
// innermost-first '{' before the marker whose lenient extent reaches past
// it, or from the marker to the end of the text.
func markerSpan(b []byte, m int) span {
	for i := m - 1; i >= 0; i-- {
		if b[i] == '{' {
			if e := lenientEnd(b, i); e > m {
				return span{i, e}
			}
		}
	}
	return span{m, len(b)}
}

// encodedEnvelope reports whether b, trimmed, is a JSON string literal whose
// content holds an envelope fragment: an envelope encoded twice.
func encodedEnvelope(b []byte) bool {
	t := trimSpaceBytes(b)
	if len(t) < 2 || t[0] != '"' || t[len(t)-1] != '"' {
		return false
	}
	var s string
	if json.Unmarshal(t, &s) != nil {
		return false
	}
	return findMarker([]byte(s), false) >= 0 || len(fragments([]byte(s), detectStrong)) > 0
}

// maxStripRounds bounds re-stripping: removing a fragment joins the text on
// both sides, which could in theory form a new one.
const maxStripRounds = 4

// stripFragments removes every envelope fragment from s, with any code fence
// or inline code span that held only the fragment, and joins what is left.
// The result is trimmed of surrounding whitespace. It also reports whether
// anything was removed.
func stripFragments(s string) (string, bool) {
	b := []byte(s)
	removed := false
	if encodedEnvelope(b) {
		return "", true
	}
	for round := 0; ; round++ {
		// Trim first: what ends the text decides whether an object is
		// truncated, so the result must be judged as it will be sent.
		b = bytes.TrimSpace(b)
		spans := fragments(b, detectProse)
		if len(spans) == 0 {
			m := findMarker(b, false)
			if m < 0 {
				return string(b), removed
			}
			spans = []span{markerSpan(b, m)}
		}
		if round == maxStripRounds {
			// Never leak: give up on the prose rather than deliver a piece.
			return "", true
		}
		removed = true
		b = cut(b, merge(widen(b, spans)))
	}
}

// merge sorts nothing (spans arrive in start order) and unions overlapping
// or touching spans.
func merge(spans []span) []span {
	out := spans[:0:0]
	for _, s := range spans {
		if n := len(out); n > 0 && s.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, s.end)
			continue
		}
		out = append(out, s)
	}
	return out
}

// widen grows each span over a code fence (```json … ```) or an inline code
// span (`…`) that holds nothing else, so no empty code block is left behind.
func widen(b []byte, spans []span) []span {
	out := make([]span, 0, len(spans))
	for _, s := range spans {
		if s.start > 0 && s.end < len(b) && b[s.start-1] == '`' && b[s.end] == '`' &&
			(s.start < 2 || b[s.start-2] != '`') && (s.end+1 >= len(b) || b[s.end+1] != '`') {
			s = span{s.start - 1, s.end + 1}
		}
		if f, ok := fenceAround(b, s); ok {
			s = f
		}
		out = append(out, s)
	}
	return out
}

// fenceAround finds a fence opener line just before s (only whitespace
// between, across a line break) and its closer just after s (or the end of
// the text, for a truncated fragment).
func fenceAround(b []byte, s span) (span, bool) {
	// Back over whitespace to the end of the opener line.
	a := s.start
	for a > 0 && isSpaceByte(b[a-1]) {
		a--
	}
	if !containsNewline(b[a:s.start]) || a == 0 {
		return s, false
	}
	ls := a
	for ls > 0 && b[ls-1] != '\n' {
		ls--
	}
	f, ok := split.OpensFence(string(b[ls:a]))
	if !ok {
		return s, false
	}
	// Forward over whitespace to the closer line.
	c := s.end
	for c < len(b) && isSpaceByte(b[c]) {
		c++
	}
	if c == len(b) {
		return span{ls, len(b)}, true
	}
	if !containsNewline(b[s.end:c]) {
		return s, false
	}
	le := c
	for le < len(b) && b[le] != '\n' {
		le++
	}
	if !f.ClosedBy(string(b[c:le])) {
		return s, false
	}
	return span{ls, le}, true
}

// cut removes spans from b, joining the pieces on either side: whitespace at
// the seam is replaced by a blank line, a line break or a space, whichever
// was widest there.
func cut(b []byte, spans []span) []byte {
	out := make([]byte, 0, len(b))
	prev := 0
	for k, s := range spans {
		left := b[prev:s.start]
		lt := trimRightSpaceBytes(left)
		ws := left[len(lt):]
		out = append(out, lt...)
		// Whitespace after the span, up to the next span or the end.
		limit := len(b)
		if k+1 < len(spans) {
			limit = spans[k+1].start
		}
		r := s.end
		for r < limit && isSpaceByte(b[r]) {
			r++
		}
		if len(trimRightSpaceBytes(out)) > 0 && r < limit {
			nl := countNewlines(ws) + countNewlines(b[s.end:r])
			switch {
			case nl >= 2:
				out = append(out, '\n', '\n')
			case nl == 1:
				out = append(out, '\n')
			case len(ws) > 0 || r > s.end:
				out = append(out, ' ')
			}
		}
		prev = r
	}
	return append(out, b[prev:]...)
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func containsNewline(b []byte) bool {
	for _, c := range b {
		if c == '\n' {
			return true
		}
	}
	return false
}

func countNewlines(b []byte) int {
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	return n
}

func trimSpaceBytes(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isSpaceByte(b[i]) {
		i++
	}
	for j > i && isSpaceByte(b[j-1]) {
		j--
	}
	return b[i:j]
}

// firstContent is the offset of b's first byte that is neither whitespace
// nor a leading UTF-8 BOM.
func firstContent(b []byte) int {
	lead := 0
	if bytes.HasPrefix(b, bom) {
		lead = len(bom)
	}
	return len(b) - len(trimLeftSpaceBytes(b[lead:]))
}

func trimLeftSpaceBytes(b []byte) []byte {
	i := 0
	for i < len(b) && isSpaceByte(b[i]) {
		i++
	}
	return b[i:]
}

func trimRightSpaceBytes(b []byte) []byte {
	j := len(b)
	for j > 0 && isSpaceByte(b[j-1]) {
		j--
	}
	return b[:j]
}
