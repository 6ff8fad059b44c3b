// Package delivery sends the units of a send intent to the platform, in
// order, durably, and at most once where the platform cannot deduplicate.
//
// Each outbound.fifo message names one unit of one intent. The processor
// reads the intent and delivers every open unit up to the named one, in
// order: the store's state, not the queue's, decides what is next, so a unit
// enqueued late or redelivered never overtakes its predecessor and never goes
// out twice.
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
// The adapter classifies a failure (message.FailureClass); Policy decides.
//
//   - rate_limit: back to pending; the message is parked exactly the
//     platform's retry_after through ChangeMessageVisibility, never slept on.
//   - transient, cancelled: back to pending; exponential backoff with jitter.
//   - auth, permission, not_found, invalid_payload: failed with its class and
//     reason; the thread moves on.
//   - unknown (the request left, no answer came back), or a unit found
//     sending after its lease ended (a crash between the platform's success
//     and the receipt): unknown_after_send. Policy UnknownResend retries it
//     (at least once, logged as a resend); UnknownHold keeps it for an
//     operator (attention index) and the thread moves on. Platforms with
//     server-side idempotency always resend: the platform drops the copy.
//   - after MaxAttempts leases a unit fails with its last class; nothing is
//     ever dropped without a recorded state.
package delivery
