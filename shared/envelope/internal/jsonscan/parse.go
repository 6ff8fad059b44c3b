package jsonscan

// Kind is a JSON value's kind.
type Kind uint8

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// String names the kind as an error message would ("boolean", "object").
func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case Number:
		return "number"
	case String:
		return "string"
	case Array:
		return "array"
	}
	return "object"
}

// Node is one parsed value: b[Off:End] of the input.
type Node struct {
	Kind     Kind
	Off, End int
	// Str is a string's decoded value, or a number's literal as written.
	Str  string
	Bool bool
	// Members are an object's members, in document order.
	Members []Member
	// Elems are an array's elements.
	Elems []*Node
}

// Member is one member of an object.
type Member struct {
	Key string
	// Off is the offset of the member's name (its opening quote).
	Off int
	Val *Node
}

// Get returns the member named key, or nil. Parse in strict mode guarantees
// there is at most one.
func (n *Node) Get(key string) *Node {
	for i := range n.Members {
		if n.Members[i].Key == key {
			return n.Members[i].Val
		}
	}
	return nil
}

// Parse reads the value starting at b[start] (after any whitespace) into a
// tree and returns it with the offset just past it; what follows the value
// is the caller's. The error is an *Error whose Path leads to the problem.
func Parse(b []byte, start int, opt Options) (*Node, int, error) {
	p := parser{strict: opt.Strict}
	p.t.Reset(b, start, opt)
	tok, err := p.next()
	if err != nil {
		return nil, 0, p.fail(err, false)
	}
	n, verr := p.value(tok)
	if verr != nil {
		return nil, 0, verr
	}
	return n, p.t.Offset(), nil
}

type parser struct {
	t      Tokenizer
	strict bool
	// path leads to the value being read: the member or element of every
	// open container.
	path []PathElem
}

func (p *parser) next() (Token, *Error) { return p.t.next(DecodeNames | DecodeStrings) }

// fail gives a tokenizer error its path. The innermost step (pending) counts
// only when the problem came at the value it leads to, not at a name, ':' or
// ',' before or after it.
func (p *parser) fail(e *Error, pending bool) *Error {
	path := p.path
	if pending && !e.AtValue {
		path = path[:len(path)-1]
	}
	e.Path = append([]PathElem(nil), path...)
	return e
}

func (p *parser) value(tok Token) (*Node, error) {
	switch tok.Kind {
	case TokObjectStart:
		return p.object(tok)
	case TokArrayStart:
		return p.array(tok)
	case TokString:
		return &Node{Kind: String, Off: tok.Off, End: tok.End, Str: p.t.Text()}, nil
	case TokNumber:
		return &Node{Kind: Number, Off: tok.Off, End: tok.End, Str: string(p.t.b[tok.Off:tok.End])}, nil
	case TokTrue, TokFalse:
		return &Node{Kind: Bool, Off: tok.Off, End: tok.End, Bool: tok.Kind == TokTrue}, nil
	}
	return &Node{Kind: Null, Off: tok.Off, End: tok.End}, nil
}

func (p *parser) object(open Token) (*Node, error) {
	n := &Node{Kind: Object, Off: open.Off}
	var seen map[string]struct{}
	for {
		name, err := p.next()
		if err != nil {
			return nil, p.fail(err, false)
		}
		if name.Kind == TokObjectEnd {
			n.End = name.End
			return n, nil
		}
		key := p.t.Text()
		p.path = append(p.path, PathElem{Key: key, Index: -1})
		if p.strict && dupKey(n.Members, key, &seen) {
			return nil, p.fail(&Error{Kind: ErrDuplicateName, Off: name.Off, Msg: "duplicate key", Token: TokName, TokenOff: name.Off}, false)
		}
		tok, err := p.next()
		if err != nil {
			return nil, p.fail(err, true)
		}
		v, verr := p.value(tok)
		if verr != nil {
			return nil, verr
		}
		p.path = p.path[:len(p.path)-1]
		n.Members = append(n.Members, Member{Key: key, Off: name.Off, Val: v})
	}
}

func (p *parser) array(open Token) (*Node, error) {
	n := &Node{Kind: Array, Off: open.Off}
	for idx := 0; ; idx++ {
		p.path = append(p.path, PathElem{Index: idx})
		tok, err := p.next()
		if err != nil {
			return nil, p.fail(err, true)
		}
		if tok.Kind == TokArrayEnd {
			p.path = p.path[:len(p.path)-1]
			n.End = tok.End
			return n, nil
		}
		v, verr := p.value(tok)
		if verr != nil {
			return nil, verr
		}
		p.path = p.path[:len(p.path)-1]
		n.Elems = append(n.Elems, v)
	}
}

// dupKey reports whether key is already among members; past a few members it
// switches to a set so a large object stays linear.
func dupKey(members []Member, key string, seen *map[string]struct{}) bool {
	if len(members) < 8 {
		for i := range members {
			if members[i].Key == key {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]struct{}, 2*len(members))
		for i := range members {
			(*seen)[members[i].Key] = struct{}{}
		}
	}
	if _, ok := (*seen)[key]; ok {
		return true
	}
	(*seen)[key] = struct{}{}
	return false
}
