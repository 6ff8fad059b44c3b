package jsonscan

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// TokenKind is what a token is.
type TokenKind uint8

const (
	// TokNone is no token: in an Error, the problem came between tokens.
	TokNone TokenKind = iota
	TokObjectStart
	TokObjectEnd
	TokArrayStart
	TokArrayEnd
	// TokName is an object member's name.
	TokName
	TokString
	TokNumber
	TokTrue
	TokFalse
	TokNull
)

// Token is one token of a value: b[Off:End] in the input, quotes and
// delimiters included. (A name's or a string's decoded text is the
// Tokenizer's Text: keeping it out of Token keeps Next cheap.)
type Token struct {
	Kind     TokenKind
	Off, End int
}

// Decode says which tokens Next decodes into Text. Decoding allocates; a
// caller that only needs spans asks for nothing.
type Decode uint8

const (
	DecodeNames Decode = 1 << iota
	DecodeStrings
)

// ErrorKind classifies an Error.
type ErrorKind uint8

const (
	// ErrSyntax is a grammar violation.
	ErrSyntax ErrorKind = iota + 1
	// ErrTruncated is the end of the input inside the value: what was read
	// is a prefix of valid JSON.
	ErrTruncated
	// ErrDuplicateName is an object naming a member twice (Parse, strict).
	ErrDuplicateName
	// ErrTooDeep is nesting past Options.MaxDepth.
	ErrTooDeep
	// ErrInvalidUnicode is a string that is not valid UTF-8 or holds a lone
	// UTF-16 surrogate escape (strict).
	ErrInvalidUnicode
)

// Error says where and how a value broke. Of the input's text it holds only
// Path's member names and Partial; Msg is a fixed phrase.
type Error struct {
	Kind ErrorKind
	// Off is the byte offset where the problem was found (for ErrTruncated,
	// the end of the input, or of the string or escape cut short).
	Off int
	// Msg says what was wrong ("expected ':' after key").
	Msg string
	// Path leads to the problem: set by Parse, nil from a Tokenizer.
	Path []PathElem
	// Token is the kind of the token being read when the problem came, and
	// TokenOff where it began; TokNone (and -1) between tokens.
	Token    TokenKind
	TokenOff int
	// AtValue is set when the problem came where a value was expected or
	// inside one (after ':', at an array element), not at a name, a ':' or
	// a ','.
	AtValue bool
	// Partial is, for ErrTruncated inside a name or string that was to be
	// decoded, the text decoded before the input ended.
	Partial string
}

func (e *Error) Error() string { return "json: " + e.Msg + " at offset " + strconv.Itoa(e.Off) }

// PathElem is one step of a path: an object member (Index -1) or an array
// element.
type PathElem struct {
	Key   string
	Index int
}

// Options configure a Tokenizer or Parse.
type Options struct {
	// MaxDepth is how deep objects and arrays may nest: a container that
	// would open at a depth past it fails with ErrTooDeep.
	MaxDepth int
	// Strict refuses invalid UTF-8 and lone surrogate escapes in strings
	// (lenient reading accepts them, as encoding/json does) and, in Parse,
	// duplicate member names.
	Strict bool
}

// state is where the tokenizer is in the grammar.
type state uint8

const (
	stValue     state = iota // a value: the document's, a member's (after ':'), an element (after ',')
	stFirstElem              // after '[': ']' or a value
	stFirstName              // after '{': '}' or a name
	stName                   // after ',' in an object: a name
	stColon                  // after a name: ':'
	stAfter                  // after a value in a container: ',' or the closer
	stDone                   // the value is complete
)

// Tokenizer reads one JSON value token by token. The zero value is not
// ready: call Reset, which may be called again to read another value.
type Tokenizer struct {
	b     []byte
	i     int
	opt   Options
	state state
	depth int
	// kinds holds one bit per open container, set for an object: the
	// first 64 levels inline, deeper ones in deep.
	kinds  uint64
	deep   []uint64
	tok    TokenKind // the token being read, for errors
	tokOff int
	text   string
	err    *Error
}

// errDone marks a complete value: Next says io.EOF.
var errDone = &Error{Kind: ErrSyntax, Msg: "value already complete"}

