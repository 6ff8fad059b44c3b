package intent

import (
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// An operator's two decisions on a unit the attention index lists (held in
// unknown_after_send, or failed), each a compare-and-set like delivery's
// own transitions: on the unit's state (the one state the operator read,
// not any state the decision could start from) and attempt, so a decision
// made on a stale view (the unit moved meanwhile, or another operator
// decided first) changes nothing.
//
//	unknown_after_send ─┬─ OperatorResend ─► pending ──► delivery leases it as any pending unit
//	failed ─────────────┤
//	                    └─ Abandon ─────────► failed (class abandoned): off the attention list

// OperatorResend puts a unit an operator chose to send again back to
// pending, with a fresh budget: its failure is cleared, so delivery, which
// fails a pending unit that failed before once it is past its age, tries it
// again (once, if it is past its age: a retryable failure then fails it for
// good). A unit whose outcome was unknown is marked resent, as an
// at-least-once resend is. The intent goes back on the sweeper's list, due
// after SweepGrace, so the unit is delivered even if the operator's message
// to the queue is lost.
func OperatorResend(u Unit, idx int, now time.Time) Transition {
	resent, resends := u.Resent, u.Resends
	if u.State == message.UnitUnknown || u.FailureClass == message.FailUnknown {
		resent, resends = true, u.Resends+1
	}
	return Transition{
		Name: "operator_resend", Unit: idx,
		From: operatorFrom(u), Attempt: u.Attempt,
		To: message.UnitPending, NextAttempt: u.Attempt,
		Resent: resent, Resends: resends, Reported: u.Reported,
		Reopen: true, SweepAt: now.Add(SweepGrace), At: now,
	}
}

// Abandon ends a unit an operator gave up on: failed, with the failure
// class message.FailAbandoned, which takes it off the attention list, and
// its last failure kept in the reason. A held unit is never sent.
func Abandon(u Unit, idx int, now time.Time, reason string) Transition {
	return Transition{
		Name: "abandon", Unit: idx,
		From: operatorFrom(u), Attempt: u.Attempt,
		To: message.UnitFailed, NextAttempt: u.Attempt,
		Receipt: u.Receipt, SentAt: u.SentAt, FailureClass: message.FailAbandoned, FailureReason: reason,
		Resent: u.Resent, Resends: u.Resends, Reported: u.Reported, At: now,
	}
}

// operatorFrom is the state an operator's decision on u requires: the one
// u was read in, when it is one an operator decides on.
func operatorFrom(u Unit) []message.UnitState {
	if u.State == message.UnitUnknown || u.State == message.UnitFailed {
		return []message.UnitState{u.State}
	}
	return []message.UnitState{message.UnitUnknown, message.UnitFailed}
}

// NeedsOperator reports whether u is on an operator's attention list: held
// in unknown_after_send, or failed and neither abandoned nor superseded (a
// newer message made it moot: nothing failed).
func (u Unit) NeedsOperator() bool {
	return u.State == message.UnitUnknown ||
		(u.State == message.UnitFailed && u.FailureClass != message.FailAbandoned && u.FailureClass != message.FailSuperseded)
}
