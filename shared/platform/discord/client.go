package discord

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

const (
	// DefaultBaseURL is the HTTP API root, version 10.
	DefaultBaseURL = "https://discord.com/api/v10"
	// PlatformLimit is the most content one message may hold, in code
	// points: Discord's API counts a string's length in code points (it is
	// Python 3), and refuses more with 50035.
	PlatformLimit = 2000
	// TextLimit is the most of Parley's text one message holds, in code
	// points: half of PlatformLimit, because Inert escapes markdown with a
	// backslash per character and so at most doubles a text. Parley's
	// planner splits by the text it is given, not by what the adapter makes
	// of it; this is the bound under which every text fits once escaped.
	TextLimit = PlatformLimit / 2
	// MaxFollowups is how many follow-up messages one interaction may have
	// where Discord limits them (an app installed for a user, outside a
	// server; 40094 past it). Later bubbles go as channel messages.
	MaxFollowups = 5
	// MaxNonce is the longest nonce Discord takes, in characters.
	MaxNonce = 25
	// TokenMargin is how long before its end an interaction's token is no
	// longer used: the call must reach Discord while it still answers.
	TokenMargin = time.Minute
	// userAgent is what Discord asks API clients to send: "DiscordBot
	// ($url, $version)".
	userAgent = "DiscordBot (https://github.com/parleyhq/parley, 1)"
)

// Client is the send half of the Discord adapter. Its zero value with a
// Token and an ApplicationID is ready to use, and it is safe for concurrent
// use.
//
// A reply answers its interaction while the interaction's token lives
// (message.ReplyContext, TokenLife from the interaction, less TokenMargin):
// the first bubble of a command's reply replaces its "… is thinking"
// response (PATCH /webhooks/{app}/{token}/messages/@original), the next
// ones are follow-ups (POST /webhooks/{app}/{token}?wait=true), at most
// MaxFollowups of them, counted by Outgoing.Sequence (a press's reply has
// no response of its own to replace: all its bubbles are follow-ups). Past
// that, after the token's life, and without one (a proactive event), a
// bubble is a channel message (POST /channels/{channel}/messages) with the
// bot token and a nonce from Outgoing.IdempotencyKey (enforce_nonce), a
// reply to Outgoing.ReplyTo when set. A token Discord no longer honours
// (10015, 10062, 50027, 401) or whose follow-ups are used up (40094) is
// refused before anything is posted, so the same Send posts the channel
// message instead.
//
// Every message goes with allowed_mentions {"parse":[]}: nothing the agent
// writes notifies anyone. Its text goes through Inert unless TrustMarkup.
type Client struct {
	// Token is the bot token. Required. It travels in the Authorization
	// header of channel calls only, never in a URL or an error.
	Token string
	// ApplicationID is the application the bot belongs to: the account of
	// every thread it may post into (others are refused without a call) and
	// the first part of every interaction webhook's path. Required.
	ApplicationID string
	// BaseURL is the HTTP API root. Defaults to DefaultBaseURL.
	BaseURL string
	// HTTP sends the requests. Defaults to a client with a 30-second
	// timeout; deadlines normally come from ctx.
	HTTP *http.Client
	// TrustMarkup sends the text as written, so Discord renders the agent's
	// markdown (DISCORD_TRUST_AGENT_MARKUP). Defaults to false: markdown is
	// escaped (Inert). Mentions never notify either way.
	TrustMarkup bool
	// Now is the clock that judges a token's freshness. Defaults to
	// time.Now.
	Now func() time.Time
	// CDNBaseURL is where attachments' bytes are fetched
	// (DISCORD_CDN_BASE_URL). Defaults to DefaultCDNBaseURL.
	CDNBaseURL string
}

// route is where one bubble goes.
type route int

const (
	routeChannel  route = iota // POST /channels/{channel}/messages, bot token
	routeOriginal              // PATCH /webhooks/{app}/{token}/messages/@original
	routeFollowup              // POST /webhooks/{app}/{token}?wait=true
)

