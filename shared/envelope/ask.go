package envelope

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/envelope/internal/jsonscan"
	"github.com/parleyhq/parley/shared/message"
)

// Ask is Parley's question extension, next type "ask":
//
//	{"type": "ask", "request": {"message": "Which seat?", "requestedSchema": {
//	    "type": "object",
//	    "properties": {"seat": {"type": "string", "oneOf": [
//	        {"const": "12A", "title": "Window"}, {"const": "12C", "title": "Aisle"}]}},
//	    "required": ["seat"]}}}
//
// requestedSchema is an MCP elicitation form: a flat object of primitive
// fields. Parsing keeps the agent's property order. The question itself is
// the neutral message.Question (Message non-blank; Fields in property order,
// with ids "q0", "q1", …), which adapters render; only the schema is the
// agent's wire form.
//
// Each property shape maps to one message.FieldKind:
//
//   - {"type": "string"}, optional minLength, maxLength, format: FieldText;
//   - {"type": "string"} with "oneOf" [{const, title}], or with "enum" (and
//     optionally the legacy "enumNames"): FieldSingleSelect;
//   - {"type": "number"} and {"type": "integer"}, optional minimum, maximum:
//     FieldNumber and FieldInteger;
//   - {"type": "boolean"}: FieldBoolean;
//   - {"type": "array"} whose "items" has "anyOf" [{const, title}] or is
//     {"type": "string", "enum": [...]}, optional minItems, maxItems:
//     FieldMultiSelect.
type Ask struct {
	message.Question
	// Schema is the agent's requestedSchema, compacted, as received.
	Schema json.RawMessage `json:"schema,omitempty"`
}

// Form limits: generous for a chat question, small enough to render.
const (
	maxFields    = 20
	maxOptions   = 25
	maxKeyLen    = 64
	maxTitle     = 200
	maxDesc      = 1000
	maxOptionLen = 200
)

func validateAsk(n *jsonscan.Node, body []byte) (*Ask, *ParseError) {
	const path = "next.request"
	if n.Kind != jsonscan.Object {
		return nil, wrongType(n, path, jsonscan.Object)
	}
	if pe := allowKeys(n, path, "message", "requestedSchema"); pe != nil {
		return nil, pe
	}
	msg, pe := requiredString(n, path, "message")
	if pe != nil {
		return nil, pe
	}
	if strings.TrimSpace(msg.Str) == "" {
		return nil, perr(ReasonBadAsk, path+".message", msg.Off, "message is empty or only whitespace")
	}
	if pe := visible(msg, path+".message"); pe != nil {
		return nil, pe
	}
	s := n.Get("requestedSchema")
	if s == nil {
		return nil, perr(ReasonMissingField, path+".requestedSchema", n.Off, "requestedSchema is required")
	}
	fields, pe := validateForm(s, path+".requestedSchema")
	if pe != nil {
		return nil, pe
	}
	return &Ask{Question: message.Question{Message: msg.Str, Fields: fields}, Schema: compact(body[s.Off:s.End])}, nil
}

