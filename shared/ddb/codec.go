package ddb

// The codec follows the SDK's attributevalue package (the release in go.mod,
// default options) rule for rule, because items in the tables were written
// by it and must read back, and be rewritten, unchanged; codec_test.go holds
// the two side by side. Where attributevalue would silently skip a value,
// panic or emit an attribute DynamoDB refuses, this code returns an error
// instead; everything it does encode or decode, it does as attributevalue
// does.

import (
	"encoding"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MarshalItem encodes a struct (or pointer to one) as an item, following
// attributevalue.MarshalMap: fields by their `dynamodbav` tag name or Go
// name, "-" skipped, ",omitempty" leaving out zero values, and nil
// pointers, slices and maps otherwise written as NULL. A map with string
// keys is accepted too. Unlike MarshalMap, which answers an empty item, a
// nil pointer or a value that is no struct or map is an error.
func MarshalItem(v any) (Item, error) {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return nil, fmt.Errorf("ddb: marshal item: nil %T", v)
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct && rv.Kind() != reflect.Map {
		return nil, fmt.Errorf("ddb: marshal item: %T is no struct or map", v)
	}
	av, err := encode(rv, false)
	if err != nil {
		return nil, fmt.Errorf("ddb: marshal item %T: %w", v, err)
	}
	m, ok := av.AsM()
	if !ok {
		return nil, fmt.Errorf("ddb: marshal item: %T encodes as %s, not M", v, av.Kind())
	}
	return Item(m), nil
}

// Marshal encodes one Go value as an attribute value, as
// attributevalue.Marshal does: nil as NULL, numbers as N, []byte as B,
// [][]byte as BS, other slices and arrays as L, structs and maps as M. A
// Value is passed through as it is.
func Marshal(v any) (Value, error) {
	av, err := encode(reflect.ValueOf(v), false)
	if err != nil {
		return Value{}, fmt.Errorf("ddb: marshal %T: %w", v, err)
	}
	return av, nil
}

// UnmarshalItem decodes item into the struct out points to, as
// attributevalue.UnmarshalMap does: attributes are matched to fields by
// name (exactly, else ignoring case), attributes with no field are
// ignored, and fields with no attribute are left as they are.
func UnmarshalItem(item Item, out any) error {
	rv := reflect.ValueOf(out)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("ddb: unmarshal item: want a non-nil pointer, got %T", out)
	}
	if err := decode(M(item), rv.Elem()); err != nil {
		return fmt.Errorf("ddb: unmarshal item into %T: %w", out, err)
	}
	return nil
}

// Unmarshal decodes one attribute value into what out points to, as
// attributevalue.Unmarshal does. NULL sets it to its zero value.
func Unmarshal(v Value, out any) error {
	rv := reflect.ValueOf(out)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("ddb: unmarshal: want a non-nil pointer, got %T", out)
	}
	if err := decode(v, rv.Elem()); err != nil {
		return fmt.Errorf("ddb: unmarshal into %T: %w", out, err)
	}
	return nil
}

// pathError names where in a value an error happened: units[2].att.
type pathError struct {
	path string
	err  error
}

func (e *pathError) Error() string {
	return strings.TrimPrefix(e.path, ".") + ": " + e.err.Error()
}
func (e *pathError) Unwrap() error { return e.err }

// at prefixes err's path with seg (".name", "[3]" or `["key"]`).
func at(seg string, err error) error {
	if pe, ok := err.(*pathError); ok {
		pe.path = seg + pe.path
		return pe
	}
	return &pathError{path: seg, err: err}
}

