// Package ddbtest holds what tests need to hold package ddb to the SDK's
// attributevalue package: conversions between the SDK's attribute values
// and ddb's, and CheckCodec, which runs a Go value through both codecs.
// Only tests import it: it links the SDK's DynamoDB types.
package ddbtest

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/parleyhq/parley/shared/ddb"
)

// FromSDK is av as a ddb.Value; FromSDKItem, an item. An attribute value
// DynamoDB never holds (NULL false) fails t.
func FromSDK(t testing.TB, av types.AttributeValue) ddb.Value {
	t.Helper()
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return ddb.S(v.Value)
	case *types.AttributeValueMemberN:
		return ddb.N(v.Value)
	case *types.AttributeValueMemberB:
		return ddb.B(v.Value)
	case *types.AttributeValueMemberBOOL:
		return ddb.Bool(v.Value)
	case *types.AttributeValueMemberNULL:
		if !v.Value {
			t.Fatalf("SDK wrote NULL false")
		}
		return ddb.Null()
	case *types.AttributeValueMemberM:
		return ddb.M(FromSDKItem(t, v.Value))
	case *types.AttributeValueMemberL:
		l := make([]ddb.Value, len(v.Value))
		for i, e := range v.Value {
			l[i] = FromSDK(t, e)
		}
		return ddb.L(l...)
	case *types.AttributeValueMemberSS:
		return ddb.SS(v.Value...)
	case *types.AttributeValueMemberNS:
		return ddb.NS(v.Value...)
	case *types.AttributeValueMemberBS:
		return ddb.BS(v.Value...)
	}
	t.Fatalf("SDK attribute value %T", av)
	return ddb.Value{}
}

func FromSDKItem(t testing.TB, m map[string]types.AttributeValue) ddb.Item {
	t.Helper()
	it := make(ddb.Item, len(m))
	for k, v := range m {
		it[k] = FromSDK(t, v)
	}
	return it
}

// ToSDK is v as the SDK's attribute value; ToSDKItem, an item.
func ToSDK(t testing.TB, v ddb.Value) types.AttributeValue {
	t.Helper()
	switch v.Kind() {
	case ddb.KindS:
		s, _ := v.AsS()
		return &types.AttributeValueMemberS{Value: s}
	case ddb.KindN:
		n, _ := v.AsN()
		return &types.AttributeValueMemberN{Value: n}
	case ddb.KindB:
		b, _ := v.AsB()
		return &types.AttributeValueMemberB{Value: b}
	case ddb.KindBOOL:
		b, _ := v.AsBool()
		return &types.AttributeValueMemberBOOL{Value: b}
	case ddb.KindNULL:
		return &types.AttributeValueMemberNULL{Value: true}
	case ddb.KindM:
		m, _ := v.AsM()
		return &types.AttributeValueMemberM{Value: ToSDKItem(t, m)}
	case ddb.KindL:
		l, _ := v.AsL()
		out := make([]types.AttributeValue, len(l))
		for i, e := range l {
			out[i] = ToSDK(t, e)
		}
		return &types.AttributeValueMemberL{Value: out}
	case ddb.KindSS:
		ss, _ := v.AsSS()
		return &types.AttributeValueMemberSS{Value: ss}
	case ddb.KindNS:
		ns, _ := v.AsNS()
		return &types.AttributeValueMemberNS{Value: ns}
	case ddb.KindBS:
		bs, _ := v.AsBS()
		return &types.AttributeValueMemberBS{Value: bs}
	}
	t.Fatalf("zero ddb.Value in an item")
	return nil
}

func ToSDKItem(t testing.TB, it map[string]ddb.Value) map[string]types.AttributeValue {
	t.Helper()
	m := make(map[string]types.AttributeValue, len(it))
	for k, v := range it {
		m[k] = ToSDK(t, v)
	}
	return m
}

// CheckCodec encodes in with both codecs and decodes each one's item
// with both, requiring the same attribute values and the same Go values.
func CheckCodec[T any](t testing.TB, name string, in T) {
	t.Helper()
	sdk, sdkErr := attributevalue.MarshalMap(in)
	ours, err := ddb.MarshalItem(in)
	if (err != nil) != (sdkErr != nil) {
		t.Fatalf("%s: ddb.MarshalItem error %v, attributevalue error %v", name, err, sdkErr)
	}
	if err != nil {
		return
	}
	sdkItem := FromSDKItem(t, sdk)
	if !ours.Equal(sdkItem) {
		t.Fatalf("%s: ddb.MarshalItem\n got %s\nwant %s (attributevalue)", name, ours, sdkItem)
	}

	sdkOne, sdkErr := attributevalue.Marshal(in)
	one, err := ddb.Marshal(in)
	if err != nil || sdkErr != nil {
		t.Fatalf("%s: ddb.Marshal error %v, attributevalue error %v", name, err, sdkErr)
	}
	if want := FromSDK(t, sdkOne); !one.Equal(want) {
		t.Fatalf("%s: ddb.Marshal\n got %s\nwant %s (attributevalue)", name, one, want)
	}

	// What the SDK wrote, both decode alike; what we wrote, the SDK reads
	// as we do.
	// (Both may fail: attributevalue writes math.MaxFloat32 as a number
	// that overflows a float32 when read back.)
	var bySDK, byUs, sdkOfOurs T
	sdkErr = attributevalue.UnmarshalMap(sdk, &bySDK)
	err = ddb.UnmarshalItem(sdkItem, &byUs)
	if (err != nil) != (sdkErr != nil) {
		t.Fatalf("%s: ddb.UnmarshalItem error %v, attributevalue error %v", name, err, sdkErr)
	}
	if err == nil && !reflect.DeepEqual(byUs, bySDK) {
		t.Fatalf("%s: ddb.UnmarshalItem\n got %#v\nwant %#v (attributevalue)", name, byUs, bySDK)
	}
	if sdkErr := attributevalue.UnmarshalMap(ToSDKItem(t, ours), &sdkOfOurs); (err != nil) != (sdkErr != nil) {
		t.Fatalf("%s: attributevalue error %v decoding our item, ours %v", name, sdkErr, err)
	}
	if err == nil && !reflect.DeepEqual(sdkOfOurs, byUs) {
		t.Fatalf("%s: attributevalue decodes our item as\n%#v\nwe as\n%#v", name, sdkOfOurs, byUs)
	}
}

// CheckRoundTrip encodes in, through JSON as the wire carries it, and
// decodes it back: the result must equal in.
func CheckRoundTrip[T any](t testing.TB, name string, in T) {
	t.Helper()
	item, err := ddb.MarshalItem(in)
	if err != nil {
		t.Fatalf("%s: ddb.MarshalItem: %v", name, err)
	}
	data, err := json.Marshal(item)
	if err != nil {
		t.Fatalf("%s: json.Marshal: %v", name, err)
	}
	var back ddb.Item
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("%s: json.Unmarshal(%s): %v", name, data, err)
	}
	out := reflect.New(reflect.TypeFor[T]())
	if err := ddb.UnmarshalItem(back, out.Interface()); err != nil {
		t.Fatalf("%s: ddb.UnmarshalItem(%s): %v", name, data, err)
	}
	if got := out.Elem().Interface().(T); !reflect.DeepEqual(got, in) {
		t.Fatalf("%s: round trip through %s\n got %#v\nwant %#v", name, data, got, in)
	}
}