func validateForm(s *jsonscan.Node, path string) ([]message.Field, *ParseError) {
	if s.Kind != jsonscan.Object {
		return nil, wrongType(s, path, jsonscan.Object)
	}
	if pe := allowKeys(s, path, "$schema", "type", "properties", "required"); pe != nil {
		return nil, pe
	}
	if v := s.Get("$schema"); v != nil && v.Kind != jsonscan.String {
		return nil, wrongType(v, path+".$schema", jsonscan.String)
	}
	t, pe := requiredString(s, path, "type")
	if pe != nil {
		return nil, pe
	}
	if t.Str != "object" {
		return nil, perr(ReasonBadAsk, path+".type", t.Off, `type must be "object"`)
	}
	props := s.Get("properties")
	switch {
	case props == nil:
		return nil, perr(ReasonMissingField, path+".properties", s.Off, "properties is required")
	case props.Kind != jsonscan.Object:
		return nil, wrongType(props, path+".properties", jsonscan.Object)
	case len(props.Members) == 0:
		return nil, perr(ReasonBadAsk, path+".properties", props.Off, "a form needs at least one property")
	case len(props.Members) > maxFields:
		return nil, perr(ReasonBadAsk, path+".properties", props.Off, "a form has at most "+strconv.Itoa(maxFields)+" properties")
	}
	fields := make([]message.Field, 0, len(props.Members))
	for i, m := range props.Members {
		ppath := joinPath(path+".properties", m.Key)
		if m.Key == "" || len(m.Key) > maxKeyLen || strings.TrimSpace(m.Key) == "" || strings.IndexFunc(m.Key, unicode.IsControl) >= 0 {
			return nil, perr(ReasonBadAsk, ppath, m.Off, "property names are 1-64 bytes, not blank, without control characters")
		}
		f, pe := validateField(m.Val, ppath)
		if pe != nil {
			return nil, pe
		}
		f.ID = "q" + strconv.Itoa(i)
		f.Key = m.Key
		fields = append(fields, f)
	}
	if req := s.Get("required"); req != nil {
		if req.Kind != jsonscan.Array {
			return nil, wrongType(req, path+".required", jsonscan.Array)
		}
		for i, e := range req.Elems {
			epath := path + ".required[" + strconv.Itoa(i) + "]"
			if e.Kind != jsonscan.String {
				return nil, wrongType(e, epath, jsonscan.String)
			}
			k := -1
			for j := range fields {
				if fields[j].Key == e.Str {
					k = j
				}
			}
			switch {
			case k < 0:
				return nil, perr(ReasonBadAsk, epath, e.Off, "required names a property that does not exist")
			case fields[k].Required:
				return nil, perr(ReasonBadAsk, epath, e.Off, "required names a property twice")
			}
			fields[k].Required = true
		}
	}
	return fields, nil
}

func validateField(n *jsonscan.Node, path string) (message.Field, *ParseError) {
	var f message.Field
	if n.Kind != jsonscan.Object {
		return f, wrongType(n, path, jsonscan.Object)
	}
	t, pe := requiredString(n, path, "type")
	if pe != nil {
		return f, pe
	}
	common := []string{"type", "title", "description", "default"}
	switch t.Str {
	case "string":
		switch {
		case n.Get("oneOf") != nil:
			f.Kind = message.FieldSingleSelect
			pe = allowKeys(n, path, append(common, "oneOf")...)
			if pe == nil {
				f.Options, pe = titledOptions(n.Get("oneOf"), path+".oneOf")
			}
		case n.Get("enum") != nil:
			f.Kind = message.FieldSingleSelect
			pe = allowKeys(n, path, append(common, "enum", "enumNames")...)
			if pe == nil {
				f.Options, pe = enumOptions(n, path)
			}
		default:
			f.Kind = message.FieldText
			pe = allowKeys(n, path, append(common, "minLength", "maxLength", "format")...)
			if pe == nil {
				pe = textConstraints(n, path, &f)
			}
		}
	case "number", "integer":
		f.Kind = message.FieldNumber
		if t.Str == "integer" {
			f.Kind = message.FieldInteger
		}
		pe = allowKeys(n, path, append(common, "minimum", "maximum")...)
		if pe == nil {
			pe = numberConstraints(n, path, &f)
		}
	case "boolean":
		f.Kind = message.FieldBoolean
		pe = allowKeys(n, path, common...)
	case "array":
		f.Kind = message.FieldMultiSelect
		pe = allowKeys(n, path, append(common, "items", "minItems", "maxItems")...)
		if pe == nil {
			pe = multiSelect(n, path, &f)
		}
	default:
		return f, perr(ReasonBadAsk, path+".type", t.Off, "type must be string, number, integer, boolean or array")
	}
	if pe != nil {
		return f, pe
	}
	if f.Title, pe = optionalText(n, path, "title", maxTitle); pe != nil {
		return f, pe
	}
	if f.Description, pe = optionalText(n, path, "description", maxDesc); pe != nil {
		return f, pe
	}
	if d := n.Get("default"); d != nil {
		if f.Default, pe = fieldDefault(d, path+".default", &f); pe != nil {
			return f, pe
		}
	}
	return f, nil
}

