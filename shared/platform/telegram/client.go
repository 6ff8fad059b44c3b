package telegram

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

const (
	// DefaultBaseURL is the Bot API root.
	DefaultBaseURL = "https://api.telegram.org"
	// BaseURLEnv names the environment variable a function's config reads
	// into Client.BaseURL (the local runner points it at a fake API).
	BaseURLEnv = "TELEGRAM_API_BASE_URL"
	// TextLimit is the most a message's text may hold, in UTF-16 code
	// units (what Telegram counts).
	TextLimit = 4096
)

// defaultHTTP bounds a call whose ctx has no deadline.
var defaultHTTP = &http.Client{Timeout: 30 * time.Second}

// Client is the send half of the Telegram adapter: it posts plain-text
// messages with the Bot API. Its zero value with a Token is ready to use, and
// it is safe for concurrent use.
type Client struct {
	// Token is the bot token from @BotFather. Required. It travels in the
	// URL path, and never appears in an error.
	Token string
	// BaseURL is the Bot API root. Defaults to DefaultBaseURL.
	BaseURL string
	// HTTP sends the requests. Defaults to a client with a 30-second
	// timeout; deadlines normally come from ctx.
	HTTP *http.Client
}

// Capabilities: 4096 UTF-16 code units, no idempotency key (a resent message
// after an unknown outcome may appear twice).
func (c *Client) Capabilities() message.Capabilities {
	return message.Capabilities{TextLimit: TextLimit, Counting: message.CountUTF16, Idempotent: false}
}

// Send posts m with sendMessage: into m.Thread.Chat, into the forum topic
// m.Thread.Thread when set, quoting m.ReplyTo when set (and still sending if
// that message is gone). The text goes without parse_mode, so it is shown
// verbatim. The receipt holds the new message_id. Failures are
// *message.SendError:
//
//	429                              rate_limit, RetryAfter = parameters.retry_after
//	400 with migrate_to_chat_id      not_found (the group became a supergroup with a new id)
//	400                              invalid_payload
//	401                              auth (wrong or revoked token)
//	403                              permission (blocked by the user, kicked from the group)
//	404                              auth: the Bot API answers 404 to a malformed token or a
//	                                 wrong base URL, never for a missing chat (that is a 400)
//	409                              conflict
//	5xx                              unknown: Telegram documents no 5xx as "not
//	                                 processed", and an edge's 502/504 may come
//	                                 after the message was posted (ADR 0003)
//	no answer after the request left unknown (see platform.Do)
func (c *Client) Send(ctx context.Context, m message.Outgoing) (message.Receipt, error) {
	args := TelegramSendMessage{ChatID: TelegramChatID(m.Thread.Chat), Text: m.Text}
	var err error
	if args.MessageThreadID, err = optionalID("message_thread_id", m.Thread.Thread); err != nil {
		return message.Receipt{}, fmt.Errorf("telegram sendMessage: %w", err)
	}
	if m.ReplyTo != "" {
		id, err := optionalID("reply_parameters.message_id", m.ReplyTo)
		if err != nil {
			return message.Receipt{}, fmt.Errorf("telegram sendMessage: %w", err)
		}
		args.ReplyParameters = &TelegramReplyParameters{MessageID: id, AllowSendingWithoutReply: true}
	}
	var sent TelegramMessage
	if err := c.call(ctx, "sendMessage", m.Thread.Chat, args, &sent); err != nil {
		return message.Receipt{}, fmt.Errorf("telegram sendMessage: %w", err)
	}
	if sent.MessageID == 0 {
		// Accepted, so probably delivered, but there is no receipt to keep.
		return message.Receipt{}, &message.SendError{Class: message.FailUnknown, Status: http.StatusOK, Reason: "telegram sendMessage: answer has no message_id"}
	}
	return message.Receipt{MessageIDs: []string{strconv.FormatInt(sent.MessageID, 10)}}, nil
}

