package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
)

// ErrConflict is returned when a compare-and-set's condition does not hold.
// The concrete error (ClaimHeldError, IntentConflictError) carries the current
// record, read in the same call.
var ErrConflict = errors.New("store: condition failed")

// ErrNotFound is returned when a record does not exist (or has expired).
var ErrNotFound = errors.New("store: not found")

// ErrInvalid is returned when the store refuses a write for what it holds
// (an item over DynamoDB's 400 KB): the same write fails on every retry.
var ErrInvalid = errors.New("store: invalid item")

// ClaimState is a claim's state; its value is what the store persists.
type ClaimState string

const (
	// ClaimPending: Owner is doing the work until LeaseUntil. Set by Claim.
	ClaimPending ClaimState = "pending"
	// ClaimEnqueued: the event is on inbound.fifo. Set by ingress.
	ClaimEnqueued ClaimState = "enqueued"
	// ClaimSuppressed: triage dropped a proactive event; Reason says why.
	ClaimSuppressed ClaimState = "suppressed"
	// ClaimDone: the turn persisted and enqueued its reply (or had none).
	ClaimDone ClaimState = "done"
	// ClaimFailed: the work failed for good; Reason says why.
	ClaimFailed ClaimState = "failed"
	// ClaimDeferred: a proactive event accepted for later (quiet hours in
	// defer mode). The claim holds its inbound message until DueAt, when
	// the sweeper enqueues it on its thread's group and moves the claim to
	// ClaimEnqueued. Set by ingress.
	ClaimDeferred ClaimState = "deferred"
)

// Claims is the claim store, the one port every user of claims shares: the
// ingress dedupe keys, the turn claims and deferred events are all claims,
// leases with named states (see ClaimState).
type Claims interface {
	// Claim takes key for spec.Owner: a new key, an expired one, or one
	// pending with its lease over. A live key answers *ClaimHeldError.
	Claim(ctx context.Context, key string, spec ClaimSpec) (Claim, error)
	// Settle moves owner's pending claim to a final state, kept for ttl.
	Settle(ctx context.Context, key, owner string, state ClaimState, reason string, now time.Time, ttl time.Duration) error
	// Release gives owner's claim back for a retry (ReleaseSpec).
	Release(ctx context.Context, key, owner string, r ReleaseSpec) error
	// Forget deletes owner's claim: the work it claimed did not happen,
	// and a retry claims the key anew.
	Forget(ctx context.Context, key, owner string) error
	// Defer keeps a deferred event's inbound message on its claim until
	// due (ClaimDeferred); the sweeper enqueues it then.
	Defer(ctx context.Context, key, owner string, body []byte, due, now time.Time, ttl time.Duration) error
	// GetClaim reads key's claim as of now (ErrNotFound when absent or
	// expired).
	GetClaim(ctx context.Context, key string, now time.Time) (Claim, error)
}

// Claim is a claim record.
type Claim struct {
	Key        string
	State      ClaimState
	Owner      string
	LeaseUntil time.Time
	ExpiresAt  time.Time
	ClaimedAt  time.Time
	// Attempts counts successful Claim calls on the key: above 1, an earlier
	// owner gave up or died.
	Attempts int
	Reason   string
	// Note is what a released attempt left for the next one (ReleaseSpec).
	Note string
	// Body is a deferred claim's inbound message, and DueAt when it is due.
	Body  []byte
	DueAt time.Time
	// Digest is ClaimSpec.Digest as the claim was written.
	Digest string
	// Thread and Origin are ClaimSpec's: whose turn a turn claim is.
	Thread message.Thread
	Origin string
}

// Live reports whether the claim still answers for its key at now.
func (c Claim) Live(now time.Time) bool {
	if !c.ExpiresAt.After(now) {
		return false
	}
	return c.State != ClaimPending || c.LeaseUntil.After(now)
}

