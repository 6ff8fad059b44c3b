package teams

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/jwks"
)

// What the Bot Framework's connector tokens say.
const (
	// Issuer is the iss of every token the connector sends a bot.
	Issuer = "https://api.botframework.com"
	// DefaultOpenIDMetadataURL is the Bot Framework's OpenID configuration
	// for channel-to-bot tokens (public cloud).
	DefaultOpenIDMetadataURL = "https://login.botframework.com/v1/.well-known/openidconfiguration"
	// ClockSkew is the leeway on a token's validity the specification
	// allows: 5 minutes.
	ClockSkew = 5 * time.Minute
	// ServiceURLClaim is the token claim that names the activity's
	// serviceUrl (the SDKs' AuthenticationConstants.ServiceUrlClaim).
	ServiceURLClaim = "serviceurl"
	// ReplyContextLife is how long an activity's serviceUrl is used to
	// answer it; later sends use TEAMS_SERVICE_URL.
	ReplyContextLife = 7 * 24 * time.Hour
)

// Receiver is the receive half of the Teams adapter: the bot's messaging
// endpoint.
//
// # Verification
//
// Every request carries the connector's JWT in Authorization: Bearer. It
// must be signed (RS256) by a key of the Bot Framework's OpenID metadata
// (fetched, cached, refreshed on an unknown key id: package jwks), name
// Issuer as iss and the bot's app id as aud, be valid within ClockSkew, and
// carry a serviceurl claim equal to the activity's serviceUrl; the key must
// endorse the activity's channelId, which must be msteams. Any failure is
// 401 and nothing is written; keys that cannot be fetched are 503.
//
// # Activities
//
// A message (personal chat, group chat, or a channel, where each root post
// and its replies are one thread) becomes a message.KindMessage with the
// bot's own mention removed from its text; an Adaptive Card submission
// (Action.Submit, a message with a value; Action.Execute, an
// adaptiveCard/action invoke) of a card Parley sent becomes a
// message.KindAnswer. Everything else is acknowledged and ignored with a
// reason: conversationUpdate and installationUpdate ("membership"),
// messageUpdate ("edited"), messageDelete ("deleted"), and any other type
// or invoke ("unsupported"). An activity of another tenant than
// TEAMS_TENANT_ID, or addressed to another bot, is refused (403).
//
// EventID is the conversation and the activity id (unique within its
// conversation); the account is the app id. The activity's serviceUrl
// travels in Event.ReplyContext, where the sender finds it.
type Receiver struct {
	// AppID is the bot's Microsoft App ID: the audience of every token,
	// and the account of every thread. Required.
	AppID string
	// TenantID, when set, is the only tenant whose activities are taken.
	TenantID string
	// Keys are the Bot Framework's signing keys. Required.
	Keys *jwks.Set
}

// Platform returns message.Teams.
func (r *Receiver) Platform() message.Platform { return message.Teams }

// verified is what Verify learned, for Parse.
type verified struct {
	serviceURL string
}

// connectorClaims are a connector token's claims.
type connectorClaims struct {
	jwt.RegisteredClaims
	ServiceURL string `json:"serviceurl"`
}

// VerifyContext checks the connector's token (see Receiver), fetching the
// keys within ctx when it must.
func (r *Receiver) VerifyContext(ctx context.Context, req *platform.Request) error {
	return r.verify(req, func(raw string, exp jwks.Expect, c jwt.Claims) (jwks.Key, error) {
		return r.Keys.Verify(ctx, raw, exp, c)
	})
}

// Verify checks the token with the keys already held, without any I/O
// (the core calls VerifyContext).
func (r *Receiver) Verify(req *platform.Request) error {
	return r.verify(req, func(raw string, exp jwks.Expect, c jwt.Claims) (jwks.Key, error) {
		return r.Keys.VerifyHeld(raw, exp, c)
	})
}

type verifyFunc func(raw string, exp jwks.Expect, c jwt.Claims) (jwks.Key, error)

