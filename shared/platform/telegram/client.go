package telegram

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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

// Client is the send half of the Telegram adapter: it posts plain-text
// messages with the Bot API. Its zero value with a Token is ready to use, and
// it is safe for concurrent use.
type Client struct {
	// Token is the bot token from @BotFather. Required. It travels in the
	// URL path, and never appears in an error.
	Token string
	// BotID, when set, is the bot the token belongs to (its prefix): a
	// thread of any other bot is refused without a call, so the token
	// reaches only its own bot's conversations.
	BotID string
	// BaseURL is the Bot API root. Defaults to DefaultBaseURL.
	BaseURL string
	// HTTP sends the requests. Defaults to a client with a 30-second
	// timeout; deadlines normally come from ctx.
	HTTP *http.Client
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
	rc, err := c.send(ctx, m)
	if err != nil {
		return message.Receipt{}, fmt.Errorf("telegram sendMessage: %w", err)
	}
	return rc, nil
}

func (c *Client) send(ctx context.Context, m message.Outgoing) (message.Receipt, error) {
	return c.sendWith(ctx, m, nil)
}

// sendWith sends m's text with sendMessage, with an inline keyboard when kb
// is set.
func (c *Client) sendWith(ctx context.Context, m message.Outgoing, kb *TelegramInlineKeyboardMarkup) (message.Receipt, error) {
	text, err := platform.TextFor(c.BotID, m)
	if err != nil {
		return message.Receipt{}, err
	}
	args := TelegramSendMessage{ChatID: TelegramChatID(m.Thread.Chat), Text: text, ReplyMarkup: kb}
	if args.MessageThreadID, err = optionalID("message_thread_id", m.Thread.Thread); err != nil {
		return message.Receipt{}, err
	}
	if m.ReplyTo != "" {
		id, err := optionalID("reply_parameters.message_id", m.ReplyTo)
		if err != nil {
			return message.Receipt{}, err
		}
		args.ReplyParameters = &TelegramReplyParameters{MessageID: id, AllowSendingWithoutReply: true}
	}
	var sent TelegramMessage
	if err := c.call(ctx, "sendMessage", args, &sent); err != nil {
		return message.Receipt{}, err
	}
	if sent.MessageID == 0 {
		// Accepted, so probably delivered, but there is no receipt to keep.
		return message.Receipt{}, &message.SendError{Class: message.FailUnknown, Status: http.StatusOK, Reason: "answer has no message_id"}
	}
	return message.Receipt{MessageIDs: []string{strconv.FormatInt(sent.MessageID, 10)}}, nil
}

// React sets the bot's reaction to the message messageID in t with
// setMessageReaction: r.Emoji, replacing whatever the bot set before ("",
// none). Telegram takes only emoji from its list of reactions: any other is
// invalid_payload. Failures are classified like Send's.
func (c *Client) React(ctx context.Context, t message.Thread, messageID string, r message.React) error {
	if err := platform.CheckThread(c.BotID, t); err != nil {
		return fmt.Errorf("telegram setMessageReaction: %w", err)
	}
	id, err := optionalID("message_id", messageID)
	if err != nil || id == 0 {
		return fmt.Errorf("telegram setMessageReaction: %w", &message.SendError{Class: message.FailInvalidPayload, Reason: "no message to react to"})
	}
	args := TelegramSetMessageReaction{ChatID: TelegramChatID(t.Chat), MessageID: id, Reaction: []TelegramReactionType{}}
	if r.Emoji != "" {
		args.Reaction = append(args.Reaction, TelegramReactionType{Type: TelegramReactionEmoji, Emoji: r.Emoji})
	}
	var ok bool
	if err := c.call(ctx, "setMessageReaction", args, &ok); err != nil {
		return fmt.Errorf("telegram setMessageReaction: %w", err)
	}
	return nil
}

var _ platform.TypingRenewer = (*Client)(nil)

// TypingLife is how long Telegram shows a chat action: "5 seconds or less
// (when a message arrives from your bot, Telegram clients clear its typing
// status)".
const TypingLife = 5 * time.Second

// Typing shows "typing…" in t for about five seconds (or until the next
// message) with sendChatAction. Failures are classified like Send's.
func (c *Client) Typing(ctx context.Context, t message.Thread) error {
	if err := c.typing(ctx, t); err != nil {
		return fmt.Errorf("telegram sendChatAction: %w", err)
	}
	return nil
}

// TypingLife: Telegram shows a chat action for five seconds at most.
func (c *Client) TypingLife(message.Thread) time.Duration { return TypingLife }

