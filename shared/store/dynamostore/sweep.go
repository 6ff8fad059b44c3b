package dynamostore

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/store"
)

// DueForSweep lists at most limit items on the sweeper's list that are due
// by now, oldest first: one Query on the sweep index, which holds nothing but
// items that may need mending. The index is eventually consistent: read the
// item itself before acting on it.
func (s *Store) DueForSweep(ctx context.Context, now time.Time, limit int) ([]store.SweepEntry, error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                s.table,
		IndexName:                aws.String(resources.Sweep.Name),
		KeyConditionExpression:   aws.String("#sw = :sw AND #swat <= :now"),
		ExpressionAttributeNames: map[string]string{"#sw": "sw", "#swat": "sw_at"},
		ExpressionAttributeValues: attrs{
			":sw": str(resources.SweepShard), ":now": num(millis(now)),
		},
		Limit: aws.Int32(int32(limit)),
	})
	if err != nil {
		return nil, wrap("query sweep index", err)
	}
	entries := make([]store.SweepEntry, 0, len(out.Items))
	for _, it := range out.Items {
		entries = append(entries, store.SweepEntry{Key: getS(it, "pk"), At: fromMillis(getN(it, "sw_at"))})
	}
	return entries, nil
}

// Reschedule moves an item's sweep time from from to to, unless someone
// moved it meanwhile (store.ErrConflict: their schedule stands).
func (s *Store) Reschedule(ctx context.Context, key string, from, to time.Time) error {
	return s.sweepUpdate(ctx, key, from, "SET #swat = :to", attrs{":to": num(millis(to))})
}

// Unsweep takes an item off the sweeper's list, unless its sweep time moved
// from from meanwhile (store.ErrConflict).
func (s *Store) Unsweep(ctx context.Context, key string, from time.Time) error {
	return s.sweepUpdate(ctx, key, from, "REMOVE #sw, #swat", nil)
}

func (s *Store) sweepUpdate(ctx context.Context, key string, from time.Time, update string, values attrs) error {
	if values == nil {
		values = attrs{}
	}
	tok := newToken()
	values[":from"] = num(millis(from))
	values[":swt"] = str(tok)
	update = stampAs(update, "#swt", ":swt")
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 s.table,
		Key:                       s.key(key),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String("attribute_exists(#sw) AND #swat = :from"),
		ExpressionAttributeNames:  map[string]string{"#sw": "sw", "#swat": "sw_at", "#swt": sweepTokenAttr},
		ExpressionAttributeValues: values,

		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if old, ok := conflictItem(err); ok {
		if ownWrite(old, sweepTokenAttr, tok) {
			return nil
		}
		return store.ErrConflict
	}
	if err != nil {
		return wrap("update sweep entry", err)
	}
	return nil
}

// LastInbound is when the person of threadKey last wrote: the newest claim
// on the window index, read newest first, one item, keys only. Claims live
// for the dedupe TTL (8 days), longer than any window, so one TTL has not
// deleted yet only says the window closed long ago. The index is eventually
// consistent: a message a moment old may not be there yet, which only
// makes the window look older than it is.
func (s *Store) LastInbound(ctx context.Context, threadKey string, now time.Time) (time.Time, error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                 s.table,
		IndexName:                 aws.String(resources.Window.Name),
		KeyConditionExpression:    aws.String("#win = :win"),
		ExpressionAttributeNames:  map[string]string{"#win": "win"},
		ExpressionAttributeValues: attrs{":win": str(threadKey)},
		ScanIndexForward:          aws.Bool(false),
		Limit:                     aws.Int32(1),
	})
	if err != nil {
		return time.Time{}, wrap("query window index", err)
	}
	if len(out.Items) == 0 {
		return time.Time{}, nil
	}
	return fromMillis(getN(out.Items[0], "win_at")), nil
}