// optionalText reads a shown string member: non-blank when present, at most
// limit code points, no envelope JSON.
func optionalText(n *jsonscan.Node, path, key string, limit int) (string, *ParseError) {
	v := n.Get(key)
	if v == nil {
		return "", nil
	}
	p := joinPath(path, key)
	if v.Kind != jsonscan.String {
		return "", wrongType(v, p, jsonscan.String)
	}
	if strings.TrimSpace(v.Str) == "" {
		return "", perr(ReasonBadAsk, p, v.Off, key+" is blank")
	}
	if utf8.RuneCountInString(v.Str) > limit {
		return "", perr(ReasonBadAsk, p, v.Off, key+" is longer than "+strconv.Itoa(limit)+" characters")
	}
	if pe := visible(v, p); pe != nil {
		return "", pe
	}
	return v.Str, nil
}

// titledOptions reads [{"const": …, "title": …}, …].
func titledOptions(n *jsonscan.Node, path string) ([]message.Option, *ParseError) {
	if n.Kind != jsonscan.Array {
		return nil, wrongType(n, path, jsonscan.Array)
	}
	if pe := optionCount(n, path); pe != nil {
		return nil, pe
	}
	opts := make([]message.Option, 0, len(n.Elems))
	for i, e := range n.Elems {
		epath := path + "[" + strconv.Itoa(i) + "]"
		if e.Kind != jsonscan.Object {
			return nil, wrongType(e, epath, jsonscan.Object)
		}
		if pe := allowKeys(e, epath, "const", "title"); pe != nil {
			return nil, pe
		}
		c, pe := requiredString(e, epath, "const")
		if pe != nil {
			return nil, pe
		}
		if _, pe := requiredString(e, epath, "title"); pe != nil {
			return nil, pe
		}
		title, pe := optionalText(e, epath, "title", maxOptionLen)
		if pe != nil {
			return nil, pe
		}
		opts = append(opts, message.Option{Value: c.Str, Title: title})
		if pe := checkOption(opts, c, epath+".const"); pe != nil {
			return nil, pe
		}
	}
	return opts, checkOptions(n, path, opts)
}

// enumOptions reads "enum" and the legacy "enumNames" of n.
func enumOptions(n *jsonscan.Node, path string) ([]message.Option, *ParseError) {
	en := n.Get("enum")
	epath := path + ".enum"
	if en.Kind != jsonscan.Array {
		return nil, wrongType(en, epath, jsonscan.Array)
	}
	if pe := optionCount(en, epath); pe != nil {
		return nil, pe
	}
	opts := make([]message.Option, 0, len(en.Elems))
	for i, e := range en.Elems {
		ipath := epath + "[" + strconv.Itoa(i) + "]"
		if e.Kind != jsonscan.String {
			return nil, wrongType(e, ipath, jsonscan.String)
		}
		opts = append(opts, message.Option{Value: e.Str})
		if pe := checkOption(opts, e, ipath); pe != nil {
			return nil, pe
		}
	}
	if names := n.Get("enumNames"); names != nil {
		npath := path + ".enumNames"
		if names.Kind != jsonscan.Array {
			return nil, wrongType(names, npath, jsonscan.Array)
		}
		if len(names.Elems) != len(opts) {
			return nil, perr(ReasonBadAsk, npath, names.Off, "enumNames must have one name per enum value")
		}
		for i, e := range names.Elems {
			ipath := npath + "[" + strconv.Itoa(i) + "]"
			if e.Kind != jsonscan.String {
				return nil, wrongType(e, ipath, jsonscan.String)
			}
			if strings.TrimSpace(e.Str) == "" || utf8.RuneCountInString(e.Str) > maxOptionLen {
				return nil, perr(ReasonBadAsk, ipath, e.Off, "option titles are 1-200 characters, not blank")
			}
			if pe := visible(e, ipath); pe != nil {
				return nil, pe
			}
			opts[i].Title = e.Str
		}
	}
	return opts, checkOptions(en, epath, opts)
}

