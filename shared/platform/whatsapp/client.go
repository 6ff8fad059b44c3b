package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

const (
	// GraphVersion is the Graph API version Parley calls: v25.0 (released
	// 18 February 2026) is the newest with a published end of life, 29 July
	// 2028. v21.0 ends on 21 January 2027.
	GraphVersion = "v25.0"
	// DefaultBaseURL is the Graph API root, with its version.
	DefaultBaseURL = "https://graph.facebook.com/" + GraphVersion
	// BaseURLEnv names the environment variable a function's config reads
	// into Client.BaseURL (the local runner points it at a fake API).
	BaseURLEnv = "WHATSAPP_API_BASE_URL"
	// TextLimit is the most a text message's body may hold: 4096
	// characters, counted in UTF-16 code units. Meta does not say how it
	// counts; UTF-16 units are never fewer than code points, so a text
	// within this limit is within Meta's either way.
	TextLimit = 4096
	// tagLimit bounds biz_opaque_callback_data: 512 characters.
	tagLimit = 512
)

var (
	_ platform.Sender       = (*Client)(nil)
	_ platform.Asker        = (*Client)(nil)
	_ platform.Acknowledger = (*Client)(nil)
)

// Client is the send half of the WhatsApp adapter: it sends text, reply
// buttons and list messages with POST /<phone number id>/messages. Its zero
// value with a Token and a PhoneNumberID is ready to use, and it is safe for
// concurrent use.
//
// WhatsApp cannot edit a sent message, has no idempotency key, and no way to
// look a message up: an unknown outcome is held or resent by the delivery
// policy (ADR 0003). Its typing indicator is shown for the message being
// answered, which a thread does not name: it is a MessageTyper, no Typer.
type Client struct {
	// Token is a system user's access token with whatsapp_business_messaging
	// for the number. Required. It travels in the Authorization header,
	// never in a URL or an error.
	Token string
	// PhoneNumberID is the business phone number Parley sends from
	// (WHATSAPP_PHONE_NUMBER_ID): a thread of any other number is refused
	// without a call, so the token, which may reach every number of its
	// business, reaches this one only.
	PhoneNumberID string
	// BaseURL is the Graph API root with its version. Defaults to
	// DefaultBaseURL.
	BaseURL string
	// HTTP sends the requests. Defaults to a client with a 30-second
	// timeout; deadlines normally come from ctx.
	HTTP *http.Client
	// TrustMarkup sends the agent's text as written, so WhatsApp renders
	// its *bold*, _italic_, ~strike~, `code` and > quotes. Defaults to
	// false: the markers are replaced with look-alikes that render as
	// written (WHATSAPP_TRUST_AGENT_MARKUP; see inert).
	TrustMarkup bool
	// WindowTemplate, when set, is what a bubble goes as outside the
	// person's customer-service window (WHATSAPP_WINDOW_TEMPLATE); unset,
	// such a bubble fails window_closed without a call.
	WindowTemplate *Template
	// Now is the clock that judges the window. Defaults to time.Now.
	Now func() time.Time
}

// Send sends m to m.Thread.Chat (a wa_id) as a text message, quoting
// m.ReplyTo when set, with link previews off and the text inert; a question
// (a prompt) goes as Ask sends it. m.IdempotencyKey goes as
// biz_opaque_callback_data, which Graph echoes in the message's statuses
// (Status.Tag): it dedupes nothing. The receipt holds the new message's
// wamid. Failures are *message.SendError, classified by Graph's error code
// (graphCodes), else by the HTTP status:
//
//	190, 0, 102, 104                   auth
//	10, 3, 200-299, 368, 131005 …      permission
//	131047 (24-hour window closed)     permission, the reason names templates
//	131026 (undeliverable)             permission
//	33, 100 with subcode 33            not_found (no such phone number id)
//	100, 131008, 131009, 131021 …      invalid_payload
//	130429, 131056, 80007, 4, 131048   rate_limit, RetryAfter: Retry-After, else
//	                                   X-Business-Use-Case-Usage, else 1 s,
//	                                   6 s, 1 min, 1 min, 10 min
//	131057 (maintenance mode)          transient
//	1, 2, 131000, 131016               unknown: Meta does not say whether the
//	                                   message went out
//	HTTP 5xx, no answer after the      unknown (ADR 0003): no idempotency key
//	request left                       exists, so a resend may duplicate
//	another code                       by HTTP status: 401 auth, 403 permission,
//	                                   4xx invalid_payload (transient when
//	                                   Graph marks it is_transient), 5xx unknown
func (c *Client) Send(ctx context.Context, m message.Outgoing) (message.Receipt, error) {
	if closed, err := c.outsideWindow(ctx, m); closed {
		return err.receipt, err.err
	}
	if m.Content.Kind() == message.ContentPrompt {
		return c.Ask(ctx, m)
	}
	rc, err := c.send(ctx, m, func(msg *WhatsAppSendMessage) error {
		text, err := platform.TextOf(m.Content)
		if err != nil {
			return err
		}
		return textMessage(text, c.markup, msg)
	})
	if err != nil {
		return message.Receipt{}, fmt.Errorf("whatsapp send text: %w", err)
	}
	return rc, nil
}

