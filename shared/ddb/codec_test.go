package ddb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The shapes of the store's items (shared/store/dynamostore), copied so
// these tests pin the codec to what production tables hold. message.Thread
// has only json tags, so attributevalue names its attributes by Go field.

type codecPlatform string

type codecThread struct {
	Platform codecPlatform `json:"platform"`
	Account  string        `json:"account"`
	Chat     string        `json:"chat"`
	Thread   string        `json:"thread,omitempty"`
}

type codecIntentItem struct {
	PK        string          `dynamodbav:"pk"`
	Version   int             `dynamodbav:"v,omitempty"`
	Kind      string          `dynamodbav:"kind"`
	ID        string          `dynamodbav:"id"`
	Origin    string          `dynamodbav:"origin"`
	Thread    codecThread     `dynamodbav:"thread"`
	Units     []codecUnitItem `dynamodbav:"units"`
	CreatedAt int64           `dynamodbav:"created_at"`
	ExpiresAt int64           `dynamodbav:"expires_at"`
	Reply     *codecReplyItem `dynamodbav:"rc,omitempty"`
	Sweep     string          `dynamodbav:"sw,omitempty"`
	SweepAt   int64           `dynamodbav:"sw_at,omitempty"`
}

type codecUnitItem struct {
	ID          string   `dynamodbav:"id"`
	Text        string   `dynamodbav:"text"`
	ContentKind string   `dynamodbav:"ck,omitempty"`
	Prompt      string   `dynamodbav:"q,omitempty"`
	ReplyTo     string   `dynamodbav:"reply_to"`
	Parley      bool     `dynamodbav:"o,omitempty"`
	Replaces    string   `dynamodbav:"edit,omitempty"`
	State       string   `dynamodbav:"st"`
	Attempt     int      `dynamodbav:"att"`
	LeaseUntil  int64    `dynamodbav:"lease"`
	Receipt     []string `dynamodbav:"rcpt"`
	SentAt      int64    `dynamodbav:"sent"`
	FailClass   string   `dynamodbav:"fc"`
	FailReason  string   `dynamodbav:"fr"`
	NextAt      int64    `dynamodbav:"next,omitempty"`
	Resent      bool     `dynamodbav:"resent"`
	Resends     int      `dynamodbav:"rsn,omitempty"`
	Reported    string   `dynamodbav:"rep,omitempty"`
	UpdatedAt   int64    `dynamodbav:"upd"`
}

type codecReplyItem struct {
	Token string `dynamodbav:"tok"`
	Until int64  `dynamodbav:"until"`
}

type codecAwaitItem struct {
	PK         string         `dynamodbav:"pk"`
	Kind       string         `dynamodbav:"kind"`
	TurnID     string         `dynamodbav:"id"`
	Thread     codecThread    `dynamodbav:"thread"`
	EventKey   string         `dynamodbav:"event"`
	ClaimKey   string         `dynamodbav:"claim"`
	ClaimOwner string         `dynamodbav:"owner"`
	Deadline   int64          `dynamodbav:"deadline"`
	State      string         `dynamodbav:"st"`
	Handle     string         `dynamodbav:"handle,omitempty"`
	PostID     string         `dynamodbav:"post,omitempty"`
	PostType   string         `dynamodbav:"post_type,omitempty"`
	PostBody   []byte         `dynamodbav:"post_body,omitempty"`
	PostAt     int64          `dynamodbav:"post_at,omitempty"`
	PostEdit   string         `dynamodbav:"post_edit,omitempty"`
	Posts      map[string]int `dynamodbav:"posts"`
	Bubbles    int            `dynamodbav:"bubbles"`
	CreatedAt  int64          `dynamodbav:"created_at"`
	ExpiresAt  int64          `dynamodbav:"expires_at"`
}

type codecQuestionItem struct {
	PK        string      `dynamodbav:"pk"`
	Kind      string      `dynamodbav:"kind"`
	Thread    codecThread `dynamodbav:"thread"`
	ID        string      `dynamodbav:"id"`
	Short     string      `dynamodbav:"short"`
	Origin    string      `dynamodbav:"origin"`
	Owner     string      `dynamodbav:"owner"`
	Form      string      `dynamodbav:"form"`
	IntentID  string      `dynamodbav:"intent"`
	UnitID    string      `dynamodbav:"unit"`
	State     string      `dynamodbav:"st"`
	Reason    string      `dynamodbav:"reason,omitempty"`
	Field     int         `dynamodbav:"field"`
	Selected  []string    `dynamodbav:"sel,omitempty"`
	Answers   string      `dynamodbav:"answers,omitempty"`
	ClosedBy  string      `dynamodbav:"closed_by,omitempty"`
	Version   int         `dynamodbav:"v"`
	CreatedAt int64       `dynamodbav:"created_at"`
	DueAt     int64       `dynamodbav:"due"`
	ExpiresAt int64       `dynamodbav:"expires_at"`
	Sweep     string      `dynamodbav:"sw,omitempty"`
	SweepAt   int64       `dynamodbav:"sw_at,omitempty"`
}

