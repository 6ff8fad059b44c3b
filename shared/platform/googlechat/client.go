package googlechat

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"golang.org/x/oauth2/jwt"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

const (
	// DefaultBaseURL is the Chat API's root.
	DefaultBaseURL = "https://chat.googleapis.com"
	// Scope is what the app's token is for: acting as the Chat app.
	Scope = "https://www.googleapis.com/auth/chat.bot"
	// MaxMessage is the most one message may hold, text and cards, in
	// bytes (Chat refuses more with INVALID_ARGUMENT).
	MaxMessage = 32000
	// TextLimit is the most of Parley's text one message holds, in bytes:
	// Inert may turn a one-byte marker into a three-byte look-alike, so a
	// text at the limit fits MaxMessage whatever it holds.
	TextLimit = 10000
)

// Client is the send half of the Google Chat adapter. It is safe for
// concurrent use.
//
// A message is created in the thread's space (spaces.messages.create), in
// its thread when it has one (messageReplyOption
// REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD), with a requestId derived from
// Outgoing.IdempotencyKey: Chat returns the message already created for a
// requestId it has seen, so a resend after an unknown outcome is never a
// second message. Its text goes through Inert unless TrustMarkup.
// Questions are cardsV2 (see cards); Edit patches text and cards.
type Client struct {
	// ProjectNumber is the app's project number: the account of every
	// thread it may post into. Required.
	ProjectNumber string
	// BaseURL is the Chat API's root. Defaults to DefaultBaseURL.
	BaseURL string
	// TrustMarkup sends the agent's text as written
	// (GOOGLECHAT_TRUST_AGENT_MARKUP).
	TrustMarkup bool
	// HTTP sends the requests. Defaults to a client with a 30-second
	// timeout.
	HTTP *http.Client

	// sa is the service account's 2-legged OAuth flow (nil: none
	// configured); tok its token, cached until TokenMargin before it
	// expires.
	sa  *jwt.Config
	mu  sync.Mutex
	tok *oauth2.Token
}

// TokenMargin is how long before its expiry a cached token is no longer
// used: a send never starts with a token about to lapse.
const TokenMargin = 5 * time.Minute

// NewClient returns the client of the app of project whose service account
// key is saJSON, getting its tokens from tokenURL when set (else the key's
// token_uri) with Google's OAuth 2.0 library for service accounts
// (golang.org/x/oauth2/google): a 2-legged token for Scope, cached until
// TokenMargin before it expires.
func NewClient(project string, saJSON []byte, tokenURL, baseURL string, c *http.Client) (*Client, error) {
	sa, err := google.JWTConfigFromJSON(saJSON, Scope)
	if err == nil && (sa.Email == "" || len(sa.PrivateKey) == 0) {
		// The library takes such a key and fails at the first token.
		err = errors.New("incomplete key")
	}
	if err != nil {
		// The library's error may quote the key: named, not shown.
		return nil, errors.New(SettingServiceAccount + " is not a service account key (JSON with client_email and private_key)")
	}
	if tokenURL != "" {
		sa.TokenURL = tokenURL
	}
	return &Client{ProjectNumber: project, BaseURL: baseURL, HTTP: c, sa: sa}, nil
}

// token returns the app's token, from the cache while it is valid for
// TokenMargin at least, else fetched under ctx. A failure is a
// *message.SendError: nothing was sent to Chat.
func (c *Client) token(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tok != nil && time.Now().Add(TokenMargin).Before(c.tok.Expiry) {
		return c.tok.AccessToken, nil
	}
	tctx := ctx
	if c.HTTP != nil {
		tctx = context.WithValue(ctx, oauth2.HTTPClient, c.HTTP)
	}
	tok, err := c.sa.TokenSource(tctx).Token()
	if err != nil {
		return "", tokenFailure(ctx, err)
	}
	if !tok.Expiry.IsZero() {
		c.tok = tok
	}
	return tok.AccessToken, nil
}

// RequestID is the requestId of an idempotency key: hex of its SHA-256,
// cut to 32 characters.
func RequestID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16])
}

