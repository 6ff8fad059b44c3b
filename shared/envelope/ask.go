package envelope

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
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
// fields. Parsing keeps the agent's property order.
type Ask struct {
	// Message is the question shown to people (non-blank).
	Message string
	// Fields are the form's fields, in the agent's property order.
	Fields []Field
	// Schema is the agent's requestedSchema, compacted, as received.
	Schema json.RawMessage
}

// FieldKind is the kind of input a Field asks for.
type FieldKind string

const (
	// FieldText: {"type": "string"}, with optional minLength, maxLength, format.
	FieldText FieldKind = "text"
	// FieldNumber: {"type": "number"}, optional minimum, maximum.
	FieldNumber FieldKind = "number"
	// FieldInteger: {"type": "integer"}, optional minimum, maximum.
	FieldInteger FieldKind = "integer"
	// FieldBoolean: {"type": "boolean"}.
	FieldBoolean FieldKind = "boolean"
	// FieldSingleSelect: {"type": "string"} with "oneOf" [{const, title}],
	// or with "enum" (and optionally the legacy "enumNames").
	FieldSingleSelect FieldKind = "single_select"
	// FieldMultiSelect: {"type": "array"} whose "items" has "anyOf"
	// [{const, title}] or is {"type": "string", "enum": [...]}; optional
	// minItems, maxItems.
	FieldMultiSelect FieldKind = "multi_select"
)

// Field is one field of an ask form.
type Field struct {
	// ID is Parley's short id, shown to people: "q0", "q1", … in property
	// order.
	ID string
	// Key is the agent's property name. It stays internal: answers go back
	// to the agent under it.
	Key         string
	Kind        FieldKind
	Title       string
	Description string
	Required    bool
	// Options are a select's choices, in the agent's order.
	Options []Option
	// MinLength, MaxLength and Format constrain FieldText (Format is "",
	// "email", "uri", "date" or "date-time").
	MinLength, MaxLength *int
	Format               string
	// Minimum and Maximum constrain FieldNumber and FieldInteger.
	Minimum, Maximum *float64
	// MinItems and MaxItems constrain FieldMultiSelect.
	MinItems, MaxItems *int
	// Default is the agent's default, nil when none: a string (text, single
	// select), a float64 (number, integer), a bool, or a []string (multi
	// select).
	Default any
}