// codecAllKinds has a field of every kind the codec supports, with and
// without omitempty, beyond what the store uses today.
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

func codecStoreValues() map[string]any {
	unit := codecUnitItem{
		ID: "u1", Text: "héllo 👋 \x00 world", ContentKind: "prompt", Prompt: `{"q":"?"}`, ReplyTo: "r", Parley: true,
		Replaces: "m1", State: "sent", Attempt: 3, LeaseUntil: 1_700_000_000_000, Receipt: []string{"tg:1", "tg:2"},
		SentAt: -1, FailClass: "permanent", FailReason: "blocked", NextAt: math.MinInt64, Resent: true, Resends: 2,
		Reported: "yes", UpdatedAt: math.MaxInt64,
	}
	thread := codecThread{Platform: "slack", Account: "T0", Chat: "C0", Thread: "1700000000.000100"}
	return map[string]any{
		"intent zero":     codecIntentItem{},
		"intent empty":    codecIntentItem{Units: []codecUnitItem{}, Reply: &codecReplyItem{}},
		"intent units":    codecIntentItem{PK: "intent#1", Version: 2, Kind: "intent", ID: "1", Origin: "o", Thread: thread, Units: []codecUnitItem{unit, {}, {Receipt: []string{}}, {Receipt: []string{""}}}, CreatedAt: 1, ExpiresAt: -1, Reply: &codecReplyItem{"tok", 5}, Sweep: "0", SweepAt: 10},
		"intent negative": codecIntentItem{Version: -2, CreatedAt: math.MinInt64, ExpiresAt: math.MaxInt64, SweepAt: -1},
		"unit zero":       codecUnitItem{},
		"unit full":       unit,
		"unit pointer":    &unit,
		"reply zero":      codecReplyItem{},
		"await zero":      codecAwaitItem{},
		"await empty":     codecAwaitItem{PostBody: []byte{}, Posts: map[string]int{}},
		"await full":      codecAwaitItem{PK: "await#t", Kind: "await", TurnID: "t", Thread: thread, EventKey: "e", ClaimKey: "c", ClaimOwner: "o", Deadline: 9, State: "posted", Handle: "h", PostID: "p", PostType: "card", PostBody: []byte{0, 0xfe, 'x'}, PostAt: 4, PostEdit: "ed", Posts: map[string]int{"a": 0, "b": -1, "ü": math.MaxInt}, Bubbles: 3, CreatedAt: 1, ExpiresAt: 2},
		"question zero":   codecQuestionItem{},
		"question sel":    codecQuestionItem{PK: "q#1", Thread: thread, Selected: []string{"a", ""}, Field: -1, Version: 1},
		"question none":   codecQuestionItem{Selected: []string{}, Reason: "", Answers: "{}"},
	}
}

// --- converting between the SDK's attribute values and ours ---

func fromSDK(t testing.TB, av types.AttributeValue) Value {
	t.Helper()
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return S(v.Value)
	case *types.AttributeValueMemberN:
		return N(v.Value)
	case *types.AttributeValueMemberB:
		return B(v.Value)
	case *types.AttributeValueMemberBOOL:
		return Bool(v.Value)
	case *types.AttributeValueMemberNULL:
		if !v.Value {
			t.Fatalf("SDK wrote NULL false")
		}
		return Null()
	case *types.AttributeValueMemberM:
		return M(fromSDKItem(t, v.Value))
	case *types.AttributeValueMemberL:
		l := make([]Value, len(v.Value))
		for i, e := range v.Value {
			l[i] = fromSDK(t, e)
		}
		return L(l...)
	case *types.AttributeValueMemberSS:
		return SS(v.Value...)
	case *types.AttributeValueMemberNS:
		return NS(v.Value...)
	case *types.AttributeValueMemberBS:
		return BS(v.Value...)
	}
	t.Fatalf("SDK attribute value %T", av)
	return Value{}
}

func fromSDKItem(t testing.TB, m map[string]types.AttributeValue) Item {
	t.Helper()
	it := make(Item, len(m))
	for k, v := range m {
		it[k] = fromSDK(t, v)
	}
	return it
}