// Send creates m's text in its space and thread. The receipt holds the
// message's name. Failures are *message.SendError, from Google's error
// statuses:
//
//	429 RESOURCE_EXHAUSTED              rate_limit (Retry-After when sent)
//	401 UNAUTHENTICATED                 auth
//	403 PERMISSION_DENIED               permission (the app is not in the space)
//	404 NOT_FOUND                       not_found
//	400 INVALID_ARGUMENT (over 32,000)  invalid_payload
//	409 ALREADY_EXISTS                  conflict
//	5xx                                 unknown: resendable, with the same requestId
//	no answer after the request left    unknown
func (c *Client) Send(ctx context.Context, m message.Outgoing) (message.Receipt, error) {
	if err := c.check(m.Thread); err != nil {
		return message.Receipt{}, wrap("send", err)
	}
	text, err := platform.TextOf(m.Content)
	if err != nil {
		return message.Receipt{}, wrap("send", err)
	}
	return c.create(ctx, m, GoogleChatMessage{Text: c.text(text)})
}

// Ask creates a question: its text, and its controls as a card.
func (c *Client) Ask(ctx context.Context, m message.Outgoing) (message.Receipt, error) {
	if err := c.check(m.Thread); err != nil {
		return message.Receipt{}, wrap("ask", err)
	}
	if m.Content.Prompt == nil {
		return message.Receipt{}, wrap("ask", invalid("content is not a question"))
	}
	cs, err := cards(*m.Content.Prompt)
	if err != nil {
		return message.Receipt{}, wrap("ask", err)
	}
	return c.create(ctx, m, GoogleChatMessage{Text: c.text(m.Content.Prompt.Text), CardsV2: cs})
}

func (c *Client) create(ctx context.Context, m message.Outgoing, msg GoogleChatMessage) (message.Receipt, error) {
	q := url.Values{}
	if m.IdempotencyKey != "" {
		q.Set("requestId", RequestID(m.IdempotencyKey))
	}
	if m.Thread.Thread != "" {
		msg.Thread = &GoogleChatThread{Name: m.Thread.Chat + "/threads/" + m.Thread.Thread}
		q.Set("messageReplyOption", "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD")
	}
	path := "/v1/" + m.Thread.Chat + "/messages"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	resp, err := c.call(ctx, http.MethodPost, path, msg)
	if err != nil {
		return message.Receipt{}, wrap("send", err)
	}
	var got GoogleChatMessage
	if err := (platform.API{Name: "Chat API"}).Decode(resp, &got); err != nil {
		return message.Receipt{}, wrap("send", err)
	}
	if _, ok := messageSpace(got.Name); !ok {
		return message.Receipt{}, wrap("send", &message.SendError{Class: message.FailUnknown, Status: resp.Status, Reason: "answer has no message name"})
	}
	return message.Receipt{MessageIDs: []string{got.Name}}, nil
}

// Edit patches a message the app sent (spaces.messages.patch,
// updateMask text,cardsV2): new text, or a question as it is now (a closed
// one has no card left).
func (c *Client) Edit(ctx context.Context, t message.Thread, messageID string, ct message.Content) error {
	if err := c.check(t); err != nil {
		return wrap("edit", err)
	}
	if space, ok := messageSpace(messageID); !ok || space != t.Chat {
		return wrap("edit", invalid("not a message of the thread's space"))
	}
	var msg GoogleChatMessage
	switch ct.Kind() {
	case message.ContentText:
		msg = GoogleChatMessage{Text: c.text(ct.Text), CardsV2: []GoogleChatCardV2{}}
	case message.ContentPrompt:
		cs, err := cards(*ct.Prompt)
		if err != nil {
			return wrap("edit", err)
		}
		msg = GoogleChatMessage{Text: c.text(ct.Prompt.Text), CardsV2: cs}
	default:
		return wrap("edit", invalid("content is neither text nor a question"))
	}
	_, err := c.call(ctx, http.MethodPatch, "/v1/"+messageID+"?updateMask=text%2CcardsV2", msg)
	return wrap("edit", err)
}

// Acknowledge answers a click. The event's answer has stopped the spinner,
// so an empty notice sends nothing; a notice is a private message to the
// person who clicked (privateMessageViewer), which nobody else sees.
func (c *Client) Acknowledge(ctx context.Context, ev message.Event, notice string) error {
	if err := c.check(ev.Thread); err != nil {
		return wrap("acknowledge", err)
	}
	if notice == "" {
		return nil
	}
	if !isUserName(ev.Sender.ID) {
		return wrap("acknowledge", invalid("the click names no user"))
	}
	msg := GoogleChatMessage{Text: c.text(notice), PrivateMessageViewer: &GoogleChatUser{Name: ev.Sender.ID}}
	_, err := c.create(ctx, message.Outgoing{Thread: ev.Thread, IdempotencyKey: "ack#" + ev.Key()}, msg)
	return err
}

func (c *Client) text(s string) string {
	if c.TrustMarkup {
		return s
	}
	return Inert(s)
}

