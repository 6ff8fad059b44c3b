package jsonscan

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// A jsontext-based equivalent of Parse and of a lenient token walk, written
// for docs/adr/0006-json-scanner.md: the benchmarks and FuzzJSONTextAgrees
// hold it against this package on the same bytes. It is test code because it
// was not adopted; it builds the same Node tree, with offsets into b.

type jtScanner struct {
	dec    jsontext.Decoder
	in     []byte // the decoder's input: b[off:]
	off    int
	strict bool
}

var (
	jtStrict  = []jsontext.Options{jsontext.AllowDuplicateNames(false), jsontext.AllowInvalidUTF8(false)}
	jtLenient = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}
)

func (j *jtScanner) reset(b []byte, start int, strict bool) {
	j.in, j.off, j.strict = b[start:], start, strict
	opt := jtLenient
	if strict {
		opt = jtStrict
	}
	// A *bytes.Buffer is read in place, not copied (jsontext's fast path).
	j.dec.Reset(bytes.NewBuffer(j.in), opt...)
}

// parse is Parse on jsontext. Duplicate names and invalid UTF-8 are
// jsontext's own checks; the depth bound is ours, checked after each opening
// delimiter.
func (j *jtScanner) parse(b []byte, start int, opt Options) (*Node, int, error) {
	j.reset(b, start, opt.Strict)
	n, err := j.value(opt.MaxDepth)
	if err != nil {
		return nil, 0, err
	}
	return n, j.off + int(j.dec.InputOffset()), nil
}

func (j *jtScanner) value(maxDepth int) (*Node, error) {
	switch j.dec.PeekKind() {
	case '{', '[':
		tok, err := j.dec.ReadToken()
		if err != nil {
			return nil, j.fail(err)
		}
		off := j.off + int(j.dec.InputOffset()) - 1
		if j.dec.StackDepth() > maxDepth {
			return nil, &Error{Kind: ErrTooDeep, Off: off, Msg: "nested too deeply"}
		}
		if tok.Kind() == '{' {
			return j.object(off, maxDepth)
		}
		return j.array(off, maxDepth)
	case 0:
		// PeekKind leaves the error to the next read.
		_, err := j.dec.ReadToken()
		return nil, j.fail(err)
	}
	raw, err := j.dec.ReadValue()
	if err != nil {
		return nil, j.fail(err)
	}
	end := j.off + int(j.dec.InputOffset())
	n := &Node{Off: end - len(raw), End: end}
	switch raw.Kind() {
	case '"':
		s, err := j.unquote(raw)
		if err != nil {
			return nil, err
		}
		n.Kind, n.Str = String, s
	case '0':
		n.Kind, n.Str = Number, string(raw)
	case 't', 'f':
		n.Kind, n.Bool = Bool, raw.Kind() == 't'
	default:
		n.Kind = Null
	}
	return n, nil
}

func (j *jtScanner) object(off, maxDepth int) (*Node, error) {
	n := &Node{Kind: Object, Off: off}
	for {
		switch j.dec.PeekKind() {
		case '}':
			if _, err := j.dec.ReadToken(); err != nil {
				return nil, j.fail(err)
			}
			n.End = j.off + int(j.dec.InputOffset())
			return n, nil
		case '"':
		case 0:
			_, err := j.dec.ReadToken()
			return nil, j.fail(err)
		default:
			// jsontext reads a whole token (ReadValue: a whole value)
			// before it checks that it may stand here, so `{{` and `{n`
			// would be "unexpected EOF" though nothing completes them.
			// The grammar check is ours.
			return nil, &Error{Kind: ErrSyntax, Off: j.next(), Msg: "expected a string key"}
		}
		// ReadValue at a name reads the name, validated (and checked for
		// duplicates) like any string.
		raw, err := j.dec.ReadValue()
		if err != nil {
			return nil, j.fail(err)
		}
		keyOff := j.off + int(j.dec.InputOffset()) - len(raw)
		key, err := j.unquote(raw)
		if err != nil {
			return nil, err
		}
		v, err := j.value(maxDepth)
		if err != nil {
			return nil, err
		}
		n.Members = append(n.Members, Member{Key: key, Off: keyOff, Val: v})
	}
}

func (j *jtScanner) array(off, maxDepth int) (*Node, error) {
	n := &Node{Kind: Array, Off: off}
	for j.dec.PeekKind() != ']' {
		v, err := j.value(maxDepth)
		if err != nil {
			return nil, err
		}
		n.Elems = append(n.Elems, v)
	}
	if _, err := j.dec.ReadToken(); err != nil {
		return nil, j.fail(err)
	}
	n.End = j.off + int(j.dec.InputOffset())
	return n, nil
}

// next is the offset of the next token: past the last one, and the
// whitespace after it.
func (j *jtScanner) next() int {
	b := j.in
	i := int(j.dec.InputOffset())
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r' || b[i] == ',') {
		i++
	}
	return j.off + i
}

// unquote decodes a string the decoder has validated. AppendUnquote itself
// always reports invalid UTF-8 (after replacing it), which lenient reading
// ignores as the decoder did.
func (j *jtScanner) unquote(raw jsontext.Value) (string, error) {
	s, err := jsontext.AppendUnquote(nil, raw)
	if err != nil && (j.strict || !badUnicode(err)) {
		return "", j.fail(err)
	}
	return string(s), nil
}

// walk reads one value token by token, decoding nothing: the envelope
// probe's work. It returns the offset past the value.
func (j *jtScanner) walk(b []byte, start int, opt Options) (int, error) {
	j.reset(b, start, opt.Strict)
	for {
		// As in object: a name position holding something else is ours to
		// refuse, or jsontext may call it the end of the input.
		if d := j.dec.StackDepth(); d > 0 {
			if k, n := j.dec.StackIndex(d); k == '{' && n%2 == 0 {
				if p := j.dec.PeekKind(); p != '"' && p != '}' && p != 0 {
					return 0, &Error{Kind: ErrSyntax, Off: j.next(), Msg: "expected a string key"}
				}
			}
		}
		tok, err := j.dec.ReadToken()
		if err != nil {
			return 0, j.fail(err)
		}
		if k := tok.Kind(); (k == '{' || k == '[') && j.dec.StackDepth() > opt.MaxDepth {
			return 0, &Error{Kind: ErrTooDeep, Off: j.off + int(j.dec.InputOffset()) - 1, Msg: "nested too deeply"}
		}
		if j.dec.StackDepth() == 0 {
			return j.off + int(j.dec.InputOffset()), nil
		}
	}
}

// fail classifies a jsontext error as this package's. jsontext exports
// sentinels for the end of the input and for duplicate names only: invalid
// UTF-8 and lone surrogates are told from other syntax errors by the error's
// text alone.
func (j *jtScanner) fail(err error) *Error {
	e := &Error{Kind: ErrSyntax, Off: -1, Msg: err.Error()}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		e.Off = j.off + int(se.ByteOffset)
	}
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		// io.EOF: nothing but whitespace before the end.
		e.Kind = ErrTruncated
	case errors.Is(err, jsontext.ErrDuplicateName):
		e.Kind = ErrDuplicateName
	case badUnicode(err):
		e.Kind = ErrInvalidUnicode
	}
	return e
}

func badUnicode(err error) bool {
	return strings.Contains(err.Error(), "invalid UTF-8") || strings.Contains(err.Error(), "invalid surrogate pair")
}
