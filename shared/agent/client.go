package agent

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// BuiltinEcho as Client.URL selects the built-in echo agent, served in
// process.
const BuiltinEcho = "builtin:echo"

// Defaults of the Client's limits.
const (
	DefaultTimeout       = 25 * time.Second
	DefaultMaxReplyBytes = 1 << 20
	// MaxRetryAfter caps an agent's Retry-After: SQS cannot keep a message
	// invisible longer than 12 hours.
	MaxRetryAfter = 12 * time.Hour
)

// errCallTimeout is the cause of the context Call times out with.
var errCallTimeout = errors.New("agent call timeout")

// userAgent names Parley to agents (and their logs).
const userAgent = "Parley/1"

// builtinURL is where requests to the in-process echo agent pretend to go.
const builtinURL = "http://echo.builtin/"

// Client calls the agent: one signed HTTP POST per Call, never a retry loop.
// The zero value needs URL and Secret; the other fields have defaults. A
// Client is safe for concurrent use and must not be changed while in use.
type Client struct {
	// URL is the agent's http or https endpoint (PARLEY_AGENT_URL), or
	// BuiltinEcho. Required.
	URL string
	// Secret signs every request (PARLEY_AGENT_SECRET). Required.
	Secret standardwebhooks.Secret
	// Timeout bounds one call, from the first byte sent to the last byte of
	// the reply read. Defaults to 25 seconds, within the Standard Webhooks
	// recommendation of 15–30 s.
	Timeout time.Duration
	// HTTP sends the requests. Redirects are never followed, whatever its
	// CheckRedirect says. Defaults to a client on http.DefaultTransport.
	HTTP *http.Client
	// Now is the clock the signature's timestamp comes from. Defaults to
	// time.Now.
	Now func() time.Time
	// MaxReplyBytes bounds a reply body, and each line of a streamed
	// reply; a longer one is a permanent failure. Defaults to 1 MiB.
	MaxReplyBytes int64
	// MaxStreamBytes bounds a whole streamed reply (StreamType). Defaults
	// to 4 MiB.
	MaxStreamBytes int64
}

// Reply is an agent's answer to a turn.
type Reply struct {
	// Status is the HTTP status: 200 (or another 2xx), 202 or 204.
	Status int
	// ContentType is the reply's media type, lower-cased, without
	// parameters: "application/json" (an openab.turn.v1 envelope) or
	// "text/plain"; a streamed reply's is its final event's. Empty for 202
	// and 204.
	ContentType string
	// Body is the reply body, at most MaxReplyBytes. Empty for 202 and 204
	// (204 means the agent has nothing to say: the turn is silent).
	Body []byte
	// Accepted is true for 202: the agent took the turn and will post its
	// answer later to Parley's reply endpoint.
	Accepted bool
}

// Validate reports every configuration problem at once. Its errors wrap
// ErrConfig and never quote the URL (it may carry a token) or the secret.
func (c *Client) Validate() error {
	var errs []error
	if err := checkURL(c.URL); err != nil {
		errs = append(errs, err)
	}
	if c.Secret.IsZero() {
		errs = append(errs, fmt.Errorf("%w: no agent secret", ErrConfig))
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("%w: negative timeout", ErrConfig))
	}
	if c.MaxReplyBytes < 0 || c.MaxStreamBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: negative max reply bytes", ErrConfig))
	}
	return errors.Join(errs...)
}

func checkURL(raw string) error {
	if raw == "" {
		return fmt.Errorf("%w: no agent URL", ErrConfig)
	}
	if raw == BuiltinEcho {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: agent URL does not parse", ErrConfig)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: agent URL scheme must be http or https (or the URL %s)", ErrConfig, BuiltinEcho)
	}
	if u.Host == "" {
		return fmt.Errorf("%w: agent URL has no host", ErrConfig)
	}
	return nil
}