func toSDK(t testing.TB, v Value) types.AttributeValue {
	t.Helper()
	switch v.Kind() {
	case KindS:
		s, _ := v.AsS()
		return &types.AttributeValueMemberS{Value: s}
	case KindN:
		n, _ := v.AsN()
		return &types.AttributeValueMemberN{Value: n}
	case KindB:
		b, _ := v.AsB()
		return &types.AttributeValueMemberB{Value: b}
	case KindBOOL:
		b, _ := v.AsBool()
		return &types.AttributeValueMemberBOOL{Value: b}
	case KindNULL:
		return &types.AttributeValueMemberNULL{Value: true}
	case KindM:
		m, _ := v.AsM()
		return &types.AttributeValueMemberM{Value: toSDKItem(t, m)}
	case KindL:
		l, _ := v.AsL()
		out := make([]types.AttributeValue, len(l))
		for i, e := range l {
			out[i] = toSDK(t, e)
		}
		return &types.AttributeValueMemberL{Value: out}
	case KindSS:
		ss, _ := v.AsSS()
		return &types.AttributeValueMemberSS{Value: ss}
	case KindNS:
		ns, _ := v.AsNS()
		return &types.AttributeValueMemberNS{Value: ns}
	case KindBS:
		bs, _ := v.AsBS()
		return &types.AttributeValueMemberBS{Value: bs}
	}
	t.Fatalf("zero Value in an item")
	return nil
}

func toSDKItem(t testing.TB, it map[string]Value) map[string]types.AttributeValue {
	t.Helper()
	m := make(map[string]types.AttributeValue, len(it))
	for k, v := range it {
		m[k] = toSDK(t, v)
	}
	return m
}

// sameValue compares attribute values as DynamoDB would: exact strings
// (not JSON, which would hide invalid UTF-8), bytes, order of lists.
func sameValue(a, b Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case KindS, KindN:
		return a.s == b.s
	case KindB:
		return bytes.Equal(a.b, b.b)
	case KindBOOL:
		return a.bl == b.bl
	case KindM:
		return sameItem(a.m, b.m)
	case KindL:
		return slices.EqualFunc(a.l, b.l, sameValue)
	case KindSS, KindNS:
		return slices.Equal(a.ss, b.ss)
	case KindBS:
		return slices.EqualFunc(a.bs, b.bs, bytes.Equal)
	}
	return true // NULL, or both zero
}

func sameItem(a, b map[string]Value) bool {
	if len(a) != len(b) {
		return false
	}
	for k, av := range a {
		bv, ok := b[k]
		if !ok || !sameValue(av, bv) {
			return false
		}
	}
	return true
}

// checkMatchesSDK encodes in with both codecs and decodes each one's item
// with both, requiring the same attribute values and the same Go values.
func checkMatchesSDK[T any](t testing.TB, name string, in T) {
	t.Helper()
	sdk, sdkErr := attributevalue.MarshalMap(in)
	ours, err := MarshalItem(in)
	if (err != nil) != (sdkErr != nil) {
		t.Fatalf("%s: MarshalItem error %v, attributevalue error %v", name, err, sdkErr)
	}
	if err != nil {
		return
	}
	sdkItem := fromSDKItem(t, sdk)
	if !sameItem(ours, sdkItem) {
		t.Fatalf("%s: MarshalItem\n got %s\nwant %s (attributevalue)", name, ours, sdkItem)
	}

	sdkOne, sdkErr := attributevalue.Marshal(in)
	one, err := Marshal(in)
	if err != nil || sdkErr != nil {
		t.Fatalf("%s: Marshal error %v, attributevalue error %v", name, err, sdkErr)
	}
	if want := fromSDK(t, sdkOne); !sameValue(one, want) {
		t.Fatalf("%s: Marshal\n got %s\nwant %s (attributevalue)", name, one, want)
	}

	// What the SDK wrote, both decode alike; what we wrote, the SDK reads
	// as we do.
	// (Both may fail: attributevalue writes math.MaxFloat32 as a number
	// that overflows a float32 when read back.)
	var bySDK, byUs, sdkOfOurs T
	sdkErr = attributevalue.UnmarshalMap(sdk, &bySDK)
	err = UnmarshalItem(sdkItem, &byUs)
	if (err != nil) != (sdkErr != nil) {
		t.Fatalf("%s: UnmarshalItem error %v, attributevalue error %v", name, err, sdkErr)
	}
	if err == nil && !reflect.DeepEqual(byUs, bySDK) {
		t.Fatalf("%s: UnmarshalItem\n got %#v\nwant %#v (attributevalue)", name, byUs, bySDK)
	}
	if sdkErr := attributevalue.UnmarshalMap(toSDKItem(t, ours), &sdkOfOurs); (err != nil) != (sdkErr != nil) {
		t.Fatalf("%s: attributevalue error %v decoding our item, ours %v", name, sdkErr, err)
	}
	if err == nil && !reflect.DeepEqual(sdkOfOurs, byUs) {
		t.Fatalf("%s: attributevalue decodes our item as\n%#v\nwe as\n%#v", name, sdkOfOurs, byUs)
	}
}

