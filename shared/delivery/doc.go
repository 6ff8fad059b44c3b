// Package delivery sends the units of a send intent to the platform, in
// order, durably, and at most once where the platform cannot deduplicate.
//
// Each outbound.fifo message names one unit of one intent. The processor
// reads the intent and delivers every open unit up to the named one, in
// order: the store's state, not the queue's, decides what is next, so a unit
// enqueued late or redelivered never overtakes its predecessor and never goes
// out twice.
//
// The read is usually saved. A message also carries its unit's place, and
// the processor leases a fresh unit without reading (intent.LeaseUnread,
// which requires every earlier unit sent or failed): the lease's answer is
// the intent, and a lost lease answers with the intent as it is, for the
// usual way. Before such a lease of a later unit it waits a whole
// BubbleDelay, which is never too early: the unit before was sent before
// its message was deleted. An instance that moved the intent last uses what
// it saw instead, and paces exactly.
//
// # State model
//
// See package intent for the diagram. For each unit the processor:
//
//  1. paces: waits until the previous unit's send + BubbleDelay (a short
//     wait in place; a longer one parks the message through its visibility);
//  2. leases it (pending → sending, attempt + 1) with a compare-and-set that
//     also requires every earlier unit to be terminal;
//  3. sends it through the platform's Sender;
//  4. commits the receipt (sending → sent) with every platform message id.
//
// # Failure handling
//
// The adapter classifies a failure (message.FailureClass); the processor
// decides. Retry budgets are time, not counts: a unit's budget is its age
// (Config.MaxAge from its intent's creation), so an outage shorter than that
// loses nothing, however many attempts it takes.
//
//   - rate_limit: back to pending, due at the platform's retry_after or a
//     floor doubling from 1 s to 5 min with each consecutive failure,
//     whichever is later; the message is parked until then through
//     ChangeMessageVisibility, never slept on.
//   - transient, cancelled (nothing was posted): back to pending, due after
//     a jittered exponential backoff on the unit's attempts.
//   - either of those once the unit is past its age: failed, keeping its
//     last class and reason.
//   - auth, permission, not_found, invalid_payload: failed with its class and
//     reason; the thread moves on.
//   - unknown (the request left, no answer came back), or a unit found
//     sending after its lease ended (a crash between the platform's success
//     and the receipt): unknown_after_send. Policy UnknownResend retries it
//     (at least once, logged as a resend, at most Config.MaxResends times on
//     a platform without idempotency, then GiveUp: failed); UnknownHold keeps
//     it for an operator (attention index) and the thread moves on.
//     Platforms with server-side idempotency always resend: the platform
//     drops the copy.
//   - a record that comes back before its unit is due (SQS parks a message
//     at most 12 hours from its receive) parks again for the rest, without
//     an attempt.
//   - a send starts only when the invocation has time to finish it (the
//     send timeout and its commit); otherwise the record goes back unsent.
//   - a record that does not decode is dead-lettered, alone.
//   - a unit a newer message superseded (pending → failed, class
//     superseded, by the turn under PARLEY_BUSY_POLICY interrupt) is
//     settled like any failed one: never sent, and its record is done.
//
// A reaction unit (message.ContentReaction: an envelope's react, the
// status lifecycle's final reaction) goes through the sender's Reactor and
// leaves an empty receipt; setting a reaction again changes nothing, so its
// unknown outcome is resent whatever the policy. A status reaction sets its
// answered emoji, or its failure mark when a bubble before it failed.
//
// Nothing is ever dropped without a recorded state.
package delivery
