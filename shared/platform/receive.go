package platform

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// Request is a webhook request as the webhook core hands it to a receiver:
// the raw body (already size-limited and base64-decoded), never
// re-serialized, so signatures are checked on the exact bytes the platform
// signed.
type Request struct {
	Method string
	Header http.Header
	Query  url.Values
	Body   []byte
	// Now is the core's clock reading for this request (timestamp windows
	// are checked against it).
	Now time.Time
	// Oldest is the earliest platform timestamp an event may carry: the
	// dedupe window (PARLEY_DEDUPE_TTL) less a margin, before Now. An
	// older event's key may be gone, so a replay of it would not be found
	// a duplicate. A receiver whose platform does not sign a timestamp
	// the core checks (LINE and WhatsApp sign only the body, Telegram
	// nothing) ignores such an event (IgnoredStale), alone: the rest of
	// its batch goes on. Zero: no bound.
	Oldest time.Time
	// Verified is what Verify learned about who signed the request (the
	// events receiver: which sources' secrets verified it), for Parse.
	// Parse must not trust anything Verify did not set here.
	Verified any
}

// Stale reports whether an event the platform timestamped t is older than
// Oldest: a replay past the dedupe window. An event without a timestamp
// (t zero), or a request without a bound, is not.
func (r *Request) Stale(t time.Time) bool {
	return !r.Oldest.IsZero() && !t.IsZero() && t.Before(r.Oldest)
}

// Receiver is the receive half of an adapter.
type Receiver interface {
	// Platform names the platform.
	Platform() message.Platform
	// Verify authenticates r from its headers and raw body. The core has
	// already refused every method but POST. Failures wrap
	// ErrUnauthorized, ErrStale or ErrMalformed.
	Verify(r *Request) error
	// Parse decodes a verified request into events: messages, and presses
	// of controls Parley sent (message.KindAnswer). Failures wrap
	// ErrMalformed, ErrForbidden or ErrUnprocessable; they must never
	// panic, whatever the body.
	Parse(r *Request) (Parsed, error)
}

// ContextVerifier is a receiver whose verification needs the network: its
// platform signs requests with keys it publishes (a JWT verified against
// the platform's key set, Teams and Google Chat), which are fetched, cached
// and refreshed. The webhook core calls VerifyContext in place of Verify,
// with ctx bounded by the request's deadline and MaxVerifyWait. A key set
// that cannot be had is ErrUnavailable (503, the platform retries), never
// a refusal: a 401 may be final for the platform, and the request may well
// be genuine. Verify of such a receiver does no I/O: it verifies with the
// keys it already holds, and answers ErrUnavailable without them.
type ContextVerifier interface {
	VerifyContext(ctx context.Context, r *Request) error
}

// MaxVerifyWait bounds the network a ContextVerifier may use for one
// request, within the request's own deadline.
const MaxVerifyWait = 5 * time.Second

// Handshaker is a receiver whose platform checks the endpoint with a
// request that must be answered before, or instead of, signature
// verification (WhatsApp's GET hub.challenge). Slack's signed
// url_verification is answered from Parsed.Reply instead.
type Handshaker interface {
	Handshake(r *Request) (reply *Reply, ok bool)
}

// Digester is a receiver whose events' ids are idempotency keys its
// callers choose (POST /send), which a caller may reuse by mistake for
// another payload. Digest fingerprints what an event's key protects: the
// core keeps it with the key, answers a later event under the same key
// and another digest 409 (ErrConflict), and never enqueues it. An event
// whose digest matches is a duplicate, as for any receiver.
type Digester interface {
	Digest(ev message.Event) string
}

// DefaultMaxBody is the largest webhook body the core accepts from a
// receiver that is not a BodyLimiter.
const DefaultMaxBody = 1 << 20

// BodyLimiter is a receiver whose platform sends larger webhook bodies than
// DefaultMaxBody (WhatsApp: up to 3 MB). Refusing one would not make the
// platform send it smaller: it would retry the same body until it gave up.
type BodyLimiter interface {
	// MaxBody is the largest body the platform documents sending.
	MaxBody() int64
}

// Reply is an answer the platform expects verbatim.
type Reply struct {
	Status      int
	ContentType string
	Body        []byte
}

// Parsed is what a verified request holds.
type Parsed struct {
	// Reply, when set, is answered at once and nothing is stored or
	// enqueued: a handshake such as Slack's url_verification.
	Reply *Reply
	// Events are the normalized events to dedupe and enqueue, in the
	// platform's order.
	Events []message.Event
	// Ignored names what was deliberately dropped, with a stable reason
	// ("bot", "edited", "unsupported", "own_message"), for the log.
	Ignored []Ignored
	// Ack, when set, is the answer once every event is durable, in place
	// of Parley's own JSON (Discord's deferred interaction response). The
	// Parley-Ack header is still set.
	Ack *Reply
	// Unavailable, when set, is the answer when the events could not be
	// made durable, in place of a 503 the platform would not retry (a short
	// "try again" a person sees).
	Unavailable *Reply
	// Within, when set, is how long the platform waits for the answer: the
	// core gives up on durable writes in time to answer Unavailable.
	Within time.Duration
	// Intents makes Parley's own answer 202 Accepted and name the intent
	// each admitted event will be delivered as: the caller is an agent
	// that keeps the id (POST /send).
	Intents bool
}

