package line

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

const (
	// DefaultBaseURL is the Messaging API root.
	DefaultBaseURL = "https://api.line.me"
	// BaseURLEnv names the environment variable a function's config reads
	// into Client.BaseURL (the local runner points it at a fake API).
	BaseURLEnv = "LINE_API_BASE_URL"
	// TextLimit is the most a text message may hold, in UTF-16 code units:
	// the Messaging API counts text that way (an emoji outside the BMP is 2).
	TextLimit = 5000
	// RetryKeyHeader carries a push's retry key: LINE accepts one request
	// per key (for 24 hours) and answers a replay 409.
	RetryKeyHeader = "X-Line-Retry-Key"
	// AcceptedRequestHeader names, on a 409, the request that was accepted
	// with the same retry key.
	AcceptedRequestHeader = "X-Line-Accepted-Request-Id"
	// RateLimitWait is how long a 429 waits when it says nothing more: LINE
	// sends no Retry-After. Its limits are per second (2,000 requests a
	// second per channel for push and reply), so a few seconds clear one;
	// delivery doubles its own floor while the 429s go on.
	RateLimitWait = 5 * time.Second
	// LoadingSeconds is how long the loading animation shows unless a
	// message from the bot ends it first (LINE takes 5 to 60, by 5): short,
	// because nothing else ends it (a silent reply, a failed turn), and
	// renewed while the turn works (TypingLife).
	LoadingSeconds = 10
	// replyMargin is the time a reply token must have left for a send to
	// use it: the call's own time, with room for LINE's clock.
	replyMargin = 5 * time.Second
	// MaxReplyMessages is the most messages one reply (or push) carries.
	MaxReplyMessages = 5
)

// Client is the send half of the LINE adapter. Its zero value with a Token
// is ready to use, and it is safe for concurrent use.
//
// The first bubbles of a reply to an event (Outgoing.Sequence 0 on, with a
// fresh ReplyContext) go with the event's reply token, free of the monthly
// push quota: up to MaxReplyMessages in one call (Reply), or the first
// alone (Send). Every other bubble, and a first bubble whose token LINE
// refuses, is pushed to the chat with X-Line-Retry-Key, one message per
// call: Parley paces and orders those itself.
type Client struct {
	// Token is a channel access token. Required. It travels in the
	// Authorization header, never in a URL or an error.
	Token string
	// BotUserID, when set, is the bot the token belongs to
	// (LINE_BOT_USER_ID): a thread of any other bot is refused without a
	// call.
	BotUserID string
	// BaseURL is the Messaging API root. Defaults to DefaultBaseURL.
	BaseURL string
	// DataBaseURL is the content API's root (LINE_DATA_API_BASE_URL),
	// where people's files are fetched. Defaults to DefaultDataBaseURL.
	DataBaseURL string
	// HTTP sends the requests. Defaults to a client with a 30-second
	// timeout; deadlines normally come from ctx.
	HTTP *http.Client
	// Now reads the clock a reply token's freshness is judged by. Defaults
	// to time.Now.
	Now func() time.Time
}

// Send sends m's text, or its question laid out as Ask does, as one text
// message into m.Thread.Chat, quoting m.ReplyTo (a quoteToken) when set. The
// receipt holds the new message's id. Failures are *message.SendError:
//
//	400                                   invalid_payload; on a reply, "Invalid reply
//	                                      token" (used, expired) pushes instead, in the
//	                                      same Send: the reply was refused, so nothing
//	                                      was posted
//	401                                   auth (wrong or revoked token)
//	403                                   permission (the plan or the account forbids it)
//	404                                   auth: a wrong base URL (LINE answers a missing
//	                                      chat with 400)
//	409 with X-Line-Accepted-Request-Id   conflict: a push with this unit's retry key was
//	                                      accepted before, so the unit is sent (delivery
//	                                      treats conflict on an idempotent platform as sent)
//	409 otherwise                         unknown
//	413                                   invalid_payload
//	429 "You have reached your monthly    permission: the push quota is spent, which no
//	limit."                               retry within the unit's age fixes
//	429                                   rate_limit, RetryAfter from Retry-After if any,
//	                                      else RateLimitWait
//	5xx                                   unknown: LINE's retry guide says a 5xx may have
//	                                      been accepted
//	no answer after the request left      unknown (see platform.Do)
//
// A push with the same retry key after an unknown outcome is safe: LINE
// posts it at most once. A reply takes no retry key: an unknown outcome of
// a reply may have posted it, and its resend (the token now spent, or
// stale) is pushed.
func (c *Client) Send(ctx context.Context, m message.Outgoing) (message.Receipt, error) {
	msg, err := c.message(m)
	if err != nil {
		return message.Receipt{}, fmt.Errorf("line send: %w", err)
	}
	return c.post(ctx, m.Thread.Chat, msg, m.IdempotencyKey, c.replyToken(m.Sequence, m.ReplyContext))
}