// checkOption validates the option just appended to opts.
func checkOption(opts []message.Option, v *jsonscan.Node, path string) *ParseError {
	last := opts[len(opts)-1]
	if strings.TrimSpace(last.Value) == "" || len(last.Value) > maxOptionLen {
		return perr(ReasonBadAsk, path, v.Off, "option values are 1-200 bytes, not blank")
	}
	for _, o := range opts[:len(opts)-1] {
		if o.Value == last.Value {
			return perr(ReasonBadAsk, path, v.Off, "option values must be unique")
		}
	}
	return nil
}

// optionCount bounds a list of options before its entries are checked
// against each other.
func optionCount(n *jsonscan.Node, path string) *ParseError {
	switch {
	case len(n.Elems) == 0:
		return perr(ReasonBadAsk, path, n.Off, "a select needs at least one option")
	case len(n.Elems) > maxOptions:
		return perr(ReasonBadAsk, path, n.Off, "a select has at most "+strconv.Itoa(maxOptions)+" options")
	}
	return nil
}

// checkOptions validates a complete option list: unique titles (answers
// are matched by value or by title).
func checkOptions(n *jsonscan.Node, path string, opts []message.Option) *ParseError {
	for i, o := range opts {
		for _, p := range opts[:i] {
			if o.Title != "" && o.Title == p.Title {
				return perr(ReasonBadAsk, path, n.Off, "option titles must be unique")
			}
		}
	}
	return nil
}

func textConstraints(n *jsonscan.Node, path string, f *message.Field) *ParseError {
	var pe *ParseError
	if f.MinLength, pe = optionalCount(n, path, "minLength"); pe != nil {
		return pe
	}
	if f.MaxLength, pe = optionalCount(n, path, "maxLength"); pe != nil {
		return pe
	}
	if f.MinLength != nil && f.MaxLength != nil && *f.MinLength > *f.MaxLength {
		return perr(ReasonBadAsk, path+".minLength", n.Get("minLength").Off, "minLength is over maxLength")
	}
	if v := n.Get("format"); v != nil {
		if v.Kind != jsonscan.String {
			return wrongType(v, path+".format", jsonscan.String)
		}
		switch v.Str {
		case "email", "uri", "date", "date-time":
			f.Format = v.Str
		default:
			return perr(ReasonBadAsk, path+".format", v.Off, "format must be email, uri, date or date-time")
		}
	}
	return nil
}

func numberConstraints(n *jsonscan.Node, path string, f *message.Field) *ParseError {
	for _, k := range []string{"minimum", "maximum"} {
		v := n.Get(k)
		if v == nil {
			continue
		}
		x, ok := floatValue(v)
		if !ok || math.IsInf(x, 0) {
			return wrongType(v, path+"."+k, jsonscan.Number)
		}
		if k == "minimum" {
			f.Minimum = &x
		} else {
			f.Maximum = &x
		}
	}
	if f.Minimum != nil && f.Maximum != nil && *f.Minimum > *f.Maximum {
		return perr(ReasonBadAsk, path+".minimum", n.Get("minimum").Off, "minimum is over maximum")
	}
	return nil
}

