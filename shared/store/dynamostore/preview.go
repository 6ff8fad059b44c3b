package dynamostore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/store"
)

// A preview's item: pk (store.PreviewKey), kind "preview", pv (the
// message.Preview as JSON: a few hundred bytes), expires_at (s), and sw /
// sw_at: it is on the sweeper's list from when it is written, due
// store.SweepGrace later, so that a preview its turn never settled is
// cleared. It is an item of its own, beside the turn's claim and intent, so
// recording it costs one small write and touches neither.

// RecordPreview writes a turn's preview record.
func (s *Store) RecordPreview(ctx context.Context, p message.Preview, now time.Time, ttl time.Duration) error {
	item, err := previewItem(p, now, ttl)
	if err != nil {
		return err
	}
	if _, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: s.table, Item: item}); err != nil {
		return wrap("record preview", err)
	}
	return nil
}

// RecordAwaitPreview writes the preview record of an async turn's preview
// update, only while the update's lease (store.PreviewTake) holds on the
// turn's await record: one transaction of a condition check on the await
// record and the put. An update whose lease ended (its bound passed, and
// the preview's settler may have read the record already) writes nothing
// and gets store.ErrConflict: the message it created is known to no one
// but it, and it clears it.
func (s *Store) RecordAwaitPreview(ctx context.Context, turnID, lease string, p message.Preview, now time.Time, ttl time.Duration) error {
	item, err := previewItem(p, now, ttl)
	if err != nil {
		return err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{ConditionCheck: &types.ConditionCheck{
			TableName: s.table, Key: s.key(store.AwaitKey(turnID)),
			ConditionExpression:      aws.String("#pvlease = :lease"),
			ExpressionAttributeNames: map[string]string{"#pvlease": "pv_lease"}, ExpressionAttributeValues: attrs{":lease": str(lease)},
		}},
		{Put: &types.Put{TableName: s.table, Item: item}},
	}})
	var cancelled *types.TransactionCanceledException
	if errors.As(err, &cancelled) && len(cancelled.CancellationReasons) > 0 && aws.ToString(cancelled.CancellationReasons[0].Code) == "ConditionalCheckFailed" {
		return fmt.Errorf("record preview of await %s: the update's lease ended: %w", turnID, store.ErrConflict)
	}
	if err != nil {
		return wrap("record await preview", err)
	}
	return nil
}

func previewItem(p message.Preview, now time.Time, ttl time.Duration) (attrs, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode preview: %w", err)
	}
	return attrs{
		"pk": str(store.PreviewKey(p.Key)), "kind": str("preview"), "pv": str(string(b)),
		"expires_at": num(now.Add(ttl).Unix()),
		"sw":         str(resources.SweepShard), "sw_at": num(millis(now.Add(store.SweepGrace))),
	}, nil
}

// GetPreview reads a turn's preview record.
func (s *Store) GetPreview(ctx context.Context, key string, now time.Time) (message.Preview, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: s.key(store.PreviewKey(key)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return message.Preview{}, wrap("get preview", err)
	}
	if getS(out.Item, "kind") != "preview" || getN(out.Item, "expires_at") < now.Unix() {
		return message.Preview{}, store.ErrNotFound
	}
	var p message.Preview
	if err := json.Unmarshal([]byte(getS(out.Item, "pv")), &p); err != nil {
		return message.Preview{}, fmt.Errorf("decode preview %s: %w", key, err)
	}
	return p, nil
}

// DropPreview deletes a turn's preview record.
func (s *Store) DropPreview(ctx context.Context, key string) error {
	if _, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: s.table, Key: s.key(store.PreviewKey(key))}); err != nil {
		return wrap("drop preview", err)
	}
	return nil
}