// Replies is how many messages one reply may carry from m: MaxReplyMessages
// while m is a reply's first bubble and its token is fresh, else 0.
func (c *Client) Replies(m message.Outgoing) int {
	if c.replyToken(m.Sequence, m.ReplyContext) == "" {
		return 0
	}
	return MaxReplyMessages
}

// Reply sends ms, a reply's first bubbles (ms[0].Sequence is 0), as one
// call to the Reply API with their reply token: free, and up to
// MaxReplyMessages. The receipts are sentMessages' ids, one per message in
// order. ok is false, with nothing sent, when the token is stale, LINE
// refuses it, or a bubble cannot go in a reply (each then goes on its own
// by Send, which pushes, and refuses a bad bubble alone). Failures are
// classified as Send's.
//
// A reply takes no retry key, but its token is one: LINE takes it once. So
// a reply whose answer was lost is sent again at once with the same token
// while it is fresh: accepted, the first never arrived; refused as spent,
// the first was posted, and each message is sent with no message id to
// keep.
func (c *Client) Reply(ctx context.Context, ms []message.Outgoing) ([]message.Receipt, bool, error) {
	if len(ms) == 0 || len(ms) > MaxReplyMessages || c.Replies(ms[0]) == 0 {
		return nil, false, nil
	}
	token := c.replyToken(0, ms[0].ReplyContext)
	msgs := make([]LineTextMessage, len(ms))
	for i, m := range ms {
		msg, err := c.message(m)
		if err != nil || m.Thread != ms[0].Thread {
			return nil, false, nil
		}
		msgs[i] = msg
	}
	ids, refused, err := c.replyAll(ctx, token, msgs)
	if err != nil && message.ClassOf(err) == message.FailUnknown && c.replyToken(0, ms[0].ReplyContext) != "" && ctx.Err() == nil {
		again, spent, aerr := c.replyAll(ctx, token, msgs)
		switch {
		case aerr == nil && spent:
			// Spent by the first call: it was posted.
			return make([]message.Receipt, len(ms)), true, nil
		case aerr == nil:
			ids, refused, err = again, false, nil
		}
	}
	if err != nil || refused {
		return nil, false, err
	}
	if len(ids) != len(ms) {
		return nil, false, fmt.Errorf("line reply: %w", &message.SendError{Class: message.FailUnknown, Status: http.StatusOK,
			Reason: fmt.Sprintf("answer has %d sentMessages for %d messages", len(ids), len(ms))})
	}
	out := make([]message.Receipt, len(ms))
	for i, id := range ids {
		out[i] = message.Receipt{MessageIDs: []string{id}}
	}
	return out, true, nil
}

// Ask sends a question (message.ContentPrompt) as a text message with quick
// replies (see promptMessage); it is Send for questions, and refuses other
// content.
func (c *Client) Ask(ctx context.Context, m message.Outgoing) (message.Receipt, error) {
	if err := platform.CheckThread(c.BotUserID, m.Thread); err != nil {
		return message.Receipt{}, fmt.Errorf("line ask: %w", err)
	}
	if m.Content.Kind() != message.ContentPrompt {
		return message.Receipt{}, fmt.Errorf("line ask: %w", &message.SendError{Class: message.FailInvalidPayload, Reason: "content is not a question"})
	}
	return c.Send(ctx, m)
}

// Acknowledge answers a press. A postback needs no acknowledgement (LINE
// shows no spinner), so an empty notice sends nothing. A notice is sent as
// a text message into the press's chat (where everyone in a group sees it:
// LINE has no message for one person alone): as a reply with the press's
// reply token while it is fresh, pushed otherwise, with a retry key of the
// press's event, so an acknowledgement retried after an unknown outcome is
// posted once.
func (c *Client) Acknowledge(ctx context.Context, ev message.Event, notice string) error {
	if err := platform.CheckThread(c.BotUserID, ev.Thread); err != nil {
		return fmt.Errorf("line acknowledge: %w", err)
	}
	if notice == "" {
		return nil
	}
	_, err := c.post(ctx, ev.Thread.Chat, textMessage(notice, ""), "ack#"+ev.Key(), c.replyToken(0, ev.ReplyContext))
	if message.ClassOf(err) == message.FailConflict {
		return nil // an earlier attempt posted it
	}
	return err
}