var (
	valueType    = reflect.TypeFor[Value]()
	timeType     = reflect.TypeFor[time.Time]()
	bytesType    = reflect.TypeFor[[]byte]()
	bytesSetType = reflect.TypeFor[[][]byte]()
	numberType   = reflect.TypeFor[interface {
		Float64() (float64, error)
		Int64() (int64, error)
		String() string
	}]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// checkType refuses what attributevalue would skip silently (channels,
// funcs, complex numbers), would panic on (interfaces with methods, on
// decoding), or would encode by hooks this code does not run (time.Time,
// custom marshalers): better an error now than an item that differs.
func checkType(t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Chan, reflect.Func, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer, reflect.Uintptr:
		return fmt.Errorf("unsupported type %s", t)
	case reflect.Interface:
		if t.NumMethod() > 0 {
			return fmt.Errorf("unsupported type %s: only interface{} is", t)
		}
	case reflect.Map:
		// attributevalue also takes numbers and bools, as text.
		if t.Key().Kind() != reflect.String {
			return fmt.Errorf("unsupported map key type %s: only strings are", t.Key())
		}
	}
	if t.PkgPath() == "" || t == valueType {
		return nil // unnamed or predeclared: no methods of its own
	}
	if c, ok := typeErrs.Load(t); ok {
		err, _ := c.(error)
		return err
	}
	var err error
	pt := reflect.PointerTo(t)
	switch {
	case t.Kind() == reflect.Struct && t.ConvertibleTo(timeType):
		err = fmt.Errorf("unsupported type %s: time is not supported", t)
	case hasCustomCodec(pt):
		err = fmt.Errorf("unsupported type %s: custom attributevalue marshalers are not supported", t)
	}
	typeErrs.Store(t, err)
	return err
}

var typeErrs sync.Map // reflect.Type → error or nil

// hasCustomCodec reports whether t has attributevalue's marshaling hooks.
// Each name is a constant at its call: a MethodByName with a name the linker
// cannot see keeps every exported method of every type in the binary.
func hasCustomCodec(t reflect.Type) bool {
	_, m := t.MethodByName("MarshalDynamoDBAttributeValue")
	_, u := t.MethodByName("UnmarshalDynamoDBAttributeValue")
	return m || u
}

// isZero is attributevalue's isZeroValue: what omitempty leaves out. A
// struct is never zero; an empty but non-nil slice or map is not either.
func isZero(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Invalid:
		return true
	case reflect.Array:
		return v.Len() == 0
	case reflect.Map, reflect.Slice, reflect.Interface, reflect.Pointer:
		return v.IsNil()
	case reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	}
	return false
}

// encode answers the zero Value when the value is to be left out.
func encode(v reflect.Value, omitEmpty bool) (Value, error) {
	if v.IsValid() {
		if err := checkType(v.Type()); err != nil {
			return Value{}, err
		}
	}
	// Zero values are decided before pointers are followed, as
	// attributevalue does: a pointer to an empty string is S "".
	if isZero(v) {
		if omitEmpty {
			return Value{}, nil
		}
		switch v.Kind() {
		case reflect.Invalid, reflect.Map, reflect.Slice, reflect.Interface, reflect.Pointer:
			return Null(), nil
		}
	}
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v = v.Elem(); !v.IsValid() {
			// A non-nil pointer to a nil one is not empty: NULL, even
			// under omitempty.
			return Null(), nil
		}
		if err := checkType(v.Type()); err != nil {
			return Value{}, err
		}
	}
	t := v.Type()
	if t == valueType {
		av := v.Interface().(Value)
		if av.Kind() == Invalid {
			return Value{}, errors.New("zero Value")
		}
		return av, nil
	}
	switch v.Kind() {
	case reflect.Bool:
		return Bool(v.Bool()), nil
	case reflect.String:
		if t.Implements(numberType) { // json.Number and the like
			return N(v.String()), nil
		}
		return S(v.String()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return N(strconv.FormatInt(v.Int(), 10)), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return N(strconv.FormatUint(v.Uint(), 10)), nil
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			// attributevalue writes N "NaN", which DynamoDB refuses.
			return Value{}, fmt.Errorf("number %v has no DynamoDB form", f)
		}
		return N(strconv.FormatFloat(f, 'f', -1, t.Bits())), nil
	case reflect.Struct:
		return encodeStruct(v)
	case reflect.Map:
		return encodeMap(v)
	case reflect.Slice, reflect.Array:
		return encodeList(v)
	}
	return Value{}, fmt.Errorf("unsupported type %s", t)
}

func encodeStruct(v reflect.Value) (Value, error) {
	fs, err := fieldsOf(v.Type())
	if err != nil {
		return Value{}, err
	}
	m := make(map[string]Value, len(fs.list))
	for _, f := range fs.list {
		av, err := encode(v.Field(f.index), f.omitEmpty)
		if err != nil {
			return Value{}, at("."+f.name, err)
		}
		if av.Kind() != Invalid {
			m[f.name] = av
		}
	}
	return M(m), nil
}

