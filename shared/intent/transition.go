package intent

import (
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// Transition is one compare-and-set change of one unit. The store applies it
// atomically: the condition (unit in one of From, at Attempt, earlier units
// terminal) and the new values. Build transitions with the named functions
// below; callers never assemble field updates themselves.
type Transition struct {
	// Name is a stable word for logs: lease, sent, retry, fail, unknown, resend.
	Name string
	// Unit is the unit's index in the intent.
	Unit int
	// From lists the states the unit must be in.
	From []message.UnitState
	// Attempt is the attempt the unit must be at.
	Attempt int
	// LeaseExpiredBy, when set, additionally requires the unit's lease to
	// have ended before it (rescuing an abandoned send).
	LeaseExpiredBy time.Time
	// RequirePrevTerminal requires every earlier unit to be terminal, so a
	// unit never overtakes the one before it.
	RequirePrevTerminal bool
	// RequirePrevDone requires every earlier unit sent or failed: none held
	// in unknown_after_send, which a resend policy may still have work on.
	// A lease made without reading the intent asks for it, and goes the
	// usual way when it fails.
	RequirePrevDone bool
	// UnitID, when set, requires the unit at Unit to have this id.
	UnitID string

	// To is the new state.
	To message.UnitState
	// NextAttempt is the attempt after the change.
	NextAttempt int
	// LeaseUntil is the new lease end (zero clears it).
	LeaseUntil time.Time
	Receipt    []string
	SentAt     time.Time
	// FailureClass and FailureReason are recorded as given (empty clears).
	FailureClass  message.FailureClass
	FailureReason string
	// NextAt is when the unit may be tried again (zero clears it).
	NextAt  time.Time
	Resent  bool
	Resends int
	// Reported is the unit's reported delivery state after the change.
	Reported string
	// Attention marks the intent for an operator (the attention index).
	Attention bool
	// SweepAt, when set, reschedules the intent on the sweeper's list.
	SweepAt time.Time
	// Close takes the intent off the sweeper's list: set by Intent.Closing
	// when the transition ends the intent's last unit.
	Close bool
	// Reopen puts the intent back on the sweeper's list, due at SweepAt,
	// whether or not it is on it (an operator's resend of a unit of a
	// closed intent).
	Reopen bool
	At     time.Time
}

// Lease claims a pending unit for one send attempt until leaseUntil.
func Lease(u Unit, idx int, now, leaseUntil time.Time) Transition {
	return Transition{
		Name: "lease", Unit: idx,
		From: []message.UnitState{message.UnitPending}, Attempt: u.Attempt,
		RequirePrevTerminal: true,
		To:                  message.UnitSending, NextAttempt: u.Attempt + 1, LeaseUntil: leaseUntil,
		FailureClass: u.FailureClass, FailureReason: u.FailureReason,
		Resent: u.Resent, Resends: u.Resends, At: now,
	}
}

// LeaseUnread leases unit id at idx as Lease does a fresh unit (pending,
// never tried), for a caller that has not read the intent: the condition
// also names the unit, and requires every earlier unit sent or failed.
func LeaseUnread(id string, idx int, now, leaseUntil time.Time) Transition {
	t := Lease(Unit{ID: id, State: message.UnitPending}, idx, now, leaseUntil)
	t.RequirePrevDone, t.UnitID = true, id
	return t
}

// LeaseBehind leases a fresh unit for the same attempt as the unit before
// it, which the caller leased and holds: the units of one call that carries
// several (LINE's reply of up to five messages). It requires nothing of the
// units before it, since they are sending, but no other attempt can lease
// it meanwhile: Lease and LeaseUnread require them settled.
func LeaseBehind(u Unit, idx int, now, leaseUntil time.Time) Transition {
	t := Lease(u, idx, now, leaseUntil)
	t.RequirePrevTerminal = false
	return t
}

// Resend claims a unit held in unknown_after_send for another attempt, under
// an at-least-once policy.
func Resend(u Unit, idx int, now, leaseUntil time.Time) Transition {
	return Transition{
		Name: "resend", Unit: idx,
		From: []message.UnitState{message.UnitUnknown}, Attempt: u.Attempt,
		RequirePrevTerminal: true,
		To:                  message.UnitSending, NextAttempt: u.Attempt + 1, LeaseUntil: leaseUntil,
		FailureClass: u.FailureClass, FailureReason: u.FailureReason,
		Resent: true, Resends: u.Resends + 1, Reported: u.Reported, At: now,
	}
}

// MarkSent commits the receipt of the attempt that leased the unit. It also
// accepts the unit in unknown_after_send at that same attempt: a worker whose
// lease ran out, and whose unit another worker then marked unknown, still knows
// the send succeeded and settles the doubt.
func MarkSent(u Unit, idx int, now time.Time, receipt message.Receipt) Transition {
	return Transition{
		Name: "sent", Unit: idx,
		From: []message.UnitState{message.UnitSending, message.UnitUnknown}, Attempt: u.Attempt,
		To: message.UnitSent, NextAttempt: u.Attempt,
		Receipt: receipt.MessageIDs, SentAt: now, Resent: u.Resent, Resends: u.Resends, Reported: u.Reported,
		At: now,
	}
}

// MarkRetryable returns a unit whose attempt failed retryably to pending,
// to be tried again at next.
func MarkRetryable(u Unit, idx int, now, next time.Time, class message.FailureClass, reason string) Transition {
	return Transition{
		Name: "retry", Unit: idx,
		From: []message.UnitState{message.UnitSending}, Attempt: u.Attempt,
		To: message.UnitPending, NextAttempt: u.Attempt,
		FailureClass: class, FailureReason: reason, NextAt: next, Resent: u.Resent, Resends: u.Resends, Reported: u.Reported,
		SweepAt: next.Add(SweepGrace), At: now,
	}
}

// MarkFailed ends a unit that cannot be delivered. It accepts a unit that is
// sending (a permanent answer) or pending (out of attempts before a lease).
func MarkFailed(u Unit, idx int, now time.Time, class message.FailureClass, reason string) Transition {
	return Transition{
		Name: "fail", Unit: idx,
		From: []message.UnitState{message.UnitSending, message.UnitPending}, Attempt: u.Attempt,
		To: message.UnitFailed, NextAttempt: u.Attempt,
		FailureClass: class, FailureReason: reason, Resent: u.Resent, Resends: u.Resends, Reported: u.Reported,
		Attention: true, At: now,
	}
}

// GiveUp ends a unit held in unknown_after_send that the resend policy will
// not send again (out of resends or past its age): failed, keeping the
// doubt in its reason, for an operator.
func GiveUp(u Unit, idx int, now time.Time, reason string) Transition {
	return Transition{
		Name: "give_up", Unit: idx,
		From: []message.UnitState{message.UnitUnknown}, Attempt: u.Attempt,
		To: message.UnitFailed, NextAttempt: u.Attempt,
		FailureClass: message.FailUnknown, FailureReason: reason, Resent: u.Resent, Resends: u.Resends, Reported: u.Reported,
		Attention: true, At: now,
	}
}

// MarkUnknown records that the unit's send may have happened. From sending
// with the caller's own attempt (a timeout after the request left), or from a
// sending unit whose lease expired before now (a worker died mid-send).
func MarkUnknown(u Unit, idx int, now time.Time, reason string, abandoned bool) Transition {
	t := Transition{
		Name: "unknown", Unit: idx,
		From: []message.UnitState{message.UnitSending}, Attempt: u.Attempt,
		To: message.UnitUnknown, NextAttempt: u.Attempt,
		FailureClass: message.FailUnknown, FailureReason: reason, Resent: u.Resent, Resends: u.Resends, Reported: u.Reported,
		Attention: true, At: now,
	}
	if abandoned {
		t.LeaseExpiredBy = now
	}
	return t
}

// Report records a platform's report that a sent unit was delivered or
// read. It changes nothing else, so it never races a unit's delivery.
func Report(u Unit, idx int, now time.Time, state string) Transition {
	return Transition{
		Name: "report", Unit: idx,
		From: []message.UnitState{message.UnitSent}, Attempt: u.Attempt,
		To: message.UnitSent, NextAttempt: u.Attempt,
		Receipt: u.Receipt, SentAt: u.SentAt, FailureClass: u.FailureClass, FailureReason: u.FailureReason,
		Resent: u.Resent, Resends: u.Resends, Reported: state, At: now,
	}
}

// MarkUndelivered fails a unit the platform accepted and later reported
// failed (a WhatsApp "failed" status): the person never got it, so the
// unit is failed with the platform's reason, for an operator, keeping its
// receipt.
func MarkUndelivered(u Unit, idx int, now time.Time, class message.FailureClass, reason string) Transition {
	return Transition{
		Name: "undelivered", Unit: idx,
		From: []message.UnitState{message.UnitSent}, Attempt: u.Attempt,
		To: message.UnitFailed, NextAttempt: u.Attempt,
		Receipt: u.Receipt, SentAt: u.SentAt, FailureClass: class, FailureReason: reason,
		Resent: u.Resent, Resends: u.Resends, Reported: message.StatusFailed,
		Attention: true, At: now,
	}
}

// Supersede cancels a unit a newer message in its thread made moot before
// it was sent (PARLEY_BUSY_POLICY interrupt): pending, never leased by
// this attempt, it ends failed as message.FailSuperseded, for no operator
// to look at. A unit already leased is sent: never half a bubble.
func Supersede(u Unit, idx int, now time.Time) Transition {
	return Transition{
		Name: "supersede", Unit: idx,
		From: []message.UnitState{message.UnitPending}, Attempt: u.Attempt,
		To: message.UnitFailed, NextAttempt: u.Attempt,
		FailureClass: message.FailSuperseded, FailureReason: "superseded by a newer message in the thread",
		Resent: u.Resent, Resends: u.Resends, At: now,
	}
}

// Closing returns t marked to take the intent off the sweeper's list when it
// ends the intent's last unit (units go strictly in order, so every earlier
// one is terminal already).
func (in Intent) Closing(t Transition) Transition {
	if t.Unit == len(in.Units)-1 && t.To.Terminal() {
		t.Close = true
	}
	return t
}

// Apply returns in with t applied, without checking t's condition. Stores use
// it to build their update; tests use it as the model.
func (in Intent) Apply(t Transition) Intent {
	out := in
	out.Units = append([]Unit(nil), in.Units...)
	u := out.Units[t.Unit]
	u.State = t.To
	u.Attempt = t.NextAttempt
	u.LeaseUntil = t.LeaseUntil
	u.Receipt = append([]string(nil), t.Receipt...)
	u.SentAt = t.SentAt
	u.FailureClass = t.FailureClass
	u.FailureReason = t.FailureReason
	u.NextAt = t.NextAt
	u.Resent = t.Resent
	u.Resends = t.Resends
	u.Reported = t.Reported
	u.UpdatedAt = t.At
	out.Units[t.Unit] = u
	switch {
	case t.Close:
		out.SweepAt = time.Time{}
	case t.Reopen:
		out.SweepAt = t.SweepAt
	case !t.SweepAt.IsZero() && !in.SweepAt.IsZero():
		out.SweepAt = t.SweepAt
	}
	return out
}

// Allowed reports whether t's condition holds on in: the model of the
// store's compare-and-set.
func (in Intent) Allowed(t Transition) bool {
	if t.Unit < 0 || t.Unit >= len(in.Units) {
		return false
	}
	u := in.Units[t.Unit]
	ok := false
	for _, s := range t.From {
		ok = ok || u.State == s
	}
	if !ok || u.Attempt != t.Attempt {
		return false
	}
	if !t.LeaseExpiredBy.IsZero() && !u.LeaseUntil.Before(t.LeaseExpiredBy) {
		return false
	}
	if t.RequirePrevTerminal {
		for _, p := range in.Units[:t.Unit] {
			if !p.State.Terminal() {
				return false
			}
		}
	}
	return true
}