// Reset makes t read the value starting at b[start] (after any whitespace).
func (t *Tokenizer) Reset(b []byte, start int, opt Options) {
	*t = Tokenizer{b: b, i: start, opt: opt, deep: t.deep[:0]}
}

// Depth is how many objects and arrays are open.
func (t *Tokenizer) Depth() int { return t.depth }

// Offset is the offset just past the last token read.
func (t *Tokenizer) Offset() int { return t.i }

// Text is the decoded text of the last token, when it is a name or a string
// Next was asked to decode; "" otherwise.
func (t *Tokenizer) Text() string { return t.text }

// Next reads the next token, decoding what d asks for. An error is an
// *Error; after the value's last token Next returns io.EOF, and after an
// error the same error again.
func (t *Tokenizer) Next(d Decode) (Token, error) {
	tok, err := t.next(d)
	switch {
	case err == errDone:
		return Token{}, io.EOF
	case err != nil:
		return Token{}, err
	}
	return tok, nil
}

// next is Next for this package's parser: its errors are *Error (errDone
// at the end), which spares an interface conversion per token.
func (t *Tokenizer) next(d Decode) (Token, *Error) {
	if t.err != nil {
		return Token{}, t.err
	}
	t.tok, t.tokOff, t.text = TokNone, -1, ""
	for {
		t.ws()
		switch t.state {
		case stDone:
			t.err = errDone
			return Token{}, errDone
		case stValue:
			return t.value(d)
		case stFirstElem:
			if t.i < len(t.b) && t.b[t.i] == ']' {
				return t.close(TokArrayEnd), nil
			}
			t.state = stValue
			return t.value(d)
		case stFirstName, stName:
			if t.state == stFirstName && t.i < len(t.b) && t.b[t.i] == '}' {
				return t.close(TokObjectEnd), nil
			}
			if t.i >= len(t.b) {
				return Token{}, t.eof()
			}
			if t.b[t.i] != '"' {
				return Token{}, t.fail(ErrSyntax, "expected a string key")
			}
			tok, err := t.str(TokName, d&DecodeNames != 0)
			if err != nil {
				return Token{}, err
			}
			t.state = stColon
			return tok, nil
		case stColon:
			if t.i >= len(t.b) {
				return Token{}, t.eof()
			}
			if t.b[t.i] != ':' {
				return Token{}, t.fail(ErrSyntax, "expected ':' after key")
			}
			t.i++
			t.state = stValue
		case stAfter:
			if t.i >= len(t.b) {
				return Token{}, t.eof()
			}
			obj := t.inObject()
			switch c := t.b[t.i]; {
			case c == ',':
				t.i++
				if obj {
					t.state = stName
				} else {
					t.state = stValue
				}
			case obj && c == '}':
				return t.close(TokObjectEnd), nil
			case !obj && c == ']':
				return t.close(TokArrayEnd), nil
			case obj:
				return Token{}, t.fail(ErrSyntax, "expected ',' or '}' in object")
			default:
				return Token{}, t.fail(ErrSyntax, "expected ',' or ']' in array")
			}
		}
	}
}

func (t *Tokenizer) fail(k ErrorKind, msg string) *Error {
	t.err = &Error{Kind: k, Off: t.i, Msg: msg, Token: t.tok, TokenOff: t.tokOff,
		AtValue: t.state == stValue || t.state == stFirstElem}
	return t.err
}

func (t *Tokenizer) eof() *Error { return t.fail(ErrTruncated, "input ends inside a value") }

func (t *Tokenizer) ws() {
	for t.i < len(t.b) {
		switch t.b[t.i] {
		case ' ', '\t', '\n', '\r':
			t.i++
		default:
			return
		}
	}
}

// scalarDone moves past a complete scalar.
func (t *Tokenizer) scalarDone() {
	if t.depth == 0 {
		t.state = stDone
	} else {
		t.state = stAfter
	}
}

func (t *Tokenizer) value(d Decode) (Token, *Error) {
	if t.i >= len(t.b) {
		return Token{}, t.eof()
	}
	switch c := t.b[t.i]; {
	case c == '{':
		return t.open(true)
	case c == '[':
		return t.open(false)
	case c == '"':
		tok, err := t.str(TokString, d&DecodeStrings != 0)
		if err != nil {
			return Token{}, err
		}
		t.scalarDone()
		return tok, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return t.number()
	case c == 't':
		return t.literal("true", TokTrue)
	case c == 'f':
		return t.literal("false", TokFalse)
	case c == 'n':
		return t.literal("null", TokNull)
	}
	return Token{}, t.fail(ErrSyntax, "unexpected character")
}