func (r *Receiver) verify(req *platform.Request, check verifyFunc) error {
	if r.AppID == "" || r.Keys == nil {
		return fmt.Errorf("%w: no app id configured", platform.ErrUnauthorized)
	}
	raw, ok := jwks.Bearer(req.Header)
	if !ok {
		return fmt.Errorf("%w: missing Authorization: Bearer", platform.ErrUnauthorized)
	}
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	var claims connectorClaims
	key, err := check(raw, expect(r.AppID, now), &claims)
	if err != nil {
		return jwks.Refusal(err)
	}
	// The token is the connector's: the body is what it binds.
	var head struct {
		ServiceURL string `json:"serviceUrl"`
		ChannelID  string `json:"channelId"`
	}
	if err := json.Unmarshal(req.Body, &head); err != nil {
		return fmt.Errorf("%w: the body is no activity", platform.ErrMalformed)
	}
	switch {
	case claims.ServiceURL == "" || claims.ServiceURL != head.ServiceURL:
		return fmt.Errorf("%w: the token's serviceurl is not the activity's serviceUrl", platform.ErrUnauthorized)
	case head.ChannelID != TeamsChannelID:
		return fmt.Errorf("%w: the activity's channelId is not %s", platform.ErrUnauthorized, TeamsChannelID)
	case !endorses(key, head.ChannelID):
		return fmt.Errorf("%w: the signing key does not endorse channel %s", platform.ErrUnauthorized, TeamsChannelID)
	}
	req.Verified = verified{serviceURL: head.ServiceURL}
	return nil
}

// expect is what a connector token for app must say at now.
func expect(app string, now time.Time) jwks.Expect {
	return jwks.Expect{Issuers: []string{Issuer}, Audience: app, Leeway: ClockSkew, Now: now}
}

// endorses reports whether key may sign for channel: the Bot Framework's
// keys list the channels they endorse.
func endorses(key jwks.Key, channel string) bool {
	for _, e := range key.Endorsements {
		if e == channel {
			return true
		}
	}
	return false
}

// Parse decodes a verified activity.
func (r *Receiver) Parse(req *platform.Request) (platform.Parsed, error) {
	v, ok := req.Verified.(verified)
	if !ok {
		return platform.Parsed{}, fmt.Errorf("%w: the request was not verified", platform.ErrUnauthorized)
	}
	body := bytes.TrimSpace(req.Body)
	if len(body) == 0 || body[0] != '{' {
		return platform.Parsed{}, fmt.Errorf("%w: an activity is a JSON object", platform.ErrMalformed)
	}
	var a TeamsActivity
	if err := json.Unmarshal(body, &a); err != nil {
		return platform.Parsed{}, fmt.Errorf("%w: the activity does not decode", platform.ErrMalformed)
	}
	switch {
	case a.Type == "":
		return platform.Parsed{}, fmt.Errorf("%w: the activity has no type", platform.ErrMalformed)
	case a.ServiceURL != v.serviceURL:
		return platform.Parsed{}, fmt.Errorf("%w: the activity is not the one verified", platform.ErrMalformed)
	case a.Conversation == nil || a.Conversation.ID == "":
		return platform.Parsed{}, fmt.Errorf("%w: the activity has no conversation", platform.ErrMalformed)
	}
	if strings.ContainsAny(a.Conversation.ID, "/?#") {
		return platform.Parsed{}, fmt.Errorf("%w: the conversation id holds characters no conversation id has", platform.ErrMalformed)
	}
	if err := r.scope(a); err != nil {
		return platform.Parsed{}, err
	}
	switch a.Type {
	case TeamsActivityMessage:
		if len(a.Value) > 0 && string(a.Value) != "null" {
			return r.submit(a, a.Value)
		}
		return r.message(a)
	case TeamsActivityInvoke:
		return r.invoke(a)
	case TeamsActivityConversationUpdate, TeamsActivityInstallationUpdate:
		return ignored(a, platform.IgnoredMembership), nil
	case TeamsActivityMessageUpdate:
		return ignored(a, platform.IgnoredEdited), nil
	case TeamsActivityMessageDelete:
		return ignored(a, platform.IgnoredDeleted), nil
	}
	return ignored(a, platform.IgnoredUnsupported), nil
}

// scope refuses an activity of another tenant or for another bot.
func (r *Receiver) scope(a TeamsActivity) error {
	tenant := a.Conversation.TenantID
	if a.ChannelData != nil && a.ChannelData.Tenant != nil && a.ChannelData.Tenant.ID != "" {
		tenant = a.ChannelData.Tenant.ID
	}
	if r.TenantID != "" && !strings.EqualFold(tenant, r.TenantID) {
		return fmt.Errorf("%w: an activity of another tenant than %s", platform.ErrForbidden, SettingTenantID)
	}
	if a.Recipient != nil && a.Recipient.ID != "" && botID(a.Recipient.ID) != r.AppID {
		return fmt.Errorf("%w: an activity for another bot than %s", platform.ErrForbidden, SettingAppID)
	}
	return nil
}