// check refuses, without a call, a thread of another app or without a
// space, and names that would change the call's path.
func (c *Client) check(t message.Thread) error {
	if c.ProjectNumber == "" {
		return &message.SendError{Class: message.FailAuth, Reason: "no project number configured"}
	}
	if err := platform.CheckThread(c.ProjectNumber, t); err != nil {
		return err
	}
	if !isSpaceName(t.Chat) || (t.Thread != "" && !isThreadID(t.Thread)) {
		return invalid("the chat is not a space name")
	}
	return nil
}

// call sends msg with method to path below the API's root, with the app's
// token, and classifies any answer but a 2xx.
func (c *Client) call(ctx context.Context, method, path string, msg GoogleChatMessage) (*platform.Response, error) {
	if c.sa == nil {
		return nil, &message.SendError{Class: message.FailAuth, Reason: "no service account configured"}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(msg); err != nil {
		return nil, invalid("the message does not encode")
	}
	tok, err := c.token(ctx)
	if err != nil {
		return nil, err
	}
	base := strings.TrimRight(cmp.Or(c.BaseURL, DefaultBaseURL), "/")
	req, err := http.NewRequestWithContext(ctx, method, base+path, &buf)
	if err != nil {
		return nil, &message.SendError{Class: message.FailAuth, Reason: "the Chat API URL does not parse"}
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := platform.Do(ctx, cmp.Or(c.HTTP, defaultHTTP), req)
	if err != nil {
		return nil, err
	}
	if resp.Status >= 200 && resp.Status < 300 {
		return resp, nil
	}
	if resp.Status == http.StatusUnauthorized {
		// A revoked or rotated key: the next send asks for a new token.
		c.mu.Lock()
		c.tok = nil
		c.mu.Unlock()
	}
	return nil, classify(resp)
}

var defaultHTTP = &http.Client{Timeout: 30 * time.Second}

// tokenFailure classifies a failed token request: Google's 4xx (a revoked
// key, a wrong scope) is auth, a 429 a rate limit, anything else
// transient. The message was never sent.
func tokenFailure(ctx context.Context, err error) error {
	if re, ok := errors.AsType[*oauth2.RetrieveError](err); ok && re.Response != nil {
		st := re.Response.StatusCode
		se := &message.SendError{Class: message.FailTransient, Status: st, Reason: "Google token: HTTP " + strconv.Itoa(st)}
		switch {
		case st == http.StatusTooManyRequests:
			se.Class, se.RetryAfter = message.FailRateLimit, platform.RetryAfter(re.Response.Header, time.Now())
		case st >= 400 && st < 500:
			se.Class = message.FailAuth
		}
		return se
	}
	if ctx.Err() != nil {
		return &message.SendError{Class: message.FailCancelled, Reason: "Google token: cancelled", Err: ctx.Err()}
	}
	return &message.SendError{Class: message.FailTransient, Reason: "Google token: no answer"}
}

// statusClasses are Google's canonical error statuses Parley tells apart.
var statusClasses = map[string]message.FailureClass{
	"INVALID_ARGUMENT":    message.FailInvalidPayload,
	"FAILED_PRECONDITION": message.FailInvalidPayload,
	"OUT_OF_RANGE":        message.FailInvalidPayload,
	"UNAUTHENTICATED":     message.FailAuth,
	"PERMISSION_DENIED":   message.FailPermission,
	"NOT_FOUND":           message.FailNotFound,
	"ALREADY_EXISTS":      message.FailConflict,
	"ABORTED":             message.FailTransient,
	"RESOURCE_EXHAUSTED":  message.FailRateLimit,
}

// classify maps a Chat API error answer to a SendError (see Send).
func classify(resp *platform.Response) *message.SendError {
	var e GoogleChatError
	_ = json.Unmarshal(resp.Body, &e) // an edge's page is no JSON: its status says it
	se := platform.StatusFailure(resp.Status, resp.Header)
	reason := "HTTP " + strconv.Itoa(resp.Status)
	if e.Error.Status != "" {
		reason += " " + e.Error.Status
	}
	switch {
	case resp.Status >= 500:
		se.Class = message.FailUnknown
	case resp.Status == http.StatusNotFound && e.Error.Status == "":
		se.Class = message.FailAuth // no Google body: the root is wrong
	default:
		if cl, ok := statusClasses[e.Error.Status]; ok {
			se.Class = cl
		}
	}
	se.Reason = platform.Reason(reason)
	return se
}

func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("googlechat %s: %w", what, err)
}
