package dynamostore

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/parleyhq/parley/shared/store"
)

// Claim takes key for spec.Owner, unless it is live: settled and not expired,
// or pending under a lease that has not ended. A live key gives a
// *store.ClaimHeldError holding the current claim.
func (s *Store) Claim(ctx context.Context, key string, spec store.ClaimSpec) (store.Claim, error) {
	now := spec.Now
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table),
		Key:       s.key(key),
		UpdateExpression: aws.String("SET #st = :pending, #owner = :owner, #lease = :lease, #exp = :exp, " +
			"#claimed = :now, #attempts = if_not_exists(#attempts, :zero) + :one REMOVE #reason"),
		ConditionExpression: aws.String("attribute_not_exists(#pk) OR #exp <= :nowsec OR " +
			"(#st = :pending AND #lease <= :now)"),
		ExpressionAttributeNames: map[string]string{
			"#pk": "pk", "#st": "st", "#owner": "owner", "#lease": "lease_until", "#exp": "expires_at",
			"#claimed": "claimed_at", "#attempts": "attempts", "#reason": "reason",
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pending": str(string(store.ClaimPending)),
			":owner":   str(spec.Owner),
			":lease":   num(millis(now.Add(spec.Lease))),
			":exp":     num(now.Add(spec.TTL).Unix()),
			":now":     num(millis(now)),
			":nowsec":  num(now.Unix()),
			":zero":    num(0),
			":one":     num(1),
		},
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if item, ok := conflictItem(err); ok {
		return store.Claim{}, &store.ClaimHeldError{Current: claimFrom(key, item)}
	}
	if err != nil {
		return store.Claim{}, wrap("claim", err)
	}
	return claimFrom(key, out.Attributes), nil
}

// Settle records the outcome of owner's pending claim and keeps the key for
// ttl from now. A claim no longer pending under owner gives a
// *store.ClaimHeldError.
func (s *Store) Settle(ctx context.Context, key, owner string, state store.ClaimState, reason string, now time.Time, ttl time.Duration) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:           aws.String(s.table),
		Key:                 s.key(key),
		UpdateExpression:    aws.String("SET #st = :state, #reason = :reason, #exp = :exp, #settled = :now"),
		ConditionExpression: aws.String("#owner = :owner AND #st = :pending"),
		ExpressionAttributeNames: map[string]string{
			"#st": "st", "#reason": "reason", "#exp": "expires_at", "#settled": "settled_at", "#owner": "owner",
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":state":   str(string(state)),
			":reason":  str(reason),
			":exp":     num(now.Add(ttl).Unix()),
			":now":     num(millis(now)),
			":owner":   str(owner),
			":pending": str(string(store.ClaimPending)),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if item, ok := conflictItem(err); ok {
		return &store.ClaimHeldError{Current: claimFrom(key, item)}
	}
	if err != nil {
		return wrap("settle claim", err)
	}
	return nil
}

// Release ends owner's pending claim, so a retry can claim the key: at once
// when until is zero, or from until on (a retry time: a redelivery before it
// finds the claim held until then, and waits the rest). The record stays, so
// the next claim counts another attempt and knows an earlier one ran. A claim
// no longer pending under owner gives a *store.ClaimHeldError.
func (s *Store) Release(ctx context.Context, key, owner string, until time.Time) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.table),
		Key:                      s.key(key),
		UpdateExpression:         aws.String("SET #lease = :until"),
		ConditionExpression:      aws.String("#owner = :owner AND #st = :pending"),
		ExpressionAttributeNames: map[string]string{"#owner": "owner", "#st": "st", "#lease": "lease_until"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":owner":   str(owner),
			":pending": str(string(store.ClaimPending)),
			":until":   num(millis(until)),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if item, ok := conflictItem(err); ok {
		return &store.ClaimHeldError{Current: claimFrom(key, item)}
	}
	if err != nil {
		return wrap("release claim", err)
	}
	return nil
}

// GetClaim reads a claim. An absent or expired claim gives store.ErrNotFound.
func (s *Store) GetClaim(ctx context.Context, key string, now time.Time) (store.Claim, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            s.key(key),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return store.Claim{}, wrap("get claim", err)
	}
	if len(out.Item) == 0 {
		return store.Claim{}, store.ErrNotFound
	}
	c := claimFrom(key, out.Item)
	if !c.ExpiresAt.After(now) {
		return store.Claim{}, store.ErrNotFound
	}
	return c, nil
}

func claimFrom(key string, item map[string]types.AttributeValue) store.Claim {
	c := store.Claim{Key: key}
	if len(item) == 0 {
		return c
	}
	c.State = store.ClaimState(getS(item, "st"))
	c.Owner = getS(item, "owner")
	c.LeaseUntil = fromMillis(getN(item, "lease_until"))
	if exp := getN(item, "expires_at"); exp != 0 {
		c.ExpiresAt = time.Unix(exp, 0).UTC()
	}
	c.ClaimedAt = fromMillis(getN(item, "claimed_at"))
	c.Attempts = int(getN(item, "attempts"))
	c.Reason = getS(item, "reason")
	return c
}