// Stable reasons for dropped updates (Ignored.Reason), shared by every
// receiver so logs and dashboards read the same words for every platform.
const (
	IgnoredBot         = "bot"
	IgnoredEdited      = "edited"
	IgnoredDeleted     = "deleted"
	IgnoredNoText      = "no_text"
	IgnoredUnsupported = "unsupported"
	// IgnoredStale: the event's own timestamp is older than
	// Request.Oldest: a replay past the dedupe window.
	IgnoredStale = "stale"
	// IgnoredReaction: a reaction the deployment does not take
	// (PARLEY_REACTIONS off, or an emoji it does not list).
	IgnoredReaction = "reaction"
	// IgnoredMembership: the bot or a person joined or left a
	// conversation (Teams' conversationUpdate, Google Chat's
	// ADDED_TO_SPACE): nothing for the agent.
	IgnoredMembership = "membership"
)

// Ignored is a dropped update.
type Ignored struct {
	// Reason is a stable, loggable word.
	Reason string
	// ID is the platform's id for the dropped update, if any.
	ID string
}

// Sentinel errors for refused requests. Receivers wrap them with a short,
// secret-free reason ("missing X-Slack-Signature"); the webhook core maps
// each to its HTTP status (StatusOf), answers with the reason, and writes
// nothing.
var (
	// ErrUnauthorized: a missing or wrong signature or secret token. 401.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrStale: a signed timestamp outside the replay window. 401.
	ErrStale = errors.New("stale timestamp")
	// ErrMalformed: a body or header that does not parse. 400.
	ErrMalformed = errors.New("malformed request")
	// ErrMethod: an HTTP method the endpoint does not take. 405.
	ErrMethod = errors.New("method not allowed")
	// ErrTooLarge: a body over the size limit. 413.
	ErrTooLarge = errors.New("request body too large")
	// ErrUnprocessable: well-formed, but names something Parley cannot
	// act on. 422.
	ErrUnprocessable = errors.New("unprocessable request")
	// ErrForbidden: authentic, but asks for what its sender may not do (a
	// target outside the ones its secret was configured for). 403.
	ErrForbidden = errors.New("forbidden")
	// ErrConflict: an idempotency key seen before with another payload
	// (Digester). 409.
	ErrConflict = errors.New("conflict")
	// ErrUnavailable: the request could not be checked now (a
	// ContextVerifier's keys could not be fetched). 503, with Retry-After:
	// the platform retries, and nothing was written.
	ErrUnavailable = errors.New("verification unavailable")
)

// StatusOf maps a refusal to its HTTP status, and an error that wraps none
// of the sentinels to 0. The core answers a receiver's error of status 0 with
// 400 all the same: Verify and Parse do no I/O, so the same request would
// fail the same way on every retry. ErrUnavailable, the one refusal a
// retry may change (a ContextVerifier's keys), is 503.
func StatusOf(err error) int {
	switch {
	case errors.Is(err, ErrUnauthorized), errors.Is(err, ErrStale):
		return http.StatusUnauthorized
	case errors.Is(err, ErrMalformed):
		return http.StatusBadRequest
	case errors.Is(err, ErrMethod):
		return http.StatusMethodNotAllowed
	case errors.Is(err, ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrUnprocessable):
		return http.StatusUnprocessableEntity
	case errors.Is(err, ErrForbidden):
		return http.StatusForbidden
	case errors.Is(err, ErrConflict):
		return http.StatusConflict
	case errors.Is(err, ErrUnavailable):
		return http.StatusServiceUnavailable
	}
	return 0
}

// Problem is the body of every refusal Parley answers, on every endpoint it
// serves (each platform's webhook, /events, /send, /reply), as
// application/json: a stable code a program branches on, and a reason for
// the person reading it. It never holds a secret.
type Problem struct {
	// Error is the code: the refusal's sentinel's (CodeOf), or a more
	// precise one (Refusal).
	Error string `json:"error"`
	// Reason says why, in a sentence.
	Reason string `json:"reason"`
}

// WriteProblem answers a refusal with status and its Problem body.
func WriteProblem(w http.ResponseWriter, status int, code, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(Problem{Error: code, Reason: reason})
}

// Refusal is err with a Problem code more precise than its sentinel's
// (an envelope over a limit: "over_limit", not "unprocessable"). err still
// wraps its sentinel, which sets the status.
func Refusal(code string, err error) error { return &refusal{code: code, err: err} }

type refusal struct {
	code string
	err  error
}

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// CodeOf is err's Problem code: the one a Refusal named, else its
// sentinel's (ErrUnauthorized and ErrStale: "unauthorized", ErrMalformed:
// "malformed", ErrMethod: "method", ErrTooLarge: "too_large",
// ErrUnprocessable: "unprocessable", ErrForbidden: "forbidden",
// ErrConflict: "conflict", ErrUnavailable: "unavailable"), else
// "malformed" (the core answers such an error 400, see StatusOf).
func CodeOf(err error) string {
	var r *refusal
	switch {
	case errors.As(err, &r):
		return r.code
	case errors.Is(err, ErrUnauthorized), errors.Is(err, ErrStale):
		return "unauthorized"
	case errors.Is(err, ErrMethod):
		return "method"
	case errors.Is(err, ErrTooLarge):
		return "too_large"
	case errors.Is(err, ErrUnprocessable):
		return "unprocessable"
	case errors.Is(err, ErrForbidden):
		return "forbidden"
	case errors.Is(err, ErrConflict):
		return "conflict"
	case errors.Is(err, ErrUnavailable):
		return "unavailable"
	}
	return "malformed"
}

// HMACSHA256 is HMAC-SHA256 under secret over parts, in order: the MAC that
// Slack, LINE and WhatsApp sign webhooks with (each over its own parts, in
// its own header encoding).
func HMACSHA256(secret string, parts ...[]byte) []byte {
	mac := hmac.New(sha256.New, []byte(secret))
	for _, p := range parts {
		mac.Write(p)
	}
	return mac.Sum(nil)
}
