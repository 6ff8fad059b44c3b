package ddb_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/parleyhq/parley/shared/ddb"
	"github.com/parleyhq/parley/shared/ddb/ddbtest"
)

// Nested shapes for the tests below. codecThread has only json tags, as
// message.Thread does, so attributevalue names its attributes by Go field.
// The store's own item shapes are tested in shared/store/dynamostore.

type codecPlatform string

type codecThread struct {
	Platform codecPlatform `json:"platform"`
	Account  string        `json:"account"`
	Chat     string        `json:"chat"`
	Thread   string        `json:"thread,omitempty"`
}

// codecUnit is shaped like a stored unit, for the decoding rules.
type codecUnit struct {
	ID         string   `dynamodbav:"id"`
	Attempt    int      `dynamodbav:"att"`
	LeaseUntil int64    `dynamodbav:"lease"`
	Receipt    []string `dynamodbav:"rcpt"`
	Resent     bool     `dynamodbav:"resent"`
}

// codecPlan nests units, a map and a thread, as the store's intents and
// awaits do.
type codecPlan struct {
	Units  []codecUnit    `dynamodbav:"units"`
	Posts  map[string]int `dynamodbav:"posts"`
	Thread codecThread    `dynamodbav:"thread"`
}

type codecReplyItem struct {
	Token string `dynamodbav:"tok"`
	Until int64  `dynamodbav:"until"`
}

type codecAllKinds struct {
	Untagged   string
	Skipped    string `dynamodbav:"-"`
	unexported string
	NoName     string            `dynamodbav:",omitempty"`
	S          string            `dynamodbav:"s"`
	SO         string            `dynamodbav:"so,omitempty"`
	Bo         bool              `dynamodbav:"bo"`
	BoO        bool              `dynamodbav:"boo,omitempty"`
	I          int               `dynamodbav:"i"`
	I8         int8              `dynamodbav:"i8"`
	I16        int16             `dynamodbav:"i16"`
	I32        int32             `dynamodbav:"i32"`
	I64        int64             `dynamodbav:"i64"`
	IO         int               `dynamodbav:"io,omitempty"`
	U          uint              `dynamodbav:"u"`
	U8         uint8             `dynamodbav:"u8"`
	U16        uint16            `dynamodbav:"u16"`
	U32        uint32            `dynamodbav:"u32"`
	U64        uint64            `dynamodbav:"u64"`
	UO         uint64            `dynamodbav:"uo,omitempty"`
	F32        float32           `dynamodbav:"f32"`
	F64        float64           `dynamodbav:"f64"`
	FO         float64           `dynamodbav:"fo,omitempty"`
	Bytes      []byte            `dynamodbav:"b"`
	BytesO     []byte            `dynamodbav:"bo2,omitempty"`
	Raw        json.RawMessage   `dynamodbav:"raw"`
	ByteSet    [][]byte          `dynamodbav:"bs"`
	ByteSetO   [][]byte          `dynamodbav:"bso,omitempty"`
	Strs       []string          `dynamodbav:"ss"`
	StrsO      []string          `dynamodbav:"sso,omitempty"`
	Ints       []int             `dynamodbav:"is"`
	Nested     [][]string        `dynamodbav:"nest"`
	Structs    []codecReplyItem  `dynamodbav:"structs"`
	PtrStructs []*codecReplyItem `dynamodbav:"pstructs"`
	MapInt     map[string]int    `dynamodbav:"mi"`
	MapIntO    map[string]int    `dynamodbav:"mio,omitempty"`
	MapStruct  map[string]codecReplyItem
	MapPtr     map[string]*codecReplyItem
	MapSlice   map[string][]string
	MapNamed   map[codecPlatform]bool
	Named      codecPlatform      `dynamodbav:"named"`
	Struct     codecThread        `dynamodbav:"thread,omitempty"`
	Empty      struct{}           `dynamodbav:"empty"`
	Ptr        *codecReplyItem    `dynamodbav:"p"`
	PtrO       *codecReplyItem    `dynamodbav:"po,omitempty"`
	PS         *string            `dynamodbav:"ps"`
	PSO        *string            `dynamodbav:"pso,omitempty"`
	PI         *int               `dynamodbav:"pi"`
	PIO        *int               `dynamodbav:"pio,omitempty"`
	PPI        **int              `dynamodbav:"ppi"`
	PSlice     *[]string          `dynamodbav:"pslice"`
	PBytes     *[]byte            `dynamodbav:"pbytes"`
	PMap       *map[string]string `dynamodbav:"pmap"`
	Arr        [3]int             `dynamodbav:"arr"`
	ByteArr    [4]byte            `dynamodbav:"barr"`
	Num        json.Number        `dynamodbav:"num"`
	Any        any                `dynamodbav:"any"`
	AnyO       any                `dynamodbav:"anyo,omitempty"`
}

func ptr[T any](v T) *T { return &v }