func encodeMap(v reflect.Value) (Value, error) {
	m := make(map[string]Value, v.Len())
	for it := v.MapRange(); it.Next(); {
		k, err := mapKey(it.Key())
		if err != nil {
			return Value{}, err
		}
		// Elements carry no omitempty: a nil one is NULL.
		av, err := encode(it.Value(), false)
		if err != nil {
			return Value{}, at(fmt.Sprintf("[%q]", k), err)
		}
		m[k] = av
	}
	return M(m), nil
}

// mapKey is attributevalue's key text: MarshalText if the key has it, else
// fmt.Sprint (so a String method counts); never empty.
func mapKey(k reflect.Value) (string, error) {
	var s string
	if m, ok := k.Interface().(encoding.TextMarshaler); ok {
		b, err := m.MarshalText()
		if err != nil {
			return "", fmt.Errorf("map key: %w", err)
		}
		s = string(b)
	} else {
		s = fmt.Sprint(k.Interface())
	}
	if s == "" {
		return "", errors.New("map key cannot be empty")
	}
	return s, nil
}

func encodeList(v reflect.Value) (Value, error) {
	t := v.Type()
	if t.Elem().Kind() == reflect.Uint8 {
		b := make([]byte, v.Len())
		if t == bytesType {
			copy(b, v.Bytes())
		} else {
			for i := range b {
				b[i] = byte(v.Index(i).Uint())
			}
		}
		return B(b), nil
	}
	if t == bytesSetType {
		// DynamoDB has no empty set: attributevalue writes NULL instead.
		if v.Len() == 0 {
			return Null(), nil
		}
		bs := make([][]byte, v.Len())
		for i := range bs {
			av, err := encode(v.Index(i), false)
			if err != nil {
				return Value{}, at(fmt.Sprintf("[%d]", i), err)
			}
			b, ok := av.AsB()
			if !ok {
				return Value{}, at(fmt.Sprintf("[%d]", i), errors.New("binary set must only contain non-nil byte slices"))
			}
			bs[i] = b
		}
		return BS(bs...), nil
	}
	l := make([]Value, v.Len())
	for i := range l {
		av, err := encode(v.Index(i), false)
		if err != nil {
			return Value{}, at(fmt.Sprintf("[%d]", i), err)
		}
		l[i] = av
	}
	return L(l...), nil
}

// field is one attribute of a struct type.
type field struct {
	name      string
	index     int
	omitEmpty bool
	tagged    bool // the name came from the tag
}

// fields is a struct type's attributes, in field order.
type fields struct {
	list   []field
	byName map[string]int
	err    error
}

var fieldCache sync.Map // reflect.Type → *fields

func fieldsOf(t reflect.Type) (*fields, error) {
	if c, ok := fieldCache.Load(t); ok {
		fs := c.(*fields)
		return fs, fs.err
	}
	fs := buildFields(t)
	c, _ := fieldCache.LoadOrStore(t, fs)
	fs = c.(*fields)
	return fs, fs.err
}

func buildFields(t reflect.Type) *fields {
	var all []field
	count := map[string]int{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() && !sf.Anonymous {
			continue
		}
		f := field{name: sf.Name, index: i}
		if tag := sf.Tag.Get("dynamodbav"); tag != "" {
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" {
				continue
			}
			if name != "" {
				f.name, f.tagged = name, true
			}
			for opt := range strings.SplitSeq(opts, ",") {
				switch opt {
				case "omitempty":
					f.omitEmpty = true
				case "omitemptyelem", "nullempty", "nullemptyelem", "string", "binaryset", "numberset", "stringset", "unixtime":
					return &fields{err: fmt.Errorf("field %s: tag option %q is not supported", sf.Name, opt)}
				}
				// attributevalue ignores options it does not know.
			}
		}
		if sf.Anonymous {
			// attributevalue flattens embedded structs by Go's rules
			// for promoted fields; nothing here needs that.
			return &fields{err: fmt.Errorf("embedded field %s is not supported", sf.Name)}
		}
		all = append(all, f)
		count[f.name]++
	}
	// Two fields of one name: the one named by its tag wins; two tagged or
	// two untagged and both are dropped, as attributevalue (and
	// encoding/json) do.
	fs := &fields{byName: map[string]int{}}
	for _, f := range all {
		if count[f.name] > 1 {
			tagged := 0
			for _, g := range all {
				if g.name == f.name && g.tagged {
					tagged++
				}
			}
			if !f.tagged || tagged != 1 {
				continue
			}
		}
		fs.byName[f.name] = len(fs.list)
		fs.list = append(fs.list, f)
	}
	return fs
}

