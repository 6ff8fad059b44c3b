package googlechat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/jwks"
)

// What Google's tokens say.
const (
	// ChatIssuer is the iss of the Chat service account's tokens (the
	// project-number audience), and the email of its ID tokens.
	ChatIssuer = "chat@system.gserviceaccount.com"
	// DefaultChatKeysURL is the Chat service account's key set.
	DefaultChatKeysURL = "https://www.googleapis.com/service_accounts/v1/jwk/chat@system.gserviceaccount.com"
	// DefaultGoogleKeysURL is Google's OIDC key set, which signs ID tokens
	// (the endpoint-URL audience).
	DefaultGoogleKeysURL = "https://www.googleapis.com/oauth2/v3/certs"
	// ClockSkew is the leeway on a token's validity.
	ClockSkew = 5 * time.Minute
)

// googleIssuers are the iss values of Google's ID tokens.
var googleIssuers = []string{"https://accounts.google.com", "accounts.google.com"}

// Receiver is the receive half of the Google Chat adapter: the app's HTTP
// endpoint.
//
// # Verification
//
// Every request carries Authorization: Bearer <token>, whose form depends
// on the app's "Authentication audience": for the project number, a JWT of
// the Chat service account (iss chat@system.gserviceaccount.com, aud the
// project number); for the endpoint URL, a Google ID token (iss
// accounts.google.com, aud the URL, email the Chat service account or the
// project's Workspace add-ons agent, verified). Either is RS256, signed by a
// key of its published set (fetched, cached, refreshed on an unknown key
// id: package jwks), within ClockSkew. Any failure is 401; keys that cannot
// be fetched are 503.
//
// # Events
//
// A MESSAGE becomes a message.KindMessage (the text without the app's
// mention, argumentText); a CARD_CLICKED of Parley's function a
// message.KindAnswer. ADDED_TO_SPACE and REMOVED_FROM_SPACE are ignored as
// "membership", a bot's message as "bot", anything else as "unsupported".
// Each is answered with an empty JSON object: the reply comes later, through
// the API.
//
// EventID is the message's name (Chat has no event id); the account is the
// project number. A direct message is a chat; in a space, each thread is a
// thread.
type Receiver struct {
	// ProjectNumber is the app's Cloud project number: the account of
	// every thread, and the audience of project-number tokens. Required.
	ProjectNumber string
	// Audience, when set, is the endpoint URL the app is configured with:
	// tokens are Google ID tokens for it. Empty: Chat's project-number
	// tokens.
	Audience string
	// Keys are the key set of the configured token form. Required.
	Keys *jwks.Set
}

// Platform returns message.GoogleChat.
func (r *Receiver) Platform() message.Platform { return message.GoogleChat }

// tokenClaims are the claims Parley reads of either token form.
type tokenClaims struct {
	jwt.RegisteredClaims
	Email         string `json:"email"`
	EmailVerified bool   `json:"email_verified"`
}

// VerifyContext checks the token, fetching the keys within ctx when it
// must.
func (r *Receiver) VerifyContext(ctx context.Context, req *platform.Request) error {
	return r.verify(req, func(raw string, exp jwks.Expect, c jwt.Claims) (jwks.Key, error) {
		return r.Keys.Verify(ctx, raw, exp, c)
	})
}

// Verify checks the token with the keys already held, without any I/O.
func (r *Receiver) Verify(req *platform.Request) error {
	return r.verify(req, func(raw string, exp jwks.Expect, c jwt.Claims) (jwks.Key, error) {
		return r.Keys.VerifyHeld(raw, exp, c)
	})
}

func (r *Receiver) verify(req *platform.Request, check func(string, jwks.Expect, jwt.Claims) (jwks.Key, error)) error {
	if !projectNumber(r.ProjectNumber) || r.Keys == nil {
		return fmt.Errorf("%w: no project number configured", platform.ErrUnauthorized)
	}
	raw, ok := jwks.Bearer(req.Header)
	if !ok {
		return fmt.Errorf("%w: missing Authorization: Bearer", platform.ErrUnauthorized)
	}
	var c tokenClaims
	if _, err := check(raw, r.expect(req.Now), &c); err != nil {
		return jwks.Refusal(err)
	}
	if r.Audience != "" && (!c.EmailVerified || (c.Email != ChatIssuer && c.Email != r.addonsAgent())) {
		return fmt.Errorf("%w: the ID token is not Google Chat's", platform.ErrUnauthorized)
	}
	req.Verified = true
	return nil
}

