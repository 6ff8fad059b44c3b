package dynamostore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

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
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode preview: %w", err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: s.table,
		Item: attrs{
			"pk": str(store.PreviewKey(p.Key)), "kind": str("preview"), "pv": str(string(b)),
			"expires_at": num(now.Add(ttl).Unix()),
			"sw":         str(resources.SweepShard), "sw_at": num(millis(now.Add(store.SweepGrace))),
		},
	})
	if err != nil {
		return wrap("record preview", err)
	}
	return nil
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