// Send posts m's text (or question) as the type says: see Client. The
// receipt holds the message's id. Failures are *message.SendError:
//
//	429                               rate_limit, RetryAfter: the body's retry_after (float
//	                                  seconds) or Retry-After, the longer
//	5xx                               unknown: an edge's 5xx may come after the message was posted
//	401 / 40001, 50014                auth (the bot token)
//	403 / 50001, 50013, 50007, 50005… permission
//	10003, 10008, 10004, 10013        not_found (channel, message, guild, user)
//	50035, 50006, 50109, 400          invalid_payload
//	20016, 20028, 20029               rate_limit (slowmode, a channel's or guild's write limit)
//	404 without a code                auth: the base URL is wrong
//	no answer after the request left  unknown (see platform.Do)
//
// On an interaction webhook, 401, 10015, 10062 and 50027 (the token no
// longer answers) and 40094 (no follow-ups left) fall back to a channel
// message in the same Send; nothing was posted through the token.
func (c *Client) Send(ctx context.Context, m message.Outgoing) (message.Receipt, error) {
	return c.post(ctx, m)
}

// Ask posts a question message (message.ContentPrompt) with its controls:
// see components. It goes where Send's text would.
func (c *Client) Ask(ctx context.Context, m message.Outgoing) (message.Receipt, error) {
	if m.Content.Prompt == nil {
		return message.Receipt{}, fmt.Errorf("discord ask: %w", invalid("content is not a question"))
	}
	return c.post(ctx, m)
}

func (c *Client) post(ctx context.Context, m message.Outgoing) (message.Receipt, error) {
	if err := c.checkOut(m); err != nil {
		return message.Receipt{}, fmt.Errorf("discord send: %w", err)
	}
	msg, err := c.render(m.Content)
	if err != nil {
		return message.Receipt{}, fmt.Errorf("discord send: %w", err)
	}
	return c.deliver(ctx, m, msg)
}

// checkOut refuses, without a call, what check refuses and a reply to a
// message that is no snowflake.
func (c *Client) checkOut(m message.Outgoing) error {
	if err := c.check(m.Thread); err != nil {
		return err
	}
	if m.ReplyTo != "" && !snowflake(m.ReplyTo) {
		return invalid("the message replied to is not a snowflake")
	}
	return nil
}

// deliver sends msg where m goes (route), with files (multipart
// files[n] parts, msg's attachments naming them) when given.
func (c *Client) deliver(ctx context.Context, m message.Outgoing, msg DiscordMessageSend, files ...platform.FormPart) (message.Receipt, error) {
	r, token := c.route(m)
	if r != routeChannel {
		var rc message.Receipt
		var err error
		var gone bool
		if r == routeOriginal {
			rc, gone, err = c.webhook(ctx, http.MethodPatch, "/messages/@original", token, msg, files...)
			var se *message.SendError
			if errors.As(err, &se) && se.Class == message.FailNotFound {
				// The response was deleted (a live preview cleared, the
				// reply beginning with a question): nothing was edited, and
				// a follow-up answers instead.
				rc, gone, err = c.webhook(ctx, http.MethodPost, "?wait=true", token, msg, files...)
				err = wrap("interaction follow-up", err)
			} else {
				err = wrap("edit of the interaction's response", err)
			}
		} else {
			rc, gone, err = c.webhook(ctx, http.MethodPost, "?wait=true", token, msg, files...)
			err = wrap("interaction follow-up", err)
		}
		if !gone {
			return rc, err
		}
	}
	if key := m.IdempotencyKey; key != "" {
		msg.Nonce, msg.EnforceNonce = Nonce(key), true
	}
	if m.ReplyTo != "" {
		// Still sent if that message is gone (fail_if_not_exists false).
		msg.MessageReference = &DiscordMessageReference{MessageID: m.ReplyTo, FailIfNotExists: false}
	}
	resp, err := c.call(ctx, http.MethodPost, "/channels/"+m.Thread.Chat+"/messages", true, msg, files...)
	rc, err := c.receipt(resp, err, false)
	return rc, wrap("channel message", err)
}

