package message

// UnitState is the delivery state of one unit (one platform message) of a send
// intent. Its value is what the store persists. Every change is a
// compare-and-set on the expected state and attempt (see package delivery).
//
//	pending ──lease──► sending ──receipt──► sent
//	   ▲                  │
//	   └──── retryable ───┤
//	                      ├──── permanent ──► failed
//	                      └──── outcome unknown ──► unknown_after_send
//	                                             │ policy resend: lease again
//	                                             └ policy hold: stays, reported
type UnitState string

const (
	// UnitPending: planned and persisted by the turn function, waiting for a
	// delivery worker. A retryable failure moves a unit back here.
	UnitPending UnitState = "pending"
	// UnitSending: leased by a delivery worker that may be calling the
	// platform right now. Only that worker (same attempt) moves it on; a unit
	// found here after its lease expired goes to UnitUnknown.
	UnitSending UnitState = "sending"
	// UnitSent: the platform accepted it; the receipt holds its message ids.
	// Terminal.
	UnitSent UnitState = "sent"
	// UnitFailed: a permanent failure (auth, permission, not found, invalid
	// payload) or retries exhausted; the failure class and reason are kept.
	// Terminal.
	UnitFailed UnitState = "failed"
	// UnitUnknown: the send may have happened (timeout after the request
	// left, or a crash before the receipt). The unknown-send policy decides:
	// resend (lease again) or hold for an operator, who sees it in the
	// attention index.
	UnitUnknown UnitState = "unknown_after_send"
)

// Terminal reports whether no worker will move the unit on by itself. A held
// unknown_after_send unit is terminal for ordering purposes: the thread moves
// on while an operator decides.
func (s UnitState) Terminal() bool {
	return s == UnitSent || s == UnitFailed || s == UnitUnknown
}
