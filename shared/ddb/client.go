package ddb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/parleyhq/parley/shared/awsjson"
)

// Service is DynamoDB, as awsjson calls it.
var Service = awsjson.Service{ID: "DynamoDB", SigningName: "dynamodb", EndpointPrefix: "dynamodb", TargetPrefix: "DynamoDB_20120810", Version: "1.0"}

// Values for ReturnValues, ReturnValuesOnConditionCheckFailure and
// ReturnConsumedCapacity.
const (
	ReturnAllNew     = "ALL_NEW"
	ReturnAllOld     = "ALL_OLD"
	ReturnUpdatedOld = "UPDATED_OLD"
	CapacityTotal    = "TOTAL"
)

// Client calls DynamoDB. Safe for concurrent use.
type Client struct {
	c *awsjson.Client
}

// New returns a client configured by cfg (see awsjson.New: its endpoint is
// AWS_ENDPOINT_URL_DYNAMODB through cfg's sources, then cfg.BaseEndpoint,
// then the region's).
func New(cfg aws.Config) *Client { return &Client{c: awsjson.New(cfg, Service)} }

// The operations' inputs and outputs carry DynamoDB's own member names.
type (
	GetItemInput struct {
		TableName                string
		Key                      Item
		ConsistentRead           bool              `json:",omitempty"`
		ProjectionExpression     string            `json:",omitempty"`
		ExpressionAttributeNames map[string]string `json:",omitempty"`
		ReturnConsumedCapacity   string            `json:",omitempty"`
	}
	GetItemOutput struct {
		Item             Item
		ConsumedCapacity *ConsumedCapacity
	}

	PutItemInput struct {
		TableName                           string
		Item                                Item
		ConditionExpression                 string            `json:",omitempty"`
		ExpressionAttributeNames            map[string]string `json:",omitempty"`
		ExpressionAttributeValues           Item              `json:",omitempty"`
		ReturnValues                        string            `json:",omitempty"`
		ReturnValuesOnConditionCheckFailure string            `json:",omitempty"`
		ReturnConsumedCapacity              string            `json:",omitempty"`
	}
	PutItemOutput struct {
		Attributes       Item
		ConsumedCapacity *ConsumedCapacity
	}

	UpdateItemInput struct {
		TableName                           string
		Key                                 Item
		UpdateExpression                    string            `json:",omitempty"`
		ConditionExpression                 string            `json:",omitempty"`
		ExpressionAttributeNames            map[string]string `json:",omitempty"`
		ExpressionAttributeValues           Item              `json:",omitempty"`
		ReturnValues                        string            `json:",omitempty"`
		ReturnValuesOnConditionCheckFailure string            `json:",omitempty"`
		ReturnConsumedCapacity              string            `json:",omitempty"`
	}
	UpdateItemOutput struct {
		Attributes       Item
		ConsumedCapacity *ConsumedCapacity
	}

	DeleteItemInput struct {
		TableName                           string
		Key                                 Item
		ConditionExpression                 string            `json:",omitempty"`
		ExpressionAttributeNames            map[string]string `json:",omitempty"`
		ExpressionAttributeValues           Item              `json:",omitempty"`
		ReturnValues                        string            `json:",omitempty"`
		ReturnValuesOnConditionCheckFailure string            `json:",omitempty"`
		ReturnConsumedCapacity              string            `json:",omitempty"`
	}
	DeleteItemOutput struct {
		Attributes       Item
		ConsumedCapacity *ConsumedCapacity
	}

	QueryInput struct {
		TableName                 string
		IndexName                 string            `json:",omitempty"`
		KeyConditionExpression    string            `json:",omitempty"`
		FilterExpression          string            `json:",omitempty"`
		ExpressionAttributeNames  map[string]string `json:",omitempty"`
		ExpressionAttributeValues Item              `json:",omitempty"`
		ConsistentRead            bool              `json:",omitempty"`
		Limit                     int               `json:",omitempty"`
		// ScanIndexForward false reads the sort key descending (newest
		// first); nil keeps DynamoDB's default, ascending.
		ScanIndexForward       *bool  `json:",omitempty"`
		ExclusiveStartKey      Item   `json:",omitempty"`
		ReturnConsumedCapacity string `json:",omitempty"`
	}
	QueryOutput struct {
		Items            []Item
		Count            int
		LastEvaluatedKey Item
		ConsumedCapacity *ConsumedCapacity
	}

	// ConsumedCapacity is what a call used, when it asked
	// (ReturnConsumedCapacity TOTAL).
	ConsumedCapacity struct {
		TableName          string
		CapacityUnits      float64
		ReadCapacityUnits  float64
		WriteCapacityUnits float64
	}
)

// GetItem reads one item; an absent item is an output with a nil Item.
func (c *Client) GetItem(ctx context.Context, in *GetItemInput) (*GetItemOutput, error) {
	return call[GetItemOutput](ctx, c, "GetItem", in)
}

// PutItem writes one item.
func (c *Client) PutItem(ctx context.Context, in *PutItemInput) (*PutItemOutput, error) {
	return call[PutItemOutput](ctx, c, "PutItem", in)
}

// UpdateItem updates one item.
func (c *Client) UpdateItem(ctx context.Context, in *UpdateItemInput) (*UpdateItemOutput, error) {
	return call[UpdateItemOutput](ctx, c, "UpdateItem", in)
}

// DeleteItem deletes one item.
func (c *Client) DeleteItem(ctx context.Context, in *DeleteItemInput) (*DeleteItemOutput, error) {
	return call[DeleteItemOutput](ctx, c, "DeleteItem", in)
}

// Query reads one page of a key condition's items.
func (c *Client) Query(ctx context.Context, in *QueryInput) (*QueryOutput, error) {
	return call[QueryOutput](ctx, c, "Query", in)
}

func call[O any](ctx context.Context, c *Client, op string, in any) (*O, error) {
	out := new(O)
	if err := c.c.Call(ctx, op, in, out); err != nil {
		return nil, classify(err)
	}
	return out, nil
}

// ConditionFailedError is a write whose condition did not hold
// (ConditionalCheckFailedException).
type ConditionFailedError struct {
	// Item is the item as the condition found it, when the call asked for
	// it (ReturnValuesOnConditionCheckFailure ALL_OLD) and it existed.
	Item Item
	Err  *awsjson.APIError
}

func (e *ConditionFailedError) Error() string { return e.Err.Error() }
func (e *ConditionFailedError) Unwrap() error { return e.Err }

// classify turns a failed condition into a *ConditionFailedError.
func classify(err error) error {
	var api *awsjson.APIError
	if !errors.As(err, &api) || api.Code != "ConditionalCheckFailedException" {
		return err
	}
	var body struct{ Item Item }
	if jerr := json.Unmarshal(api.Body, &body); jerr != nil && len(api.Body) > 0 {
		return fmt.Errorf("%w (its item did not decode: %v)", &ConditionFailedError{Err: api}, jerr)
	}
	return &ConditionFailedError{Item: body.Item, Err: api}
}
