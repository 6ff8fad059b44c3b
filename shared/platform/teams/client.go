package teams

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
	"sync"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/urlfetch"
)

const (
	// DefaultServiceURL is the connector root for a conversation no
	// inbound activity named one for (a proactive send, an edit): the
	// public cloud's global Teams endpoint.
	DefaultServiceURL = "https://smba.trafficmanager.net/teams"
	// MaxPayload is the most one activity may hold: 40 KB, counted as
	// UTF-16 (Teams answers 413 MessageSizeTooBig past it).
	MaxPayload = 40 << 10
	// TextLimit is the most of Parley's text one message holds, in UTF-16
	// units: with every character escaped in JSON (a quote, a backslash:
	// two characters each), a message at the limit still fits MaxPayload.
	TextLimit = 7000
)

// Client is the send half of the Teams adapter. It is safe for concurrent
// use.
//
// A message goes to the conversation (a channel thread: the channel's
// conversation id with ";messageid=" and its root) through the connector
// root the inbound activity named (Outgoing.ReplyContext, while fresh and
// https), else ServiceURL: POST {root}/v3/conversations/{id}/activities,
// with an app token from Entra. Text goes with textFormat plain and no
// entities, so nothing renders and nobody is mentioned, unless
// TrustMarkup. Questions are Adaptive Cards (see card).
type Client struct {
	// AppID is the bot's app id: the client id of its token and the
	// account of every thread it may post into. Required.
	AppID string
	// ServiceURL is the connector root for sends no activity named one
	// for. Defaults to DefaultServiceURL.
	ServiceURL string
	// TrustMarkup sends the agent's text as markdown
	// (TEAMS_TRUST_AGENT_MARKUP). Mentions never notify either way.
	TrustMarkup bool
	// HTTP sends the requests. Defaults to a client with a 30-second
	// timeout.
	HTTP *http.Client
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// Fetch is the rules a file's URL from outside (a SharePoint
	// downloadUrl) is fetched under (see Download): the zero value is
	// urlfetch's, HTTPS to public addresses only, and nothing in Parley
	// sets it. Only tests set it, to allow their loopback TLS server
	// (AllowPrefixes, AllowPorts, RootCAs).
	Fetch urlfetch.Options

	tokens   *tokens
	fetchers sync.Map // max bytes → *urlfetch.Fetcher
}

