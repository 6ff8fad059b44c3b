package ddb_test

import (
	"errors"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/awsenv"
	"github.com/parleyhq/parley/shared/awsjson"
	"github.com/parleyhq/parley/shared/ddb"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// TestOperationsOnTheEmulator runs every operation the store uses against
// DynamoDB Local, configured from the environment as functions are, and
// reads what they wrote back with the SDK's client.
func TestOperationsOnTheEmulator(t *testing.T) {
	env := emulatortest.New(t)
	cfg, err := awsenv.Load(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	c := ddb.New(cfg)
	ctx := t.Context()
	table := env.Resources.Table
	key := ddb.Item{"pk": ddb.S("ddb#1")}
	item := ddb.Item{
		"pk": ddb.S("ddb#1"), "n": ddb.Int(-42), "b": ddb.B([]byte{0, 1, 0xff}), "t": ddb.Bool(true), "z": ddb.Null(),
		"m":  ddb.M(map[string]ddb.Value{"é": ddb.S("ünï"), "empty": ddb.S("")}),
		"l":  ddb.L(ddb.S("a"), ddb.Int(1), ddb.L()),
		"ss": ddb.SS("x", "y"), "sw": ddb.S("0"), "sw_at": ddb.Int(5),
	}
	if _, err := c.PutItem(ctx, &ddb.PutItemInput{TableName: table, Item: item, ConditionExpression: "attribute_not_exists(pk)"}); err != nil {
		t.Fatal(err)
	}

	// The SDK reads what ddb wrote, attribute for attribute.
	sdk, err := env.DynamoDB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "ddb#1"}}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := sdk.Item["n"].(*types.AttributeValueMemberN); !ok || n.Value != "-42" {
		t.Errorf("SDK read n = %#v", sdk.Item["n"])
	}
	if b, ok := sdk.Item["b"].(*types.AttributeValueMemberB); !ok || string(b.Value) != "\x00\x01\xff" {
		t.Errorf("SDK read b = %#v", sdk.Item["b"])
	}
	if m, ok := sdk.Item["m"].(*types.AttributeValueMemberM); !ok || m.Value["é"].(*types.AttributeValueMemberS).Value != "ünï" {
		t.Errorf("SDK read m = %#v", sdk.Item["m"])
	}

	got, err := c.GetItem(ctx, &ddb.GetItemInput{TableName: table, Key: key, ConsistentRead: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Item.String() != item.String() {
		t.Fatalf("GetItem:\n got %s\nwant %s", got.Item, item)
	}

	// A failed condition carries the item it found.
	_, err = c.PutItem(ctx, &ddb.PutItemInput{TableName: table, Item: key, ConditionExpression: "attribute_not_exists(pk)", ReturnValuesOnConditionCheckFailure: ddb.ReturnAllOld})
	var cf *ddb.ConditionFailedError
	if !errors.As(err, &cf) || cf.Item.String() != item.String() {
		t.Fatalf("conditional put over an item: %v (item %v); want a ConditionFailedError with the item", err, cf)
	}
	var api *awsjson.APIError
	if !errors.As(err, &api) || api.Code != "ConditionalCheckFailedException" {
		t.Errorf("the failed condition does not unwrap to its APIError: %v", err)
	}
	// Without ALL_OLD it carries none.
	_, err = c.DeleteItem(ctx, &ddb.DeleteItemInput{TableName: table, Key: key, ConditionExpression: "#n = :n",
		ExpressionAttributeNames: map[string]string{"#n": "n"}, ExpressionAttributeValues: ddb.Item{":n": ddb.Int(1)}})
	if !errors.As(err, &cf) || cf.Item != nil {
		t.Fatalf("conditional delete: %v; want a ConditionFailedError with no item", err)
	}

	up, err := c.UpdateItem(ctx, &ddb.UpdateItemInput{
		TableName: table, Key: key, UpdateExpression: "SET #n = #n + :one REMOVE #z",
		ExpressionAttributeNames: map[string]string{"#n": "n", "#z": "z"}, ExpressionAttributeValues: ddb.Item{":one": ddb.Int(1)},
		ReturnValues: ddb.ReturnAllNew, ReturnConsumedCapacity: ddb.CapacityTotal,
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := up.Attributes["n"].AsInt(); n != -41 {
		t.Errorf("updated n = %v, want -41", up.Attributes["n"])
	}
	if _, still := up.Attributes["z"]; still {
		t.Error("REMOVE left z")
	}
	if up.ConsumedCapacity == nil || up.ConsumedCapacity.CapacityUnits <= 0 {
		t.Errorf("consumed capacity %+v, want units", up.ConsumedCapacity)
	}

	q, err := c.Query(ctx, &ddb.QueryInput{TableName: table, IndexName: "sweep", KeyConditionExpression: "#sw = :sw AND #at <= :at",
		ExpressionAttributeNames: map[string]string{"#sw": "sw", "#at": "sw_at"}, ExpressionAttributeValues: ddb.Item{":sw": ddb.S("0"), ":at": ddb.Int(10)}, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Items) != 1 || q.Items[0]["pk"].String() != `{"S":"ddb#1"}` {
		t.Errorf("query gave %v", q.Items)
	}

	if _, err := c.DeleteItem(ctx, &ddb.DeleteItemInput{TableName: table, Key: key}); err != nil {
		t.Fatal(err)
	}
	gone, err := c.GetItem(ctx, &ddb.GetItemInput{TableName: table, Key: key, ConsistentRead: true})
	if err != nil || gone.Item != nil {
		t.Fatalf("after delete: %v, %v; want no item", gone, err)
	}

	// A refusal that is not a condition stays an APIError.
	_, err = c.PutItem(ctx, &ddb.PutItemInput{TableName: table, Item: ddb.Item{"other": ddb.S("no key")}})
	if !errors.As(err, &api) || api.Code != "ValidationException" || errors.As(err, &cf) {
		t.Fatalf("an item without its key: %v; want a ValidationException", err)
	}
}
