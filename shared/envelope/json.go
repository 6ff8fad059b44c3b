package envelope

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A small RFC 8259 parser of our own, rather than encoding/json, because the
// envelope needs what encoding/json cannot give: members in the agent's order
// (ask fields become q0, q1… in property order), duplicate keys rejected (two
// "text" members would be read differently by different parsers), the path of
// every problem for a useful error, and a probe mode that reads a JSON prefix
// inside prose and tells a truncated object from a broken one, which is what
// fragment stripping is built on. The differential fuzz test holds it to
// encoding/json's grammar.

type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func (k kind) String() string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "boolean"
	case kindNumber:
		return "number"
	case kindString:
		return "string"
	case kindArray:
		return "array"
	}
	return "object"
}

// node is one parsed JSON value.
type node struct {
	kind    kind
	off     int    // offset of the value's first byte
	end     int    // offset just past the value
	str     string // string value, or the number's literal
	b       bool
	members []member // objects, in document order
	elems   []*node  // arrays
}

type member struct {
	key string
	off int // offset of the key
	val *node
}

// get returns the member named key, or nil.
func (n *node) get(key string) *node {
	for i := range n.members {
		if n.members[i].key == key {
			return n.members[i].val
		}
	}
	return nil
}

// syntaxError is a grammar violation (or end of input) at off.
type syntaxError struct {
	off    int
	eof    bool   // input ended inside a value
	reason Reason // ReasonSyntax, ReasonTruncated, ReasonDuplicateKey, ReasonTooDeep, ReasonInvalidUnicode
	msg    string
	path   []pathElem
}

func (e *syntaxError) Error() string { return "json: " + e.msg + " at offset " + strconv.Itoa(e.off) }

type pathElem struct {
	key   string
	index int // -1 for keys
}

// parser reads one JSON value from b starting at i. In build mode it returns
// the tree; in probe mode (probe != nil, build false) it only validates the
// grammar and records, in probe, what an envelope detector needs to know about
// the top-level object.
type parser struct {
	b        []byte
	i        int
	depth    int
	maxDepth int
	build    bool
	strict   bool // reject duplicate keys, invalid UTF-8 and lone surrogates
	path     []pathElem
	probe    *probe
}

func (p *parser) fail(reason Reason, msg string) error {
	e := &syntaxError{off: p.i, reason: reason, msg: msg}
	if reason == ReasonTruncated {
		e.eof = true
	}
	if p.build {
		e.path = append([]pathElem(nil), p.path...)
	}
	return e
}

func (p *parser) eof() error { return p.fail(ReasonTruncated, "input ends inside a value") }

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value() (*node, error) {
	p.ws()
	if p.i >= len(p.b) {
		return nil, p.eof()
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		start := p.i
		s, err := p.str(p.build, nil)
		if err != nil {
			return nil, err
		}
		if !p.build {
			return nil, nil
		}
		return &node{kind: kindString, off: start, end: p.i, str: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.literal("true", kindBool, true)
	case c == 'f':
		return p.literal("false", kindBool, false)
	case c == 'n':
		return p.literal("null", kindNull, false)
	}
	return nil, p.fail(ReasonSyntax, "unexpected character")
}

func (p *parser) literal(lit string, k kind, b bool) (*node, error) {
	start := p.i
	for j := 0; j < len(lit); j++ {
		if p.i >= len(p.b) {
			return nil, p.eof()
		}
		if p.b[p.i] != lit[j] {
			return nil, p.fail(ReasonSyntax, "invalid literal")
		}
		p.i++
	}
	if !p.build {
		return nil, nil
	}
	return &node{kind: k, off: start, end: p.i, b: b}, nil
}

func (p *parser) number() (*node, error) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.b[p.i] == '-' {
		p.i++
	}
	if p.i >= len(p.b) {
		return nil, p.eof()
	}
	switch {
	case p.b[p.i] == '0':
		p.i++
	case p.b[p.i] >= '1' && p.b[p.i] <= '9':
		digits()
	default:
		return nil, p.fail(ReasonSyntax, "invalid number")
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if p.i >= len(p.b) {
			return nil, p.eof()
		}
		if digits() == 0 {
			return nil, p.fail(ReasonSyntax, "invalid number")
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if p.i >= len(p.b) {
			return nil, p.eof()
		}
		if digits() == 0 {
			return nil, p.fail(ReasonSyntax, "invalid number")
		}
	}
	if !p.build {
		return nil, nil
	}
	return &node{kind: kindNumber, off: start, end: p.i, str: string(p.b[start:p.i])}, nil
}

// str reads a string starting at the opening quote. It decodes the value when
// decode is set. When the input ends inside the string and partial is not
// nil, *partial receives the decoded text read so far (probe mode uses it to
// recognise a truncated "schema" key or value).
func (p *parser) str(decode bool, partial *string) (string, error) {
	p.i++ // opening quote
	start := p.i
	// Fast path: no escapes.
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := p.b[start:p.i]
			p.i++
			if p.strict && !utf8.Valid(s) {
				p.i = start
				return "", p.fail(ReasonInvalidUnicode, "string is not valid UTF-8")
			}
			if !decode {
				return "", nil
			}
			return string(s), nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		p.i++
	}
	if p.i >= len(p.b) {
		if partial != nil {
			*partial = string(p.b[start:p.i])
		}
		return "", p.eof()
	}
	// Slow path: escapes.
	if p.strict && !utf8.Valid(p.b[start:p.i]) {
		return "", p.fail(ReasonInvalidUnicode, "string is not valid UTF-8")
	}
	var sb strings.Builder
	if decode || partial != nil {
		sb.Write(p.b[start:p.i])
	}
	for {
		if p.i >= len(p.b) {
			if partial != nil {
				*partial = sb.String()
			}
			return "", p.eof()
		}
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return sb.String(), nil
		case c < 0x20:
			return "", p.fail(ReasonSyntax, "control character in string")
		case c != '\\':
			// Copy a run of plain bytes.
			j := p.i
			for j < len(p.b) && p.b[j] != '"' && p.b[j] != '\\' && p.b[j] >= 0x20 {
				j++
			}
			// Runs end at ASCII bytes, so they never split a UTF-8 sequence.
			if p.strict && !utf8.Valid(p.b[p.i:j]) {
				return "", p.fail(ReasonInvalidUnicode, "string is not valid UTF-8")
			}
			if decode || partial != nil {
				sb.Write(p.b[p.i:j])
			}
			p.i = j
			continue
		}
		// Escape.
		if p.i+1 >= len(p.b) {
			if partial != nil {
				*partial = sb.String()
			}
			p.i = len(p.b)
			return "", p.eof()
		}
		e := p.b[p.i+1]
		switch e {
		case '"', '\\', '/':
			sb.WriteByte(e)
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'u':
			r, n, err := p.unicodeEscape(partial, &sb)
			if err != nil {
				return "", err
			}
			sb.WriteRune(r)
			p.i += n
			continue
		default:
			p.i++
			return "", p.fail(ReasonSyntax, "invalid escape")
		}
		p.i += 2
	}
}

