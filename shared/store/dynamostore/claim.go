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

// Claim attributes, besides pk: st, owner, lease_until (ms), expires_at (s),
// claimed_at (ms), attempts, reason, note, body (a deferred event), due (ms),
// wt (the write token of the last write by its owner), fp (ClaimSpec.Digest),
// thread and origin (ClaimSpec's: a turn claim's, the same attributes its
// intent holds), and sw / sw_at while the claim is on the sweeper's list.
//
// A claim's owner is a token unique to the attempt that claims it
// (store.ClaimSpec), so Claim's write token is its owner: a failed
// condition on a claim that holds spec.Owner is this call's own earlier
// success. Its owner's later writes (settle, release, defer) stamp wt.

// Claim takes key for spec.Owner, unless it is live: settled and not expired,
// or pending under a lease that has not ended. A live key gives a
// *store.ClaimHeldError holding the current claim.
func (s *Store) Claim(ctx context.Context, key string, spec store.ClaimSpec) (store.Claim, error) {
	if spec.State != "" {
		return s.claimSettled(ctx, key, spec)
	}
	now := spec.Now
	update := "SET #st = :state, #owner = :owner, #lease = :lease, #exp = :exp, " +
		"#claimed = :now, #attempts = if_not_exists(#attempts, :zero) + :one"
	names := map[string]string{
		"#pk": "pk", "#st": "st", "#owner": "owner", "#lease": "lease_until", "#exp": "expires_at",
		"#claimed": "claimed_at", "#attempts": "attempts", "#reason": "reason",
	}
	values := attrs{
		":state":   str(string(store.ClaimPending)),
		":pending": str(string(store.ClaimPending)),
		":owner":   str(spec.Owner),
		":lease":   num(millis(now.Add(spec.Lease))),
		":exp":     num(now.Add(spec.TTL).Unix()),
		":now":     num(millis(now)),
		":nowsec":  num(now.Unix()),
		":zero":    num(0),
		":one":     num(1),
	}
	if spec.Digest != "" {
		update += ", #fp = :fp"
		names["#fp"], values[":fp"] = "fp", str(spec.Digest)
	}
	update += turnOf(spec, names, values)
	if spec.Sweep {
		update += ", #sw = :sw, #swat = :swat"
		names["#sw"], names["#swat"] = "sw", "sw_at"
		values[":sw"] = str(resources.SweepShard)
		values[":swat"] = num(millis(now.Add(spec.Lease + store.SweepGrace)))
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           s.table,
		Key:                                 s.key(key),
		UpdateExpression:                    aws.String(update + " REMOVE #reason"),
		ConditionExpression:                 aws.String(claimWhen),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if item, ok := conflictItem(err); ok && ownWrite(item, "owner", spec.Owner) {
		return claimFrom(key, item), nil
	}
	if err != nil {
		return store.Claim{}, claimErr(key, "claim", err)
	}
	return claimFrom(key, out.Attributes), nil
}

// claimErr is err, from a write to claim key, as the store gives it: a
// *store.ClaimHeldError holding the claim as it is when the write's
// condition failed, else err wrapped as op (nil stays nil).
func claimErr(key, op string, err error) error {
	return ownClaimErr(key, op, tokenAttr, "", err)
}

// ownClaimErr is claimErr for a write that left tok in attribute name: a
// failed condition on an item that holds it is the write's own success
// (nil).
func ownClaimErr(key, op, name, tok string, err error) error {
	if item, ok := conflictItem(err); ok {
		if ownWrite(item, name, tok) {
			return nil
		}
		return &store.ClaimHeldError{Current: claimFrom(key, item)}
	}
	if err != nil {
		return wrap(op, err)
	}
	return nil
}

// claimWhen is the condition under which a key may be claimed.
const claimWhen = "attribute_not_exists(#pk) OR #exp <= :nowsec OR (#st = :pending AND #lease <= :now)"

// claimSettled writes a claim settled at once (spec.State) with one PutItem
// under Claim's condition, asking nothing back: it is the whole ack's one
// write for a person's event, and nothing of an item it replaces is kept
// but what the claim needs (its attempts start again at 1). A settled claim
// has no lease, so it holds none: the smaller the item, the cheaper the
// write that every message waits for.
func (s *Store) claimSettled(ctx context.Context, key string, spec store.ClaimSpec) (store.Claim, error) {
	now := spec.Now
	item := attrs{
		"pk": str(key), "st": str(string(spec.State)), "owner": str(spec.Owner),
		"expires_at": num(now.Add(spec.TTL).Unix()), "attempts": num(1),
	}
	if spec.Digest != "" {
		item["fp"] = str(spec.Digest)
	}
	if spec.Window != "" {
		item["win"], item["win_at"] = str(spec.Window), num(millis(spec.WindowAt))
	}
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                s.table,
		Item:                     item,
		ConditionExpression:      aws.String(claimWhen),
		ExpressionAttributeNames: map[string]string{"#pk": "pk", "#exp": "expires_at", "#st": "st", "#lease": "lease_until"},
		ExpressionAttributeValues: attrs{
			":nowsec": num(now.Unix()), ":now": num(millis(now)), ":pending": str(string(store.ClaimPending)),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err := ownClaimErr(key, "claim", "owner", spec.Owner, err); err != nil {
		return store.Claim{}, err
	}
	return claimFrom(key, item), nil
}

// Forget deletes owner's claim, whatever its state. A claim already absent
// is forgotten (a retried delete meets its own earlier success so).
func (s *Store) Forget(ctx context.Context, key, owner string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: s.table, Key: s.key(key),
		ConditionExpression:                 aws.String("#owner = :owner"),
		ExpressionAttributeNames:            map[string]string{"#owner": "owner"},
		ExpressionAttributeValues:           attrs{":owner": str(owner)},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if item, ok := conflictItem(err); ok && len(item) == 0 {
		return nil
	}
	return claimErr(key, "forget claim", err)
}

// Settle records the outcome of owner's pending claim, keeps the key for ttl
// from now, and takes the claim off the sweeper's list. A claim no longer
// pending under owner gives a *store.ClaimHeldError.
func (s *Store) Settle(ctx context.Context, key, owner string, state store.ClaimState, reason string, now time.Time, ttl time.Duration) error {
	return s.settle(ctx, key, owner, now, ttl, "SET #st = :state, #reason = :reason, #exp = :exp, #settled = :now REMOVE #sw, #swat", false,
		attrs{":state": str(string(state)), ":reason": str(reason)})
}

// Defer settles owner's pending claim as store.ClaimDeferred: it keeps body
// (the event's inbound message) until due, and puts the claim on the
// sweeper's list for then. The key is kept for ttl from now.
func (s *Store) Defer(ctx context.Context, key, owner string, body []byte, due, now time.Time, ttl time.Duration) error {
	return s.settle(ctx, key, owner, now, ttl,
		"SET #st = :state, #reason = :reason, #exp = :exp, #settled = :now, #body = :body, #due = :due, #sw = :sw, #swat = :due", true,
		attrs{
			":state": str(string(store.ClaimDeferred)), ":reason": str("quiet_hours"),
			":body": &types.AttributeValueMemberB{Value: body}, ":due": num(millis(due)), ":sw": str(resources.SweepShard),
		})
}

func (s *Store) settle(ctx context.Context, key, owner string, now time.Time, ttl time.Duration, update string, body bool, values attrs) error {
	names := map[string]string{
		"#st": "st", "#reason": "reason", "#exp": "expires_at", "#settled": "settled_at", "#owner": "owner",
		"#sw": "sw", "#swat": "sw_at", "#wt": tokenAttr,
	}
	if body {
		names["#body"], names["#due"] = "body", "due"
	}
	values[":exp"] = num(now.Add(ttl).Unix())
	values[":now"] = num(millis(now))
	values[":owner"] = str(owner)
	values[":pending"] = str(string(store.ClaimPending))
	tok := newToken()
	values[":wt"] = str(tok)
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           s.table,
		Key:                                 s.key(key),
		UpdateExpression:                    aws.String(stamp(update)),
		ConditionExpression:                 aws.String("#owner = :owner AND #st = :pending"),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	return ownClaimErr(key, "settle claim", tokenAttr, tok, err)
}

// Undefer moves a deferred claim, due at due, to store.ClaimEnqueued once
// its event is on the queue: it drops the held message and takes the claim
// off the sweeper's list. A claim that is no longer that deferred claim gives
// a *store.ClaimHeldError.
func (s *Store) Undefer(ctx context.Context, key string, due time.Time) error {
	tok := newToken()
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                s.table,
		Key:                      s.key(key),
		UpdateExpression:         aws.String("SET #st = :enqueued, #wt = :wt REMOVE #body, #sw, #swat"),
		ConditionExpression:      aws.String("#st = :deferred AND #due = :due"),
		ExpressionAttributeNames: map[string]string{"#st": "st", "#body": "body", "#due": "due", "#sw": "sw", "#swat": "sw_at", "#wt": tokenAttr},
		ExpressionAttributeValues: attrs{
			":enqueued": str(string(store.ClaimEnqueued)), ":deferred": str(string(store.ClaimDeferred)), ":due": num(millis(due)),
			":wt": str(tok),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	return ownClaimErr(key, "undefer claim", tokenAttr, tok, err)
}

// Release ends owner's pending claim, so a retry can claim the key: at once,
// or from r.Until on (a retry time: a redelivery before it finds the claim
// held until then, and waits the rest). r.Note is kept for the next attempt.
// The record stays, so the next claim counts another attempt and knows an
// earlier one ran. A claim held until a retry time stays on the sweeper's
// list (if it was on it), due SweepGrace after that time; one claimable at
// once leaves it until it is claimed again. A claim no longer pending under
// owner gives a *store.ClaimHeldError.
func (s *Store) Release(ctx context.Context, key, owner string, r store.ReleaseSpec) error {
	tok := newToken()
	names := map[string]string{"#owner": "owner", "#st": "st", "#lease": "lease_until", "#swat": "sw_at", "#wt": tokenAttr}
	values := attrs{
		":wt":      str(tok),
		":owner":   str(owner),
		":pending": str(string(store.ClaimPending)),
		":until":   num(millis(r.Until)),
	}
	update := "SET #lease = :until, #wt = :wt"
	if r.Note != "" {
		update += ", #note = :note"
		names["#note"] = "note"
		values[":note"] = str(r.Note)
	}
	if r.Until.IsZero() {
		update += " REMOVE #sw, #swat"
		names["#sw"] = "sw"
	} else {
		// Without sw the item is not on the list, and sw_at alone
		// indexes nothing: setting it unconditionally is harmless.
		update += ", #swat = :swat"
		values[":swat"] = num(millis(r.Until.Add(store.SweepGrace)))
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           s.table,
		Key:                                 s.key(key),
		UpdateExpression:                    aws.String(update),
		ConditionExpression:                 aws.String("#owner = :owner AND #st = :pending"),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	return ownClaimErr(key, "release claim", tokenAttr, tok, err)
}

// GetClaim reads a claim. An absent or expired claim gives store.ErrNotFound.
func (s *Store) GetClaim(ctx context.Context, key string, now time.Time) (store.Claim, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      s.table,
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

func claimFrom(key string, item attrs) store.Claim {
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
	c.Note = getS(item, "note")
	if b, ok := item["body"].(*types.AttributeValueMemberB); ok {
		c.Body = b.Value
	}
	c.DueAt = fromMillis(getN(item, "due"))
	c.Digest = getS(item, "fp")
	c.Thread, c.Origin = turnFrom(item)
	return c
}