func TestCodecMatchesAttributeValueOnStoreItems(t *testing.T) {
	for name, v := range codecStoreValues() {
		switch v := v.(type) {
		case codecIntentItem:
			checkMatchesSDK(t, name, v)
		case codecUnitItem:
			checkMatchesSDK(t, name, v)
		case *codecUnitItem:
			checkMatchesSDK(t, name, v)
		case codecReplyItem:
			checkMatchesSDK(t, name, v)
		case codecAwaitItem:
			checkMatchesSDK(t, name, v)
		case codecQuestionItem:
			checkMatchesSDK(t, name, v)
		default:
			t.Fatalf("%s: no case for %T", name, v)
		}
	}
}

func TestCodecMatchesAttributeValueOnAllKinds(t *testing.T) {
	for name, v := range codecAllKindsValues() {
		checkMatchesSDK(t, name, v)
		checkMatchesSDK(t, name+" (pointer)", &v)
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
		ours, err := MarshalItem(tc.in)
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
		if got := fromSDKItem(t, sdk).String(); got != tc.want {
			t.Errorf("%s: attributevalue wrote %s, want %s", tc.name, got, tc.want)
		}
		if got := ours.String(); got != tc.want {
			t.Errorf("%s: MarshalItem wrote %s, want %s", tc.name, got, tc.want)
		}
	}
}

// checkDecodeMatchesSDK decodes item into a value from fresh, with both
// codecs: both fail, or both give the same value.
func checkDecodeMatchesSDK[T any](t *testing.T, name string, item Item, fresh func() T) {
	t.Helper()
	want, got := fresh(), fresh()
	sdkErr := attributevalue.UnmarshalMap(toSDKItem(t, item), &want)
	err := UnmarshalItem(item, &got)
	if (err != nil) != (sdkErr != nil) {
		t.Errorf("%s: UnmarshalItem error %v, attributevalue error %v", name, err, sdkErr)
		return
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Errorf("%s: UnmarshalItem\n got %#v\nwant %#v (attributevalue)", name, got, want)
	}
}