func codecAllKindsValues() map[string]codecAllKinds {
	one, zero := 1, 0
	pone := &one
	return map[string]codecAllKinds{
		"zero": {},
		"empty, not nil": {
			Bytes: []byte{}, BytesO: []byte{}, Raw: json.RawMessage{}, ByteSet: [][]byte{}, ByteSetO: [][]byte{},
			Strs: []string{}, StrsO: []string{}, Ints: []int{}, Nested: [][]string{{}}, Structs: []codecReplyItem{},
			PtrStructs: []*codecReplyItem{}, MapInt: map[string]int{}, MapIntO: map[string]int{},
			MapStruct: map[string]codecReplyItem{}, MapPtr: map[string]*codecReplyItem{}, MapSlice: map[string][]string{},
			MapNamed: map[codecPlatform]bool{}, Ptr: &codecReplyItem{}, PtrO: &codecReplyItem{}, PS: ptr(""), PSO: ptr(""),
			PI: &zero, PIO: &zero, PPI: new(*int), PSlice: new([]string), PBytes: new([]byte), PMap: new(map[string]string),
			Any: "", AnyO: 0,
		},
		"nil inside": {
			Strs: []string{""}, Nested: [][]string{nil, {}}, PtrStructs: []*codecReplyItem{nil, {}},
			MapPtr: map[string]*codecReplyItem{"k": nil}, MapSlice: map[string][]string{"a": nil, "b": {}},
			Any: (*int)(nil), AnyO: (*int)(nil), ByteSet: [][]byte{{}},
		},
		"full": {
			Untagged: "u", Skipped: "skipped", unexported: "hidden", NoName: "nn", S: "s", SO: "so", Bo: true, BoO: true,
			I: -1, I8: math.MinInt8, I16: math.MaxInt16, I32: math.MinInt32, I64: math.MaxInt64, IO: 7,
			U: 1, U8: math.MaxUint8, U16: math.MaxUint16, U32: math.MaxUint32, U64: math.MaxUint64, UO: 9,
			F32: 0.1, F64: 1e300, FO: -2.5e-7,
			Bytes: []byte{0, 1, 0xff}, BytesO: []byte("x"), Raw: json.RawMessage(`{"a":1}`), ByteSet: [][]byte{{1}, {2, 3}},
			ByteSetO: [][]byte{{}}, Strs: []string{"a", "", "ü"}, StrsO: []string{"b"}, Ints: []int{math.MinInt64, 0, 3},
			Nested: [][]string{{"x"}, {"y", "z"}}, Structs: []codecReplyItem{{"t", 1}, {}},
			PtrStructs: []*codecReplyItem{{Token: "p"}}, MapInt: map[string]int{"a": 1, "b": -2}, MapIntO: map[string]int{"z": 0},
			MapStruct: map[string]codecReplyItem{"k": {"v", 3}}, MapPtr: map[string]*codecReplyItem{"k": {Until: 4}},
			MapSlice: map[string][]string{"k": {"v"}}, MapNamed: map[codecPlatform]bool{"slack": true},
			Named: "telegram", Struct: codecThread{"slack", "T1", "C1", "1.2"}, Ptr: &codecReplyItem{"tok", math.MaxInt64},
			PS: ptr("ps"), PI: pone, PIO: pone, PPI: &pone, PSlice: &[]string{"e"}, PBytes: &[]byte{9},
			PMap: &map[string]string{"a": "b"}, Arr: [3]int{1, 2, 3}, ByteArr: [4]byte{1, 2, 3, 4}, Num: "12.50",
			Any: map[string]any{"a": []any{"x", 1.5, true, nil}}, AnyO: []byte("any"),
		},
		"floats": {F32: math.MaxFloat32, F64: math.SmallestNonzeroFloat64, FO: math.Copysign(0, -1), Any: 1e21},
	}
}

func TestCodecMatchesAttributeValueOnAllKinds(t *testing.T) {
	for name, v := range codecAllKindsValues() {
		ddbtest.CheckCodec(t, name, v)
		ddbtest.CheckCodec(t, name+" (pointer)", &v)
	}
}