// unicodeEscape decodes \uXXXX (and a following low surrogate) at p.i. It
// returns the rune and how many bytes it used.
func (p *parser) unicodeEscape(partial *string, sb *strings.Builder) (rune, int, error) {
	hex := func(at int) (rune, error) {
		if at+4 > len(p.b) {
			for j := at; j < len(p.b); j++ {
				if _, ok := hexVal(p.b[j]); !ok {
					p.i = j
					return 0, p.fail(ReasonSyntax, "invalid \\u escape")
				}
			}
			if partial != nil {
				*partial = sb.String()
			}
			p.i = len(p.b)
			return 0, p.eof()
		}
		var r rune
		for j := at; j < at+4; j++ {
			v, ok := hexVal(p.b[j])
			if !ok {
				p.i = j
				return 0, p.fail(ReasonSyntax, "invalid \\u escape")
			}
			r = r<<4 | v
		}
		return r, nil
	}
	r, err := hex(p.i + 2)
	if err != nil {
		return 0, 0, err
	}
	if !utf16.IsSurrogate(r) {
		return r, 6, nil
	}
	// A high surrogate must be followed by \u and a low surrogate.
	if j := p.i + 6; r < 0xDC00 {
		switch {
		case j == len(p.b) || (j+1 == len(p.b) && p.b[j] == '\\'):
			// The input ends between the two halves of a pair.
			if partial != nil {
				*partial = sb.String()
			}
			p.i = len(p.b)
			return 0, 0, p.eof()
		case p.b[j] == '\\' && p.b[j+1] == 'u':
			r2, err := hex(j + 2)
			if err != nil {
				return 0, 0, err
			}
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, 12, nil
			}
		}
	}
	if p.strict {
		return 0, 0, p.fail(ReasonInvalidUnicode, "lone surrogate in \\u escape")
	}
	return utf8.RuneError, 6, nil
}

func hexVal(c byte) (rune, bool) {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0'), true
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10, true
	}
	return 0, false
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > p.maxDepth {
		return p.fail(ReasonTooDeep, "nested too deeply")
	}
	return nil
}

