package ingress

import (
	"net/http"
	"net/url"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// Request is a webhook request as the pipeline hands it to a receiver: the raw
// body (already size-limited and base64-decoded), never re-serialized, so
// signatures are checked on the exact bytes the platform signed.
type Request struct {
	Method string
	Header http.Header
	Query  url.Values
	Body   []byte
	// Now is the pipeline's clock reading for this request (timestamp
	// windows are checked against it).
	Now time.Time
	// Verified is what Verify learned about who signed the request (the
	// events receiver: which sources' secrets verified it), for Parse.
	// Parse must not trust anything Verify did not set here.
	Verified any
}

// Receiver is the receive half of a platform adapter.
type Receiver interface {
	// Platform names the platform.
	Platform() message.Platform
	// Verify authenticates r from its headers and raw body. The pipeline
	// has already refused every method but POST. Failures wrap
	// ErrUnauthorized, ErrStale or ErrMalformed.
	Verify(r *Request) error
	// Parse decodes a verified request. Failures wrap ErrMalformed (or
	// ErrUnprocessable); they must never panic, whatever the body.
	Parse(r *Request) (Parsed, error)
}

// HandshakeReceiver is implemented by receivers whose platform checks the
// endpoint with a request that must be answered before, or instead of,
// signature verification (WhatsApp's GET hub.challenge). Slack's signed
// url_verification is answered from Parsed.Reply instead.
type HandshakeReceiver interface {
	Handshake(r *Request) (reply *Reply, ok bool)
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
}

// Stable reasons for dropped updates (Ignored.Reason), shared by every
// receiver so logs and dashboards read the same words for every platform.
const (
	IgnoredBot         = "bot"
	IgnoredEdited      = "edited"
	IgnoredDeleted     = "deleted"
	IgnoredNoText      = "no_text"
	IgnoredUnsupported = "unsupported"
)

// Ignored is a dropped update.
type Ignored struct {
	// Reason is a stable, loggable word.
	Reason string
	// ID is the platform's id for the dropped update, if any.
	ID string
}