// Option is one choice of a select field.
type Option struct {
	// Value is what the agent receives ("const", or the "enum" entry).
	Value string
	// Title is the label people see; empty for an untitled enum, which
	// shows Value.
	Title string
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

func validateAsk(n *node, body []byte) (*Ask, *ParseError) {
	const path = "next.request"
	if n.kind != kindObject {
		return nil, wrongType(n, path, kindObject)
	}
	if pe := allowKeys(n, path, "message", "requestedSchema"); pe != nil {
		return nil, pe
	}
	msg, pe := requiredString(n, path, "message")
	if pe != nil {
		return nil, pe
	}
	if strings.TrimSpace(msg.str) == "" {
		return nil, perr(ReasonBadAsk, path+".message", msg.off, "message is empty or only whitespace")
	}
	if pe := visible(msg, path+".message"); pe != nil {
		return nil, pe
	}
	s := n.get("requestedSchema")
	if s == nil {
		return nil, perr(ReasonMissingField, path+".requestedSchema", n.off, "requestedSchema is required")
	}
	fields, pe := validateForm(s, path+".requestedSchema")
	if pe != nil {
		return nil, pe
	}
	return &Ask{Message: msg.str, Fields: fields, Schema: compact(body[s.off:s.end])}, nil
}

func validateForm(s *node, path string) ([]Field, *ParseError) {
	if s.kind != kindObject {
		return nil, wrongType(s, path, kindObject)
	}
	if pe := allowKeys(s, path, "$schema", "type", "properties", "required"); pe != nil {
		return nil, pe
	}
	if v := s.get("$schema"); v != nil && v.kind != kindString {
		return nil, wrongType(v, path+".$schema", kindString)
	}
	t, pe := requiredString(s, path, "type")
	if pe != nil {
		return nil, pe
	}
	if t.str != "object" {
		return nil, perr(ReasonBadAsk, path+".type", t.off, `type must be "object"`)
	}
	props := s.get("properties")
	switch {
	case props == nil:
		return nil, perr(ReasonMissingField, path+".properties", s.off, "properties is required")
	case props.kind != kindObject:
		return nil, wrongType(props, path+".properties", kindObject)
	case len(props.members) == 0:
		return nil, perr(ReasonBadAsk, path+".properties", props.off, "a form needs at least one property")
	case len(props.members) > maxFields:
		return nil, perr(ReasonBadAsk, path+".properties", props.off, "a form has at most "+strconv.Itoa(maxFields)+" properties")
	}
	fields := make([]Field, 0, len(props.members))
	for i, m := range props.members {
		ppath := joinPath(path+".properties", m.key)
		if m.key == "" || len(m.key) > maxKeyLen || strings.TrimSpace(m.key) == "" || strings.IndexFunc(m.key, unicode.IsControl) >= 0 {
			return nil, perr(ReasonBadAsk, ppath, m.off, "property names are 1-64 bytes, not blank, without control characters")
		}
		f, pe := validateField(m.val, ppath)
		if pe != nil {
			return nil, pe
		}
		f.ID = "q" + strconv.Itoa(i)
		f.Key = m.key
		fields = append(fields, f)
	}
	if req := s.get("required"); req != nil {
		if req.kind != kindArray {
			return nil, wrongType(req, path+".required", kindArray)
		}
		for i, e := range req.elems {
			epath := path + ".required[" + strconv.Itoa(i) + "]"
			if e.kind != kindString {
				return nil, wrongType(e, epath, kindString)
			}
			k := -1
			for j := range fields {
				if fields[j].Key == e.str {
					k = j
				}
			}
			switch {
			case k < 0:
				return nil, perr(ReasonBadAsk, epath, e.off, "required names a property that does not exist")
			case fields[k].Required:
				return nil, perr(ReasonBadAsk, epath, e.off, "required names a property twice")
			}
			fields[k].Required = true
		}
	}
	return fields, nil
}

func validateField(n *node, path string) (Field, *ParseError) {
	var f Field
	if n.kind != kindObject {
		return f, wrongType(n, path, kindObject)
	}
	t, pe := requiredString(n, path, "type")
	if pe != nil {
		return f, pe
	}
	common := []string{"type", "title", "description", "default"}
	switch t.str {
	case "string":
		switch {
		case n.get("oneOf") != nil:
			f.Kind = FieldSingleSelect
			pe = allowKeys(n, path, append(common, "oneOf")...)
			if pe == nil {
				f.Options, pe = titledOptions(n.get("oneOf"), path+".oneOf")
			}
		case n.get("enum") != nil:
			f.Kind = FieldSingleSelect
			pe = allowKeys(n, path, append(common, "enum", "enumNames")...)
			if pe == nil {
				f.Options, pe = enumOptions(n, path)
			}
		default:
			f.Kind = FieldText
			pe = allowKeys(n, path, append(common, "minLength", "maxLength", "format")...)
			if pe == nil {
				pe = textConstraints(n, path, &f)
			}
		}
	case "number", "integer":
		f.Kind = FieldNumber
		if t.str == "integer" {
			f.Kind = FieldInteger
		}
		pe = allowKeys(n, path, append(common, "minimum", "maximum")...)
		if pe == nil {
			pe = numberConstraints(n, path, &f)
		}
	case "boolean":
		f.Kind = FieldBoolean
		pe = allowKeys(n, path, common...)
	case "array":
		f.Kind = FieldMultiSelect
		pe = allowKeys(n, path, append(common, "items", "minItems", "maxItems")...)
		if pe == nil {
			pe = multiSelect(n, path, &f)
		}
	default:
		return f, perr(ReasonBadAsk, path+".type", t.off, "type must be string, number, integer, boolean or array")
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
	if d := n.get("default"); d != nil {
		if f.Default, pe = fieldDefault(d, path+".default", &f); pe != nil {
			return f, pe
		}
	}
	return f, nil
}

// optionalText reads a shown string member: non-blank when present, at most
// limit code points, no envelope JSON.
func optionalText(n *node, path, key string, limit int) (string, *ParseError) {
	v := n.get(key)
	if v == nil {
		return "", nil
	}
	p := joinPath(path, key)
	if v.kind != kindString {
		return "", wrongType(v, p, kindString)
	}
	if strings.TrimSpace(v.str) == "" {
		return "", perr(ReasonBadAsk, p, v.off, key+" is blank")
	}
	if utf8.RuneCountInString(v.str) > limit {
		return "", perr(ReasonBadAsk, p, v.off, key+" is longer than "+strconv.Itoa(limit)+" characters")
	}
	if pe := visible(v, p); pe != nil {
		return "", pe
	}
	return v.str, nil
}

// titledOptions reads [{"const": …, "title": …}, …].
func titledOptions(n *node, path string) ([]Option, *ParseError) {
	if n.kind != kindArray {
		return nil, wrongType(n, path, kindArray)
	}
	if pe := optionCount(n, path); pe != nil {
		return nil, pe
	}
	opts := make([]Option, 0, len(n.elems))
	for i, e := range n.elems {
		epath := path + "[" + strconv.Itoa(i) + "]"
		if e.kind != kindObject {
			return nil, wrongType(e, epath, kindObject)
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
		opts = append(opts, Option{Value: c.str, Title: title})
		if pe := checkOption(opts, c, epath+".const"); pe != nil {
			return nil, pe
		}
	}
	return opts, checkOptions(n, path, opts)
}

// enumOptions reads "enum" and the legacy "enumNames" of n.
func enumOptions(n *node, path string) ([]Option, *ParseError) {
	en := n.get("enum")
	epath := path + ".enum"
	if en.kind != kindArray {
		return nil, wrongType(en, epath, kindArray)
	}
	if pe := optionCount(en, epath); pe != nil {
		return nil, pe
	}
	opts := make([]Option, 0, len(en.elems))
	for i, e := range en.elems {
		ipath := epath + "[" + strconv.Itoa(i) + "]"
		if e.kind != kindString {
			return nil, wrongType(e, ipath, kindString)
		}
		opts = append(opts, Option{Value: e.str})
		if pe := checkOption(opts, e, ipath); pe != nil {
			return nil, pe
		}
	}
	if names := n.get("enumNames"); names != nil {
		npath := path + ".enumNames"
		if names.kind != kindArray {
			return nil, wrongType(names, npath, kindArray)
		}
		if len(names.elems) != len(opts) {
			return nil, perr(ReasonBadAsk, npath, names.off, "enumNames must have one name per enum value")
		}
		for i, e := range names.elems {
			ipath := npath + "[" + strconv.Itoa(i) + "]"
			if e.kind != kindString {
				return nil, wrongType(e, ipath, kindString)
			}
			if strings.TrimSpace(e.str) == "" || utf8.RuneCountInString(e.str) > maxOptionLen {
				return nil, perr(ReasonBadAsk, ipath, e.off, "option titles are 1-200 characters, not blank")
			}
			if pe := visible(e, ipath); pe != nil {
				return nil, pe
			}
			opts[i].Title = e.str
		}
	}
	return opts, checkOptions(en, epath, opts)
}

// checkOption validates the option just appended to opts.
func checkOption(opts []Option, v *node, path string) *ParseError {
	last := opts[len(opts)-1]
	if strings.TrimSpace(last.Value) == "" || len(last.Value) > maxOptionLen {
		return perr(ReasonBadAsk, path, v.off, "option values are 1-200 bytes, not blank")
	}
	for _, o := range opts[:len(opts)-1] {
		if o.Value == last.Value {
			return perr(ReasonBadAsk, path, v.off, "option values must be unique")
		}
	}
	return nil
}

// optionCount bounds a list of options before its entries are checked
// against each other.
func optionCount(n *node, path string) *ParseError {
	switch {
	case len(n.elems) == 0:
		return perr(ReasonBadAsk, path, n.off, "a select needs at least one option")
	case len(n.elems) > maxOptions:
		return perr(ReasonBadAsk, path, n.off, "a select has at most "+strconv.Itoa(maxOptions)+" options")
	}
	return nil
}

// checkOptions validates a complete option list: unique titles (answers
// are matched by value or by title).
func checkOptions(n *node, path string, opts []Option) *ParseError {
	for i, o := range opts {
		for _, p := range opts[:i] {
			if o.Title != "" && o.Title == p.Title {
				return perr(ReasonBadAsk, path, n.off, "option titles must be unique")
			}
		}
	}
	return nil
}

func textConstraints(n *node, path string, f *Field) *ParseError {
	var pe *ParseError
	if f.MinLength, pe = optionalCount(n, path, "minLength"); pe != nil {
		return pe
	}
	if f.MaxLength, pe = optionalCount(n, path, "maxLength"); pe != nil {
		return pe
	}
	if f.MinLength != nil && f.MaxLength != nil && *f.MinLength > *f.MaxLength {
		return perr(ReasonBadAsk, path+".minLength", n.get("minLength").off, "minLength is over maxLength")
	}
	if v := n.get("format"); v != nil {
		if v.kind != kindString {
			return wrongType(v, path+".format", kindString)
		}
		switch v.str {
		case "email", "uri", "date", "date-time":
			f.Format = v.str
		default:
			return perr(ReasonBadAsk, path+".format", v.off, "format must be email, uri, date or date-time")
		}
	}
	return nil
}

func numberConstraints(n *node, path string, f *Field) *ParseError {
	for _, k := range []string{"minimum", "maximum"} {
		v := n.get(k)
		if v == nil {
			continue
		}
		x, ok := floatValue(v)
		if !ok || math.IsInf(x, 0) {
			return wrongType(v, path+"."+k, kindNumber)
		}
		if k == "minimum" {
			f.Minimum = &x
		} else {
			f.Maximum = &x
		}
	}
	if f.Minimum != nil && f.Maximum != nil && *f.Minimum > *f.Maximum {
		return perr(ReasonBadAsk, path+".minimum", n.get("minimum").off, "minimum is over maximum")
	}
	return nil
}

func multiSelect(n *node, path string, f *Field) *ParseError {
	items := n.get("items")
	ipath := path + ".items"
	if items == nil {
		return perr(ReasonMissingField, ipath, n.off, "items is required for type array")
	}
	if items.kind != kindObject {
		return wrongType(items, ipath, kindObject)
	}
	var pe *ParseError
	if items.get("anyOf") != nil {
		if pe = allowKeys(items, ipath, "type", "anyOf"); pe != nil {
			return pe
		}
		if t := items.get("type"); t != nil && (t.kind != kindString || t.str != "string") {
			return perr(ReasonBadAsk, ipath+".type", t.off, `items type must be "string"`)
		}
		f.Options, pe = titledOptions(items.get("anyOf"), ipath+".anyOf")
	} else {
		if pe = allowKeys(items, ipath, "type", "enum"); pe != nil {
			return pe
		}
		var t *node
		if t, pe = requiredString(items, ipath, "type"); pe != nil {
			return pe
		}
		if t.str != "string" {
			return perr(ReasonBadAsk, ipath+".type", t.off, `items type must be "string"`)
		}
		if items.get("enum") == nil {
			return perr(ReasonMissingField, ipath+".enum", items.off, "items needs anyOf or enum")
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
		return perr(ReasonBadAsk, path+".minItems", n.get("minItems").off, "minItems is over maxItems")
	case f.MinItems != nil && *f.MinItems > len(f.Options):
		return perr(ReasonBadAsk, path+".minItems", n.get("minItems").off, "minItems is over the number of options")
	}
	return nil
}

// optionalCount reads a non-negative integer member.
func optionalCount(n *node, path, key string) (*int, *ParseError) {
	v := n.get(key)
	if v == nil {
		return nil, nil
	}
	x, ok := intValue(v)
	if !ok || x < 0 || x > math.MaxInt32 {
		return nil, perr(ReasonBadAsk, joinPath(path, key), v.off, key+" must be a non-negative integer")
	}
	c := int(x)
	return &c, nil
}

func fieldDefault(d *node, path string, f *Field) (any, *ParseError) {
	isOption := func(s string) bool {
		for _, o := range f.Options {
			if o.Value == s {
				return true
			}
		}
		return false
	}
	switch f.Kind {
	case FieldText:
		if d.kind != kindString {
			return nil, wrongType(d, path, kindString)
		}
		if pe := visible(d, path); pe != nil {
			return nil, pe
		}
		return d.str, nil
	case FieldSingleSelect:
		if d.kind != kindString {
			return nil, wrongType(d, path, kindString)
		}
		if !isOption(d.str) {
			return nil, perr(ReasonBadAsk, path, d.off, "default is not one of the options")
		}
		return d.str, nil
	case FieldNumber, FieldInteger:
		x, ok := floatValue(d)
		if !ok || math.IsInf(x, 0) {
			return nil, wrongType(d, path, kindNumber)
		}
		if f.Kind == FieldInteger && x != math.Trunc(x) {
			return nil, perr(ReasonBadAsk, path, d.off, "default of an integer field must be an integer")
		}
		return x, nil
	case FieldBoolean:
		if d.kind != kindBool {
			return nil, wrongType(d, path, kindBool)
		}
		return d.b, nil
	}
	// FieldMultiSelect
	if d.kind != kindArray {
		return nil, wrongType(d, path, kindArray)
	}
	out := make([]string, 0, len(d.elems))
	for i, e := range d.elems {
		if e.kind != kindString || !isOption(e.str) {
			return nil, perr(ReasonBadAsk, path+"["+strconv.Itoa(i)+"]", e.off, "default holds a value that is not an option")
		}
		for _, s := range out {
			if s == e.str {
				return nil, perr(ReasonBadAsk, path+"["+strconv.Itoa(i)+"]", e.off, "default repeats a value")
			}
		}
		out = append(out, e.str)
	}
	return out, nil
}
