package dynamostore

import (
	"context"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/parleyhq/parley/shared/store"
)

// A busy-policy record's item: pk (store.BusyKey), kind "busy", c (the
// collected bodies, a list of strings, in order), ks (their event keys, a
// string set), cb (their bytes), open (the collection's opener), end_at
// (ms), last and prev (intent ids), expires_at (s).

// GetBusy reads a thread's busy-policy record with a strongly consistent
// read: the zero record when there is none.
func (s *Store) GetBusy(ctx context.Context, threadKey string) (store.Busy, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: s.key(store.BusyKey(threadKey)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return store.Busy{}, wrap("get busy", err)
	}
	return busyFrom(threadKey, out.Item), nil
}

func busyFrom(threadKey string, it attrs) store.Busy {
	b := store.Busy{ThreadKey: threadKey, Open: getS(it, "open"), End: fromMillis(getN(it, "end_at")), Last: getS(it, "last"), Prev: getS(it, "prev")}
	if l, ok := it["c"].(*types.AttributeValueMemberL); ok {
		for _, v := range l.Value {
			if s, ok := v.(*types.AttributeValueMemberS); ok {
				b.Collected = append(b.Collected, []byte(s.Value))
			}
		}
	}
	return b
}

// JoinBusy adds a message (its event key and inbound body, received at
// receivedAt) to its thread's collection when one is open, or opens one
// when the thread's last turn ended after the message arrived; in one
// conditional write, kept for ttl. A message already collected (a retry
// of its turn) answers as it did the first time.
func (s *Store) JoinBusy(ctx context.Context, threadKey, eventKey string, body []byte, receivedAt, now time.Time, ttl time.Duration) (store.Joined, error) {
	in := &dynamodb.UpdateItemInput{
		TableName: s.table,
		Key:       s.key(store.BusyKey(threadKey)),
		UpdateExpression: aws.String("SET #kind = :kind, #c = list_append(if_not_exists(#c, :empty), :one), #cb = if_not_exists(#cb, :zero) + :len, " +
			"#open = if_not_exists(#open, :key), #exp = :exp ADD #ks :keys"),
		ConditionExpression: aws.String("(attribute_not_exists(#ks) OR NOT contains(#ks, :key)) AND " +
			"(attribute_not_exists(#cb) OR #cb <= :room) AND (attribute_exists(#open) OR #end > :recv)"),
		ExpressionAttributeNames: map[string]string{"#kind": "kind", "#c": "c", "#cb": "cb", "#open": "open", "#exp": "expires_at", "#ks": "ks", "#end": "end_at"},
		ExpressionAttributeValues: attrs{
			":kind": str("busy"), ":empty": &types.AttributeValueMemberL{Value: []types.AttributeValue{}},
			":one":  &types.AttributeValueMemberL{Value: []types.AttributeValue{str(string(body))}},
			":zero": num(0), ":len": num(int64(len(body))), ":key": str(eventKey),
			":exp": num(now.Add(ttl).Unix()), ":keys": &types.AttributeValueMemberSS{Value: []string{eventKey}},
			":room": num(int64(store.MaxCollectedBytes - len(body))), ":recv": num(millis(receivedAt)),
		},
		ReturnValues:                        types.ReturnValueAllOld,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	out, err := s.db.UpdateItem(ctx, in)
	if old, ok := conflictItem(err); ok {
		keys, _ := old["ks"].(*types.AttributeValueMemberSS)
		switch {
		case keys != nil && slices.Contains(keys.Value, eventKey):
			// This message's own earlier attempt joined.
			if getS(old, "open") == eventKey {
				return store.JoinedOpened, nil
			}
			return store.JoinedCollection, nil
		case getS(old, "open") != "":
			return store.JoinedFull, nil
		}
		return store.JoinedNot, nil
	}
	if err != nil {
		return 0, wrap("join busy", err)
	}
	if getS(out.Attributes, "open") == "" {
		return store.JoinedOpened, nil
	}
	return store.JoinedCollection, nil
}

// EndBusy records that the thread's agent turn ended at now. With open
// set, it is the flush of that collection: the collection is cleared in
// the same write, unless another was opened since (a repeated flush finds
// nothing to clear).
func (s *Store) EndBusy(ctx context.Context, threadKey, open string, now time.Time, ttl time.Duration) error {
	in := &dynamodb.UpdateItemInput{
		TableName:                 s.table,
		Key:                       s.key(store.BusyKey(threadKey)),
		UpdateExpression:          aws.String("SET #kind = :kind, #end = :now, #exp = :exp"),
		ExpressionAttributeNames:  map[string]string{"#kind": "kind", "#end": "end_at", "#exp": "expires_at"},
		ExpressionAttributeValues: attrs{":kind": str("busy"), ":now": num(millis(now)), ":exp": num(now.Add(ttl).Unix())},
	}
	if open != "" {
		in.UpdateExpression = aws.String(*in.UpdateExpression + " REMOVE #c, #ks, #cb, #open")
		in.ConditionExpression = aws.String("#open = :open")
		in.ExpressionAttributeNames["#c"], in.ExpressionAttributeNames["#ks"] = "c", "ks"
		in.ExpressionAttributeNames["#cb"], in.ExpressionAttributeNames["#open"] = "cb", "open"
		in.ExpressionAttributeValues[":open"] = str(open)
	}
	_, err := s.db.UpdateItem(ctx, in)
	if _, ok := conflictItem(err); ok {
		return nil // cleared before
	}
	if err != nil {
		return wrap("end busy", err)
	}
	return nil
}

// MarkTurn records intentID as the thread's newest turn and returns the
// turn before it (empty when none): the one a message may interrupt. A
// retry of the same turn gets the same answer.
func (s *Store) MarkTurn(ctx context.Context, threadKey, intentID string, now time.Time, ttl time.Duration) (string, error) {
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           s.table,
		Key:                                 s.key(store.BusyKey(threadKey)),
		UpdateExpression:                    aws.String("SET #kind = :kind, #prev = if_not_exists(#last, :none), #last = :id, #exp = :exp"),
		ConditionExpression:                 aws.String("attribute_not_exists(#last) OR #last <> :id"),
		ExpressionAttributeNames:            map[string]string{"#kind": "kind", "#prev": "prev", "#last": "last", "#exp": "expires_at"},
		ExpressionAttributeValues:           attrs{":kind": str("busy"), ":none": str(""), ":id": str(intentID), ":exp": num(now.Add(ttl).Unix())},
		ReturnValues:                        types.ReturnValueAllOld,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if old, ok := conflictItem(err); ok {
		return getS(old, "prev"), nil // this turn marked before: its own answer
	}
	if err != nil {
		return "", wrap("mark turn", err)
	}
	return getS(out.Attributes, "last"), nil
}