// TestCodecDecodingRulesMatchAttributeValue decodes items attributevalue
// would never write but DynamoDB may hold, and into values already set.
func TestCodecDecodingRulesMatchAttributeValue(t *testing.T) {
	unit := func() codecUnitItem { return codecUnitItem{} }
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
		item Item
	}{
		{"empty item", Item{}},
		{"nil item", nil},
		{"unknown attributes", Item{"zzz": S("x"), "id": S("1")}},
		{"attribute names ignoring case", Item{"ID": S("1"), "Att": N("2"), "RCPT": L(S("r"))}},
		{"N into string", Item{"id": N("5")}},
		{"S into int", Item{"att": S("5")}},
		{"N not a number", Item{"att": N("abc")}},
		{"N fraction into int", Item{"att": N("1.5")}},
		{"N exponent into int", Item{"att": N("1e3")}},
		{"N plus sign", Item{"att": N("+7")}},
		{"N space", Item{"att": N(" 7")}},
		{"N empty", Item{"att": N("")}},
		{"N hex", Item{"att": N("0x10")}},
		{"N underscores", Item{"att": N("1_000")}},
		{"N past int64", Item{"lease": N("9223372036854775808")}},
		{"BOOL into string", Item{"id": Bool(true)}},
		{"S into bool", Item{"resent": S("true")}},
		{"L into string", Item{"id": L(S("x"))}},
		{"M into slice", Item{"rcpt": M(map[string]Value{"a": S("x")})}},
		{"M into string", Item{"id": M(nil)}},
		{"SS into slice", Item{"rcpt": SS("a", "b")}},
		{"NS into strings", Item{"rcpt": NS("1", "2.5")}},
		{"B into string", Item{"id": B([]byte("x"))}},
		{"NULLs", Item{"id": Null(), "att": Null(), "rcpt": Null(), "resent": Null()}},
		{"L with NULL", Item{"rcpt": L(S("a"), Null())}},
		{"L of N into strings", Item{"rcpt": L(N("1"))}},
		{"empty L", Item{"rcpt": L()}},
	}
	for _, tc := range cases {
		checkDecodeMatchesSDK(t, "unit: "+tc.name, tc.item, unit)
	}
	allCases := []struct {
		name string
		item Item
	}{
		{"int8 range", Item{"i8": N("127"), "u8": N("255"), "i16": N("-32768")}},
		{"int8 overflow", Item{"i8": N("128")}},
		{"int8 underflow", Item{"i8": N("-129")}},
		{"uint negative", Item{"u": N("-1")}},
		{"uint64 max", Item{"u64": N("18446744073709551615")}},
		{"uint64 overflow", Item{"u64": N("18446744073709551616")}},
		{"float32 overflow", Item{"f32": N("3.5e38")}},
		{"float32 tiny", Item{"f32": N("1e-50")}},
		{"float64 overflow", Item{"f64": N("1e400")}},
		{"float exponent", Item{"f64": N("-1.5E-3"), "f32": N("2")}},
		{"empty B", Item{"b": B(nil), "raw": B([]byte{})}},
		{"B", Item{"b": B([]byte{1, 2}), "raw": B([]byte("{}")), "barr": B([]byte{4, 3, 2, 1})}},
		{"L of N into bytes", Item{"b": L(N("1"), N("255"))}},
		{"L of N past a byte", Item{"b": L(N("256"))}},
		{"BS", Item{"bs": BS([]byte{1}, []byte{}), "bso": L(B([]byte{2}))}},
		{"NS into ints", Item{"is": NS("1", "-2")}},
		{"NS bad number", Item{"is": NS("1", "x")}},
		{"L into array, longer", Item{"arr": L(N("1"), N("2"), N("3"), N("4"))}},
		{"L into array, shorter", Item{"arr": L(N("1"))}},
		{"M into struct pointer", Item{"p": M(map[string]Value{"tok": S("t")}), "po": M(nil)}},
		{"NULL into struct pointer", Item{"p": Null()}},
		{"M into struct", Item{"thread": M(map[string]Value{"Platform": S("slack"), "chat": S("C1"), "extra": N("1")})}},
		{"M into map", Item{"mi": M(map[string]Value{"a": N("1"), "b": Null(), "": N("3")})}},
		{"M into map, bad element", Item{"mi": M(map[string]Value{"a": S("1")})}},
		{"M into map of pointers", Item{"MapPtr": M(map[string]Value{"a": Null(), "b": M(nil)})}},
		{"M into named keys", Item{"MapNamed": M(map[string]Value{"slack": Bool(true)})}},
		{"L into slice of pointers", Item{"pstructs": L(Null(), M(map[string]Value{"until": N("3")}))}},
		{"pointers", Item{"ps": S("s"), "pi": N("1"), "ppi": N("2"), "pslice": L(), "pbytes": B(nil), "pmap": M(nil)}},
		{"json.Number", Item{"num": N("1.50")}},
		{"S into json.Number", Item{"num": S("x")}},
		{"any S", Item{"any": S("x")}},
		{"any N", Item{"any": N("1.5")}},
		{"any bad N", Item{"any": N("x")}},
		{"any BOOL", Item{"any": Bool(true)}},
		{"any B", Item{"any": B([]byte("b"))}},
		{"any L", Item{"any": L(S("x"), N("1"), Null(), L(), M(nil))}},
		{"any M", Item{"any": M(map[string]Value{"a": N("2"), "b": SS("x")})}},
		{"any sets", Item{"any": SS("a"), "anyo": NS("1", "2")}},
		{"any BS", Item{"any": BS([]byte("a"))}},
		{"any NULL", Item{"any": Null()}},
		{"nested lists", Item{"nest": L(L(S("a")), Null(), L())}},
		{"map of slices", Item{"MapSlice": M(map[string]Value{"k": L(S("v")), "n": Null()})}},
	}
	for _, tc := range allCases {
		checkDecodeMatchesSDK(t, "all: "+tc.name, tc.item, all)
	}
	// Into values already set: attributevalue reuses slices, adds to maps
	// and decodes through pointers, leaving absent attributes alone.
	for _, tc := range []struct {
		name string
		item Item
	}{
		{"nothing", Item{}},
		{"shorter list", Item{"ss": L(S("x"))}},
		{"empty list", Item{"ss": L()}},
		{"longer list", Item{"ss": L(S("1"), S("2"), S("3"), S("4"))}},
		{"list into spare capacity", Item{"is": L(N("1"), N("2"))}},
		{"structs merged", Item{"structs": L(M(map[string]Value{"tok": S("new")}))}},
		{"map merged", Item{"mi": M(map[string]Value{"new": N("2")})}},
		{"pointer reused", Item{"p": M(map[string]Value{"tok": S("new")}), "ps": S("new")}},
		{"NULLs clear", Item{"p": Null(), "ps": Null(), "i": Null(), "ss": Null(), "mi": Null(), "any": Null()}},
		{"through any's pointer", Item{"any": M(map[string]Value{"tok": S("new")})}},
		{"bytes reused", Item{"b": B([]byte("new"))}},
		{"array partly", Item{"arr": L(N("1"))}},
	} {
		checkDecodeMatchesSDK(t, "filled: "+tc.name, tc.item, filled)
	}
}