// expect is what a token must say at now.
func (r *Receiver) expect(now time.Time) jwks.Expect {
	if now.IsZero() {
		now = time.Now()
	}
	if r.Audience != "" {
		return jwks.Expect{Issuers: googleIssuers, Audience: r.Audience, Leeway: ClockSkew, Now: now}
	}
	return jwks.Expect{Issuers: []string{ChatIssuer}, Audience: r.ProjectNumber, Leeway: ClockSkew, Now: now}
}

// addonsAgent is the project's Workspace add-ons service agent, which
// signs the ID tokens of newer Chat apps.
func (r *Receiver) addonsAgent() string {
	return "service-" + r.ProjectNumber + "@gcp-sa-gsuiteaddons.iam.gserviceaccount.com"
}

// emptyAck is the answer to every event: nothing to show now.
var emptyAck = &platform.Reply{Status: http.StatusOK, ContentType: "application/json", Body: []byte("{}")}

// Parse decodes a verified event.
func (r *Receiver) Parse(req *platform.Request) (platform.Parsed, error) {
	if req.Verified != true {
		return platform.Parsed{}, fmt.Errorf("%w: the request was not verified", platform.ErrUnauthorized)
	}
	body := bytes.TrimSpace(req.Body)
	if len(body) == 0 || body[0] != '{' {
		return platform.Parsed{}, fmt.Errorf("%w: an event is a JSON object", platform.ErrMalformed)
	}
	var ev GoogleChatEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		return platform.Parsed{}, fmt.Errorf("%w: the event does not decode", platform.ErrMalformed)
	}
	if ev.Type == "" {
		return platform.Parsed{}, fmt.Errorf("%w: the event has no type", platform.ErrMalformed)
	}
	var p platform.Parsed
	var err error
	switch ev.Type {
	case GoogleChatMessageEvent:
		p, err = r.message(ev)
	case GoogleChatCardClicked:
		p, err = r.click(ev)
	case GoogleChatAddedToSpace, GoogleChatRemovedFrom:
		p = ignored(ev, platform.IgnoredMembership)
	default:
		p = ignored(ev, platform.IgnoredUnsupported)
	}
	if err != nil {
		return platform.Parsed{}, err
	}
	p.Ack = emptyAck
	return p, nil
}

// nameOf is m's name, "" for no message.
func nameOf(m *GoogleChatMessage) string {
	if m == nil {
		return ""
	}
	return m.Name
}

// message turns a person's message into an event.
func (r *Receiver) message(ev GoogleChatEvent) (platform.Parsed, error) {
	m := ev.Message
	if _, ok := messageSpace(nameOf(m)); !ok {
		return platform.Parsed{}, fmt.Errorf("%w: a MESSAGE without a message name", platform.ErrMalformed)
	}
	e, err := r.event(ev, m.Sender, message.KindMessage, m.Name)
	if err != nil {
		return platform.Parsed{}, err
	}
	if e.Sender.IsBot {
		return ignored(ev, platform.IgnoredBot), nil
	}
	e.Text = strings.TrimSpace(m.Text)
	if m.ArgumentText != "" {
		// The text after the app's own mention.
		e.Text = strings.TrimSpace(m.ArgumentText)
	}
	e.Attachments = attachments(m.Attachment)
	if e.Text == "" && len(e.Attachments) == 0 {
		return ignored(ev, platform.IgnoredNoText), nil
	}
	e.MessageID = m.Name
	return platform.Parsed{Events: []message.Event{e}}, nil
}