// Call POSTs one turn request to the agent and classifies the outcome. It
// makes exactly one HTTP attempt: a transient *Error is for the caller to
// retry through its queue, with the same TurnID. Every error is an *Error.
//
// The request is JSON, signed with Standard Webhooks headers whose
// webhook-id is req.TurnID. A 2xx reply must be application/json,
// text/plain (UTF-8) or a stream (StreamType), whose final event is the
// reply; 202 and 204 carry no body.
func (c *Client) Call(ctx context.Context, req TurnRequest) (Reply, error) {
	return c.Stream(ctx, req, nil)
}

// Stream is Call, with a streamed reply's deltas and status lines handed to
// preview as they arrive. A reply that is not a stream is read as Call
// reads it, and preview never called.
func (c *Client) Stream(ctx context.Context, req TurnRequest, preview PreviewFunc) (Reply, error) {
	if err := c.Validate(); err != nil {
		return Reply{}, permanent(0, err)
	}
	if req.TurnID == "" {
		return Reply{}, permanent(0, fmt.Errorf("%w: no turn_id", ErrInvalidRequest))
	}
	req.Version = cmp.Or(req.Version, Version)
	// The platform's right to answer the event (a LINE reply token, a
	// Discord interaction token) is Parley's to use: it never reaches the
	// agent, which may be a plain-HTTP endpoint.
	req.Event.ReplyContext, req.Event.QuoteToken = nil, ""
	if len(req.Events) > 0 {
		evs := make([]message.Event, len(req.Events))
		for i, ev := range req.Events {
			ev.ReplyContext, ev.QuoteToken = nil, ""
			evs[i] = ev
		}
		req.Events = evs
	}
	body, err := json.Marshal(req)
	if err != nil {
		// Only Event.Data or Answer.Content can fail (a NaN, a channel):
		// a bug upstream, the same on every retry.
		return Reply{}, permanent(0, fmt.Errorf("%w: encode: %w", ErrInvalidRequest, err))
	}

	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	timeout := cmp.Or(c.Timeout, DefaultTimeout)
	// The cause tells our own timeout apart from the caller's deadline.
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errCallTimeout)
	defer cancel()

	target, hc := c.URL, c.httpClient(now)
	if c.URL == BuiltinEcho {
		target = builtinURL
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return Reply{}, permanent(0, fmt.Errorf("%w: agent URL does not parse", ErrConfig))
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json, text/plain, "+StreamType)
	hreq.Header.Set("User-Agent", userAgent)
	standardwebhooks.SetHeaders(hreq.Header, c.Secret, req.TurnID, now(), body)

	resp, err := hc.Do(hreq)
	if err != nil {
		return Reply{}, classifyTransport(ctx, timeout, err)
	}
	defer resp.Body.Close()
	return c.readReply(ctx, timeout, resp, now(), preview)
}

// httpClient returns the client to send with: a copy of c.HTTP (or the
// default, or the in-process echo) that never follows redirects.
func (c *Client) httpClient(now func() time.Time) *http.Client {
	var hc http.Client
	switch {
	case c.URL == BuiltinEcho:
		hc.Transport = handlerTransport{Echo{Secret: c.Secret, Now: now}}
	case c.HTTP != nil:
		hc = *c.HTTP
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &hc
}

// classifyTransport turns a failure to get a response into an *Error. The
// *url.Error wrapper is dropped: it quotes the URL, which may carry a token.
func classifyTransport(ctx context.Context, timeout time.Duration, err error) *Error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	var nerr net.Error
	switch {
	case errors.Is(context.Cause(ctx), errCallTimeout):
		return transient(0, fmt.Errorf("%w (timeout %s): %w", ErrTimeout, timeout, context.DeadlineExceeded))
	case ctx.Err() == nil && errors.As(err, &nerr) && nerr.Timeout():
		// A timeout of the caller's own http.Client or transport.
		return transient(0, fmt.Errorf("%w: %w", ErrTimeout, err))
	case ctx.Err() != nil:
		// The caller's context ended first (shutdown, the function's own
		// deadline): retry later.
		return transient(0, fmt.Errorf("post to agent: %w", context.Cause(ctx)))
	case isCertificateError(err):
		// A bad certificate stays bad: retrying cannot help.
		return permanent(0, fmt.Errorf("post to agent: %w", err))
	}
	// Connection refused or reset, DNS, the caller's context cancelled.
	return transient(0, fmt.Errorf("post to agent: %w", err))
}

