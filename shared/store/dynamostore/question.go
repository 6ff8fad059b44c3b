package dynamostore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/store"
)

// questionItem is a question record as stored. The form and the answers are
// JSON (their own tags version them); everything a compare-and-set reads or
// the sweeper needs is an attribute.
type questionItem struct {
	PK        string         `dynamodbav:"pk"`
	Kind      string         `dynamodbav:"kind"`
	Thread    message.Thread `dynamodbav:"thread"`
	ID        string         `dynamodbav:"id"`
	Short     string         `dynamodbav:"short"`
	Origin    string         `dynamodbav:"origin"`
	Owner     string         `dynamodbav:"owner"`
	Form      string         `dynamodbav:"form"`
	IntentID  string         `dynamodbav:"intent"`
	UnitID    string         `dynamodbav:"unit"`
	State     string         `dynamodbav:"st"`
	Reason    string         `dynamodbav:"reason,omitempty"`
	Field     int            `dynamodbav:"field"`
	Selected  []string       `dynamodbav:"sel,omitempty"`
	Answers   string         `dynamodbav:"answers,omitempty"`
	ClosedBy  string         `dynamodbav:"closed_by,omitempty"`
	Version   int            `dynamodbav:"v"`
	CreatedAt int64          `dynamodbav:"created_at"`
	DueAt     int64          `dynamodbav:"due"`
	ExpiresAt int64          `dynamodbav:"expires_at"`
	Sweep     string         `dynamodbav:"sw,omitempty"`
	SweepAt   int64          `dynamodbav:"sw_at,omitempty"`
	// Token is the write token of the write that left the record.
	Token string `dynamodbav:"wt,omitempty"`
}

func questionToItem(q store.Question, tok string) (attrs, error) {
	form, err := json.Marshal(q.Form)
	if err != nil {
		return nil, fmt.Errorf("encode question form: %w", err)
	}
	it := questionItem{
		PK: store.QuestionKey(q.Thread), Kind: "question", Thread: q.Thread, ID: q.ID, Short: q.Short, Origin: q.Origin,
		Owner: q.Owner, Form: string(form), IntentID: q.IntentID, UnitID: q.UnitID, State: string(q.State), Reason: q.Reason,
		Field: q.Field, Selected: q.Selected, ClosedBy: q.ClosedBy, Version: q.Version,
		CreatedAt: millis(q.CreatedAt), DueAt: millis(q.DueAt), ExpiresAt: q.ExpiresAt.Unix(), Token: tok,
	}
	if len(q.Answers) > 0 {
		a, err := json.Marshal(q.Answers)
		if err != nil {
			return nil, fmt.Errorf("encode question answers: %w", err)
		}
		it.Answers = string(a)
	}
	if q.Sweep {
		it.Sweep, it.SweepAt = resources.SweepShard, millis(q.DueAt)
	}
	return attributevalue.MarshalMap(it)
}

func questionFrom(item attrs) (store.Question, error) {
	var it questionItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return store.Question{}, fmt.Errorf("decode question item: %w", err)
	}
	q := store.Question{
		Thread: it.Thread, ID: it.ID, Short: it.Short, Origin: it.Origin, Owner: it.Owner, IntentID: it.IntentID,
		UnitID: it.UnitID, State: store.QuestionState(it.State), Reason: it.Reason, Field: it.Field, Selected: it.Selected,
		ClosedBy: it.ClosedBy, Version: it.Version, CreatedAt: fromMillis(it.CreatedAt), DueAt: fromMillis(it.DueAt),
		ExpiresAt: fromMillis(it.ExpiresAt * 1000), Sweep: it.Sweep != "",
	}
	if err := json.Unmarshal([]byte(it.Form), &q.Form); err != nil {
		return store.Question{}, fmt.Errorf("decode question form: %w", err)
	}
	if it.Answers != "" {
		dec := json.NewDecoder(strings.NewReader(it.Answers))
		dec.UseNumber() // an answered integer reaches the agent exactly
		if err := dec.Decode(&q.Answers); err != nil {
			return store.Question{}, fmt.Errorf("decode question answers: %w", err)
		}
	}
	return q, nil
}

// GetQuestion reads a thread's current question by its key (QuestionKey),
// consistently. store.ErrNotFound when there is none.
func (s *Store) GetQuestion(ctx context.Context, key string) (store.Question, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: s.key(key), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return store.Question{}, wrap("get question", err)
	}
	if len(out.Item) == 0 {
		return store.Question{}, fmt.Errorf("question %s: %w", key, store.ErrNotFound)
	}
	return questionFrom(out.Item)
}

// AskQuestion makes q (version 1) its thread's current question, unless the
// thread's current one is another question still open, or closed but still
// on the sweeper's list (its cancel may not be enqueued yet), which a
// *store.QuestionConflictError returns: the caller supersedes it first. When
// q itself is already there (a re-run turn), that record is returned, and
// created is false.
func (s *Store) AskQuestion(ctx context.Context, q store.Question) (store.Question, bool, error) {
	q.Version = 1
	tok := newToken()
	item, err := questionToItem(q, tok)
	if err != nil {
		return store.Question{}, false, err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                           s.table,
		Item:                                item,
		ConditionExpression:                 aws.String("attribute_not_exists(#pk) OR (#id <> :id AND #st <> :open AND attribute_not_exists(#sw))"),
		ExpressionAttributeNames:            map[string]string{"#pk": "pk", "#id": "id", "#st": "st", "#sw": "sw"},
		ExpressionAttributeValues:           attrs{":id": str(q.ID), ":open": str(string(store.QuestionOpen))},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if old, ok := conflictItem(err); ok {
		cur, derr := questionFrom(old)
		if derr != nil {
			return store.Question{}, false, derr
		}
		if ownWrite(old, tokenAttr, tok) {
			return cur, true, nil
		}
		if cur.ID == q.ID {
			return cur, false, nil
		}
		return store.Question{}, false, &store.QuestionConflictError{Current: cur}
	}
	if err != nil {
		return store.Question{}, false, wrap("ask question", err)
	}
	return q, true, nil
}

// UpdateQuestion writes q over the record at version q.Version, and returns
// it at the next version. Another writer's change first gives a
// *store.QuestionConflictError with the record as it is.
func (s *Store) UpdateQuestion(ctx context.Context, q store.Question) (store.Question, error) {
	expected := q.Version
	q.Version++
	tok := newToken()
	item, err := questionToItem(q, tok)
	if err != nil {
		return store.Question{}, err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                           s.table,
		Item:                                item,
		ConditionExpression:                 aws.String("#id = :id AND #v = :v"),
		ExpressionAttributeNames:            map[string]string{"#id": "id", "#v": "v"},
		ExpressionAttributeValues:           attrs{":id": str(q.ID), ":v": num(int64(expected))},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if old, ok := conflictItem(err); ok {
		if ownWrite(old, tokenAttr, tok) {
			return q, nil
		}
		var cur store.Question
		if len(old) > 0 {
			if cur, err = questionFrom(old); err != nil {
				return store.Question{}, err
			}
		}
		return store.Question{}, &store.QuestionConflictError{Current: cur}
	}
	if err != nil {
		return store.Question{}, wrap("update question", err)
	}
	return q, nil
}