func (t *Tokenizer) open(obj bool) (Token, *Error) {
	k := TokArrayStart
	if obj {
		k = TokObjectStart
	}
	t.tok, t.tokOff = k, t.i
	if t.depth+1 > t.opt.MaxDepth {
		return Token{}, t.fail(ErrTooDeep, "nested too deeply")
	}
	t.push(obj)
	t.i++
	if obj {
		t.state = stFirstName
	} else {
		t.state = stFirstElem
	}
	return Token{Kind: k, Off: t.i - 1, End: t.i}, nil
}

func (t *Tokenizer) close(k TokenKind) Token {
	t.depth--
	t.i++
	t.scalarDone()
	return Token{Kind: k, Off: t.i - 1, End: t.i}
}

func (t *Tokenizer) push(obj bool) {
	d := t.depth
	t.depth++
	var w *uint64
	if d < 64 {
		w = &t.kinds
	} else {
		for len(t.deep) <= d/64-1 {
			t.deep = append(t.deep, 0)
		}
		w = &t.deep[d/64-1]
	}
	bit := uint64(1) << (d % 64)
	if obj {
		*w |= bit
	} else {
		*w &^= bit
	}
}

// inObject reports whether the innermost open container is an object.
func (t *Tokenizer) inObject() bool {
	d := t.depth - 1
	w := t.kinds
	if d >= 64 {
		w = t.deep[d/64-1]
	}
	return w&(uint64(1)<<(d%64)) != 0
}

func (t *Tokenizer) literal(lit string, k TokenKind) (Token, *Error) {
	start := t.i
	t.tok, t.tokOff = k, start
	for j := 0; j < len(lit); j++ {
		if t.i >= len(t.b) {
			return Token{}, t.eof()
		}
		if t.b[t.i] != lit[j] {
			return Token{}, t.fail(ErrSyntax, "invalid literal")
		}
		t.i++
	}
	t.scalarDone()
	return Token{Kind: k, Off: start, End: t.i}, nil
}

func (t *Tokenizer) number() (Token, *Error) {
	start := t.i
	t.tok, t.tokOff = TokNumber, start
	digits := func() int {
		n := 0
		for t.i < len(t.b) && t.b[t.i] >= '0' && t.b[t.i] <= '9' {
			t.i++
			n++
		}
		return n
	}
	if t.b[t.i] == '-' {
		t.i++
	}
	if t.i >= len(t.b) {
		return Token{}, t.eof()
	}
	switch {
	case t.b[t.i] == '0':
		t.i++
	case t.b[t.i] >= '1' && t.b[t.i] <= '9':
		digits()
	default:
		return Token{}, t.fail(ErrSyntax, "invalid number")
	}
	if t.i < len(t.b) && t.b[t.i] == '.' {
		t.i++
		if t.i >= len(t.b) {
			return Token{}, t.eof()
		}
		if digits() == 0 {
			return Token{}, t.fail(ErrSyntax, "invalid number")
		}
	}
	if t.i < len(t.b) && (t.b[t.i] == 'e' || t.b[t.i] == 'E') {
		t.i++
		if t.i < len(t.b) && (t.b[t.i] == '+' || t.b[t.i] == '-') {
			t.i++
		}
		if t.i >= len(t.b) {
			return Token{}, t.eof()
		}
		if digits() == 0 {
			return Token{}, t.fail(ErrSyntax, "invalid number")
		}
	}
	t.scalarDone()
	return Token{Kind: TokNumber, Off: start, End: t.i}, nil
}