// TestCodecEncodingRulesMatchAttributeValue spells out, one field at a time,
// what attributevalue writes for the edge cases, and that both codecs write
// it.
func TestCodecEncodingRulesMatchAttributeValue(t *testing.T) {
	var nilInt *int
	for _, tc := range []struct {
		name string
		in   any
		want string // the item's JSON, or "error"
	}{
		{"empty string", struct{ X string }{}, `{"X":{"S":""}}`},
		{"empty string, omitempty", struct {
			X string `dynamodbav:",omitempty"`
		}{}, `{}`},
		{"zero int", struct{ X int }{}, `{"X":{"N":"0"}}`},
		{"zero int, omitempty", struct {
			X int `dynamodbav:",omitempty"`
		}{}, `{}`},
		{"false", struct{ X bool }{}, `{"X":{"BOOL":false}}`},
		{"false, omitempty", struct {
			X bool `dynamodbav:",omitempty"`
		}{}, `{}`},
		{"nil slice", struct{ X []string }{}, `{"X":{"NULL":true}}`},
		{"nil slice, omitempty", struct {
			X []string `dynamodbav:",omitempty"`
		}{}, `{}`},
		{"empty slice", struct{ X []string }{[]string{}}, `{"X":{"L":[]}}`},
		{"empty slice, omitempty", struct {
			X []string `dynamodbav:",omitempty"`
		}{[]string{}}, `{"X":{"L":[]}}`},
		{"strings", struct{ X []string }{[]string{"a", ""}}, `{"X":{"L":[{"S":"a"},{"S":""}]}}`},
		{"nil bytes", struct{ X []byte }{}, `{"X":{"NULL":true}}`},
		{"nil bytes, omitempty", struct {
			X []byte `dynamodbav:",omitempty"`
		}{}, `{}`},
		{"empty bytes", struct{ X []byte }{[]byte{}}, `{"X":{"B":""}}`},
		{"empty bytes, omitempty", struct {
			X []byte `dynamodbav:",omitempty"`
		}{[]byte{}}, `{"X":{"B":""}}`},
		{"nil map", struct{ X map[string]int }{}, `{"X":{"NULL":true}}`},
		{"nil map, omitempty", struct {
			X map[string]int `dynamodbav:",omitempty"`
		}{}, `{}`},
		{"empty map", struct{ X map[string]int }{map[string]int{}}, `{"X":{"M":{}}}`},
		{"empty map, omitempty", struct {
			X map[string]int `dynamodbav:",omitempty"`
		}{map[string]int{}}, `{"X":{"M":{}}}`},
		{"nil pointer", struct{ X *codecReplyItem }{}, `{"X":{"NULL":true}}`},
		{"nil pointer, omitempty", struct {
			X *codecReplyItem `dynamodbav:",omitempty"`
		}{}, `{}`},
		{"pointer to zero struct", struct{ X *codecReplyItem }{&codecReplyItem{}}, `{"X":{"M":{"tok":{"S":""},"until":{"N":"0"}}}}`},
		{"zero struct, omitempty: never left out", struct {
			X codecReplyItem `dynamodbav:",omitempty"`
		}{}, `{"X":{"M":{"tok":{"S":""},"until":{"N":"0"}}}}`},
		{"empty struct", struct{ X struct{} }{}, `{"X":{"M":{}}}`},
		{"pointer to empty string, omitempty", struct {
			X *string `dynamodbav:",omitempty"`
		}{ptr("")}, `{"X":{"S":""}}`},
		{"pointer to nil slice", struct{ X *[]string }{new([]string)}, `{"X":{"L":[]}}`},
		{"pointer to nil pointer", struct{ X **int }{new(*int)}, `{"X":{"NULL":true}}`},
		{"pointer to nil pointer, omitempty", struct {
			X **int `dynamodbav:",omitempty"`
		}{new(*int)}, `{"X":{"NULL":true}}`},
		{"nil element", struct{ X []*int }{[]*int{nil}}, `{"X":{"L":[{"NULL":true}]}}`},
		{"nil map element", struct{ X map[string][]int }{map[string][]int{"k": nil}}, `{"X":{"M":{"k":{"NULL":true}}}}`},
		{"nil binary set", struct{ X [][]byte }{}, `{"X":{"NULL":true}}`},
		{"empty binary set", struct{ X [][]byte }{[][]byte{}}, `{"X":{"NULL":true}}`},
		{"binary set", struct{ X [][]byte }{[][]byte{{1}, {}}}, `{"X":{"BS":["AQ==",""]}}`},
		{"binary set with nil", struct{ X [][]byte }{[][]byte{nil}}, `error`},
		{"nil any", struct{ X any }{}, `{"X":{"NULL":true}}`},
		{"any nil pointer", struct{ X any }{nilInt}, `{"X":{"NULL":true}}`},
		{"any nil pointer, omitempty", struct {
			X any `dynamodbav:",omitempty"`
		}{nilInt}, `{"X":{"NULL":true}}`},
		{"any int", struct{ X any }{5}, `{"X":{"N":"5"}}`},
		{"negative zero", struct{ X float64 }{math.Copysign(0, -1)}, `{"X":{"N":"-0"}}`},
		{"float", struct{ X float64 }{0.1}, `{"X":{"N":"0.1"}}`},
		{"float32", struct{ X float32 }{0.1}, `{"X":{"N":"0.1"}}`},
		{"big float", struct{ X float64 }{1e21}, `{"X":{"N":"1000000000000000000000"}}`},
		{"max uint64", struct{ X uint64 }{math.MaxUint64}, `{"X":{"N":"18446744073709551615"}}`},
		{"min int64", struct{ X int64 }{math.MinInt64}, `{"X":{"N":"-9223372036854775808"}}`},
		{"json.Number", struct{ X json.Number }{"1.50"}, `{"X":{"N":"1.50"}}`},
		{"named string", struct{ X codecPlatform }{"slack"}, `{"X":{"S":"slack"}}`},
		{"named bytes", struct{ X json.RawMessage }{json.RawMessage("{}")}, `{"X":{"B":"e30="}}`},
		{"array", struct{ X [2]int }{}, `{"X":{"L":[{"N":"0"},{"N":"0"}]}}`},
		{"empty array", struct{ X [0]int }{}, `{"X":{"L":[]}}`},
		{"byte array", struct{ X [2]byte }{[2]byte{1, 2}}, `{"X":{"B":"AQI="}}`},
		{"untagged, skipped and unexported", struct {
			A string
			B string `dynamodbav:"-"`
			c string
		}{"a", "b", "c"}, `{"A":{"S":"a"}}`},
		{"tagged name shadows Go name", struct {
			A string `dynamodbav:"B"`
			B string
		}{"a", "b"}, `{"B":{"S":"a"}}`},
		{"two tagged alike: both dropped", struct {
			A string `dynamodbav:"x"`
			B string `dynamodbav:"x"`
			C string
		}{"a", "b", "c"}, `{"C":{"S":"c"}}`},
		{"unknown tag option", struct {
			A string `dynamodbav:"a,whatever"`
		}{"x"}, `{"a":{"S":"x"}}`},
		{"empty map key", struct{ X map[string]int }{map[string]int{"": 1}}, `error`},
	} {
		sdk, sdkErr := attributevalue.MarshalMap(tc.in)
		ours, err := ddb.MarshalItem(tc.in)
		if tc.want == "error" {
			if sdkErr == nil || err == nil {
				t.Errorf("%s: attributevalue error %v, ours %v; want both to fail", tc.name, sdkErr, err)
			}
			continue
		}
		if sdkErr != nil || err != nil {
			t.Errorf("%s: attributevalue error %v, ours %v", tc.name, sdkErr, err)
			continue
		}
		if got := ddbtest.FromSDKItem(t, sdk).String(); got != tc.want {
			t.Errorf("%s: attributevalue wrote %s, want %s", tc.name, got, tc.want)
		}
		if got := ours.String(); got != tc.want {
			t.Errorf("%s: ddb.MarshalItem wrote %s, want %s", tc.name, got, tc.want)
		}
	}
}