// TestCodecMarshalValueMatchesAttributeValue covers Marshal and Unmarshal of
// single values, not items.
func TestCodecMarshalValueMatchesAttributeValue(t *testing.T) {
	for _, in := range []any{
		nil, "", "x", 0, -5, uint8(7), 1.25, true, false, []byte{}, []byte(nil), []string(nil), []string{},
		[]int{1}, map[string]int{}, map[string]any{"a": nil}, (*int)(nil), ptr(3), codecReplyItem{"t", 1},
		&codecReplyItem{}, [][]byte{{1}}, []any{"a", 1, nil}, json.Number("7"),
	} {
		sdk, sdkErr := attributevalue.Marshal(in)
		ours, err := Marshal(in)
		if sdkErr != nil || err != nil {
			t.Errorf("Marshal(%#v): attributevalue error %v, ours %v", in, sdkErr, err)
			continue
		}
		if want := fromSDK(t, sdk); !sameValue(ours, want) {
			t.Errorf("Marshal(%#v) = %s, attributevalue %s", in, ours, want)
		}
	}
	for _, tc := range []struct {
		v    Value
		into func() any
	}{
		{S("x"), func() any { return new(string) }},
		{N("5"), func() any { return new(int) }},
		{N("5"), func() any { return new(*int) }},
		{Null(), func() any { return ptr(ptr(4)) }},
		{Null(), func() any { return ptr(4) }},
		{Value{}, func() any { return ptr("x") }},
		{L(S("a")), func() any { return new([]string) }},
		{M(map[string]Value{"a": N("1")}), func() any { return new(map[string]int) }},
		{M(map[string]Value{"a": N("1")}), func() any { return new(any) }},
		{B([]byte("x")), func() any { return new([]byte) }},
		{N("300"), func() any { return new(uint8) }},
	} {
		want, got := tc.into(), tc.into()
		sdkErr := attributevalue.Unmarshal(sdkOrNil(t, tc.v), want)
		err := Unmarshal(tc.v, got)
		if (err != nil) != (sdkErr != nil) {
			t.Errorf("Unmarshal(%s) into %T: error %v, attributevalue error %v", tc.v, got, err, sdkErr)
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("Unmarshal(%s) into %T = %#v, attributevalue %#v", tc.v, got, got, want)
		}
	}
	// Value passes through both ways.
	if v, err := Marshal(struct{ X Value }{SS("a")}); err != nil || v.String() != `{"M":{"X":{"SS":["a"]}}}` {
		t.Errorf("Marshal of a Value field = %s, %v", v, err)
	}
	var out struct{ X Value }
	if err := UnmarshalItem(Item{"X": NS("1")}, &out); err != nil || out.X.String() != `{"NS":["1"]}` {
		t.Errorf("UnmarshalItem into a Value field = %s, %v", out.X, err)
	}
}

func sdkOrNil(t testing.TB, v Value) types.AttributeValue {
	if v.Kind() == Invalid {
		return nil
	}
	return toSDK(t, v)
}

