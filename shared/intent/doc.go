// Package intent is the durable record of a reply: one send intent per turn,
// holding every unit (one platform message each) in plan order, and the
// compare-and-set transitions that move a unit through its states.
//
// The turn function persists the whole intent in one write before it enqueues
// anything (intent before I/O), so a crash at any point loses no reply. The
// delivery function then moves each unit with a Transition: a named, complete
// update that the store applies only if the unit is still in the state and
// attempt the caller saw. A late or duplicated queue message therefore meets
// a conflict, never a second send.
//
// # State model
//
//	            Lease (attempt+1)              MarkSent
//	pending ───────────────────────► sending ───────────► sent
//	   ▲                                │
//	   │         MarkRetryable          │  MarkFailed
//	   └────────────────────────────────┼────────────────► failed
//	                                    │  MarkUnknown
//	                                    └────────────────► unknown_after_send
//	                                                        │ Resend (policy resend)
//	                                                        ├──────► sending
//	                                                        │ GiveUp (out of resends, past its age)
//	                                                        └──────► failed
//
// Units of an intent are delivered strictly in order: Lease requires every
// earlier unit to be terminal (sent, failed, or unknown_after_send).
//
// # Failure handling
//
//   - A retryable failure (transient, rate limit, cancelled) returns the unit
//     to pending with its failure and its retry time (NextAt) recorded; the
//     queue message is retried then.
//   - A permanent failure (auth, permission, not found, invalid payload), or
//     a retryable one past the unit's age, is failed with its class and
//     reason; later units and later turns of the thread go on.
//   - An unknown outcome (timeout after the request left, or a unit found in
//     sending after its lease expired: a crash between the platform's answer
//     and the receipt) goes to unknown_after_send. The platform's policy then
//     resends it (at least once, logged; GiveUp fails it when the policy
//     will not resend it again) or holds it for an operator, who finds it
//     through the table's attention index.
//
// # The sweeper's list
//
// An intent created with SweepAt is on the sweeper's list until its last
// unit ends (Closing marks that transition); a park moves it to the unit's
// retry time plus SweepGrace. The sweeper re-drives an intent still open
// when it is due (package sweeper).
package intent