// checkDecodeMatchesSDK decodes item into a value from fresh, with both
// codecs: both fail, or both give the same value.
func checkDecodeMatchesSDK[T any](t *testing.T, name string, item ddb.Item, fresh func() T) {
	t.Helper()
	want, got := fresh(), fresh()
	sdkErr := attributevalue.UnmarshalMap(ddbtest.ToSDKItem(t, item), &want)
	err := ddb.UnmarshalItem(item, &got)
	if (err != nil) != (sdkErr != nil) {
		t.Errorf("%s: ddb.UnmarshalItem error %v, attributevalue error %v", name, err, sdkErr)
		return
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Errorf("%s: ddb.UnmarshalItem\n got %#v\nwant %#v (attributevalue)", name, got, want)
	}
}

// TestCodecDecodingRulesMatchAttributeValue decodes items attributevalue
// would never write but DynamoDB may hold, and into values already set.
func TestCodecDecodingRulesMatchAttributeValue(t *testing.T) {
	unit := func() codecUnit { return codecUnit{} }
	all := func() codecAllKinds { return codecAllKinds{} }
	filled := func() codecAllKinds {
		return codecAllKinds{
			I: 5, Strs: []string{"a", "b", "c"}, Ints: make([]int, 1, 8), MapInt: map[string]int{"old": 1},
			Ptr: &codecReplyItem{Token: "old", Until: 1}, PS: ptr("old"), Any: &codecReplyItem{Token: "in any"},
			Structs: []codecReplyItem{{Token: "keep", Until: 7}}, Bytes: []byte("old bytes"), Arr: [3]int{7, 8, 9},
		}
	}
	cases := []struct {
		name string
		item ddb.Item
	}{
		{"empty item", ddb.Item{}},
		{"nil item", nil},
		{"unknown attributes", ddb.Item{"zzz": ddb.S("x"), "id": ddb.S("1")}},
		{"attribute names ignoring case", ddb.Item{"ID": ddb.S("1"), "Att": ddb.N("2"), "RCPT": ddb.L(ddb.S("r"))}},
		{"N into string", ddb.Item{"id": ddb.N("5")}},
		{"S into int", ddb.Item{"att": ddb.S("5")}},
		{"N not a number", ddb.Item{"att": ddb.N("abc")}},
		{"N fraction into int", ddb.Item{"att": ddb.N("1.5")}},
		{"N exponent into int", ddb.Item{"att": ddb.N("1e3")}},
		{"N plus sign", ddb.Item{"att": ddb.N("+7")}},
		{"N space", ddb.Item{"att": ddb.N(" 7")}},
		{"N empty", ddb.Item{"att": ddb.N("")}},
		{"N hex", ddb.Item{"att": ddb.N("0x10")}},
		{"N underscores", ddb.Item{"att": ddb.N("1_000")}},
		{"N past int64", ddb.Item{"lease": ddb.N("9223372036854775808")}},
		{"BOOL into string", ddb.Item{"id": ddb.Bool(true)}},
		{"S into bool", ddb.Item{"resent": ddb.S("true")}},
		{"L into string", ddb.Item{"id": ddb.L(ddb.S("x"))}},
		{"M into slice", ddb.Item{"rcpt": ddb.M(map[string]ddb.Value{"a": ddb.S("x")})}},
		{"M into string", ddb.Item{"id": ddb.M(nil)}},
		{"SS into slice", ddb.Item{"rcpt": ddb.SS("a", "b")}},
		{"NS into strings", ddb.Item{"rcpt": ddb.NS("1", "2.5")}},
		{"B into string", ddb.Item{"id": ddb.B([]byte("x"))}},
		{"NULLs", ddb.Item{"id": ddb.Null(), "att": ddb.Null(), "rcpt": ddb.Null(), "resent": ddb.Null()}},
		{"L with NULL", ddb.Item{"rcpt": ddb.L(ddb.S("a"), ddb.Null())}},
		{"L of ddb.N into strings", ddb.Item{"rcpt": ddb.L(ddb.N("1"))}},
		{"empty L", ddb.Item{"rcpt": ddb.L()}},
	}
	for _, tc := range cases {
		checkDecodeMatchesSDK(t, "unit: "+tc.name, tc.item, unit)
	}
	allCases := []struct {
		name string
		item ddb.Item
	}{
		{"int8 range", ddb.Item{"i8": ddb.N("127"), "u8": ddb.N("255"), "i16": ddb.N("-32768")}},
		{"int8 overflow", ddb.Item{"i8": ddb.N("128")}},
		{"int8 underflow", ddb.Item{"i8": ddb.N("-129")}},
		{"uint negative", ddb.Item{"u": ddb.N("-1")}},
		{"uint64 max", ddb.Item{"u64": ddb.N("18446744073709551615")}},
		{"uint64 overflow", ddb.Item{"u64": ddb.N("18446744073709551616")}},
		{"float32 overflow", ddb.Item{"f32": ddb.N("3.5e38")}},
		{"float32 tiny", ddb.Item{"f32": ddb.N("1e-50")}},
		{"float64 overflow", ddb.Item{"f64": ddb.N("1e400")}},
		{"float exponent", ddb.Item{"f64": ddb.N("-1.5E-3"), "f32": ddb.N("2")}},
		{"empty B", ddb.Item{"b": ddb.B(nil), "raw": ddb.B([]byte{})}},
		{"B", ddb.Item{"b": ddb.B([]byte{1, 2}), "raw": ddb.B([]byte("{}")), "barr": ddb.B([]byte{4, 3, 2, 1})}},
		{"L of ddb.N into bytes", ddb.Item{"b": ddb.L(ddb.N("1"), ddb.N("255"))}},
		{"L of ddb.N past a byte", ddb.Item{"b": ddb.L(ddb.N("256"))}},
		{"BS", ddb.Item{"bs": ddb.BS([]byte{1}, []byte{}), "bso": ddb.L(ddb.B([]byte{2}))}},
		{"NS into ints", ddb.Item{"is": ddb.NS("1", "-2")}},
		{"NS bad number", ddb.Item{"is": ddb.NS("1", "x")}},
		{"L into array, longer", ddb.Item{"arr": ddb.L(ddb.N("1"), ddb.N("2"), ddb.N("3"), ddb.N("4"))}},
		{"L into array, shorter", ddb.Item{"arr": ddb.L(ddb.N("1"))}},
		{"M into struct pointer", ddb.Item{"p": ddb.M(map[string]ddb.Value{"tok": ddb.S("t")}), "po": ddb.M(nil)}},
		{"NULL into struct pointer", ddb.Item{"p": ddb.Null()}},
		{"M into struct", ddb.Item{"thread": ddb.M(map[string]ddb.Value{"Platform": ddb.S("slack"), "chat": ddb.S("C1"), "extra": ddb.N("1")})}},
		{"M into map", ddb.Item{"mi": ddb.M(map[string]ddb.Value{"a": ddb.N("1"), "b": ddb.Null(), "": ddb.N("3")})}},
		{"M into map, bad element", ddb.Item{"mi": ddb.M(map[string]ddb.Value{"a": ddb.S("1")})}},
		{"M into map of pointers", ddb.Item{"MapPtr": ddb.M(map[string]ddb.Value{"a": ddb.Null(), "b": ddb.M(nil)})}},
		{"M into named keys", ddb.Item{"MapNamed": ddb.M(map[string]ddb.Value{"slack": ddb.Bool(true)})}},
		{"L into slice of pointers", ddb.Item{"pstructs": ddb.L(ddb.Null(), ddb.M(map[string]ddb.Value{"until": ddb.N("3")}))}},
		{"pointers", ddb.Item{"ps": ddb.S("s"), "pi": ddb.N("1"), "ppi": ddb.N("2"), "pslice": ddb.L(), "pbytes": ddb.B(nil), "pmap": ddb.M(nil)}},
		{"json.Number", ddb.Item{"num": ddb.N("1.50")}},
		{"S into json.Number", ddb.Item{"num": ddb.S("x")}},
		{"any S", ddb.Item{"any": ddb.S("x")}},
		{"any N", ddb.Item{"any": ddb.N("1.5")}},
		{"any bad N", ddb.Item{"any": ddb.N("x")}},
		{"any BOOL", ddb.Item{"any": ddb.Bool(true)}},
		{"any B", ddb.Item{"any": ddb.B([]byte("b"))}},
		{"any L", ddb.Item{"any": ddb.L(ddb.S("x"), ddb.N("1"), ddb.Null(), ddb.L(), ddb.M(nil))}},
		{"any M", ddb.Item{"any": ddb.M(map[string]ddb.Value{"a": ddb.N("2"), "b": ddb.SS("x")})}},
		{"any sets", ddb.Item{"any": ddb.SS("a"), "anyo": ddb.NS("1", "2")}},
		{"any BS", ddb.Item{"any": ddb.BS([]byte("a"))}},
		{"any NULL", ddb.Item{"any": ddb.Null()}},
		{"nested lists", ddb.Item{"nest": ddb.L(ddb.L(ddb.S("a")), ddb.Null(), ddb.L())}},
		{"map of slices", ddb.Item{"MapSlice": ddb.M(map[string]ddb.Value{"k": ddb.L(ddb.S("v")), "n": ddb.Null()})}},
	}
	for _, tc := range allCases {
		checkDecodeMatchesSDK(t, "all: "+tc.name, tc.item, all)
	}
	// Into values already set: attributevalue reuses slices, adds to maps
	// and decodes through pointers, leaving absent attributes alone.
	for _, tc := range []struct {
		name string
		item ddb.Item
	}{
		{"nothing", ddb.Item{}},
		{"shorter list", ddb.Item{"ss": ddb.L(ddb.S("x"))}},
		{"empty list", ddb.Item{"ss": ddb.L()}},
		{"longer list", ddb.Item{"ss": ddb.L(ddb.S("1"), ddb.S("2"), ddb.S("3"), ddb.S("4"))}},
		{"list into spare capacity", ddb.Item{"is": ddb.L(ddb.N("1"), ddb.N("2"))}},
		{"structs merged", ddb.Item{"structs": ddb.L(ddb.M(map[string]ddb.Value{"tok": ddb.S("new")}))}},
		{"map merged", ddb.Item{"mi": ddb.M(map[string]ddb.Value{"new": ddb.N("2")})}},
		{"pointer reused", ddb.Item{"p": ddb.M(map[string]ddb.Value{"tok": ddb.S("new")}), "ps": ddb.S("new")}},
		{"NULLs clear", ddb.Item{"p": ddb.Null(), "ps": ddb.Null(), "i": ddb.Null(), "ss": ddb.Null(), "mi": ddb.Null(), "any": ddb.Null()}},
		{"through any's pointer", ddb.Item{"any": ddb.M(map[string]ddb.Value{"tok": ddb.S("new")})}},
		{"bytes reused", ddb.Item{"b": ddb.B([]byte("new"))}},
		{"array partly", ddb.Item{"arr": ddb.L(ddb.N("1"))}},
	} {
		checkDecodeMatchesSDK(t, "filled: "+tc.name, tc.item, filled)
	}
}