// TestCodecErrors checks that what cannot be decoded or encoded is an error
// that names the field, never a panic.
func TestCodecErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		item  Item
		into  any
		where string // in the message
	}{
		{"S into int", Item{"att": S("5")}, &codecUnitItem{}, "att"},
		{"N not a number", Item{"att": N("abc")}, &codecUnitItem{}, "att"},
		{"L into string", Item{"id": L(S("x"))}, &codecUnitItem{}, "id"},
		{"M into slice", Item{"rcpt": M(nil)}, &codecUnitItem{}, "rcpt"},
		{"BOOL into int", Item{"att": Bool(true)}, &codecUnitItem{}, "att"},
		{"B into string", Item{"id": B(nil)}, &codecUnitItem{}, "id"},
		{"overflow into int8", Item{"X": N("128")}, &struct{ X int8 }{}, "X"},
		{"negative into uint", Item{"X": N("-1")}, &struct{ X uint }{}, "X"},
		{"nested", Item{"units": L(M(nil), M(map[string]Value{"att": S("x")}))}, &codecIntentItem{}, "units[1].att"},
		{"in a map", Item{"posts": M(map[string]Value{"k": S("x")})}, &codecAwaitItem{}, `posts["k"]`},
		{"B into short array", Item{"X": B([]byte{1, 2, 3})}, &struct{ X [2]byte }{}, "X"},
		{"chan field", Item{"C": Null()}, &struct{ C chan int }{}, "C"},
		{"func field", Item{"F": S("x")}, &struct{ F func() }{}, "F"},
		{"error field", Item{"E": S("x")}, &struct{ E error }{}, "E"},
		{"complex field", Item{"C": N("1")}, &struct{ C complex128 }{}, "C"},
		{"time field", Item{"T": S("2024-01-01T00:00:00Z")}, &struct{ T time.Time }{}, "T"},
		{"int keys", Item{"M": M(nil)}, &struct{ M map[int]string }{}, "M"},
		{"embedded struct", Item{}, &struct{ codecReplyItem }{}, "embedded"},
		{"set tag", Item{}, &struct {
			X []string `dynamodbav:",stringset"`
		}{}, "stringset"},
		{"M into int item", Item{}, new(int), "M"},
	} {
		err := UnmarshalItem(tc.item, tc.into)
		if err == nil {
			t.Errorf("%s: UnmarshalItem into %T: no error", tc.name, tc.into)
		} else if !strings.Contains(err.Error(), tc.where) {
			t.Errorf("%s: error %q does not name %s", tc.name, err, tc.where)
		}
	}
	for _, out := range []any{nil, codecUnitItem{}, (*codecUnitItem)(nil), 5} {
		if err := UnmarshalItem(Item{}, out); err == nil {
			t.Errorf("UnmarshalItem into %#v: no error", out)
		}
		if err := Unmarshal(S("x"), out); err == nil {
			t.Errorf("Unmarshal into %#v: no error", out)
		}
	}
	for _, tc := range []struct {
		name  string
		in    any
		where string
	}{
		{"nil", nil, "nil"},
		{"nil pointer", (*codecUnitItem)(nil), "nil"},
		{"not a struct", 5, "int"},
		{"a list", []codecUnitItem{}, "no struct"},
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
		{"nested", codecIntentItem{Units: []codecUnitItem{{}}, Thread: codecThread{}}, ""},
		{"zero Value", struct{ V Value }{}, "V"},
	} {
		_, err := MarshalItem(tc.in)
		if tc.name == "nested" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: MarshalItem(%#v): no error", tc.name, tc.in)
		} else if !strings.Contains(err.Error(), tc.where) {
			t.Errorf("%s: error %q does not name %s", tc.name, err, tc.where)
		}
	}
	if _, err := Marshal(make(chan int)); err == nil {
		t.Errorf("Marshal(chan): no error")
	}
	// Errors wrap what caused them.
	err := UnmarshalItem(Item{"att": N("x")}, &codecUnitItem{})
	if !errors.Is(err, strconv.ErrSyntax) {
		t.Errorf("error %v does not wrap strconv.ErrSyntax", err)
	}
}

// TestCodecRoundTripsThroughJSON writes items as the client sends them and
// reads them back as it receives them.
func TestCodecRoundTripsThroughJSON(t *testing.T) {
	for name, v := range codecStoreValues() {
		switch v := v.(type) {
		case codecIntentItem:
			checkRoundTrip(t, name, v)
		case codecUnitItem:
			checkRoundTrip(t, name, v)
		case *codecUnitItem:
			checkRoundTrip(t, name, v)
		case codecReplyItem:
			checkRoundTrip(t, name, v)
		case codecAwaitItem:
			checkRoundTrip(t, name, v)
		case codecQuestionItem:
			checkRoundTrip(t, name, v)
		default:
			t.Fatalf("%s: no case for %T", name, v)
		}
	}
	for name, v := range codecAllKindsValues() {
		// What does not come back as it was, by attributevalue's rules too:
		// fields it never writes, a pointer in an interface{} (NULL, so
		// nil), numbers in one (float64), empty binary sets (NULL, so nil)
		// and pointers to nil (NULL, or an empty L, B or M).
		v.Skipped, v.unexported = "", ""
		switch name {
		case "nil inside":
			v.Any, v.AnyO = nil, nil
		case "floats":
			v.F32 = 1.5 // math.MaxFloat32 does not read back, as above
		case "empty, not nil":
			v.ByteSet, v.ByteSetO, v.PPI, v.PSlice, v.PBytes, v.PMap, v.AnyO = nil, nil, nil, nil, nil, nil, nil
		}
		checkRoundTrip(t, name, v)
	}
}