func multiSelect(n *jsonscan.Node, path string, f *message.Field) *ParseError {
	items := n.Get("items")
	ipath := path + ".items"
	if items == nil {
		return perr(ReasonMissingField, ipath, n.Off, "items is required for type array")
	}
	if items.Kind != jsonscan.Object {
		return wrongType(items, ipath, jsonscan.Object)
	}
	var pe *ParseError
	if items.Get("anyOf") != nil {
		if pe = allowKeys(items, ipath, "type", "anyOf"); pe != nil {
			return pe
		}
		if t := items.Get("type"); t != nil && (t.Kind != jsonscan.String || t.Str != "string") {
			return perr(ReasonBadAsk, ipath+".type", t.Off, `items type must be "string"`)
		}
		f.Options, pe = titledOptions(items.Get("anyOf"), ipath+".anyOf")
	} else {
		if pe = allowKeys(items, ipath, "type", "enum"); pe != nil {
			return pe
		}
		var t *jsonscan.Node
		if t, pe = requiredString(items, ipath, "type"); pe != nil {
			return pe
		}
		if t.Str != "string" {
			return perr(ReasonBadAsk, ipath+".type", t.Off, `items type must be "string"`)
		}
		if items.Get("enum") == nil {
			return perr(ReasonMissingField, ipath+".enum", items.Off, "items needs anyOf or enum")
		}
		f.Options, pe = enumOptions(items, ipath)
	}
	if pe != nil {
		return pe
	}
	if f.MinItems, pe = optionalCount(n, path, "minItems"); pe != nil {
		return pe
	}
	if f.MaxItems, pe = optionalCount(n, path, "maxItems"); pe != nil {
		return pe
	}
	switch {
	case f.MinItems != nil && f.MaxItems != nil && *f.MinItems > *f.MaxItems:
		return perr(ReasonBadAsk, path+".minItems", n.Get("minItems").Off, "minItems is over maxItems")
	case f.MinItems != nil && *f.MinItems > len(f.Options):
		return perr(ReasonBadAsk, path+".minItems", n.Get("minItems").Off, "minItems is over the number of options")
	}
	return nil
}

// optionalCount reads a non-negative integer member.
func optionalCount(n *jsonscan.Node, path, key string) (*int, *ParseError) {
	v := n.Get(key)
	if v == nil {
		return nil, nil
	}
	x, ok := intValue(v)
	if !ok || x < 0 || x > math.MaxInt32 {
		return nil, perr(ReasonBadAsk, joinPath(path, key), v.Off, key+" must be a non-negative integer")
	}
	c := int(x)
	return &c, nil
}

func fieldDefault(d *jsonscan.Node, path string, f *message.Field) (any, *ParseError) {
	isOption := func(s string) bool {
		for _, o := range f.Options {
			if o.Value == s {
				return true
			}
		}
		return false
	}
	switch f.Kind {
	case message.FieldText:
		if d.Kind != jsonscan.String {
			return nil, wrongType(d, path, jsonscan.String)
		}
		if pe := visible(d, path); pe != nil {
			return nil, pe
		}
		return d.Str, nil
	case message.FieldSingleSelect:
		if d.Kind != jsonscan.String {
			return nil, wrongType(d, path, jsonscan.String)
		}
		if !isOption(d.Str) {
			return nil, perr(ReasonBadAsk, path, d.Off, "default is not one of the options")
		}
		return d.Str, nil
	case message.FieldNumber, message.FieldInteger:
		x, ok := floatValue(d)
		if !ok || math.IsInf(x, 0) {
			return nil, wrongType(d, path, jsonscan.Number)
		}
		if f.Kind == message.FieldInteger && x != math.Trunc(x) {
			return nil, perr(ReasonBadAsk, path, d.Off, "default of an integer field must be an integer")
		}
		return x, nil
	case message.FieldBoolean:
		if d.Kind != jsonscan.Bool {
			return nil, wrongType(d, path, jsonscan.Bool)
		}
		return d.Bool, nil
	}
	// FieldMultiSelect
	if d.Kind != jsonscan.Array {
		return nil, wrongType(d, path, jsonscan.Array)
	}
	out := make([]string, 0, len(d.Elems))
	for i, e := range d.Elems {
		if e.Kind != jsonscan.String || !isOption(e.Str) {
			return nil, perr(ReasonBadAsk, path+"["+strconv.Itoa(i)+"]", e.Off, "default holds a value that is not an option")
		}
		for _, s := range out {
			if s == e.Str {
				return nil, perr(ReasonBadAsk, path+"["+strconv.Itoa(i)+"]", e.Off, "default repeats a value")
			}
		}
		out = append(out, e.Str)
	}
	return out, nil
}