// click turns a press of a control Parley sent into an answer.
func (r *Receiver) click(ev GoogleChatEvent) (platform.Parsed, error) {
	m := ev.Message
	if _, ok := messageSpace(nameOf(m)); !ok {
		return platform.Parsed{}, fmt.Errorf("%w: a CARD_CLICKED without its message", platform.ErrMalformed)
	}
	fn, data := "", ""
	if ev.Common != nil {
		fn, data = ev.Common.InvokedFunction, ev.Common.Parameters[ParamData]
	}
	if ev.Action != nil {
		fn = ev.Action.ActionMethodName
		for _, p := range ev.Action.Parameters {
			if p.Key == ParamData {
				data = p.Value
			}
		}
	}
	if fn != GoogleChatActionFunction || data == "" || len(data) > message.MaxControlData {
		// Another app's card, or not one of Parley's controls.
		return ignored(ev, platform.IgnoredUnsupported), nil
	}
	if ev.EventTime == "" {
		return platform.Parsed{}, fmt.Errorf("%w: a CARD_CLICKED without eventTime", platform.ErrMalformed)
	}
	who := ""
	if ev.User != nil {
		who = ev.User.Name
	}
	// A click has no id of its own: the message, who clicked and when.
	e, err := r.event(ev, ev.User, message.KindAnswer, m.Name+"/clicks/"+who+"/"+ev.EventTime)
	if err != nil {
		return platform.Parsed{}, err
	}
	if e.Sender.IsBot {
		return ignored(ev, platform.IgnoredBot), nil
	}
	press := &message.Press{Data: data, MessageID: m.Name}
	if ev.Common != nil {
		if in, ok := ev.Common.FormInputs[InputChoice]; ok {
			press.Values = in.StringInputs.Value
		}
	}
	e.Press = press
	return platform.Parsed{Events: []message.Event{e}}, nil
}

// event is what every message and click shares.
func (r *Receiver) event(ev GoogleChatEvent, who *GoogleChatUser, kind message.Kind, id string) (message.Event, error) {
	space := ev.Space
	if space == nil && ev.Message != nil {
		space = ev.Message.Space
	}
	switch {
	case space == nil || !isSpaceName(space.Name):
		return message.Event{}, fmt.Errorf("%w: the event has no space", platform.ErrMalformed)
	case who == nil || !isUserName(who.Name):
		return message.Event{}, fmt.Errorf("%w: the event has no user", platform.ErrMalformed)
	}
	at, err := time.Parse(time.RFC3339Nano, ev.EventTime)
	if err != nil {
		if ev.Message == nil {
			return message.Event{}, fmt.Errorf("%w: the event's eventTime is no RFC 3339 time", platform.ErrMalformed)
		}
		if at, err = time.Parse(time.RFC3339Nano, ev.Message.CreateTime); err != nil {
			return message.Event{}, fmt.Errorf("%w: the event has no time", platform.ErrMalformed)
		}
	}
	if ms, _ := messageSpace(ev.Message.Name); ms != space.Name {
		return message.Event{}, fmt.Errorf("%w: the message is not in the event's space", platform.ErrMalformed)
	}
	chatType := message.ChatGroup
	th := message.Thread{Platform: message.GoogleChat, Account: r.ProjectNumber, Chat: space.Name}
	if space.SpaceType == GoogleChatSpaceTypeDM || space.Type == GoogleChatLegacyTypeDM {
		chatType = message.ChatPrivate
	} else if t := ev.Message.Thread; t != nil && t.Name != "" {
		ts, id, ok := splitThreadName(t.Name)
		if !ok || ts != space.Name {
			return message.Event{}, fmt.Errorf("%w: the message's thread is not a thread of its space", platform.ErrMalformed)
		}
		th.Thread = id
	}
	return message.Event{
		Platform: message.GoogleChat,
		Account:  r.ProjectNumber,
		EventID:  id,
		Kind:     kind,
		Thread:   th,
		Sender:   message.Sender{ID: who.Name, Name: who.DisplayName, IsBot: who.Type == GoogleChatUserTypeBot},
		ChatType: chatType,
		Time:     at.UTC(),
	}, nil
}

func ignored(ev GoogleChatEvent, reason string) platform.Parsed {
	id := ""
	if ev.Message != nil {
		id = ev.Message.Name
	} else if ev.Space != nil {
		id = ev.Space.Name
	}
	return platform.Parsed{Ignored: []platform.Ignored{{Reason: reason, ID: id}}}
}

// projectNumber reports whether s is a Cloud project number.
func projectNumber(s string) bool {
	if s == "" || len(s) > 20 || s[0] == '0' {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
