package ddb

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// Kind is which of DynamoDB's attribute types a Value holds.
type Kind uint8

const (
	// Invalid is the zero Value's kind: no attribute.
	Invalid Kind = iota
	KindS
	KindN
	KindB
	KindBOOL
	KindNULL
	KindM
	KindL
	KindSS
	KindNS
	KindBS
)

var kindNames = [...]string{"", "S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && k != Invalid {
		return kindNames[k]
	}
	return "invalid"
}

// Value is one DynamoDB attribute value. Build one with S, N, Int, B, Bool,
// Null, M, L, SS, NS or BS; read it with the As methods. The zero Value is
// no attribute and does not encode.
type Value struct {
	kind Kind
	s    string // S, N
	b    []byte // B
	bl   bool   // BOOL
	m    map[string]Value
	l    []Value
	ss   []string // SS, NS
	bs   [][]byte
}

// Item is an item, or a key: attribute names to values.
type Item map[string]Value

// S, N, Int, B, Bool, Null, M, L, SS, NS and BS build a value of their type.
func S(s string) Value           { return Value{kind: KindS, s: s} }
func N(n string) Value           { return Value{kind: KindN, s: n} }
func Int(n int64) Value          { return Value{kind: KindN, s: strconv.FormatInt(n, 10)} }
func B(b []byte) Value           { return Value{kind: KindB, b: b} }
func Bool(b bool) Value          { return Value{kind: KindBOOL, bl: b} }
func Null() Value                { return Value{kind: KindNULL} }
func M(m map[string]Value) Value { return Value{kind: KindM, m: m} }
func L(l ...Value) Value         { return Value{kind: KindL, l: l} }
func SS(ss ...string) Value      { return Value{kind: KindSS, ss: ss} }
func NS(ns ...string) Value      { return Value{kind: KindNS, ss: ns} }
func BS(bs ...[]byte) Value      { return Value{kind: KindBS, bs: bs} }

// Kind is the value's type.
func (v Value) Kind() Kind { return v.kind }

// AsS is the string of an S.
func (v Value) AsS() (string, bool) { return v.s, v.kind == KindS }

// AsN is the number of an N, as DynamoDB sends it (a decimal string).
func (v Value) AsN() (string, bool) { return v.s, v.kind == KindN }

// AsInt is an N as an int64: false when v is no N or not an integer in range.
func (v Value) AsInt() (int64, bool) {
	if v.kind != KindN {
		return 0, false
	}
	n, err := strconv.ParseInt(v.s, 10, 64)
	return n, err == nil
}

// AsB is the bytes of a B.
func (v Value) AsB() ([]byte, bool) { return v.b, v.kind == KindB }

// AsBool is the value of a BOOL.
func (v Value) AsBool() (bool, bool) { return v.bl, v.kind == KindBOOL }

// IsNull reports whether v is a NULL.
func (v Value) IsNull() bool { return v.kind == KindNULL }

// AsM is the members of an M.
func (v Value) AsM() (map[string]Value, bool) { return v.m, v.kind == KindM }

// AsL is the elements of an L.
func (v Value) AsL() ([]Value, bool) { return v.l, v.kind == KindL }

// AsSS is the strings of an SS; AsNS the numbers of an NS; AsBS the
// binaries of a BS.
func (v Value) AsSS() ([]string, bool) { return v.ss, v.kind == KindSS }
func (v Value) AsNS() ([]string, bool) { return v.ss, v.kind == KindNS }
func (v Value) AsBS() ([][]byte, bool) { return v.bs, v.kind == KindBS }

// String is v's JSON, for messages and tests.
func (v Value) String() string {
	b, err := v.MarshalJSON()
	if err != nil {
		return "<no value>"
	}
	return string(b)
}

