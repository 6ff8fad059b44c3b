package message

import (
	"errors"
	"fmt"
	"time"
)

// FailureClass is what a platform adapter says happened to a send. Policy
// (retry, fail, hold) is decided elsewhere, from the class.
type FailureClass string

const (
	// FailTransient: a 5xx, a connection refused before the request was
	// sent, or a platform "try again". Retried with backoff.
	FailTransient FailureClass = "transient"
	// FailRateLimit: the platform asked us to slow down; RetryAfter says how
	// long. Retried exactly after it.
	FailRateLimit FailureClass = "rate_limit"
	// FailAuth: the bot token is wrong or revoked. Permanent.
	FailAuth FailureClass = "auth"
	// FailPermission: the bot may not post there (blocked, kicked). Permanent.
	FailPermission FailureClass = "permission"
	// FailNotFound: the chat or thread does not exist. Permanent.
	FailNotFound FailureClass = "not_found"
	// FailInvalidPayload: the platform rejected the message itself. Permanent.
	FailInvalidPayload FailureClass = "invalid_payload"
	// FailConflict: the platform says this was already done (an idempotency
	// key replay). Treated as sent when the adapter can say so.
	FailConflict FailureClass = "conflict"
	// FailCancelled: the work was cancelled before the request left.
	// Retried.
	FailCancelled FailureClass = "cancelled"
	// FailUnknown: the request may have reached the platform and its outcome
	// is unknown (a timeout after the request left). Goes to
	// unknown_after_send.
	FailUnknown FailureClass = "unknown"
	// FailSuperseded: never sent: a newer message in the thread cancelled
	// the unit's bubble before any of it went (PARLEY_BUSY_POLICY
	// interrupt). The unit ends failed, for no operator to look at.
	FailSuperseded FailureClass = "superseded"
	// FailAbandoned: no platform's answer, an operator's decision (parley
	// abandon): the unit is failed for good and off the attention list;
	// its reason keeps what failed before.
	FailAbandoned FailureClass = "abandoned"
)

// Permanent reports whether retrying cannot help.
func (c FailureClass) Permanent() bool {
	switch c {
	case FailAuth, FailPermission, FailNotFound, FailInvalidPayload:
		return true
	}
	return false
}

// SendError is a classified platform failure. Adapters return it (wrapped or
// not); callers read it with errors.As. Reason is the platform's own short
// error name or status ("chat not found", "channel_not_found", "HTTP 502"): it
// never holds message text or secrets.
type SendError struct {
	Class FailureClass
	// RetryAfter is the platform's requested wait, for FailRateLimit.
	RetryAfter time.Duration
	// Status is the HTTP status, 0 when no response came back.
	Status int
	Reason string
	Err    error
}

func (e *SendError) Error() string {
	msg := string(e.Class)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *SendError) Unwrap() error { return e.Err }

// ClassOf returns the failure class of err: the class of the first SendError
// in its chain, FailUnknown when there is none (an unclassified failure may
// have happened after the request left).
func ClassOf(err error) FailureClass {
	var se *SendError
	if errors.As(err, &se) {
		return se.Class
	}
	return FailUnknown
}