// route says where m goes, and with which interaction token.
func (c *Client) route(m message.Outgoing) (route, string) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	if !m.ReplyContext.Fresh(now(), TokenMargin) || m.Sequence < 0 {
		return routeChannel, ""
	}
	callback, token := splitReplyToken(m.ReplyContext.Token)
	followup := m.Sequence // its number among the interaction's follow-ups
	switch callback {
	case DiscordCallbackDeferredChannelMessage:
		if m.Sequence == 0 {
			return routeOriginal, token
		}
	case DiscordCallbackDeferredUpdateMessage:
		// The original response is the pressed message: never replaced.
		followup = m.Sequence + 1
	default:
		return routeChannel, ""
	}
	if followup <= MaxFollowups {
		return routeFollowup, token
	}
	return routeChannel, ""
}

// webhook calls an interaction webhook: method on
// /webhooks/{app}/{token}<suffix>. gone reports an answer that proves
// nothing was posted and that the token cannot do it (see Send).
func (c *Client) webhook(ctx context.Context, method, suffix, token string, msg DiscordMessageSend, files ...platform.FormPart) (rc message.Receipt, gone bool, err error) {
	path := "/webhooks/" + c.ApplicationID + "/" + url.PathEscape(token) + suffix
	resp, err := c.call(ctx, method, path, false, msg, files...)
	if err != nil {
		return message.Receipt{}, false, err
	}
	if resp.Status != http.StatusOK {
		se, gone := classify(resp, true)
		return message.Receipt{}, gone, se
	}
	rc, err = c.receipt(resp, nil, true)
	return rc, false, err
}

// receipt reads a message answer into its id, or classifies the failure.
func (c *Client) receipt(resp *platform.Response, err error, webhook bool) (message.Receipt, error) {
	if err != nil {
		return message.Receipt{}, err
	}
	if resp.Status != http.StatusOK {
		se, _ := classify(resp, webhook)
		return message.Receipt{}, se
	}
	var m DiscordMessage
	if err := c.api().Decode(resp, &m); err != nil {
		return message.Receipt{}, err
	}
	if !snowflake(m.ID) {
		// Accepted, so probably posted, but there is no receipt to keep.
		return message.Receipt{}, &message.SendError{Class: message.FailUnknown, Status: resp.Status, Reason: "answer has no message id"}
	}
	return message.Receipt{MessageIDs: []string{m.ID}}, nil
}

// Acknowledge answers a press. Discord has had its answer already: the
// webhook's DEFERRED_UPDATE_MESSAGE stops the spinner. A notice goes to the
// person who pressed alone, as an ephemeral follow-up on the press's token;
// an empty notice sends nothing. A press whose token is past its life can
// show no notice (a channel message is everybody's): invalid_payload.
func (c *Client) Acknowledge(ctx context.Context, ev message.Event, notice string) error {
	if err := c.check(ev.Thread); err != nil {
		return fmt.Errorf("discord acknowledge: %w", err)
	}
	if notice == "" {
		return nil
	}
	token, ok := c.pressToken(ev)
	if !ok {
		return fmt.Errorf("discord acknowledge: %w", invalid("the press's interaction token has expired: a notice to one person goes only through it"))
	}
	msg := DiscordMessageSend{Content: c.text(notice), AllowedMentions: noMentions(), Components: []DiscordComponent{}, Flags: DiscordFlagEphemeral}
	_, _, err := c.webhook(ctx, http.MethodPost, "?wait=true", token, msg)
	return wrap("ephemeral follow-up", err)
}

// Edit changes a message Parley sent in t (PATCH
// /channels/{channel}/messages/{id}, bot token) to c: new text, or a
// question with its controls as they are now (a closed one has none).
// Failures are classified like Send's (10008: not_found; 50005: another
// user's message, permission).
func (c *Client) Edit(ctx context.Context, t message.Thread, messageID string, ct message.Content) error {
	if err := c.check(t); err != nil {
		return fmt.Errorf("discord edit: %w", err)
	}
	if !snowflake(messageID) {
		return fmt.Errorf("discord edit: %w", invalid("the message id is not a snowflake"))
	}
	msg, err := c.render(ct)
	if err != nil {
		return fmt.Errorf("discord edit: %w", err)
	}
	resp, err := c.call(ctx, http.MethodPatch, "/channels/"+t.Chat+"/messages/"+messageID, true, msg)
	_, err = c.receipt(resp, err, false)
	return wrap("message edit", err)
}