func isCertificateError(err error) bool {
	var (
		verr *tls.CertificateVerificationError
		herr x509.HostnameError
		aerr x509.UnknownAuthorityError
		cerr x509.CertificateInvalidError
	)
	return errors.As(err, &verr) || errors.As(err, &herr) || errors.As(err, &aerr) || errors.As(err, &cerr)
}

func (c *Client) readReply(ctx context.Context, timeout time.Duration, resp *http.Response, now time.Time, preview PreviewFunc) (Reply, error) {
	status := resp.StatusCode
	switch {
	case status == http.StatusAccepted || status == http.StatusNoContent:
		drain(resp.Body)
		return Reply{Status: status, Accepted: status == http.StatusAccepted}, nil
	case status >= 200 && status < 300:
		// Read below.
	case status >= 300 && status < 400:
		drain(resp.Body)
		return Reply{}, permanent(status, ErrRedirect)
	case status == http.StatusRequestTimeout, status == http.StatusTooEarly,
		status == http.StatusTooManyRequests, status >= 500 && status < 600:
		drain(resp.Body)
		e := transient(status, ErrStatus)
		e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), now)
		return Reply{}, e
	default:
		drain(resp.Body)
		return Reply{}, permanent(status, ErrStatus)
	}

	mediaType, err := replyMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		drain(resp.Body)
		return Reply{}, permanent(status, err)
	}
	limit := cmp.Or(c.MaxReplyBytes, DefaultMaxReplyBytes)
	if mediaType == StreamType {
		reply, err := ReadStream(resp.Body, limit, cmp.Or(c.MaxStreamBytes, DefaultMaxStreamBytes), preview)
		switch {
		case errors.Is(err, ErrStream) || errors.Is(err, ErrReplyTooLarge):
			drain(resp.Body)
			return Reply{}, permanent(status, err)
		case err != nil:
			// The stream broke off (reset, timeout).
			return Reply{}, classifyTransport(ctx, timeout, err)
		}
		reply.Status = status
		return reply, nil
	}
	if resp.ContentLength > limit {
		return Reply{}, permanent(status, fmt.Errorf("%w: %d bytes declared, limit %d", ErrReplyTooLarge, resp.ContentLength, limit))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		// The agent answered but the body broke off (reset, timeout).
		return Reply{}, classifyTransport(ctx, timeout, err)
	}
	if int64(len(body)) > limit {
		return Reply{}, permanent(status, fmt.Errorf("%w: over %d bytes", ErrReplyTooLarge, limit))
	}
	return Reply{Status: status, ContentType: mediaType, Body: body}, nil
}

// replyMediaType accepts application/json, text/plain and StreamType, any
// case, with parameters; a charset, when given, must be UTF-8 (RFC 8259 requires it of
// JSON, and chat platforms take nothing else).
func replyMediaType(header string) (string, error) {
	mediaType, params, err := mime.ParseMediaType(header)
	if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) {
		return "", fmt.Errorf("%w: %q", ErrContentType, truncate(header, 64))
	}
	if mediaType != "application/json" && mediaType != "text/plain" && mediaType != StreamType {
		return "", fmt.Errorf("%w: %q", ErrContentType, truncate(header, 64))
	}
	switch strings.ToLower(params["charset"]) {
	case "", "utf-8", "utf8", "us-ascii":
		return mediaType, nil
	}
	return "", fmt.Errorf("%w: charset %q, want utf-8", ErrContentType, truncate(params["charset"], 32))
}

// parseRetryAfter reads Retry-After (RFC 9110 §10.2.3): delay seconds or an
// HTTP date. Anything else, or a time in the past, is 0. Capped at
// MaxRetryAfter.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' }) < 0 {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs > int64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter // all digits: only overflow fails
		}
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), MaxRetryAfter)
}

// drain reads a little of an unwanted body so the connection can be reused.
func drain(r io.Reader) { _, _ = io.Copy(io.Discard, io.LimitReader(r, 4<<10)) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