// Typing shows "typing…" in t for about five seconds (or until the next
// message) with sendChatAction. Failures are classified like Send's.
func (c *Client) Typing(ctx context.Context, t message.Thread) error {
	args := TelegramSendChatAction{ChatID: TelegramChatID(t.Chat), Action: "typing"}
	var err error
	if args.MessageThreadID, err = optionalID("message_thread_id", t.Thread); err != nil {
		return fmt.Errorf("telegram sendChatAction: %w", err)
	}
	var ok bool
	if err := c.call(ctx, "sendChatAction", t.Chat, args, &ok); err != nil {
		return fmt.Errorf("telegram sendChatAction: %w", err)
	}
	return nil
}

func optionalID(field, s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, &message.SendError{Class: message.FailInvalidPayload, Reason: field + " is not an integer"}
	}
	return id, nil
}

// call posts args as JSON to method and decodes a successful result into
// result.
func (c *Client) call(ctx context.Context, method, chat string, args, result any) error {
	if c.Token == "" {
		return &message.SendError{Class: message.FailAuth, Reason: "no bot token configured"}
	}
	if chat == "" {
		return &message.SendError{Class: message.FailInvalidPayload, Reason: "no chat_id"}
	}
	base := strings.TrimRight(cmp.Or(c.BaseURL, DefaultBaseURL), "/")
	if u, err := url.Parse(base); err != nil || u.Scheme == "" || u.Host == "" {
		// The base alone is safe to name; the full URL holds the token.
		return &message.SendError{Class: message.FailAuth, Reason: "invalid Bot API base URL " + strconv.Quote(base)}
	}
	body, err := json.Marshal(args)
	if err != nil {
		return &message.SendError{Class: message.FailInvalidPayload, Reason: "arguments do not encode", Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/bot"+c.Token+"/"+method, bytes.NewReader(body))
	if err != nil {
		// err quotes the URL, and so the token: drop it.
		return &message.SendError{Class: message.FailAuth, Reason: "bot token does not fit in a URL"}
	}
	req.Header.Set("Content-Type", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	resp, err := platform.Do(ctx, hc, req)
	if err != nil {
		return err
	}
	var r TelegramResponse
	decodeErr := json.Unmarshal(resp.Body, &r)
	if resp.Status == http.StatusOK && decodeErr == nil && r.OK {
		if err := json.Unmarshal(r.Result, result); err != nil {
			return &message.SendError{Class: message.FailUnknown, Status: resp.Status, Reason: "answer does not decode", Err: err}
		}
		return nil
	}
	if resp.Status == http.StatusOK && decodeErr != nil {
		// A 200 that is not the Bot API's answer (a captive proxy?): the
		// request may or may not have been acted on.
		return &message.SendError{Class: message.FailUnknown, Status: resp.Status, Reason: "answer is not a Bot API response"}
	}
	return classify(resp, r)
}

// classify maps a Bot API error to a SendError. It reads error_code and
// parameters, never the description, which is only carried as the reason.
func classify(resp *platform.Response, r TelegramResponse) *message.SendError {
	code := r.ErrorCode
	if code == 0 {
		code = resp.Status
	}
	se := &message.SendError{Status: resp.Status, Reason: platform.Reason(r.Description)}
	if se.Reason == "" {
		se.Reason = "HTTP " + strconv.Itoa(resp.Status)
	}
	var params TelegramResponseParameters
	if r.Parameters != nil {
		params = *r.Parameters
	}
	switch {
	case code == http.StatusTooManyRequests:
		se.Class = message.FailRateLimit
		se.RetryAfter = platform.Seconds(params.RetryAfter)
		if se.RetryAfter == 0 {
			se.RetryAfter = platform.RetryAfter(resp.Header, time.Now())
		}
	case code == http.StatusBadRequest && params.MigrateToChatID != 0:
		se.Class = message.FailNotFound
		se.Reason = "group migrated to a supergroup, migrate_to_chat_id " + strconv.FormatInt(params.MigrateToChatID, 10)
	case code == http.StatusNotFound:
		se.Class = message.FailAuth
	case code >= 500 || resp.Status >= 500:
		se.Class = message.FailUnknown
	default:
		se.Class = platform.StatusClass(code)
	}
	return se
}