// NewClient returns the client of the bot appID, whose app token comes
// from tokenURL with secret.
func NewClient(appID, secret, tokenURL, serviceURL string, c *http.Client) *Client {
	cl := &Client{AppID: appID, ServiceURL: serviceURL, HTTP: c}
	cl.tokens = newTokens(appID, secret, tokenURL, c, cl.now)
	return cl
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Send posts m's text. The receipt holds the new activity's id. Failures
// are *message.SendError, from the connector's documented codes:
//
//	429 Throttled                            rate_limit, Retry-After
//	412 PreconditionFailed                   transient (concurrent operations on the conversation)
//	401, BotNotRegistered                    auth (the cached token is dropped)
//	403 ConversationBlockedByUser,
//	    BotNotInConversationRoster,
//	    BotDisabledByAdmin                   permission
//	404 ConversationNotFound                 not_found
//	400, 413 MessageSizeTooBig               invalid_payload
//	5xx (502, 504 included)                  unknown: the activity may have been posted (ADR 0003)
//	no answer after the request left         unknown
//
// A token Entra refuses is auth; one it cannot give now is transient:
// nothing was posted.
func (c *Client) Send(ctx context.Context, m message.Outgoing) (message.Receipt, error) {
	if err := c.check(m.Thread); err != nil {
		return message.Receipt{}, wrap("send", err)
	}
	text, err := platform.TextOf(m.Content)
	if err != nil {
		return message.Receipt{}, wrap("send", err)
	}
	act := c.textActivity(text)
	act.ReplyToID = m.ReplyTo
	return c.post(ctx, m, act)
}

// Ask posts a question as an Adaptive Card (see card).
func (c *Client) Ask(ctx context.Context, m message.Outgoing) (message.Receipt, error) {
	if err := c.check(m.Thread); err != nil {
		return message.Receipt{}, wrap("ask", err)
	}
	if m.Content.Prompt == nil {
		return message.Receipt{}, wrap("ask", invalid("content is not a question"))
	}
	act, err := cardActivity(*m.Content.Prompt)
	if err != nil {
		return message.Receipt{}, wrap("ask", err)
	}
	return c.post(ctx, m, act)
}

func (c *Client) post(ctx context.Context, m message.Outgoing, act TeamsActivity) (message.Receipt, error) {
	root := c.root(m.ReplyContext)
	resp, err := c.call(ctx, http.MethodPost, root, "/v3/conversations/"+url.PathEscape(Conversation(m.Thread))+"/activities", act)
	if err != nil {
		return message.Receipt{}, wrap("send", err)
	}
	var rr TeamsResourceResponse
	if err := (platform.API{Name: "Bot Connector"}).Decode(resp, &rr); err != nil {
		return message.Receipt{}, wrap("send", err)
	}
	if rr.ID == "" {
		return message.Receipt{}, wrap("send", &message.SendError{Class: message.FailUnknown, Status: resp.Status, Reason: "answer has no activity id"})
	}
	return message.Receipt{MessageIDs: []string{rr.ID}}, nil
}

// Typing sends a typing activity. Failures are classified like Send's.
func (c *Client) Typing(ctx context.Context, t message.Thread) error {
	if err := c.check(t); err != nil {
		return wrap("typing", err)
	}
	_, err := c.call(ctx, http.MethodPost, c.root(nil), "/v3/conversations/"+url.PathEscape(Conversation(t))+"/activities", TeamsActivity{Type: TeamsActivityTyping})
	return wrap("typing", err)
}

// Edit replaces an activity the bot sent (PUT …/activities/{id}) with ct:
// new text, or the question's card as it is now (a closed one has no
// controls left). Failures are classified like Send's.
func (c *Client) Edit(ctx context.Context, t message.Thread, messageID string, ct message.Content) error {
	if err := c.check(t); err != nil {
		return wrap("edit", err)
	}
	if messageID == "" || strings.ContainsAny(messageID, "/?#") {
		return wrap("edit", invalid("not an activity id"))
	}
	var act TeamsActivity
	switch ct.Kind() {
	case message.ContentText:
		act = c.textActivity(ct.Text)
	case message.ContentPrompt:
		var err error
		if act, err = cardActivity(*ct.Prompt); err != nil {
			return wrap("edit", err)
		}
	default:
		return wrap("edit", invalid("content is neither text nor a question"))
	}
	act.ID = messageID
	_, err := c.call(ctx, http.MethodPut, c.root(nil), "/v3/conversations/"+url.PathEscape(Conversation(t))+"/activities/"+url.PathEscape(messageID), act)
	return wrap("edit", err)
}

// Acknowledge answers a submission. Teams shows no spinner for an
// Action.Submit (and an Action.Execute has had its invoke response), so an
// empty notice sends nothing; a notice is a message into the press's
// conversation (Teams has no message for one person alone in a bot's
// conversation), through the press's connector root.
func (c *Client) Acknowledge(ctx context.Context, ev message.Event, notice string) error {
	if err := c.check(ev.Thread); err != nil {
		return wrap("acknowledge", err)
	}
	if notice == "" {
		return nil
	}
	_, err := c.post(ctx, message.Outgoing{Thread: ev.Thread, ReplyContext: ev.ReplyContext}, c.textActivity(notice))
	return err
}

// textActivity is a message of text, inert unless TrustMarkup.
func (c *Client) textActivity(text string) TeamsActivity {
	format := "plain"
	if c.TrustMarkup {
		format = "markdown"
	}
	return TeamsActivity{Type: TeamsActivityMessage, Text: text, TextFormat: format}
}

// root is the connector root to post to: the activity's, while fresh and
// allowed, else ServiceURL.
func (c *Client) root(rc *message.ReplyContext) string {
	def := strings.TrimRight(cmp.Or(c.ServiceURL, DefaultServiceURL), "/")
	if rc.Fresh(c.now(), time.Minute) {
		if u, ok := serviceURL(rc.Token, def); ok {
			return u
		}
	}
	return def
}

// check refuses, without a call, a thread of another bot or without a
// chat, and ids that would change the call's path.
func (c *Client) check(t message.Thread) error {
	if c.AppID == "" {
		return &message.SendError{Class: message.FailAuth, Reason: "no app id configured"}
	}
	if err := platform.CheckThread(c.AppID, t); err != nil {
		return err
	}
	if strings.ContainsAny(t.Chat, "/?#") || strings.ContainsAny(t.Thread, "/?#;") {
		return invalid("the chat is not a conversation id")
	}
	return nil
}

// call sends act with method to path below root, with an app token, and
// classifies any answer but a 2xx.
func (c *Client) call(ctx context.Context, method, root, path string, act TeamsActivity) (*platform.Response, error) {
	if c.tokens == nil {
		return nil, &message.SendError{Class: message.FailAuth, Reason: "no app password configured"}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // < > & as written: 1 character each, not 6
	if err := enc.Encode(act); err != nil {
		return nil, invalid("the activity does not encode")
	}
	token, err := c.tokens.get(ctx)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, method, root+path, &buf)
	if err != nil {
		return nil, &message.SendError{Class: message.FailAuth, Reason: "the connector URL does not parse"}
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := platform.Do(ctx, cmp.Or(c.HTTP, defaultHTTP), req)
	if err != nil {
		return nil, err
	}
	if resp.Status >= 200 && resp.Status < 300 {
		return resp, nil
	}
	se := classify(resp)
	if se.Class == message.FailAuth {
		c.tokens.drop()
	}
	return nil, se
}

var defaultHTTP = &http.Client{Timeout: 30 * time.Second}

// codeClasses are the connector's error codes Parley tells apart
// (https://learn.microsoft.com/microsoftteams/platform/bots/how-to/conversations/conversation-messages#status-codes-from-bot-conversational-apis).
var codeClasses = map[string]message.FailureClass{
	"BotNotRegistered":               message.FailAuth,
	"Unauthorized":                   message.FailAuth,
	"ConversationBlockedByUser":      message.FailPermission,
	"BotNotInConversationRoster":     message.FailPermission,
	"BotDisabledByAdmin":             message.FailPermission,
	"Forbidden":                      message.FailPermission,
	"ConversationNotFound":           message.FailNotFound,
	"NotFound":                       message.FailNotFound,
	"ActivityNotFoundInConversation": message.FailNotFound,
	"MessageSizeTooBig":              message.FailInvalidPayload,
	"BadArgument":                    message.FailInvalidPayload,
	"BadSyntax":                      message.FailInvalidPayload,
	"Throttled":                      message.FailRateLimit,
	"PreconditionFailed":             message.FailTransient,
}

// classify maps a connector error answer to a SendError (see Send).
func classify(resp *platform.Response) *message.SendError {
	var e TeamsErrorResponse
	_ = json.Unmarshal(resp.Body, &e) // an edge's page is no JSON: its status says it
	se := platform.StatusFailure(resp.Status, resp.Header)
	reason := "HTTP " + strconv.Itoa(resp.Status)
	if e.Error.Code != "" {
		reason += " " + e.Error.Code
	}
	switch {
	case resp.Status >= 500:
		se.Class = message.FailUnknown
	case resp.Status == http.StatusTooManyRequests:
		se.Class = message.FailRateLimit
	case resp.Status == http.StatusPreconditionFailed:
		se.Class = message.FailTransient
	case resp.Status == http.StatusNotFound && e.Error.Code == "":
		// A 404 without the connector's body: the root is wrong.
		se.Class = message.FailAuth
	default:
		if cl, ok := codeClasses[e.Error.Code]; ok {
			se.Class = cl
		} else {
			se.Class = platform.StatusClass(resp.Status)
		}
	}
	se.Reason = platform.Reason(reason)
	return se
}

func invalid(reason string) error {
	return &message.SendError{Class: message.FailInvalidPayload, Reason: reason}
}

func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("teams %s: %w", what, err)
}