// lookup finds the field for an attribute name: exactly, else the first
// field whose name matches ignoring case, as attributevalue does.
func (fs *fields) lookup(name string) (field, bool) {
	if i, ok := fs.byName[name]; ok {
		return fs.list[i], true
	}
	for _, f := range fs.list {
		if strings.EqualFold(f.name, name) {
			return f, true
		}
	}
	return field{}, false
}

// decode decodes av into v, which can be set. Like attributevalue it
// decodes into what is there: existing slices are reused, existing maps
// and structs are added to.
func decode(av Value, v reflect.Value) error {
	t := v.Type()
	if t == valueType {
		v.Set(reflect.ValueOf(av))
		return nil
	}
	if err := checkType(t); err != nil {
		return err
	}
	// A missing attribute or a NULL sets the zero value, a nil pointer
	// included.
	if av.Kind() == Invalid || av.Kind() == KindNULL {
		v.Set(reflect.Zero(t))
		return nil
	}
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	if v.Type() == valueType {
		v.Set(reflect.ValueOf(av))
		return nil
	}
	if v.Kind() == reflect.Interface {
		// An interface holding a pointer is decoded through it; any other
		// gets a fresh value of attributevalue's choice.
		if e := v.Elem(); e.Kind() == reflect.Pointer && !e.IsNil() {
			return decode(av, e.Elem())
		}
		x, err := decodeAny(av)
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(x))
		return nil
	}
	switch av.Kind() {
	case KindS:
		if v.Kind() == reflect.String {
			v.SetString(av.s)
			return nil
		}
	case KindN:
		return decodeNumber(av.s, v)
	case KindBOOL:
		if v.Kind() == reflect.Bool {
			v.SetBool(av.bl)
			return nil
		}
	case KindB:
		return decodeBinary(av.b, v)
	case KindL:
		return decodeList(len(av.l), func(i int) Value { return av.l[i] }, av.Kind(), v)
	case KindSS:
		return decodeList(len(av.ss), func(i int) Value { return S(av.ss[i]) }, av.Kind(), v)
	case KindNS:
		return decodeList(len(av.ss), func(i int) Value { return N(av.ss[i]) }, av.Kind(), v)
	case KindBS:
		return decodeList(len(av.bs), func(i int) Value { return B(av.bs[i]) }, av.Kind(), v)
	case KindM:
		return decodeMap(av.m, v)
	}
	return mismatch(av.Kind(), v.Type())
}

func mismatch(k Kind, t reflect.Type) error {
	return fmt.Errorf("cannot decode %s into %s", k, t)
}

// decodeNumber parses n as attributevalue does: integers in base 10 only,
// in range of the field's type. An N into a string field is its text.
func decodeNumber(n string, v reflect.Value) error {
	switch v.Kind() {
	case reflect.String:
		v.SetString(n)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			return fmt.Errorf("cannot decode N into %s: %w", v.Type(), err)
		}
		if v.OverflowInt(i) {
			return fmt.Errorf("cannot decode N into %s: %s overflows it", v.Type(), n)
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u, err := strconv.ParseUint(n, 10, 64)
		if err != nil {
			return fmt.Errorf("cannot decode N into %s: %w", v.Type(), err)
		}
		if v.OverflowUint(u) {
			return fmt.Errorf("cannot decode N into %s: %s overflows it", v.Type(), n)
		}
		v.SetUint(u)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(n, 64)
		if err != nil {
			return fmt.Errorf("cannot decode N into %s: %w", v.Type(), err)
		}
		if v.OverflowFloat(f) {
			return fmt.Errorf("cannot decode N into %s: %s overflows it", v.Type(), n)
		}
		v.SetFloat(f)
	default:
		return mismatch(KindN, v.Type())
	}
	return nil
}