// str reads a name or string starting at its opening quote, decoding it when
// decode is set (and then, when the input ends inside it, recording what was
// decoded in the error's Partial).
func (t *Tokenizer) str(k TokenKind, decode bool) (Token, *Error) {
	off := t.i
	t.tok, t.tokOff = k, off
	t.i++ // opening quote
	start := t.i
	// Fast path: no escapes.
	for t.i < len(t.b) {
		c := t.b[t.i]
		if c == '"' {
			s := t.b[start:t.i]
			t.i++
			if t.opt.Strict && !utf8.Valid(s) {
				t.i = start
				return Token{}, t.fail(ErrInvalidUnicode, "string is not valid UTF-8")
			}
			if decode {
				t.text = string(s)
			}
			return Token{Kind: k, Off: off, End: t.i}, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		t.i++
	}
	if t.i >= len(t.b) {
		e := t.eof()
		if decode {
			e.Partial = string(t.b[start:t.i])
		}
		return Token{}, e
	}
	// Slow path: escapes.
	if t.opt.Strict && !utf8.Valid(t.b[start:t.i]) {
		return Token{}, t.fail(ErrInvalidUnicode, "string is not valid UTF-8")
	}
	var sb strings.Builder
	if decode {
		sb.Write(t.b[start:t.i])
	}
	truncated := func() (Token, *Error) {
		e := t.eof()
		if decode {
			e.Partial = sb.String()
		}
		return Token{}, e
	}
	for {
		if t.i >= len(t.b) {
			return truncated()
		}
		c := t.b[t.i]
		switch {
		case c == '"':
			t.i++
			if decode {
				t.text = sb.String()
			}
			return Token{Kind: k, Off: off, End: t.i}, nil
		case c < 0x20:
			return Token{}, t.fail(ErrSyntax, "control character in string")
		case c != '\\':
			// Copy a run of plain bytes.
			j := t.i
			for j < len(t.b) && t.b[j] != '"' && t.b[j] != '\\' && t.b[j] >= 0x20 {
				j++
			}
			// Runs end at ASCII bytes, so they never split a UTF-8 sequence.
			if t.opt.Strict && !utf8.Valid(t.b[t.i:j]) {
				return Token{}, t.fail(ErrInvalidUnicode, "string is not valid UTF-8")
			}
			if decode {
				sb.Write(t.b[t.i:j])
			}
			t.i = j
			continue
		}
		// Escape.
		if t.i+1 >= len(t.b) {
			t.i = len(t.b)
			return truncated()
		}
		e := t.b[t.i+1]
		var r rune
		switch e {
		case '"', '\\', '/':
			r = rune(e)
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'u':
			var n int
			var err *Error
			r, n, err = t.unicodeEscape()
			if err != nil {
				if err.Kind == ErrTruncated && decode {
					err.Partial = sb.String()
				}
				return Token{}, err
			}
			if decode {
				sb.WriteRune(r)
			}
			t.i += n
			continue
		default:
			t.i++
			return Token{}, t.fail(ErrSyntax, "invalid escape")
		}
		if decode {
			sb.WriteByte(byte(r))
		}
		t.i += 2
	}
}

// unicodeEscape decodes \uXXXX (and a following low surrogate) at t.i. It
// returns the rune and how many bytes it used.
func (t *Tokenizer) unicodeEscape() (rune, int, *Error) {
	hex := func(at int) (rune, *Error) {
		if at+4 > len(t.b) {
			for j := at; j < len(t.b); j++ {
				if _, ok := hexVal(t.b[j]); !ok {
					t.i = j
					return 0, t.fail(ErrSyntax, "invalid \\u escape")
				}
			}
			t.i = len(t.b)
			return 0, t.eof()
		}
		var r rune
		for j := at; j < at+4; j++ {
			v, ok := hexVal(t.b[j])
			if !ok {
				t.i = j
				return 0, t.fail(ErrSyntax, "invalid \\u escape")
			}
			r = r<<4 | v
		}
		return r, nil
	}
	r, err := hex(t.i + 2)
	if err != nil {
		return 0, 0, err
	}
	if !utf16.IsSurrogate(r) {
		return r, 6, nil
	}
	// A high surrogate must be followed by \u and a low surrogate.
	if j := t.i + 6; r < 0xDC00 {
		switch {
		case j == len(t.b) || (j+1 == len(t.b) && t.b[j] == '\\'):
			// The input ends between the two halves of a pair.
			t.i = len(t.b)
			return 0, 0, t.eof()
		case t.b[j] == '\\' && t.b[j+1] == 'u':
			r2, err := hex(j + 2)
			if err != nil {
				return 0, 0, err
			}
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, 12, nil
			}
		}
	}
	if t.opt.Strict {
		return 0, 0, t.fail(ErrInvalidUnicode, "lone surrogate in \\u escape")
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