func (c *Client) typing(ctx context.Context, t message.Thread) error {
	if err := platform.CheckThread(c.BotID, t); err != nil {
		return err
	}
	args := TelegramSendChatAction{ChatID: TelegramChatID(t.Chat), Action: "typing"}
	var err error
	if args.MessageThreadID, err = optionalID("message_thread_id", t.Thread); err != nil {
		return err
	}
	var ok bool
	return c.call(ctx, "sendChatAction", args, &ok)
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
func (c *Client) call(ctx context.Context, method string, args, result any) error {
	api := platform.API{Name: "Bot API", BaseURL: c.BaseURL, DefaultBaseURL: DefaultBaseURL, Token: c.Token, HTTP: c.HTTP}
	// The Bot API takes the token in the path.
	resp, err := api.PostJSON(ctx, "/bot"+c.Token+"/"+method, nil, args)
	if err != nil {
		return err
	}
	return decodeResult(api, resp, result)
}

// decodeResult reads a Bot API answer: its result into result, or its
// error classified.
func decodeResult(api platform.API, resp *platform.Response, result any) error {
	var r TelegramResponse
	if resp.Status != http.StatusOK {
		// An error answer's body, when it is the Bot API's, says more.
		_ = json.Unmarshal(resp.Body, &r)
		return classify(resp, r)
	}
	if err := api.Decode(resp, &r); err != nil {
		return err
	}
	if !r.OK {
		return classify(resp, r)
	}
	if err := json.Unmarshal(r.Result, result); err != nil {
		return &message.SendError{Class: message.FailUnknown, Status: resp.Status, Reason: "answer does not decode", Err: err}
	}
	return nil
}

// messageGone are the Bot API's descriptions of an edit or a delete of a
// message that no longer exists; notModified the one of an edit to the text
// the message has already (a retried edit whose first try went through).
// These two errors have no code or parameter of their own.
var messageGone = map[string]bool{
	"Bad Request: message to edit not found":   true,
	"Bad Request: message to delete not found": true,
}

const notModified = "Bad Request: message is not modified"

// classify maps a Bot API error to a SendError. It reads error_code and
// parameters, and the description only for what only it tells (a missing
// message, messageGone); otherwise it is only carried as the reason.
func classify(resp *platform.Response, r TelegramResponse) *message.SendError {
	code := cmp.Or(r.ErrorCode, resp.Status)
	se := platform.StatusFailure(code, resp.Header)
	se.Status = resp.Status
	if r.Description != "" {
		se.Reason = platform.Reason(r.Description)
	}
	var params TelegramResponseParameters
	if r.Parameters != nil {
		params = *r.Parameters
	}
	switch {
	case code == http.StatusTooManyRequests && params.RetryAfter > 0:
		se.RetryAfter = platform.Seconds(params.RetryAfter)
	case code == http.StatusBadRequest && params.MigrateToChatID != 0:
		se.Class = message.FailNotFound
		se.Reason = "group migrated to a supergroup, migrate_to_chat_id " + strconv.FormatInt(params.MigrateToChatID, 10)
	case code == http.StatusBadRequest && messageGone[r.Description]:
		// An edit or a delete of a message that is gone: the Bot API
		// tells it by its description alone.
		se.Class = message.FailNotFound
	case resp.Status >= 500:
		se.Class = message.FailUnknown
	}
	return se
}

// MaxDownload is the largest file the Bot API serves to a bot (20 MB).
const MaxDownload = 20 << 20

// Download fetches a file a person sent (a.PlatformID is its file_id):
// getFile for its path, then the file itself, at most max bytes. A file the
// Bot API will not serve (over 20 MB, or an id it does not know) is
// platform.ErrFileTooLarge or platform.ErrFileUnavailable.
func (c *Client) Download(ctx context.Context, a message.Attachment, max int64) ([]byte, error) {
	max = min(max, MaxDownload)
	if a.Size > max {
		return nil, platform.ErrFileTooLarge
	}
	var f TelegramFile
	if err := c.call(ctx, "getFile", TelegramGetFile{FileID: a.PlatformID}, &f); err != nil {
		var se *message.SendError
		if errors.As(err, &se) && se.Class == message.FailInvalidPayload {
			return nil, fmt.Errorf("telegram getFile: %w: %w", platform.ErrFileUnavailable, err)
		}
		return nil, fmt.Errorf("telegram getFile: %w", err)
	}
	switch {
	case f.FileSize > max:
		return nil, platform.ErrFileTooLarge
	case f.FilePath == "" || strings.Contains(f.FilePath, "..") || strings.ContainsAny(f.FilePath, "?#\\"):
		return nil, fmt.Errorf("%w: getFile gave no usable file_path", platform.ErrFileUnavailable)
	}
	api := platform.API{Name: "Bot API", BaseURL: c.BaseURL, DefaultBaseURL: DefaultBaseURL, Token: c.Token, HTTP: c.HTTP}
	return api.GetFile(ctx, "/file/bot"+c.Token+"/"+strings.TrimLeft(f.FilePath, "/"), nil, max)
}