// TestCodecMarshalValueMatchesAttributeValue covers ddb.Marshal and ddb.Unmarshal of
// single values, not items.
func TestCodecMarshalValueMatchesAttributeValue(t *testing.T) {
	for _, in := range []any{
		nil, "", "x", 0, -5, uint8(7), 1.25, true, false, []byte{}, []byte(nil), []string(nil), []string{},
		[]int{1}, map[string]int{}, map[string]any{"a": nil}, (*int)(nil), ptr(3), codecReplyItem{"t", 1},
		&codecReplyItem{}, [][]byte{{1}}, []any{"a", 1, nil}, json.Number("7"),
	} {
		sdk, sdkErr := attributevalue.Marshal(in)
		ours, err := ddb.Marshal(in)
		if sdkErr != nil || err != nil {
			t.Errorf("Marshal(%#v): attributevalue error %v, ours %v", in, sdkErr, err)
			continue
		}
		if want := ddbtest.FromSDK(t, sdk); !ours.Equal(want) {
			t.Errorf("Marshal(%#v) = %s, attributevalue %s", in, ours, want)
		}
	}
	for _, tc := range []struct {
		v    ddb.Value
		into func() any
	}{
		{ddb.S("x"), func() any { return new(string) }},
		{ddb.N("5"), func() any { return new(int) }},
		{ddb.N("5"), func() any { return new(*int) }},
		{ddb.Null(), func() any { return ptr(ptr(4)) }},
		{ddb.Null(), func() any { return ptr(4) }},
		{ddb.Value{}, func() any { return ptr("x") }},
		{ddb.L(ddb.S("a")), func() any { return new([]string) }},
		{ddb.M(map[string]ddb.Value{"a": ddb.N("1")}), func() any { return new(map[string]int) }},
		{ddb.M(map[string]ddb.Value{"a": ddb.N("1")}), func() any { return new(any) }},
		{ddb.B([]byte("x")), func() any { return new([]byte) }},
		{ddb.N("300"), func() any { return new(uint8) }},
	} {
		want, got := tc.into(), tc.into()
		sdkErr := attributevalue.Unmarshal(sdkOrNil(t, tc.v), want)
		err := ddb.Unmarshal(tc.v, got)
		if (err != nil) != (sdkErr != nil) {
			t.Errorf("Unmarshal(%s) into %T: error %v, attributevalue error %v", tc.v, got, err, sdkErr)
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("Unmarshal(%s) into %T = %#v, attributevalue %#v", tc.v, got, got, want)
		}
	}
	// ddb.Value passes through both ways.
	if v, err := ddb.Marshal(struct{ X ddb.Value }{ddb.SS("a")}); err != nil || v.String() != `{"M":{"X":{"SS":["a"]}}}` {
		t.Errorf("Marshal of a ddb.Value field = %s, %v", v, err)
	}
	var out struct{ X ddb.Value }
	if err := ddb.UnmarshalItem(ddb.Item{"X": ddb.NS("1")}, &out); err != nil || out.X.String() != `{"NS":["1"]}` {
		t.Errorf("UnmarshalItem into a ddb.Value field = %s, %v", out.X, err)
	}
}