// MarshalJSON writes v as DynamoDB's JSON protocol does: {"S":"…"} and so on.
func (v Value) MarshalJSON() ([]byte, error) {
	var body any
	switch v.kind {
	case KindS, KindN:
		body = v.s
	case KindB:
		body = base64.StdEncoding.EncodeToString(v.b)
	case KindBOOL:
		body = v.bl
	case KindNULL:
		body = true
	case KindM:
		m := v.m
		if m == nil {
			m = map[string]Value{}
		}
		body = m
	case KindL:
		l := v.l
		if l == nil {
			l = []Value{}
		}
		body = l
	case KindSS, KindNS:
		body = v.ss
	case KindBS:
		enc := make([]string, len(v.bs))
		for i, b := range v.bs {
			enc[i] = base64.StdEncoding.EncodeToString(b)
		}
		body = enc
	default:
		return nil, errors.New("ddb: a zero Value has no attribute type")
	}
	inner, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteString(`{"`)
	out.WriteString(v.kind.String())
	out.WriteString(`":`)
	out.Write(inner)
	out.WriteByte('}')
	return out.Bytes(), nil
}

// UnmarshalJSON reads one attribute value: an object with exactly one of
// DynamoDB's type keys.
func (v *Value) UnmarshalJSON(data []byte) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return fmt.Errorf("ddb: attribute value: %w", err)
	}
	if len(obj) != 1 {
		return fmt.Errorf("ddb: attribute value with %d type keys, want 1", len(obj))
	}
	for k, raw := range obj {
		return v.decode(k, raw)
	}
	return nil
}

func (v *Value) decode(key string, raw json.RawMessage) error {
	var err error
	switch key {
	case "S":
		v.kind = KindS
		err = json.Unmarshal(raw, &v.s)
	case "N":
		v.kind = KindN
		err = json.Unmarshal(raw, &v.s)
	case "B":
		v.kind = KindB
		var s string
		if err = json.Unmarshal(raw, &s); err == nil {
			v.b, err = base64.StdEncoding.DecodeString(s)
		}
	case "BOOL":
		v.kind = KindBOOL
		err = json.Unmarshal(raw, &v.bl)
	case "NULL":
		v.kind = KindNULL
	case "M":
		v.kind = KindM
		err = json.Unmarshal(raw, &v.m)
		if err == nil && v.m == nil {
			v.m = map[string]Value{}
		}
	case "L":
		v.kind = KindL
		err = json.Unmarshal(raw, &v.l)
		if err == nil && v.l == nil {
			v.l = []Value{}
		}
	case "SS", "NS":
		v.kind = KindSS
		if key == "NS" {
			v.kind = KindNS
		}
		err = json.Unmarshal(raw, &v.ss)
	case "BS":
		v.kind = KindBS
		var enc []string
		if err = json.Unmarshal(raw, &enc); err == nil {
			v.bs = make([][]byte, len(enc))
			for i, s := range enc {
				if v.bs[i], err = base64.StdEncoding.DecodeString(s); err != nil {
					break
				}
			}
		}
	default:
		return fmt.Errorf("ddb: unknown attribute type %q", key)
	}
	if err != nil {
		*v = Value{}
		return fmt.Errorf("ddb: attribute value %s: %w", key, err)
	}
	return nil
}

// String is the item's JSON, its attributes in name order, for messages and
// tests.
func (it Item) String() string {
	b, err := json.Marshal(map[string]Value(it))
	if err != nil {
		return "<invalid item: " + err.Error() + ">"
	}
	return string(b)
}

// Equal reports whether v and o are the same attribute value, as DynamoDB
// compares them: exact strings and numbers' text, bytes, lists in order.
func (v Value) Equal(o Value) bool {
	if v.kind != o.kind {
		return false
	}
	switch v.kind {
	case KindS, KindN:
		return v.s == o.s
	case KindB:
		return bytes.Equal(v.b, o.b)
	case KindBOOL:
		return v.bl == o.bl
	case KindM:
		return Item(v.m).Equal(o.m)
	case KindL:
		return slices.EqualFunc(v.l, o.l, Value.Equal)
	case KindSS, KindNS:
		return slices.Equal(v.ss, o.ss)
	case KindBS:
		return slices.EqualFunc(v.bs, o.bs, bytes.Equal)
	}
	return true // NULL, or both zero
}

// Equal reports whether it and o hold the same attributes with equal values.
func (it Item) Equal(o Item) bool {
	if len(it) != len(o) {
		return false
	}
	for k, v := range it {
		w, ok := o[k]
		if !ok || !v.Equal(w) {
			return false
		}
	}
	return true
}