// Ask sends a question (m.Content.Prompt) as reply buttons, a list message,
// or its numbered text form, as renderPrompt lays it out; a press of one of
// its controls comes back as a message.KindAnswer whose Press.Data is the
// control's Choice.Data. Failures are classified as Send's.
func (c *Client) Ask(ctx context.Context, m message.Outgoing) (message.Receipt, error) {
	if closed, err := c.outsideWindow(ctx, m); closed {
		return err.receipt, err.err
	}
	rc, err := c.send(ctx, m, func(msg *WhatsAppSendMessage) error {
		if m.Content.Kind() != message.ContentPrompt {
			return invalid("content is not a question")
		}
		return renderPrompt(*m.Content.Prompt, c.markup, msg)
	})
	if err != nil {
		return message.Receipt{}, fmt.Errorf("whatsapp send question: %w", err)
	}
	return rc, nil
}

// Acknowledge answers a press. A reply button or a list row needs no
// answer (WhatsApp shows no spinner), so an empty notice sends nothing; a
// notice is sent to the chat as a text message, since WhatsApp has no
// message shown to one person alone. Failures are classified as Send's.
func (c *Client) Acknowledge(ctx context.Context, ev message.Event, notice string) error {
	if err := c.checkThread(ev.Thread); err != nil {
		return fmt.Errorf("whatsapp acknowledge: %w", err)
	}
	if notice == "" {
		return nil
	}
	_, err := c.send(ctx, message.Outgoing{Thread: ev.Thread}, func(msg *WhatsAppSendMessage) error {
		return textMessage(notice, c.markup, msg)
	})
	if err != nil {
		return fmt.Errorf("whatsapp acknowledge: %w", err)
	}
	return nil
}

// React sets the business's reaction to the message messageID (a wamid)
// in t with a reaction message: r.Emoji, replacing the one it set before
// ("" takes it back). Failures are classified as Send's.
func (c *Client) React(ctx context.Context, t message.Thread, messageID string, r message.React) error {
	if messageID == "" {
		return fmt.Errorf("whatsapp send reaction: %w", invalid("no message to react to"))
	}
	_, err := c.send(ctx, message.Outgoing{Thread: t}, func(msg *WhatsAppSendMessage) error {
		msg.Type, msg.Reaction = WhatsAppTypeReaction, &WhatsAppReaction{MessageID: messageID, Emoji: r.Emoji}
		return nil
	})
	var se *message.SendError
	if errors.As(err, &se) && se.Class == message.FailUnknown && se.Status == http.StatusOK {
		err = nil // a reaction has no receipt to keep: accepted is enough
	}
	if err != nil {
		return fmt.Errorf("whatsapp send reaction: %w", err)
	}
	return nil
}

// markup is how the agent's text reaches WhatsApp: inert, unless trusted.
func (c *Client) markup(s string) string {
	if c.TrustMarkup {
		return s
	}
	return inert(s)
}

// checkThread refuses, before any call, a thread this sender cannot post
// into: one of another phone number, one without a chat, or one inside a
// thread (WhatsApp chats have none).
func (c *Client) checkThread(t message.Thread) error {
	if err := platform.CheckThread(c.PhoneNumberID, t); err != nil {
		return err
	}
	if t.Thread != "" {
		return invalid("WhatsApp chats have no threads")
	}
	if !digits(t.Account) {
		// It goes into the URL's path.
		return invalid("the account is not a phone number id")
	}
	return nil
}

// send checks m's thread, builds the call with fill, posts it and reads the
// receipt.
func (c *Client) send(ctx context.Context, m message.Outgoing, fill func(*WhatsAppSendMessage) error) (message.Receipt, error) {
	if err := c.checkThread(m.Thread); err != nil {
		return message.Receipt{}, err
	}
	msg := WhatsAppSendMessage{MessagingProduct: "whatsapp", RecipientType: "individual", To: m.Thread.Chat}
	if err := fill(&msg); err != nil {
		return message.Receipt{}, err
	}
	if m.ReplyTo != "" {
		msg.Context = &WhatsAppReplyTo{MessageID: m.ReplyTo}
	}
	if m.IdempotencyKey != "" && units(m.IdempotencyKey) <= tagLimit {
		// Echoed in the message's statuses (Status.Tag), which name the
		// unit by it. A longer key goes untagged: its statuses then match
		// no unit, and the send itself is unharmed.
		msg.BizOpaqueCallbackData = m.IdempotencyKey
	}
	api, resp, err := c.post(ctx, m.Thread, msg)
	if err != nil {
		return message.Receipt{}, err
	}
	var r WhatsAppSendResponse
	if err := api.Decode(resp, &r); err != nil {
		return message.Receipt{}, err
	}
	if len(r.Messages) == 0 || r.Messages[0].ID == "" {
		// Accepted, so probably sent, but there is no receipt to keep.
		return message.Receipt{}, &message.SendError{Class: message.FailUnknown, Status: resp.Status, Reason: "answer has no messages[0].id"}
	}
	return message.Receipt{MessageIDs: []string{r.Messages[0].ID}}, nil
}

// post posts body to t's number's messages edge, and classifies an answer
// that is no success.
func (c *Client) post(ctx context.Context, t message.Thread, body any) (platform.API, *platform.Response, error) {
	api := platform.API{Name: "Graph API", BaseURL: c.BaseURL, DefaultBaseURL: DefaultBaseURL, Token: c.Token, HTTP: c.HTTP}
	header := http.Header{"Authorization": {"Bearer " + c.Token}}
	resp, err := api.PostJSON(ctx, "/"+t.Account+"/messages", header, body)
	if err != nil {
		return api, nil, err
	}
	if resp.Status < 200 || resp.Status > 299 {
		return api, nil, classify(resp)
	}
	return api, resp, nil
}

func invalid(reason string) *message.SendError {
	return &message.SendError{Class: message.FailInvalidPayload, Reason: reason}
}