func decodeBinary(b []byte, v reflect.Value) error {
	t := v.Type()
	if (v.Kind() != reflect.Slice && v.Kind() != reflect.Array) || t.Elem().Kind() != reflect.Uint8 {
		return mismatch(KindB, t)
	}
	if v.Kind() == reflect.Array {
		if v.Len() != len(b) { // attributevalue panics here
			return fmt.Errorf("cannot decode B of %d bytes into %s", len(b), t)
		}
	} else if v.IsNil() || v.Cap() < len(b) {
		v.Set(reflect.MakeSlice(t, len(b), len(b)))
	} else {
		v.SetLen(len(b))
	}
	if t.Elem() == bytesType.Elem() {
		reflect.Copy(v, reflect.ValueOf(b))
		return nil
	}
	for i, c := range b {
		v.Index(i).SetUint(uint64(c))
	}
	return nil
}

// decodeList decodes an L, SS, NS or BS of n elements into a slice, reusing
// its array when it is large enough, or into an array, filling what fits.
func decodeList(n int, elem func(int) Value, k Kind, v reflect.Value) error {
	switch v.Kind() {
	case reflect.Slice:
		if v.IsNil() || v.Cap() < n {
			v.Set(reflect.MakeSlice(v.Type(), 0, n))
		}
		for i := range n {
			v.SetLen(i + 1)
			if err := decode(elem(i), v.Index(i)); err != nil {
				return at(fmt.Sprintf("[%d]", i), err)
			}
		}
	case reflect.Array:
		for i := 0; i < n && i < v.Len(); i++ {
			if err := decode(elem(i), v.Index(i)); err != nil {
				return at(fmt.Sprintf("[%d]", i), err)
			}
		}
	default:
		return mismatch(k, v.Type())
	}
	return nil
}

func decodeMap(m map[string]Value, v reflect.Value) error {
	switch v.Kind() {
	case reflect.Struct:
		fs, err := fieldsOf(v.Type())
		if err != nil {
			return err
		}
		for k, av := range m {
			if f, ok := fs.lookup(k); ok {
				if err := decode(av, v.Field(f.index)); err != nil {
					return at("."+f.name, err)
				}
			}
		}
	case reflect.Map:
		// Keys are strings (checkType); one with UnmarshalText is read
		// by it, as attributevalue does and as mapKey mirrors.
		kt, et := v.Type().Key(), v.Type().Elem()
		text := reflect.PointerTo(kt).Implements(textUnmarshalerType)
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		for k, av := range m {
			key := reflect.New(kt).Elem()
			if text {
				if err := key.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(k)); err != nil {
					return fmt.Errorf("map key %q: %w", k, err)
				}
			} else {
				key.SetString(k)
			}
			e := reflect.New(et).Elem()
			if err := decode(av, e); err != nil {
				return at(fmt.Sprintf("[%q]", k), err)
			}
			v.SetMapIndex(key, e)
		}
	default:
		return mismatch(KindM, v.Type())
	}
	return nil
}

// decodeAny is what attributevalue puts into an interface{}: string,
// float64, bool, []byte, []any, map[string]any, []string, []float64,
// [][]byte, or nil.
func decodeAny(av Value) (any, error) {
	switch av.Kind() {
	case KindS:
		return av.s, nil
	case KindN:
		f, err := strconv.ParseFloat(av.s, 64)
		if err != nil {
			return nil, fmt.Errorf("cannot decode N: %w", err)
		}
		return f, nil
	case KindBOOL:
		return av.bl, nil
	case KindB:
		return append([]byte{}, av.b...), nil
	case KindL:
		l := make([]any, len(av.l))
		for i, e := range av.l {
			x, err := decodeAny(e)
			if err != nil {
				return nil, at(fmt.Sprintf("[%d]", i), err)
			}
			l[i] = x
		}
		return l, nil
	case KindM:
		m := make(map[string]any, len(av.m))
		for k, e := range av.m {
			x, err := decodeAny(e)
			if err != nil {
				return nil, at(fmt.Sprintf("[%q]", k), err)
			}
			m[k] = x
		}
		return m, nil
	case KindSS:
		return append([]string{}, av.ss...), nil
	case KindNS:
		ns := make([]float64, len(av.ss))
		for i, s := range av.ss {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, at(fmt.Sprintf("[%d]", i), fmt.Errorf("cannot decode N: %w", err))
			}
			ns[i] = f
		}
		return ns, nil
	case KindBS:
		bs := make([][]byte, len(av.bs))
		for i, b := range av.bs {
			bs[i] = append([]byte{}, b...)
		}
		return bs, nil
	}
	return nil, nil
}