// ClaimSpec is one Claim call's parameters.
type ClaimSpec struct {
	// Owner is a token unique to this attempt; Settle and Release check it.
	Owner string
	Now   time.Time
	// Lease is how long the claim stays pending before another caller may
	// take it over. Keep it above the work's deadline.
	Lease time.Duration
	// TTL is how long the key is remembered (from Now).
	TTL time.Duration
	// Sweep puts the claim on the sweeper's list while it is pending, due
	// SweepGrace after its lease ends: a claim still pending then was
	// abandoned, and is reported. Settling takes it off the list.
	Sweep bool
	// State, when set, writes the claim settled in that state at once (no
	// lease, no settle write): ingress claims a person's event as enqueued
	// beside its enqueue, and forgets it if the enqueue fails. Empty:
	// ClaimPending under Lease.
	State ClaimState
	// Digest, when set, is kept on the claim: a fingerprint of what the
	// key protects, so a later use of the key with other content can be
	// told from a retry (platform.Digester).
	Digest string
	// Thread and Origin, when set, are kept on the claim: a turn's thread
	// and its event's key, which its intent will hold. A reader with only
	// the turn's id learns where the turn goes before it has an intent or
	// an await record (an agent's POST /reply that arrives before Parley
	// read its 202). They cost no write of their own.
	Thread message.Thread
	Origin string
	// Window, with State, lists the claim on the window index under this
	// thread key at WindowAt (a person's message on a platform with a
	// customer-service window): Windows.LastInbound finds it.
	Window   string
	WindowAt time.Time
}

// Windows reads the window index.
type Windows interface {
	// LastInbound is when the person of thread key last wrote (the newest
	// listed claim that has not expired), zero when none is listed.
	LastInbound(ctx context.Context, threadKey string, now time.Time) (time.Time, error)
}

// DedupeTTL is how long event keys and turn claims are remembered unless
// configured otherwise (PARLEY_DEDUPE_TTL). It outlives every platform's
// retry window, WhatsApp's up to about 7 days, by a day: ingress sends every
// duplicate again, so a copy that outlived the turn's claim would ask the
// agent twice.
const DedupeTTL = 8 * 24 * time.Hour

// SweepGrace is how long after an item's expected progress (a lease's end,
// a retry time) the sweeper looks at it.
const SweepGrace = intent.SweepGrace

// ReleaseSpec is one Release call's parameters.
type ReleaseSpec struct {
	// Until, when set, keeps the claim held until then (a retry time): a
	// redelivery before it finds the claim held, and waits the rest. Zero
	// makes it claimable at once.
	Until time.Time
	// Note is kept on the claim for the next attempt: what this attempt
	// consumed that must not be consumed again (triage's count).
	Note string
}

// SweepEntry is one item on the sweeper's list: its key, and when it is due.
type SweepEntry struct {
	Key string
	At  time.Time
}

// AttentionEntry is one intent on the attention index: a unit of it was
// held in unknown_after_send or failed, last at At.
type AttentionEntry struct {
	IntentID string
	At       time.Time
}

// ClaimHeldError is returned by Claim when the key is live: settled, or
// pending under another owner's lease. It wraps ErrConflict.
type ClaimHeldError struct{ Current Claim }

func (e *ClaimHeldError) Error() string {
	return fmt.Sprintf("store: claim %s is %s", e.Current.Key, e.Current.State)
}

func (e *ClaimHeldError) Unwrap() error { return ErrConflict }

// IntentConflictError is returned when a transition's condition does not
// hold. Current is the intent as it is now. It wraps ErrConflict.
type IntentConflictError struct {
	Transition string
	Current    intent.Intent
}

func (e *IntentConflictError) Error() string {
	return fmt.Sprintf("store: %s transition on intent %s: condition failed", e.Transition, e.Current.ID)
}

func (e *IntentConflictError) Unwrap() error { return ErrConflict }

// IntentKey is the record key of intent id. A turn claims its intent's key
// (the claim becomes the intent: package turn), so one item answers for the
// event and holds its reply.
func IntentKey(id string) string { return "int#" + id }

// NewOwner returns a random claim owner token.
func NewOwner() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
