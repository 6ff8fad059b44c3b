package dynamostore

import (
	"context"
	"time"

	"github.com/parleyhq/parley/shared/ddb"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/store"
)

// DueForSweep lists at most limit items on the sweeper's list that are due
// by now, oldest first: one Query on the sweep index, which holds nothing but
// items that may need mending. The index is eventually consistent: read the
// item itself before acting on it.
func (s *Store) DueForSweep(ctx context.Context, now time.Time, limit int) ([]store.SweepEntry, error) {
	out, err := s.db.Query(ctx, &ddb.QueryInput{
		TableName:                s.table,
		IndexName:                resources.Sweep.Name,
		KeyConditionExpression:   "#sw = :sw AND #swat <= :now",
		ExpressionAttributeNames: map[string]string{"#sw": "sw", "#swat": "sw_at"},
		ExpressionAttributeValues: ddb.Item{
			":sw": str(resources.SweepShard), ":now": num(millis(now)),
		},
		Limit: limit,
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
	return s.sweepUpdate(ctx, key, from, "SET #swat = :to", ddb.Item{":to": num(millis(to))})
}

// Unsweep takes an item off the sweeper's list, unless its sweep time moved
// from from meanwhile (store.ErrConflict).
func (s *Store) Unsweep(ctx context.Context, key string, from time.Time) error {
	return s.sweepUpdate(ctx, key, from, "REMOVE #sw, #swat", nil)
}

func (s *Store) sweepUpdate(ctx context.Context, key string, from time.Time, update string, values ddb.Item) error {
	if values == nil {
		values = ddb.Item{}
	}
	values[":from"] = num(millis(from))
	_, err := s.db.UpdateItem(ctx, &ddb.UpdateItemInput{
		TableName:                 s.table,
		Key:                       s.key(key),
		UpdateExpression:          update,
		ConditionExpression:       "attribute_exists(#sw) AND #swat = :from",
		ExpressionAttributeNames:  map[string]string{"#sw": "sw", "#swat": "sw_at"},
		ExpressionAttributeValues: values,
	})
	if _, ok := conflictItem(err); ok {
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
	desc := false
	out, err := s.db.Query(ctx, &ddb.QueryInput{
		TableName:                 s.table,
		IndexName:                 resources.Window.Name,
		KeyConditionExpression:    "#win = :win",
		ExpressionAttributeNames:  map[string]string{"#win": "win"},
		ExpressionAttributeValues: ddb.Item{":win": str(threadKey)},
		ScanIndexForward:          &desc,
		Limit:                     1,
	})
	if err != nil {
		return time.Time{}, wrap("query window index", err)
	}
	if len(out.Items) == 0 {
		return time.Time{}, nil
	}
	return fromMillis(getN(out.Items[0], "win_at")), nil
}
