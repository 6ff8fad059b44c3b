package store

import (
	"fmt"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// QuestionState is a question record's state; its value is what the store
// persists.
//
//	open ──answer (first valid)──► answered
//	  ├──── skip ────────────────► declined
//	  └──── expiry, a newer question in the thread, questions off ──► cancelled
//
// Every change is a compare-and-set on the record's version.
type QuestionState string

const (
	// QuestionOpen: asked and waiting. Set by the turn that asked.
	QuestionOpen QuestionState = "open"
	// QuestionAnswered: the owner's first valid answer won; Answers holds
	// it by the agent's keys. Terminal.
	QuestionAnswered QuestionState = "answered"
	// QuestionDeclined: the owner chose Skip. Terminal.
	QuestionDeclined QuestionState = "declined"
	// QuestionCancelled: closed without an answer; Reason says why
	// (expired, superseded, off, no_owner). Terminal.
	QuestionCancelled QuestionState = "cancelled"
)

// Question is the record of a thread's current question: one per thread, so
// a newer question replaces a closed one and supersedes an open one.
type Question struct {
	// Thread is where it was asked; the record's key is QuestionKey(Thread).
	Thread message.Thread
	// ID is the question's id: the asking turn's intent id. Short is the
	// prefix every control's data starts with.
	ID, Short string
	// Origin is the event key of the turn that asked.
	Origin string
	// Owner is the sender id who may answer; empty: anyone in the chat,
	// which the turn allows in a one-to-one chat only.
	Owner string
	// Form is the question as the agent asked it.
	Form message.Question
	// IntentID and UnitID locate the question message (its receipt holds
	// the platform's message id, for edits).
	IntentID, UnitID string
	State            QuestionState
	// Reason is why a cancelled question closed.
	Reason string
	// Field is the index of the field being asked.
	Field int
	// Selected are the option values chosen so far in the field being
	// asked (a multi-select, before Done).
	Selected []string
	// Answers are the answers given so far, by the agent's field keys.
	Answers map[string]any
	// ClosedBy is the key of the event that closed it: a press, a message,
	// or Parley's own cancel. A redelivery of that event carries on.
	ClosedBy string
	// Version counts changes: every update is a compare-and-set on it.
	Version int
	// CreatedAt is when it was asked, DueAt when it expires, ExpiresAt when
	// the store may forget the record.
	CreatedAt, DueAt, ExpiresAt time.Time
	// Sweep keeps the record on the sweeper's list (due at DueAt) while it
	// may still need Parley's cancel: open, or cancelled before its cancel
	// event was enqueued.
	Sweep bool
}

// QuestionKey is the record key of a thread's current question.
func QuestionKey(t message.Thread) string { return "q#" + t.Key() }

// QuestionConflictError is returned when a question's compare-and-set does
// not hold: another writer moved it first. Current is the record as it is
// now (the zero Question when there is none). It wraps ErrConflict.
type QuestionConflictError struct{ Current Question }

func (e *QuestionConflictError) Error() string {
	return fmt.Sprintf("store: question %s of %s: condition failed (it is %s, version %d)", e.Current.ID, e.Current.Thread.Key(), e.Current.State, e.Current.Version)
}

func (e *QuestionConflictError) Unwrap() error { return ErrConflict }
