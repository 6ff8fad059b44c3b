package intent

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// Intent is the durable plan of one reply.
type Intent struct {
	// ID is derived from the origin (IDFor), so re-running a turn finds the
	// intent it already wrote instead of planning a second reply.
	ID string
	// Origin is the key of what caused the reply: the inbound event key.
	Origin string
	// Thread is where every unit goes.
	Thread message.Thread
	// Units are the platform messages, in delivery order.
	Units []Unit
	// ReplyContext is the inbound event's right to be answered directly
	// (LINE's reply token, Discord's interaction), handed to the adapter
	// with every unit; nil when the platform issued none.
	ReplyContext *message.ReplyContext
	// Sequence is the place of the intent's first unit in the reply to its
	// event (message.Outgoing.Sequence counts on from it): 0 for a turn's
	// reply; for an async turn's sequential post, and for its final, the
	// bubbles its earlier posts sent under the same ReplyContext, so a
	// platform that answers an event's first bubble its own way (Discord's
	// @original) does so once.
	Sequence int
	// CreatedAt is when the turn persisted the intent.
	CreatedAt time.Time
	// ExpiresAt is when the store may forget the intent.
	ExpiresAt time.Time
	// SweepAt is when the sweeper looks at the intent if it is still open
	// then (its units should have gone by SweepGrace after its creation, or
	// after a unit's retry time). Zero: not on the sweeper's list. The last
	// unit's terminal transition takes it off.
	SweepAt time.Time
}

// SweepGrace is how long after an intent's expected progress the sweeper
// looks at it: long enough for a reply's bubbles to go out.
const SweepGrace = 2 * time.Minute

// Unit is one platform message of an intent.
type Unit struct {
	// ID is "<bubble id>#<part>", unique within the intent.
	ID string
	// Content is what the unit carries: text, or a question.
	Content message.Content
	// ReplyTo is the platform message id to quote, if any.
	ReplyTo string
	// Parley marks Parley's own operational output (the error line, a
	// re-prompt, a system send), sent with message.OriginParley.
	Parley bool
	// Replaces, when set, is the unit key of an earlier bubble of the same
	// turn this unit replaces: an edit of that message where the platform
	// can edit, a new message elsewhere.
	Replaces string
	State    message.UnitState
	// Attempt counts leases: 0 before the first send.
	Attempt int
	// LeaseUntil bounds a sending worker's claim; a unit still sending
	// after it was abandoned mid-send.
	LeaseUntil time.Time
	// Receipt holds the platform's message ids once sent.
	Receipt []string
	// SentAt is when the platform accepted the unit.
	SentAt time.Time
	// FailureClass and FailureReason describe the last failure, if any.
	FailureClass  message.FailureClass
	FailureReason string
	// NextAt is when a unit returned to pending by a retryable failure may
	// be tried again (the platform's retry_after, or a backoff). A message
	// that comes back earlier (SQS parks a message at most 12 hours) parks
	// again for the rest.
	NextAt time.Time
	// Resent is true when the unit was sent again after an unknown outcome;
	// Resends counts those sends.
	Resent  bool
	Resends int
	// Reported is the furthest delivery state the platform reported for
	// a sent unit (message.StatusDelivered, StatusRead), on platforms that
	// report statuses; empty until one arrives.
	Reported  string
	UpdatedAt time.Time
}

// PreviewUnit is the unit id a Unit.Replaces names (UnitKey(intent id,
// PreviewUnit)) when the unit finalizes its turn's live preview: its send is
// an edit of the preview's message, recorded under the intent's id
// (store.Previews). Unit ids are "<bubble id>#<part>", so none is this.
const PreviewUnit = "~preview"

// PostMark joins a turn's event key and an agent's post id into the origin
// of a sequential post's intent (package agentapi).
const PostMark = "#post#"

// EventKeyOf is the event key an intent's origin comes from: the origin
// itself, or, for a sequential post's intent, the key of the turn's event.
// It is the correlation id every log line and record of a message carries
// (field event_key), from the webhook to the receipt.
func EventKeyOf(origin string) string {
	key, _, _ := strings.Cut(origin, PostMark)
	return key
}

// IDFor derives an intent id from its origin key: 32 hex characters.
func IDFor(origin string) string {
	sum := sha256.Sum256([]byte("intent#" + origin))
	return hex.EncodeToString(sum[:16])
}

// UnitKey is the idempotency key of a unit across every attempt:
// "<intent id>#<unit id>". It is the outbound queue's deduplication key and
// the platform idempotency key where the platform has one.
func UnitKey(intentID, unitID string) string { return intentID + "#" + unitID }

// ParseUnitKey splits a UnitKey (an intent id holds no "#"; a unit id may).
func ParseUnitKey(key string) (intentID, unitID string, ok bool) {
	intentID, unitID, ok = strings.Cut(key, "#")
	return intentID, unitID, ok && intentID != "" && unitID != ""
}

// Index returns the position of the unit with the given id, or -1.
func (in Intent) Index(unitID string) int {
	for i, u := range in.Units {
		if u.ID == unitID {
			return i
		}
	}
	return -1
}

// FirstOpen returns the index of the first unit that is not terminal, or
// len(Units) when every unit is.
func (in Intent) FirstOpen() int {
	for i, u := range in.Units {
		if !u.State.Terminal() {
			return i
		}
	}
	return len(in.Units)
}
