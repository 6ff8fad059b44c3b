package ddb

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestValueJSONIsDynamoDBs(t *testing.T) {
	cases := []struct {
		v    Value
		json string
	}{
		{S("héllo"), `{"S":"héllo"}`},
		{S(""), `{"S":""}`},
		{N("-1.5e3"), `{"N":"-1.5e3"}`},
		{Int(9007199254740993), `{"N":"9007199254740993"}`},
		{B([]byte{0, 0xff}), `{"B":"AP8="}`},
		{B(nil), `{"B":""}`},
		{Bool(false), `{"BOOL":false}`},
		{Null(), `{"NULL":true}`},
		{M(nil), `{"M":{}}`},
		{M(map[string]Value{"b": Int(2), "a": S("x")}), `{"M":{"a":{"S":"x"},"b":{"N":"2"}}}`},
		{L(), `{"L":[]}`},
		{L(S("a"), L(Null())), `{"L":[{"S":"a"},{"L":[{"NULL":true}]}]}`},
		{SS("a", "b"), `{"SS":["a","b"]}`},
		{NS("1", "2"), `{"NS":["1","2"]}`},
		{BS([]byte("a"), []byte("b")), `{"BS":["YQ==","Yg=="]}`},
	}
	for _, tc := range cases {
		got, err := json.Marshal(tc.v)
		if err != nil || string(got) != tc.json {
			t.Errorf("marshal %v: %s, %v; want %s", tc.v.Kind(), got, err, tc.json)
			continue
		}
		var back Value
		if err := json.Unmarshal(got, &back); err != nil {
			t.Errorf("unmarshal %s: %v", got, err)
			continue
		}
		if back.String() != tc.json || back.Kind() != tc.v.Kind() {
			t.Errorf("round trip of %s gave %s (%v)", tc.json, back, back.Kind())
		}
	}
}

func TestValueAccessorsAnswerOnlyForTheirKind(t *testing.T) {
	if s, ok := S("x").AsS(); !ok || s != "x" {
		t.Error("AsS of an S")
	}
	if _, ok := N("1").AsS(); ok {
		t.Error("AsS of an N answered")
	}
	if n, ok := Int(-7).AsInt(); !ok || n != -7 {
		t.Error("AsInt of an Int")
	}
	for _, bad := range []Value{N("1.5"), N("99999999999999999999"), S("1"), {}} {
		if _, ok := bad.AsInt(); ok {
			t.Errorf("AsInt of %s answered", bad)
		}
	}
	if b, ok := Bool(true).AsBool(); !ok || !b {
		t.Error("AsBool")
	}
	if !Null().IsNull() || S("").IsNull() {
		t.Error("IsNull")
	}
	if (Value{}).Kind() != Invalid || (Value{}).String() != "<no value>" {
		t.Error("the zero Value is not Invalid")
	}
}

func TestValueRefusesWhatDynamoDBNeverSends(t *testing.T) {
	for _, in := range []string{
		`{}`, `{"S":"a","N":"1"}`, `{"Q":"a"}`, `{"S":1}`, `{"B":"not base64!"}`, `{"BS":["YQ==","%%"]}`,
		`{"BOOL":"yes"}`, `{"M":[]}`, `{"L":{}}`, `"S"`, `[]`, `null`,
	} {
		var v Value
		if err := json.Unmarshal([]byte(in), &v); err == nil {
			t.Errorf("%s decoded as %s", in, v)
		}
	}
	if _, err := json.Marshal(Value{}); err == nil {
		t.Error("a zero Value encoded")
	}
	if _, err := json.Marshal(Item{"a": S("x"), "b": {}}); err == nil {
		t.Error("an item holding a zero Value encoded")
	}
}

// FuzzValueJSON: whatever DynamoDB (or anything between) answers, decoding
// never panics, and a value that decodes encodes to JSON that decodes to the
// same value.
func FuzzValueJSON(f *testing.F) {
	for _, s := range []string{
		`{"S":"x"}`, `{"N":"1"}`, `{"B":"AP8="}`, `{"BOOL":true}`, `{"NULL":true}`, `{"M":{"a":{"L":[{"SS":["x"]}]}}}`,
		`{"NS":["1"]}`, `{"BS":["YQ=="]}`, `{"L":[]}`, `{"M":{}}`, `{"S":"\u00e9"}`, `{"NULL":false}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var v Value
		if json.Unmarshal([]byte(in), &v) != nil {
			return
		}
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s decoded as %v but does not encode: %v", in, v.Kind(), err)
		}
		var again Value
		if err := json.Unmarshal(out, &again); err != nil || again.String() != string(out) {
			t.Fatalf("%s → %s → %s (%v)", in, out, again, err)
		}
		if !strings.HasPrefix(string(out), `{"`+v.Kind().String()+`":`) {
			t.Fatalf("%s encoded as %s", v.Kind(), out)
		}
	})
}