func checkRoundTrip[T any](t testing.TB, name string, in T) {
	t.Helper()
	item, err := MarshalItem(in)
	if err != nil {
		t.Fatalf("%s: MarshalItem: %v", name, err)
	}
	data, err := json.Marshal(item)
	if err != nil {
		t.Fatalf("%s: json.Marshal: %v", name, err)
	}
	var back Item
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("%s: json.Unmarshal(%s): %v", name, data, err)
	}
	out := reflect.New(reflect.TypeFor[T]())
	if err := UnmarshalItem(back, out.Interface()); err != nil {
		t.Fatalf("%s: UnmarshalItem(%s): %v", name, data, err)
	}
	if got := out.Elem().Interface().(T); !reflect.DeepEqual(got, in) {
		t.Fatalf("%s: round trip through %s\n got %#v\nwant %#v", name, data, got, in)
	}
}

// codecNumbers receives one fuzzed N in fields of each number kind.
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

func FuzzCodecMatchesAttributeValue(f *testing.F) {
	f.Add("u1", "hello", 3, int64(1_700_000_000_000), true, []byte("tg:1,tg:2"), "42", uint8(0))
	f.Add("", "", 0, int64(0), false, []byte(nil), "", uint8(0xff))
	f.Add("ü👋", "\x00\xff", -1, int64(math.MinInt64), false, []byte{}, "-129", uint8(1))
	f.Add("id", "x", math.MaxInt, int64(math.MaxInt64), true, []byte(",,"), "1e3", uint8(2))
	f.Add("a", "b", 1, int64(-1), false, []byte("only"), "18446744073709551616", uint8(4))
	f.Add("a", "b", 1, int64(5), true, []byte("k,"), "3.5e38", uint8(8|16))
	f.Add("", "t", 0, int64(0), false, []byte("\xff,\x00"), "NaN", uint8(32|64|128))
	f.Add("p", "q", 2, int64(2), true, []byte("a"), "+0x1p-2", uint8(3))
	f.Fuzz(func(t *testing.T, id, text string, attempt int, lease int64, parley bool, raw []byte, num string, mode uint8) {
		// raw is the receipt list (comma-separated), the post body and
		// the posts' keys; mode's bits choose nil or empty or set.
		var receipt []string
		switch mode & 3 {
		case 1:
			receipt = []string{}
		case 2, 3:
			receipt = strings.Split(string(raw), ",")
		}
		u := codecUnitItem{
			ID: id, Text: text, ReplyTo: text, Parley: parley, State: id, Attempt: attempt, LeaseUntil: lease,
			Receipt: receipt, SentAt: -lease, Resent: !parley, UpdatedAt: int64(attempt),
		}
		if mode&4 != 0 {
			u.ContentKind, u.Prompt, u.Replaces, u.Reported = text, id, text, id
			u.NextAt, u.Resends, u.FailClass, u.FailReason = lease, attempt, id, text
		}
		checkMatchesSDK(t, "unit", u)

		in := codecIntentItem{PK: id, Version: attempt, Thread: codecThread{codecPlatform(id), text, id, text}, CreatedAt: lease}
		if mode&8 != 0 {
			in.Units = []codecUnitItem{u, {}, u}
		} else if mode&16 != 0 {
			in.Units = []codecUnitItem{}
		}
		if mode&32 != 0 {
			in.Reply = &codecReplyItem{Token: text, Until: lease}
		}
		checkMatchesSDK(t, "intent", in)

		aw := codecAwaitItem{PK: id, PostBody: raw, Bubbles: attempt}
		if mode&64 != 0 {
			aw.Posts = map[string]int{}
			for i, k := range receipt {
				aw.Posts[k] = i * attempt
			}
		}
		checkMatchesSDK(t, "await", aw)
		q := codecQuestionItem{ID: id, Selected: receipt, Field: attempt}
		checkMatchesSDK(t, "question", q)

		// A fuzzed number, as DynamoDB could hand it back, decodes alike
		// into every number kind.
		for _, k := range []string{"i", "i8", "u16", "u64", "f32", "f64", "s", "a"} {
			item := Item{k: N(num)}
			var want, got codecNumbers
			sdkErr := attributevalue.UnmarshalMap(toSDKItem(t, item), &want)
			err := UnmarshalItem(item, &got)
			if (err != nil) != (sdkErr != nil) {
				t.Fatalf("N %q into %s: error %v, attributevalue error %v", num, k, err, sdkErr)
			}
			// %#v, as NaN is not DeepEqual to itself.
			if err == nil && fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
				t.Fatalf("N %q into %s:\n got %#v\nwant %#v", num, k, got, want)
			}
		}
		if utf8.ValidString(id) && utf8.ValidString(text) && utf8.Valid(raw) {
			checkRoundTrip(t, "unit", u)
			checkRoundTrip(t, "intent", in)
			if _, err := MarshalItem(aw); err == nil { // an empty key is an error
				checkRoundTrip(t, "await", aw)
			}
		}
	})
}