func sdkOrNil(t testing.TB, v ddb.Value) types.AttributeValue {
	if v.Kind() == ddb.Invalid {
		return nil
	}
	return ddbtest.ToSDK(t, v)
}

// TestCodecErrors checks that what cannot be decoded or encoded is an error
// that names the field, never a panic.
func TestCodecErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		item  ddb.Item
		into  any
		where string // in the message
	}{
		{"S into int", ddb.Item{"att": ddb.S("5")}, &codecUnit{}, "att"},
		{"N not a number", ddb.Item{"att": ddb.N("abc")}, &codecUnit{}, "att"},
		{"L into string", ddb.Item{"id": ddb.L(ddb.S("x"))}, &codecUnit{}, "id"},
		{"M into slice", ddb.Item{"rcpt": ddb.M(nil)}, &codecUnit{}, "rcpt"},
		{"BOOL into int", ddb.Item{"att": ddb.Bool(true)}, &codecUnit{}, "att"},
		{"B into string", ddb.Item{"id": ddb.B(nil)}, &codecUnit{}, "id"},
		{"overflow into int8", ddb.Item{"X": ddb.N("128")}, &struct{ X int8 }{}, "X"},
		{"negative into uint", ddb.Item{"X": ddb.N("-1")}, &struct{ X uint }{}, "X"},
		{"nested", ddb.Item{"units": ddb.L(ddb.M(nil), ddb.M(map[string]ddb.Value{"att": ddb.S("x")}))}, &codecPlan{}, "units[1].att"},
		{"in a map", ddb.Item{"posts": ddb.M(map[string]ddb.Value{"k": ddb.S("x")})}, &codecPlan{}, `posts["k"]`},
		{"B into short array", ddb.Item{"X": ddb.B([]byte{1, 2, 3})}, &struct{ X [2]byte }{}, "X"},
		{"chan field", ddb.Item{"C": ddb.Null()}, &struct{ C chan int }{}, "C"},
		{"func field", ddb.Item{"F": ddb.S("x")}, &struct{ F func() }{}, "F"},
		{"error field", ddb.Item{"E": ddb.S("x")}, &struct{ E error }{}, "E"},
		{"complex field", ddb.Item{"C": ddb.N("1")}, &struct{ C complex128 }{}, "C"},
		{"time field", ddb.Item{"T": ddb.S("2024-01-01T00:00:00Z")}, &struct{ T time.Time }{}, "T"},
		{"int keys", ddb.Item{"M": ddb.M(nil)}, &struct{ M map[int]string }{}, "M"},
		{"embedded struct", ddb.Item{}, &struct{ codecReplyItem }{}, "embedded"},
		{"set tag", ddb.Item{}, &struct {
			X []string `dynamodbav:",stringset"`
		}{}, "stringset"},
		{"M into int item", ddb.Item{}, new(int), "M"},
	} {
		err := ddb.UnmarshalItem(tc.item, tc.into)
		if err == nil {
			t.Errorf("%s: ddb.UnmarshalItem into %T: no error", tc.name, tc.into)
		} else if !strings.Contains(err.Error(), tc.where) {
			t.Errorf("%s: error %q does not name %s", tc.name, err, tc.where)
		}
	}
	for _, out := range []any{nil, codecUnit{}, (*codecUnit)(nil), 5} {
		if err := ddb.UnmarshalItem(ddb.Item{}, out); err == nil {
			t.Errorf("UnmarshalItem into %#v: no error", out)
		}
		if err := ddb.Unmarshal(ddb.S("x"), out); err == nil {
			t.Errorf("Unmarshal into %#v: no error", out)
		}
	}
	for _, tc := range []struct {
		name  string
		in    any
		where string
	}{
		{"nil", nil, "nil"},
		{"nil pointer", (*codecUnit)(nil), "nil"},
		{"not a struct", 5, "int"},
		{"a list", []codecUnit{}, "no struct"},
		{"chan field", struct{ C chan int }{}, "C"},
		{"nil func field", struct{ F func() }{}, "F"},
		{"error field", struct{ E error }{}, "E"},
		{"complex field", struct{ C complex64 }{}, "C"},
		{"chan in any", struct{ A any }{make(chan int)}, "A"},
		{"time field", struct{ T time.Time }{}, "T"},
		{"time pointer field", struct{ T *time.Time }{}, "T"},
		{"int keys", struct{ M map[int]string }{}, "M"},
		{"empty key", struct{ M map[string]int }{map[string]int{"": 1}}, "M"},
		{"NaN", struct{ F float64 }{math.NaN()}, "F"},
		{"infinity", struct{ F float32 }{float32(math.Inf(1))}, "F"},
		{"nil in binary set", struct{ B [][]byte }{[][]byte{{1}, nil}}, "B[1]"},
		{"embedded struct", struct{ codecReplyItem }{}, "embedded"},
		{"set tag", struct {
			X []string `dynamodbav:",stringset"`
		}{}, "stringset"},
		{"nested", codecPlan{Units: []codecUnit{{}}, Thread: codecThread{}}, ""},
		{"zero Value", struct{ V ddb.Value }{}, "V"},
	} {
		_, err := ddb.MarshalItem(tc.in)
		if tc.name == "nested" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: ddb.MarshalItem(%#v): no error", tc.name, tc.in)
		} else if !strings.Contains(err.Error(), tc.where) {
			t.Errorf("%s: error %q does not name %s", tc.name, err, tc.where)
		}
	}
	if _, err := ddb.Marshal(make(chan int)); err == nil {
		t.Errorf("Marshal(chan): no error")
	}
	// Errors wrap what caused them.
	err := ddb.UnmarshalItem(ddb.Item{"att": ddb.N("x")}, &codecUnit{})
	if !errors.Is(err, strconv.ErrSyntax) {
		t.Errorf("error %v does not wrap strconv.ErrSyntax", err)
	}
}