// botID is a bot's app id from its Teams id ("28:<app id>").
func botID(id string) string { return strings.TrimPrefix(id, "28:") }

// message turns a person's message into an event.
func (r *Receiver) message(a TeamsActivity) (platform.Parsed, error) {
	ev, err := r.event(a, message.KindMessage)
	if err != nil {
		return platform.Parsed{}, err
	}
	if ev.Sender.IsBot {
		return ignored(a, platform.IgnoredBot), nil
	}
	ev.Text = stripMention(a)
	ev.Attachments = attachments(a.Attachments)
	if strings.TrimSpace(ev.Text) == "" && len(ev.Attachments) == 0 {
		return ignored(a, platform.IgnoredNoText), nil
	}
	ev.ReplyTo = a.ReplyToID
	return platform.Parsed{Events: []message.Event{ev}}, nil
}

// submit turns an Action.Submit of a card Parley sent into an answer.
func (r *Receiver) submit(a TeamsActivity, value json.RawMessage) (platform.Parsed, error) {
	press, ok := pressOf(value)
	if !ok {
		// A card Parley did not send (another app's, a form): nothing
		// to answer.
		return ignored(a, platform.IgnoredUnsupported), nil
	}
	ev, err := r.event(a, message.KindAnswer)
	if err != nil {
		return platform.Parsed{}, err
	}
	if ev.Sender.IsBot {
		return ignored(a, platform.IgnoredBot), nil
	}
	press.MessageID = a.ReplyToID
	ev.Press = &press
	return platform.Parsed{Events: []message.Event{ev}}, nil
}

// invoke takes an Action.Execute (adaptiveCard/action) of a card Parley
// sent as an answer, answered with the invoke response Teams waits for;
// any other invoke is answered empty and ignored.
func (r *Receiver) invoke(a TeamsActivity) (platform.Parsed, error) {
	quiet := invokeReply(nil)
	if a.Name != TeamsInvokeAdaptiveCardAction {
		p := ignored(a, platform.IgnoredUnsupported)
		p.Ack = quiet
		return p, nil
	}
	var v struct {
		Action struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		} `json:"action"`
	}
	if err := json.Unmarshal(a.Value, &v); err != nil {
		return platform.Parsed{}, fmt.Errorf("%w: an adaptiveCard/action without its action", platform.ErrMalformed)
	}
	p, err := r.submit(a, v.Action.Data)
	if err != nil {
		return platform.Parsed{}, err
	}
	if len(p.Events) > 0 {
		p.Ack = invokeReply(&TeamsInvokeResponse{StatusCode: http.StatusOK, Type: "application/vnd.microsoft.activity.message", Value: noteReceived})
		p.Unavailable = invokeReply(&TeamsInvokeResponse{StatusCode: http.StatusServiceUnavailable, Type: "application/vnd.microsoft.error", Value: map[string]string{"code": "ServiceUnavailable", "message": noteUnavailable}})
	} else {
		p.Ack = quiet
	}
	return p, nil
}

// Notes an Action.Execute shows the person who pressed.
const (
	noteReceived    = "Received."
	noteUnavailable = "That did not reach the agent. Please try again in a moment."
)

func invokeReply(v *TeamsInvokeResponse) *platform.Reply {
	if v == nil {
		return &platform.Reply{Status: http.StatusOK}
	}
	body, _ := json.Marshal(v) // Parley's own type: cannot fail
	return &platform.Reply{Status: http.StatusOK, ContentType: "application/json", Body: body}
}

// SubmitKey and ChoiceKey are the keys of a card submission Parley reads:
// the pressed control's data, and the chosen options of its choice set
// (comma-separated, as Teams submits a multi-select).
const (
	SubmitKey = "parley"
	ChoiceKey = "parley_choice"
)

