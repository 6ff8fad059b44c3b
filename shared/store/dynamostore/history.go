package dynamostore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/parleyhq/parley/shared/history"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/store"
)

// A transcript's item: pk (store.HistoryKey), kind "history", hz (the
// entries as one JSON document, DEFLATE-compressed: DynamoDB bills a write
// by the item's size, and chat text compresses several times over; the
// item is never larger than the bound the deployment chose plus a few
// hundred bytes), open (the intent ids still delivering), ver (the write
// count), expires_at (s) and wt (the write token).

// GetHistory reads a thread's transcript with a strongly consistent read.
// An absent one, or one expired at now (TTL deletes lag), is the zero
// History (Version 0), not an error.
func (s *Store) GetHistory(ctx context.Context, threadKey string, now time.Time) (store.History, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      s.table,
		Key:            s.key(store.HistoryKey(threadKey)),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return store.History{}, wrap("get history", err)
	}
	return historyFrom(threadKey, out.Item, now)
}

func historyFrom(threadKey string, it attrs, now time.Time) (store.History, error) {
	h := store.History{ThreadKey: threadKey}
	if getS(it, "kind") != "history" || getN(it, "expires_at") < now.Unix() {
		return h, nil
	}
	h.Version = getN(it, "ver")
	if z, ok := it["hz"].(*types.AttributeValueMemberB); ok {
		if err := inflateJSON(z.Value, maxHistoryJSON, &h.Entries); err != nil {
			return store.History{}, fmt.Errorf("decode history of %s: not a transcript within its bound: %w", threadKey, err)
		}
	}
	if l, ok := it["open"].(*types.AttributeValueMemberL); ok {
		for _, v := range l.Value {
			if s, ok := v.(*types.AttributeValueMemberS); ok {
				h.Open = append(h.Open, s.Value)
			}
		}
	}
	return h, nil
}

// PutHistory writes h as version h.Version+1, kept for ttl from now, only
// over version h.Version (0: over no record, or an expired one). Another
// version found is a *store.HistoryConflictError: read again, change
// again, write again. A record over DynamoDB's item limit is
// store.ErrInvalid, though the transcript's bound keeps it far below.
func (s *Store) PutHistory(ctx context.Context, h store.History, now time.Time, ttl time.Duration) error {
	z, err := deflateJSON(h.Entries)
	if err != nil {
		return fmt.Errorf("encode history: %w", err)
	}
	open := make([]types.AttributeValue, 0, len(h.Open))
	for _, id := range h.Open {
		open = append(open, str(id))
	}
	tok := newToken()
	item := attrs{
		"pk": str(store.HistoryKey(h.ThreadKey)), "kind": str("history"), "hz": &types.AttributeValueMemberB{Value: z},
		"open": &types.AttributeValueMemberL{Value: open}, "ver": num(h.Version + 1),
		"expires_at": num(now.Add(ttl).Unix()), tokenAttr: str(tok),
	}
	cond, names, values := "#ver = :ver", map[string]string{"#ver": "ver"}, attrs{":ver": num(h.Version)}
	if h.Version == 0 {
		cond, names, values = "attribute_not_exists(#pk) OR #exp < :now", map[string]string{"#pk": "pk", "#exp": "expires_at"}, attrs{":now": num(now.Unix())}
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                           s.table,
		Item:                                item,
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if old, ok := conflictItem(err); ok {
		if ownWrite(old, tokenAttr, tok) {
			return nil // this write's own earlier attempt
		}
		return &store.HistoryConflictError{ThreadKey: h.ThreadKey}
	}
	if err != nil {
		return wrap("put history", err)
	}
	return nil
}

// EraseHistory deletes a thread's transcript, and with it the turns it was
// still recording: nothing of the thread before the erase is written to it
// again. Erasing a thread without one is not an error.
func (s *Store) EraseHistory(ctx context.Context, threadKey string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: s.table,
		Key:       s.key(store.HistoryKey(threadKey)),
	})
	if err != nil {
		return wrap("erase history", err)
	}
	return nil
}

// maxHistoryJSON bounds a transcript read back, uncompressed: twice the
// largest bound a deployment may set.
const maxHistoryJSON = 2 * history.MaxBytes

// maxBatchGet is BatchGetItem's limit on keys per request.
const maxBatchGet = 100

// GetIntents reads the intents ids name, with strongly consistent reads, in
// one BatchGetItem (more only for keys DynamoDB left unprocessed): an id
// with no intent is left out of the answer.
func (s *Store) GetIntents(ctx context.Context, ids []string) (map[string]intent.Intent, error) {
	out := map[string]intent.Intent{}
	if len(ids) == 0 {
		return out, nil
	}
	if len(ids) > maxBatchGet {
		return nil, fmt.Errorf("get intents: %d ids, at most %d", len(ids), maxBatchGet)
	}
	keys := make([]attrs, 0, len(ids))
	seen := map[string]bool{}
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			keys = append(keys, s.key(intentPK(id)))
		}
	}
	req := map[string]types.KeysAndAttributes{*s.table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
	for attempt := 0; len(req) > 0; attempt++ {
		if attempt == 5 {
			return nil, fmt.Errorf("get intents: keys left unprocessed after %d attempts", attempt)
		}
		res, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return nil, wrap("get intents", err)
		}
		for _, it := range res.Responses[*s.table] {
			if !isIntent(it) {
				continue
			}
			in, err := fromItem(it)
			if err != nil {
				return nil, err
			}
			out[in.ID] = in
		}
		req = res.UnprocessedKeys
	}
	return out, nil
}
