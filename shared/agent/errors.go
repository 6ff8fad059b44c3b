package agent

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrorKind says whether retrying an agent call can help. Its value is safe to
// log.
type ErrorKind string

const (
	// KindTransient: no answer, a timeout, 5xx, 408, 425 or 429. The caller
	// retries the turn through its queue (with backoff, or after
	// Error.RetryAfter), with the same TurnID.
	KindTransient ErrorKind = "transient"
	// KindPermanent: the agent or its configuration refused the turn (other
	// 4xx, a redirect, an oversized or unusable reply). Retrying the same
	// request gets the same answer.
	KindPermanent ErrorKind = "permanent"
)

// Reasons an agent call failed, found in Error.Err with errors.Is. None of
// them holds the request, the reply body, the agent URL or the secret.
var (
	// ErrStatus: the agent answered with a non-2xx, non-3xx status.
	ErrStatus = errors.New("agent answered with an error status")
	// ErrRedirect: the agent answered 3xx. Redirects are never followed: a
	// signed request is for the configured URL only.
	ErrRedirect = errors.New("agent answered with a redirect (not followed; fix the agent URL)")
	// ErrTimeout: no complete answer within Client.Timeout. The request may
	// have reached the agent.
	ErrTimeout = errors.New("agent did not answer in time")
	// ErrContentType: a 2xx reply whose Content-Type is none of
	// application/json, text/plain and StreamType, or whose charset is not
	// UTF-8.
	ErrContentType = errors.New("unsupported agent reply content type")
	// ErrReplyTooLarge: a reply body (or a stream's line) over
	// Client.MaxReplyBytes, or a stream over Client.MaxStreamBytes.
	ErrReplyTooLarge = errors.New("agent reply over the size limit")
	// ErrConfig: the client is misconfigured (no URL or secret, a URL that
	// is not http, https or builtin:echo).
	ErrConfig = errors.New("invalid agent client configuration")
	// ErrInvalidRequest: the TurnRequest cannot be sent (no TurnID).
	ErrInvalidRequest = errors.New("invalid turn request")
)

// Error is a classified agent call failure. Call returns every failure as an
// *Error; read it with errors.As.
type Error struct {
	// Kind says whether a retry can help.
	Kind ErrorKind
	// Status is the agent's HTTP status, 0 when no response came back.
	Status int
	// RetryAfter is the agent's Retry-After, when it sent one with a
	// retryable status (429, 503, ...); 0 otherwise.
	RetryAfter time.Duration
	// Err is the cause: one of the Err* sentinels above, a context error,
	// or a network error.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("agent call failed (")
	b.WriteString(string(e.Kind))
	if e.Status != 0 {
		b.WriteString(", HTTP ")
		b.WriteString(strconv.Itoa(e.Status))
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, ", retry after %s", e.RetryAfter)
	}
	b.WriteString(")")
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

func transient(status int, err error) *Error {
	return &Error{Kind: KindTransient, Status: status, Err: err}
}

func permanent(status int, err error) *Error {
	return &Error{Kind: KindPermanent, Status: status, Err: err}
}