// pressOf reads Parley's keys from a card's submitted data.
func pressOf(value json.RawMessage) (message.Press, bool) {
	var d map[string]json.RawMessage
	if json.Unmarshal(value, &d) != nil {
		return message.Press{}, false
	}
	var data, choice string
	if json.Unmarshal(d[SubmitKey], &data) != nil || data == "" || len(data) > message.MaxControlData {
		return message.Press{}, false
	}
	p := message.Press{Data: data}
	if raw, ok := d[ChoiceKey]; ok {
		if json.Unmarshal(raw, &choice) != nil {
			return message.Press{}, false
		}
		for _, c := range strings.Split(choice, ",") {
			if c = strings.TrimSpace(c); c != "" {
				p.Values = append(p.Values, c)
			}
		}
	}
	return p, true
}

// event is what every message and submission shares.
func (r *Receiver) event(a TeamsActivity, kind message.Kind) (message.Event, error) {
	switch {
	case a.ID == "":
		return message.Event{}, fmt.Errorf("%w: the activity has no id", platform.ErrMalformed)
	case a.From == nil || a.From.ID == "":
		return message.Event{}, fmt.Errorf("%w: the activity has no sender", platform.ErrMalformed)
	}
	at, err := time.Parse(time.RFC3339Nano, a.Timestamp)
	if err != nil {
		return message.Event{}, fmt.Errorf("%w: the activity's timestamp is no RFC 3339 time", platform.ErrMalformed)
	}
	chat, thread := SplitConversation(a.Conversation.ID)
	if a.Conversation.ConversationType != TeamsConversationChannel {
		chat, thread = a.Conversation.ID, ""
	}
	if strings.ContainsAny(chat, "/?#") || strings.ContainsAny(thread, "/?#;") {
		return message.Event{}, fmt.Errorf("%w: the conversation id holds characters no conversation id has", platform.ErrMalformed)
	}
	chatType := message.ChatGroup
	if a.Conversation.ConversationType == TeamsConversationPersonal {
		chatType = message.ChatPrivate
	}
	th := message.Thread{Platform: message.Teams, Account: r.AppID, Chat: chat, Thread: thread}
	return message.Event{
		Platform:     message.Teams,
		Account:      r.AppID,
		EventID:      a.Conversation.ID + "|" + a.ID,
		Kind:         kind,
		Thread:       th,
		Sender:       message.Sender{ID: a.From.ID, Name: a.From.Name, IsBot: a.From.Role == "bot" || strings.HasPrefix(a.From.ID, "28:")},
		MessageID:    a.ID,
		ChatType:     chatType,
		Time:         at.UTC(),
		ReplyContext: &message.ReplyContext{Token: a.ServiceURL, Until: at.UTC().Add(ReplyContextLife)},
	}, nil
}

// SplitConversation splits a channel thread's conversation id
// ("19:…@thread.tacv2;messageid=<root>") into the channel and the root
// message.
func SplitConversation(id string) (chat, thread string) {
	chat, thread, _ = strings.Cut(id, ";messageid=")
	return chat, thread
}

// Conversation is the conversation id of t: a channel thread's is its
// channel's with ";messageid=" and its root.
func Conversation(t message.Thread) string {
	if t.Thread == "" {
		return t.Chat
	}
	return t.Chat + ";messageid=" + t.Thread
}

// stripMention is the message's text without the bot's own mentions
// (Teams puts "<at>Name</at>" in the text for each, with an entity naming
// who), trimmed.
func stripMention(a TeamsActivity) string {
	text := a.Text
	for _, e := range a.Entities {
		if e.Type != "mention" || e.Mentioned == nil || a.Recipient == nil || e.Mentioned.ID != a.Recipient.ID || e.Text == "" {
			continue
		}
		text = strings.ReplaceAll(text, e.Text, "")
	}
	return strings.TrimSpace(strings.ReplaceAll(text, "\u00a0", " "))
}

func ignored(a TeamsActivity, reason string) platform.Parsed {
	return platform.Parsed{Ignored: []platform.Ignored{{Reason: reason, ID: a.ID}}}
}

// serviceURL is the connector root u, when the sender may post to it:
// https, or the configured local root.
func serviceURL(u, local string) (string, bool) {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || p.User != nil || p.RawQuery != "" || p.Fragment != "" {
		return "", false
	}
	if p.Scheme == "https" {
		return strings.TrimRight(u, "/"), true
	}
	if local != "" && strings.TrimRight(u, "/") == strings.TrimRight(local, "/") {
		return strings.TrimRight(u, "/"), true
	}
	return "", false
}