// EditPressed changes the message press came from to c through the press's
// own interaction token (PATCH /webhooks/{app}/{token}/messages/@original:
// a press's original is the message its control is on), which reaches it
// where the bot is no member of the channel. A press whose token is past
// its life cannot: invalid_payload, and Edit is left to try.
func (c *Client) EditPressed(ctx context.Context, press message.Event, ct message.Content) error {
	if err := c.check(press.Thread); err != nil {
		return fmt.Errorf("discord edit pressed: %w", err)
	}
	token, ok := c.pressToken(press)
	if !ok || press.Press == nil {
		return fmt.Errorf("discord edit pressed: %w", invalid("the press's interaction token has expired"))
	}
	msg, err := c.render(ct)
	if err != nil {
		return fmt.Errorf("discord edit pressed: %w", err)
	}
	_, _, err = c.webhook(ctx, http.MethodPatch, "/messages/@original", token, msg)
	return wrap("pressed message edit", err)
}

// pressToken is the interaction token of press, while it lives.
func (c *Client) pressToken(press message.Event) (string, bool) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	if !press.ReplyContext.Fresh(now(), TokenMargin) {
		return "", false
	}
	callback, token := splitReplyToken(press.ReplyContext.Token)
	return token, callback != 0
}

// check refuses, without a call, a thread of another application, one
// without a chat, and a chat that is not a channel id (it would change the
// call's path).
func (c *Client) check(t message.Thread) error {
	if c.ApplicationID == "" {
		return &message.SendError{Class: message.FailAuth, Reason: "no application id configured"}
	}
	if err := platform.CheckThread(c.ApplicationID, t); err != nil {
		return err
	}
	if !snowflake(t.Chat) || t.Thread != "" {
		return invalid("the chat is not a channel id (a Discord thread is a channel)")
	}
	return nil
}

// render is c's message: its text made inert, its controls, and no
// mentions.
func (c *Client) render(ct message.Content) (DiscordMessageSend, error) {
	msg := DiscordMessageSend{AllowedMentions: noMentions(), Components: []DiscordComponent{}}
	switch ct.Kind() {
	case message.ContentText:
		msg.Content = c.text(ct.Text)
	case message.ContentPrompt:
		comps, err := components(*ct.Prompt)
		if err != nil {
			return DiscordMessageSend{}, err
		}
		msg.Content, msg.Components = c.text(closedFit(*ct.Prompt)), comps
	default:
		return DiscordMessageSend{}, invalid("content is neither text nor a question")
	}
	return msg, nil
}

// closedFit is p's text, with a closed question's summary of its answers
// (Parley's own, as long as the answers) cut to TextLimit: an open
// question's text fits already, or the planner refused it.
func closedFit(p message.Prompt) string {
	if !p.Closed() {
		return p.Text
	}
	return platform.Fit(p.Text, TextLimit, message.CountRunes)
}

func (c *Client) text(s string) string {
	if c.TrustMarkup {
		return s
	}
	return Inert(s)
}

func noMentions() *DiscordAllowedMentions {
	return &DiscordAllowedMentions{Parse: []string{}, RepliedUser: false}
}

// Nonce is a channel message's nonce for an idempotency key: hex of its
// SHA-256, cut to MaxNonce characters (100 bits: no two units of Parley
// share one).
func Nonce(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])[:MaxNonce]
}

func (c *Client) api() platform.API {
	return platform.API{Name: "Discord API", BaseURL: c.BaseURL, DefaultBaseURL: DefaultBaseURL, Token: c.Token, HTTP: c.HTTP}
}

// call sends body as JSON with method to path below the API's root, with
// the bot token when bot (channel calls; an interaction webhook's token is
// in its path, and needs no other). With files, the body is
// multipart/form-data: body as payload_json, then the files' parts.
// Errors never show the URL, which may hold an interaction token.
func (c *Client) call(ctx context.Context, method, path string, bot bool, body any, files ...platform.FormPart) (*platform.Response, error) {
	header := http.Header{"User-Agent": {userAgent}}
	if bot {
		header.Set("Authorization", "Bot "+c.Token)
	}
	if len(files) == 0 {
		return c.api().SendJSON(ctx, method, path, header, body)
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, &message.SendError{Class: message.FailInvalidPayload, Reason: "arguments do not encode", Err: err}
	}
	parts := append([]platform.FormPart{{Field: "payload_json", Type: "application/json", Value: payload}}, files...)
	return c.api().SendForm(ctx, method, path, header, parts)
}