// Typing shows the loading animation in a one-to-one chat for
// LoadingSeconds, or until the bot's next message arrives. LINE shows it in
// one-to-one chats only: in a group or room Typing does nothing (and calls
// nothing). Failures are classified like Send's.
func (c *Client) Typing(ctx context.Context, t message.Thread) error {
	if err := platform.CheckThread(c.BotUserID, t); err != nil {
		return fmt.Errorf("line loading: %w", err)
	}
	if !userChat(t.Chat) {
		return nil
	}
	resp, err := c.api().PostJSON(ctx, "/v2/bot/chat/loading/start", c.header(), LineLoadingRequest{ChatID: t.Chat, LoadingSeconds: LoadingSeconds})
	if err != nil {
		return fmt.Errorf("line loading: %w", err)
	}
	if resp.Status/100 == 2 {
		return nil
	}
	return fmt.Errorf("line loading: %w", classify(resp, false))
}

var _ platform.TypingRenewer = (*Client)(nil)

// TypingLife is LoadingSeconds: the turn renews the animation before it
// ends while it works, and no longer once the turn is over.
func (c *Client) TypingLife(message.Thread) time.Duration { return LoadingSeconds * time.Second }

// message checks m's thread and lays its content out as one LINE message.
func (c *Client) message(m message.Outgoing) (LineTextMessage, error) {
	if err := platform.CheckThread(c.BotUserID, m.Thread); err != nil {
		return LineTextMessage{}, err
	}
	switch m.Content.Kind() {
	case message.ContentText:
		return textMessage(m.Content.Text, m.ReplyTo), nil
	case message.ContentPrompt:
		return promptMessage(*m.Content.Prompt, m.ReplyTo)
	}
	return LineTextMessage{}, &message.SendError{Class: message.FailInvalidPayload, Reason: "content is neither text nor a question"}
}

// textMessage is a plain text message: type "text", without emojis or
// substitution, which LINE shows exactly as written.
func textMessage(text, quote string) LineTextMessage {
	return LineTextMessage{Type: LineMessageText, Text: text, QuoteToken: quote}
}

// replyToken is the reply token a bubble may use: the first bubble's, while
// the token has replyMargin left.
func (c *Client) replyToken(sequence int, rc *message.ReplyContext) string {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	if sequence != 0 || !rc.Fresh(now(), replyMargin) {
		return ""
	}
	return rc.Token
}

// post replies with token when one is given and LINE takes it, and pushes
// to chat otherwise, with a retry key derived from key (none when key is
// empty).
func (c *Client) post(ctx context.Context, chat string, msg LineTextMessage, key, token string) (message.Receipt, error) {
	if token != "" {
		rc, refused, err := c.reply(ctx, token, msg)
		if !refused {
			return rc, err
		}
	}
	return c.push(ctx, chat, msg, key)
}

// reply sends msg with a reply token. refused reports that LINE refused the
// token itself (used or expired): nothing was posted, push instead.
func (c *Client) reply(ctx context.Context, token string, msg LineTextMessage) (_ message.Receipt, refused bool, _ error) {
	ids, refused, err := c.replyAll(ctx, token, []LineTextMessage{msg})
	if err != nil || refused {
		if se, ok := errors.AsType[*message.SendError](err); ok && se.Class == message.FailUnknown {
			se.Reason += " (a reply takes no retry key: its resend may post it twice)"
		}
		return message.Receipt{}, refused, err
	}
	return message.Receipt{MessageIDs: ids}, false, nil
}

// replyAll sends msgs with a reply token and returns the ids LINE gave
// them. refused reports that LINE refused the token itself (used or
// expired): nothing was posted.
func (c *Client) replyAll(ctx context.Context, token string, msgs []LineTextMessage) (_ []string, refused bool, _ error) {
	resp, err := c.api().PostJSON(ctx, "/v2/bot/message/reply", c.header(), LineReplyRequest{ReplyToken: token, Messages: msgs})
	if err != nil {
		return nil, false, fmt.Errorf("line reply: %w", err)
	}
	if resp.Status == http.StatusOK {
		rc, err := c.receipt(resp)
		if err != nil {
			return nil, false, fmt.Errorf("line reply: %w", err)
		}
		return rc.MessageIDs, false, nil
	}
	if resp.Status == http.StatusBadRequest && invalidReplyToken(errorBody(resp)) {
		return nil, true, nil
	}
	return nil, false, fmt.Errorf("line reply: %w", classify(resp, false))
}