func (p *parser) object() (*node, error) {
	start := p.i
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.i++ // {
	var n *node
	if p.build {
		n = &node{kind: kindObject, off: start}
	}
	pr := p.probe
	top := pr != nil && p.depth == 1
	msgElem := pr != nil && p.depth == 3 && pr.inMessages
	hasText := false
	var seen map[string]struct{}
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		p.depth--
		if msgElem {
			pr.msgElems++
		}
		if n != nil {
			n.end = p.i
		}
		return n, nil
	}
	for {
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.eof()
		}
		if p.b[p.i] != '"' {
			return nil, p.fail(ReasonSyntax, "expected a string key")
		}
		keyOff := p.i
		key, err := p.str(p.build || top || msgElem, nil)
		if err != nil {
			if top {
				// The key as far as it went (raw: enough to compare with
				// the envelope's plain ASCII keys).
				k := p.b[keyOff+1 : max(min(err.(*syntaxError).off, len(p.b)), keyOff+1)]
				if e := bytes.IndexByte(k, '\\'); e >= 0 {
					k = k[:e]
				}
				pr.partialKey, pr.hasPartialKey = string(k), true
			}
			return nil, err
		}
		if top {
			pr.key(key)
		}
		if msgElem && (key == "text" || key == "id") {
			hasText = hasText || key == "text"
			pr.msgKeySeen = true
		}
		if p.build && p.strict {
			if dupKey(n.members, key, &seen) {
				p.i = keyOff
				p.path = append(p.path, pathElem{key: key, index: -1})
				return nil, p.fail(ReasonDuplicateKey, "duplicate key")
			}
		}
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.eof()
		}
		if p.b[p.i] != ':' {
			return nil, p.fail(ReasonSyntax, "expected ':' after key")
		}
		p.i++
		if p.build {
			p.path = append(p.path, pathElem{key: key, index: -1})
		}
		var v *node
		if top && key == "schema" {
			v, err = p.probeSchema()
		} else if top && key == "messages" {
			p.ws()
			if p.i < len(p.b) && p.b[p.i] == '[' {
				pr.messagesArray = true
				pr.inMessages = true
			}
			v, err = p.value()
			pr.inMessages = false
		} else {
			v, err = p.value()
		}
		if err != nil {
			return nil, err
		}
		if p.build {
			p.path = p.path[:len(p.path)-1]
			n.members = append(n.members, member{key: key, off: keyOff, val: v})
		}
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.eof()
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			continue
		case '}':
			p.i++
			p.depth--
			if msgElem {
				pr.msgElems++
				if hasText {
					pr.msgElemsWithText++
				}
			}
			if n != nil {
				n.end = p.i
			}
			return n, nil
		}
		return nil, p.fail(ReasonSyntax, "expected ',' or '}' in object")
	}
}

// dupKey reports whether key is already among members; past a few members it
// switches to a set so a large object stays linear.
func dupKey(members []member, key string, seen *map[string]struct{}) bool {
	if len(members) < 8 {
		for i := range members {
			if members[i].key == key {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]struct{}, 2*len(members))
		for i := range members {
			(*seen)[members[i].key] = struct{}{}
		}
	}
	if _, ok := (*seen)[key]; ok {
		return true
	}
	(*seen)[key] = struct{}{}
	return false
}

// probeSchema reads the value of a top-level "schema" member, recording it in
// the probe (also when the input ends inside it).
func (p *parser) probeSchema() (*node, error) {
	pr := p.probe
	if pr == nil {
		return p.value()
	}
	pr.schemaSeen = true
	p.ws()
	if p.i >= len(p.b) {
		pr.schemaPartial = true
		return nil, p.eof()
	}
	if c := p.b[p.i]; c != '"' {
		// Only a value that is valid JSON and not a string rules the
		// envelope out; a break right here leaves the value unknown.
		if c == '{' || c == '[' || c == '-' || c >= '0' && c <= '9' || c == 't' || c == 'f' || c == 'n' {
			pr.schemaNotString = true
		} else {
			pr.schemaPartial = true
		}
		return p.value()
	}
	start := p.i
	var partial string
	s, err := p.str(true, &partial)
	if err != nil {
		pr.schemaPartial = true
		if se := err.(*syntaxError); se.eof {
			pr.schemaVal = partial
		} else {
			// Broken inside the value: keep what came before the break.
			v := p.b[start+1 : max(min(se.off, len(p.b)), start+1)]
			if e := bytes.IndexByte(v, '\\'); e >= 0 {
				v = v[:e]
			}
			pr.schemaVal = string(v)
		}
		return nil, err
	}
	pr.schemaVal = s
	if !p.build {
		return nil, nil
	}
	return &node{kind: kindString, off: start, end: p.i, str: s}, nil
}

func (p *parser) array() (*node, error) {
	start := p.i
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.i++ // [
	var n *node
	if p.build {
		n = &node{kind: kindArray, off: start}
	}
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		p.depth--
		if n != nil {
			n.end = p.i
		}
		return n, nil
	}
	for idx := 0; ; idx++ {
		if p.build {
			p.path = append(p.path, pathElem{index: idx})
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if p.build {
			p.path = p.path[:len(p.path)-1]
			n.elems = append(n.elems, v)
		}
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.eof()
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			continue
		case ']':
			p.i++
			p.depth--
			if n != nil {
				n.end = p.i
			}
			return n, nil
		}
		return nil, p.fail(ReasonSyntax, "expected ',' or ']' in array")
	}
}

// formatPath renders a path as `messages[1].id`. Keys are the agent's member
// names, never values; long or odd ones are shortened and quoted so an error
// string stays small and cannot carry a bubble's text.
func formatPath(path []pathElem) string {
	var sb strings.Builder
	for i, e := range path {
		if i == maxPathElems {
			sb.WriteString("…")
			break
		}
		if e.index >= 0 {
			sb.WriteByte('[')
			sb.WriteString(strconv.Itoa(e.index))
			sb.WriteByte(']')
			continue
		}
		if plainKey(e.key) {
			if i > 0 {
				sb.WriteByte('.')
			}
			sb.WriteString(e.key)
			continue
		}
		k := e.key
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