// classify maps a Discord error answer to a SendError (see Send). On an
// interaction webhook, gone reports a refusal of the token itself.
func classify(resp *platform.Response, webhook bool) (se *message.SendError, gone bool) {
	var e DiscordError
	_ = json.Unmarshal(resp.Body, &e) // an edge's page is no JSON: its status says it
	se = platform.StatusFailure(resp.Status, resp.Header)
	reason := "HTTP " + strconv.Itoa(resp.Status)
	if e.Code != 0 {
		reason += " code " + strconv.Itoa(e.Code)
	}
	if e.Message != "" {
		reason += ": " + e.Message
	}
	switch {
	case resp.Status == http.StatusTooManyRequests:
		se.RetryAfter = retryAfter(e, resp.Header)
		if e.Global || resp.Header.Get("X-RateLimit-Global") == "true" {
			reason += " (global)"
		}
		if scope := resp.Header.Get("X-RateLimit-Scope"); scope != "" {
			reason += " (scope " + scope + ")"
		}
	case resp.Status >= 500:
		se.Class = message.FailUnknown
	case webhook && (resp.Status == http.StatusUnauthorized || e.Code == 10015 || e.Code == 10062 || e.Code == 50027 || e.Code == 40094):
		gone = true
	default:
		if cl, ok := codeClasses[e.Code]; ok {
			se.Class = cl
			if cl == message.FailRateLimit {
				se.RetryAfter = retryAfter(e, resp.Header)
			}
		}
	}
	se.Reason = platform.Reason(reason)
	return se, gone
}

// codeClasses are Discord's JSON error codes Parley tells apart
// (https://discord.com/developers/docs/topics/opcodes-and-status-codes).
var codeClasses = map[int]message.FailureClass{
	// The token is wrong or revoked.
	40001: message.FailAuth, // Unauthorized
	50014: message.FailAuth, // Invalid authentication token
	// The bot may not post there, or change that message.
	50001:  message.FailPermission, // Missing access
	50013:  message.FailPermission, // Missing permissions
	50007:  message.FailPermission, // Cannot send messages to this user
	50008:  message.FailPermission, // Cannot send messages in a non-text channel
	50005:  message.FailPermission, // Cannot edit a message authored by another user
	50024:  message.FailPermission, // Cannot execute action on this channel type
	50083:  message.FailPermission, // Operation on an archived thread
	160005: message.FailPermission, // Thread is locked
	// Gone.
	10003: message.FailNotFound, // Unknown channel
	10004: message.FailNotFound, // Unknown guild
	10008: message.FailNotFound, // Unknown message
	10013: message.FailNotFound, // Unknown user
	// The message itself is refused.
	50035:  message.FailInvalidPayload, // Invalid form body (a limit, a field)
	50006:  message.FailInvalidPayload, // Cannot send an empty message
	50109:  message.FailInvalidPayload, // The request body contains invalid JSON
	40005:  message.FailInvalidPayload, // Request entity too large (a file over the upload limit)
	200000: message.FailInvalidPayload, // Blocked by the server's AutoMod
	// Slow down.
	20016: message.FailRateLimit, // Slowmode
	20028: message.FailRateLimit, // The channel's write rate limit
	20029: message.FailRateLimit, // The server's write rate limit
}

// retryAfter is the longer of the body's retry_after (float seconds, to
// the millisecond) and the Retry-After header, capped at a day.
func retryAfter(e DiscordError, h http.Header) time.Duration {
	d := platform.RetryAfter(h, time.Now())
	if s := e.RetryAfter; s > 0 && !math.IsInf(s, 0) && !math.IsNaN(s) {
		body := 24 * time.Hour
		if s < body.Seconds() {
			// Discord writes milliseconds: 64.57 is 64.570 s, not a
			// float's 64.569999999.
			body = time.Duration(math.Round(s*1000)) * time.Millisecond
		}
		d = max(d, body)
	}
	return d
}

func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("discord %s: %w", what, err)
}