// TestCodecRoundTripsThroughJSON writes items as the client sends them and
// reads them back as it receives them.
func TestCodecRoundTripsThroughJSON(t *testing.T) {
	for name, v := range codecAllKindsValues() {
		// What does not come back as it was, by attributevalue's rules too:
		// fields it never writes, a pointer in an interface{} (NULL, so
		// nil), numbers in one (float64), empty binary sets (NULL, so nil)
		// and pointers to nil (NULL, or an empty ddb.L, ddb.B or ddb.M).
		v.Skipped, v.unexported = "", ""
		switch name {
		case "nil inside":
			v.Any, v.AnyO = nil, nil
		case "floats":
			v.F32 = 1.5 // math.MaxFloat32 does not read back, as above
		case "empty, not nil":
			v.ByteSet, v.ByteSetO, v.PPI, v.PSlice, v.PBytes, v.PMap, v.AnyO = nil, nil, nil, nil, nil, nil, nil
		}
		ddbtest.CheckRoundTrip(t, name, v)
	}
}

// codecNumbers receives one fuzzed ddb.N in fields of each number kind.
type codecNumbers struct {
	I   int     `dynamodbav:"i"`
	I8  int8    `dynamodbav:"i8"`
	U16 uint16  `dynamodbav:"u16"`
	U64 uint64  `dynamodbav:"u64"`
	F32 float32 `dynamodbav:"f32"`
	F64 float64 `dynamodbav:"f64"`
	S   string  `dynamodbav:"s"`
	A   any     `dynamodbav:"a"`
}

// FuzzCodecNumbersMatchAttributeValue: a number, as DynamoDB could hand it
// back, decodes alike into every number kind, a string and an any. (The
// store's item shapes are fuzzed beside them, in shared/store/dynamostore.)
func FuzzCodecNumbersMatchAttributeValue(f *testing.F) {
	for _, n := range []string{"42", "", "-129", "1e3", "18446744073709551616", "3.5e38", "NaN", "+0x1p-2", "-0", "+7", " 7"} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, num string) {
		for _, k := range []string{"i", "i8", "u16", "u64", "f32", "f64", "s", "a"} {
			item := ddb.Item{k: ddb.N(num)}
			var want, got codecNumbers
			sdkErr := attributevalue.UnmarshalMap(ddbtest.ToSDKItem(t, item), &want)
			err := ddb.UnmarshalItem(item, &got)
			if (err != nil) != (sdkErr != nil) {
				t.Fatalf("N %q into %s: error %v, attributevalue error %v", num, k, err, sdkErr)
			}
			// %#v, as NaN is not DeepEqual to itself.
			if err == nil && fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
				t.Fatalf("N %q into %s:\n got %#v\nwant %#v", num, k, got, want)
			}
		}
	})
}