// push sends msg to chat, with the retry key of key.
func (c *Client) push(ctx context.Context, chat string, msg LineTextMessage, key string) (message.Receipt, error) {
	return c.pushAll(ctx, chat, []LineTextMessage{msg}, key)
}

// pushAll pushes msgs in one call (at most MaxReplyMessages), with a retry
// key derived from key: they are posted together or not at all.
func (c *Client) pushAll(ctx context.Context, chat string, msgs []LineTextMessage, key string) (message.Receipt, error) {
	h := c.header()
	if key != "" {
		h.Set(RetryKeyHeader, RetryKey(key))
	}
	resp, err := c.api().PostJSON(ctx, "/v2/bot/message/push", h, LinePushRequest{To: chat, Messages: msgs})
	if err != nil {
		return message.Receipt{}, fmt.Errorf("line push: %w", err)
	}
	if resp.Status != http.StatusOK {
		return message.Receipt{}, fmt.Errorf("line push: %w", classify(resp, key != ""))
	}
	rc, err := c.receipt(resp)
	if err != nil {
		return message.Receipt{}, fmt.Errorf("line push: %w", err)
	}
	return rc, nil
}

func (c *Client) api() platform.API {
	return platform.API{Name: "Messaging API", BaseURL: c.BaseURL, DefaultBaseURL: DefaultBaseURL, Token: c.Token, HTTP: c.HTTP}
}

func (c *Client) header() http.Header {
	return http.Header{"Authorization": {"Bearer " + c.Token}}
}

// receipt reads a 200 answer's sentMessages: the ids of what LINE posted.
func (c *Client) receipt(resp *platform.Response) (message.Receipt, error) {
	var r LineSendResponse
	if err := c.api().Decode(resp, &r); err != nil {
		return message.Receipt{}, err
	}
	var ids []string
	for _, m := range r.SentMessages {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 {
		// Accepted, so probably posted, but there is no receipt to keep.
		return message.Receipt{}, &message.SendError{Class: message.FailUnknown, Status: resp.Status, Reason: "answer has no sentMessages"}
	}
	return message.Receipt{MessageIDs: ids}, nil
}

// errorBody reads an error answer's body, when it is LINE's.
func errorBody(resp *platform.Response) LineErrorResponse {
	var e LineErrorResponse
	_ = json.Unmarshal(resp.Body, &e)
	return e
}

// invalidReplyToken reports LINE's refusal of a reply token: "Invalid reply
// token", for a token used before, expired, or never issued.
func invalidReplyToken(e LineErrorResponse) bool {
	return strings.Contains(strings.ToLower(e.Message), "reply token")
}

// monthlyLimit reports LINE's 429 for a spent monthly message quota ("You
// have reached your monthly limit."), as opposed to a rate limit.
func monthlyLimit(e LineErrorResponse) bool {
	return strings.Contains(strings.ToLower(e.Message), "monthly limit")
}

// classify maps an error answer to a SendError (see Send). retryKey says
// the request carried one: only then does a 409 prove the unit was sent.
func classify(resp *platform.Response, retryKey bool) *message.SendError {
	e := errorBody(resp)
	se := platform.StatusFailure(resp.Status, resp.Header)
	if e.Message != "" {
		reason := e.Message
		if len(e.Details) > 0 {
			// LINE's validation names the property and the rule, never
			// the value.
			reason += " (" + e.Details[0].Property + ": " + e.Details[0].Message + ")"
		}
		se.Reason = platform.Reason(se.Reason + ": " + reason)
	}
	switch resp.Status {
	case http.StatusTooManyRequests:
		if monthlyLimit(e) {
			se.Class, se.RetryAfter = message.FailPermission, 0
			se.Reason = platform.Reason("monthly message limit reached: no push until the quota is raised or the month ends (" + se.Reason + ")")
		} else if se.RetryAfter == 0 {
			se.RetryAfter = RateLimitWait
		}
	case http.StatusConflict:
		if id := resp.Header.Get(AcceptedRequestHeader); retryKey && id != "" {
			se.Class = message.FailConflict
			se.Reason = platform.Reason("retry key already accepted, request " + id)
		} else {
			// LINE answers 409 only to a retry key's replay, naming the
			// request it accepted: anything else proves nothing.
			se.Class = message.FailUnknown
		}
	}
	return se
}
