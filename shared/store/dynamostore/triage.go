package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/triage"
)

// Triage counter records ("tri#<chat key>"): one item per conversation,
// holding
//
//	last        N  Unix ms of the last accepted proactive event
//	acc         S  the token of the take that set last
//	pl, pt      N, S  last and acc as that take found them (0, "": none)
//	gb          S  the write token of the last give-back
//	d_<day>     N  the count of local day <day> (2026-11-29)
//	expires_at  N  epoch seconds; refreshed by every take
//
// A take's token is its write token too: a take whose condition fails on a
// record that holds its own token was applied by an earlier attempt of the
// same call (a retry after a lost answer), and pl and pt give back what it
// displaced, as its answer would have.
//
// A count lives in an attribute named by its day, so the one conditional
// UpdateItem of Take can start a new day's count at zero
// (if_not_exists) without reading the record first.
const (
	attrLast      = "last"
	attrToken     = "acc"
	attrPrevLast  = "pl"
	attrPrevToken = "pt"
	attrGivenBack = "gb"
	dayAttrPrefix = "d_"
)

var _ triage.Counters = (*Store)(nil)

// Take counts one accepted proactive event, if the cooldown and the cap allow
// it, in one conditional UpdateItem. When a rule refuses, nothing changes and
// the record DynamoDB returns with the failed condition says which rule
// (cooldown first), as a *triage.LimitError.
func (s *Store) Take(ctx context.Context, t triage.Take) (triage.Taken, error) {
	if t.Key == "" || t.Day == "" || t.Token == "" {
		return triage.Taken{}, errors.New("dynamostore: take needs a key, a day and a token")
	}
	names := map[string]string{
		"#day": dayAttrPrefix + t.Day, "#last": attrLast, "#acc": attrToken, "#exp": "expires_at",
		"#pl": attrPrevLast, "#pt": attrPrevToken,
	}
	values := attrs{
		":zero": num(0), ":one": num(1), ":none": str(""),
		":at": num(t.At.UnixMilli()), ":tok": str(t.Token), ":exp": num(t.At.Add(t.TTL).Unix()),
	}
	update := "SET #day = if_not_exists(#day, :zero) + :one, #last = :at, #acc = :tok, #exp = :exp, " +
		"#pl = if_not_exists(#last, :zero), #pt = if_not_exists(#acc, :none)"
	var forget []string
	for i, day := range t.Forget {
		if day == t.Day || day == "" {
			continue
		}
		n := fmt.Sprintf("#f%d", i)
		names[n] = dayAttrPrefix + day
		forget = append(forget, n)
	}
	if len(forget) > 0 {
		update += " REMOVE " + strings.Join(forget, ", ")
	}
	// The take's own token refuses it: a retry of a take whose answer was
	// lost meets its own write and reads it back (ownWrite below), where,
	// with no cooldown and the cap not reached, it would count again.
	conds := []string{"(attribute_not_exists(#acc) OR #acc <> :tok)"}
	if t.Cooldown > 0 {
		conds = append(conds, "(attribute_not_exists(#last) OR #last <= :cutoff)")
		values[":cutoff"] = num(t.At.Add(-t.Cooldown).UnixMilli())
	}
	if t.Cap > 0 {
		conds = append(conds, "(attribute_not_exists(#day) OR #day < :cap)")
		values[":cap"] = num(int64(t.Cap))
	}
	in := &dynamodb.UpdateItemInput{
		TableName:                           s.table,
		Key:                                 s.key(t.Key),
		UpdateExpression:                    aws.String(update),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueUpdatedOld,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	in.ConditionExpression = aws.String(strings.Join(conds, " AND "))
	out, err := s.db.UpdateItem(ctx, in)
	if item, ok := conflictItem(err); ok {
		if ownWrite(item, attrToken, t.Token) {
			return triage.Taken{
				Key: t.Key, Day: t.Day, At: t.At, Token: t.Token, Count: int(getN(item, dayAttrPrefix+t.Day)),
				PrevLast: fromMillis(getN(item, attrPrevLast)), PrevToken: getS(item, attrPrevToken),
			}, nil
		}
		return triage.Taken{}, limitFrom(t, item)
	}
	if err != nil {
		return triage.Taken{}, wrap("take triage counters", err)
	}
	old := out.Attributes
	return triage.Taken{
		Key: t.Key, Day: t.Day, At: t.At, Token: t.Token,
		Count:    int(getN(old, dayAttrPrefix+t.Day)) + 1,
		PrevLast: fromMillis(getN(old, attrLast)), PrevToken: getS(old, attrToken),
	}, nil
}

// limitFrom names the rule a failed Take broke, from the record as it was.
func limitFrom(t triage.Take, item attrs) error {
	e := &triage.LimitError{Count: int(getN(item, dayAttrPrefix+t.Day)), Last: fromMillis(getN(item, attrLast))}
	switch {
	case t.Cooldown > 0 && getN(item, attrLast) > t.At.Add(-t.Cooldown).UnixMilli():
		e.Reason = triage.ReasonCooldown
	case t.Cap > 0 && e.Count >= t.Cap:
		e.Reason = triage.ReasonDailyCap
	default:
		// Neither rule holds on the record DynamoDB returned: not a limit.
		return fmt.Errorf("dynamodb take triage counters: %w: condition failed on a record within limits", store.ErrConflict)
	}
	return e
}

// GiveBack undoes a Take, only while the record's token is still the take's:
// nothing was taken since. It takes one off the day's count and restores the
// previous last accepted time and token.
func (s *Store) GiveBack(ctx context.Context, t triage.Taken) error {
	names := map[string]string{"#day": dayAttrPrefix + t.Day, "#last": attrLast, "#acc": attrToken, "#gb": attrGivenBack}
	gb := newToken()
	values := attrs{":one": num(1), ":tok": str(t.Token), ":gb": str(gb)}
	set := []string{"#day = #day - :one", "#gb = :gb"}
	var remove []string
	if t.PrevLast.IsZero() {
		remove = append(remove, "#last")
	} else {
		set = append(set, "#last = :prev")
		values[":prev"] = num(t.PrevLast.UnixMilli())
	}
	if t.PrevToken == "" {
		remove = append(remove, "#acc")
	} else {
		set = append(set, "#acc = :prevtok")
		values[":prevtok"] = str(t.PrevToken)
	}
	update := "SET " + strings.Join(set, ", ")
	if len(remove) > 0 {
		update += " REMOVE " + strings.Join(remove, ", ")
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 s.table,
		Key:                       s.key(t.Key),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String("#acc = :tok AND #day >= :one"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,

		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if item, ok := conflictItem(err); ok {
		if ownWrite(item, attrGivenBack, gb) {
			return nil // an earlier attempt of this call gave it back
		}
		return triage.ErrMovedOn
	}
	if err != nil {
		return wrap("give back triage counters", err)
	}
	return nil
}

// GetCounter reads a conversation's counters. An absent record gives
// store.ErrNotFound. Expiry is not checked: an expired record only holds
// counts of past days and a last time older than any cooldown.
func (s *Store) GetCounter(ctx context.Context, key string) (triage.Counter, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      s.table,
		Key:            s.key(key),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return triage.Counter{}, wrap("get triage counters", err)
	}
	if len(out.Item) == 0 {
		return triage.Counter{}, store.ErrNotFound
	}
	c := triage.Counter{
		Key:   key,
		Days:  map[string]int{},
		Last:  fromMillis(getN(out.Item, attrLast)),
		Token: getS(out.Item, attrToken),
	}
	if exp := getN(out.Item, "expires_at"); exp != 0 {
		c.ExpiresAt = time.Unix(exp, 0).UTC()
	}
	for name := range out.Item {
		if day, ok := strings.CutPrefix(name, dayAttrPrefix); ok {
			c.Days[day] = int(getN(out.Item, name))
		}
	}
	return c, nil
}
