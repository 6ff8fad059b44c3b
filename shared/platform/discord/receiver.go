package discord

import (
	"bytes"
	"cmp"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// Request headers Discord signs every interaction with.
const (
	SignatureHeader = "X-Signature-Ed25519"
	TimestampHeader = "X-Signature-Timestamp"
)

// MaxSkew is how far a request's signed timestamp may be from now, either
// way, before it is refused as a replay. Discord documents no window.
// Discord sends each interaction once and waits 3 seconds for its answer,
// so a live request is never more than seconds old; what the window must
// bound is what the interaction-id dedupe (PARLEY_DEDUPE_TTL, 8 days) does
// not cover, which is nothing younger than a week. Five minutes leaves room for a skewed clock
// on either side, and is the window Slack and Standard Webhooks use, so
// every signed platform of Parley has the same one.
const MaxSkew = 5 * time.Minute

// Within is how long Discord waits for the answer to an interaction; past
// it the interaction fails and its token is invalidated.
const Within = 3 * time.Second

// TokenLife is how long an interaction's token answers it (edits of the
// response, follow-ups), from the interaction's creation.
const TokenLife = 15 * time.Minute

// Receiver is the receive half of the Discord adapter, for an Interactions
// Endpoint URL.
//
// It answers PING, and turns the /ask command (its text option, and its
// file option as an attachment) and the "Ask the agent" message command
// (the target message's content and attachments) into a
// message.KindMessage each, answered DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE
// once it is durable ("… is thinking", which the first bubble of the reply
// replaces); and a press of a button or a string select on a message into a
// message.KindAnswer, answered DEFERRED_UPDATE_MESSAGE. Both carry the
// interaction's token in Event.ReplyContext, valid TokenLife from the
// interaction. What Parley does not answer is ignored, and still answered
// as Discord requires, so that nobody sees "This interaction failed": a
// bot's interaction ("bot"), a command without text or file ("no_text"), another
// command, a modal, a select Parley never sends ("unsupported", ephemeral
// notes for commands), autocomplete (no choices), PING aside.
//
// # Ids, threads, people
//
// EventID is the interaction's id (Discord does not redeliver an
// interaction; a replayed request is the same id). The account is the
// application: an interaction of another application is refused
// (ErrForbidden). The thread is the channel (a Discord thread is a channel
// of its own); ChatType is private in a DM with the bot, group in a guild
// or a group DM. The sender is the guild member's user (or, in a DM, the
// user), named by their guild nickname, display name or username.
type Receiver struct {
	// PublicKey is the application's public key. Required: an empty key
	// refuses every request.
	PublicKey ed25519.PublicKey
	// ApplicationID is the application the endpoint belongs to. Required.
	ApplicationID string
}

// Platform returns message.Discord.
func (r *Receiver) Platform() message.Platform { return message.Discord }

// Verify checks Discord's Ed25519 signature over the timestamp header
// followed by the raw body, with the application's public key, then the
// timestamp, within MaxSkew of req.Now (the wall clock when req.Now is
// zero). Every failure is a 401: Discord sends wrongly signed requests on
// purpose, and removes an endpoint that accepts them.
func (r *Receiver) Verify(req *platform.Request) error {
	if len(r.PublicKey) != ed25519.PublicKeySize {
		return fmt.Errorf("%w: no public key configured", platform.ErrUnauthorized)
	}
	sigHex := req.Header.Get(SignatureHeader)
	ts := req.Header.Get(TimestampHeader)
	switch {
	case sigHex == "":
		return fmt.Errorf("%w: missing %s", platform.ErrUnauthorized, SignatureHeader)
	case ts == "":
		return fmt.Errorf("%w: missing %s", platform.ErrUnauthorized, TimestampHeader)
	}
	sig, err := hex.DecodeString(sigHex)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return fmt.Errorf("%w: %s is not a hex Ed25519 signature", platform.ErrUnauthorized, SignatureHeader)
	}
	signed := make([]byte, 0, len(ts)+len(req.Body))
	signed = append(append(signed, ts...), req.Body...)
	if !ed25519.Verify(r.PublicKey, signed, sig) {
		return fmt.Errorf("%w: %s does not verify", platform.ErrUnauthorized, SignatureHeader)
	}
	// Checked after the signature, so a stale verdict means "authentic but
	// old" (a replay, or a skewed clock), never a forgery.
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %s is not a unix time", platform.ErrUnauthorized, TimestampHeader)
	}
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	skew := int64(MaxSkew / time.Second)
	if n := now.Unix(); sec < n-skew || sec > n+skew {
		return fmt.Errorf("%w: %s more than %s from now", platform.ErrStale, TimestampHeader, MaxSkew)
	}
	return nil
}

// Parse decodes a verified interaction.
func (r *Receiver) Parse(req *platform.Request) (platform.Parsed, error) {
	body := bytes.TrimSpace(req.Body)
	if len(body) == 0 || body[0] != '{' {
		return platform.Parsed{}, fmt.Errorf("%w: a Discord interaction is a JSON object", platform.ErrMalformed)
	}
	var in DiscordInteraction
	if err := json.Unmarshal(body, &in); err != nil {
		return platform.Parsed{}, fmt.Errorf("%w: the interaction does not decode", platform.ErrMalformed)
	}
	switch {
	case in.Type == 0:
		return platform.Parsed{}, fmt.Errorf("%w: the interaction has no type", platform.ErrMalformed)
	case in.ApplicationID == "":
		return platform.Parsed{}, fmt.Errorf("%w: the interaction has no application_id", platform.ErrMalformed)
	case in.ApplicationID != r.ApplicationID:
		return platform.Parsed{}, fmt.Errorf("%w: an interaction of another application than %s", platform.ErrForbidden, SettingApplicationID)
	}
	at, ok := SnowflakeTime(in.ID)
	if !ok {
		return platform.Parsed{}, fmt.Errorf("%w: the interaction's id is not a snowflake", platform.ErrMalformed)
	}
	switch in.Type {
	case DiscordInteractionPing:
		return platform.Parsed{Reply: reply(DiscordInteractionResponse{Type: DiscordCallbackPong})}, nil
	case DiscordInteractionApplicationCommand:
		return r.command(in, at)
	case DiscordInteractionMessageComponent:
		return r.component(in, at)
	case DiscordInteractionAutocomplete:
		// Parley's commands have no autocompleted option; answered with
		// no choices rather than an error.
		return ignored(in.ID, platform.IgnoredUnsupported, &DiscordInteractionResponse{
			Type: DiscordCallbackAutocompleteResult, Data: DiscordAutocompleteResult{Choices: []struct{}{}},
		}), nil
	case DiscordInteractionModalSubmit:
		return ignored(in.ID, platform.IgnoredUnsupported, note(noteUnsupported)), nil
	}
	// A type Discord adds later: nothing to answer it with.
	return ignored(in.ID, platform.IgnoredUnsupported, nil), nil
}

// Notes shown to the person alone (ephemeral) when Parley does not take a
// command, and when it could not take one in time (Parsed.Unavailable).
const (
	noteUnavailable = "Sorry, that did not reach the agent. Please try again in a moment."
	noteNoText      = "There is no text to send to the agent."
	noteUnsupported = "This is not something Parley answers."
	noteBot         = "Parley does not answer bots."
)

// command turns /ask and "Ask the agent" into a message.
func (r *Receiver) command(in DiscordInteraction, at time.Time) (platform.Parsed, error) {
	ev, err := r.event(in, at, message.KindMessage, DiscordCallbackDeferredChannelMessage)
	if err != nil {
		return platform.Parsed{}, err
	}
	d := in.Data
	if d == nil {
		return platform.Parsed{}, fmt.Errorf("%w: a command without data", platform.ErrMalformed)
	}
	if ev.Sender.IsBot {
		return ignored(in.ID, platform.IgnoredBot, note(noteBot)), nil
	}
	switch {
	case d.Type == DiscordCommandChatInput && d.Name == CommandAsk:
		for _, o := range d.Options {
			switch o.Name {
			case OptionText:
				if o.Type != DiscordOptionString || json.Unmarshal(o.Value, &ev.Text) != nil {
					return platform.Parsed{}, fmt.Errorf("%w: /%s's %s option is not a string", platform.ErrMalformed, CommandAsk, OptionText)
				}
			case OptionFile:
				a, err := optionFile(o, d.Resolved)
				if err != nil {
					return platform.Parsed{}, err
				}
				ev.Attachments = attachments([]DiscordAttachment{a}, 0)
			}
		}
	case d.Type == DiscordCommandMessage && d.Name == CommandAskMessage:
		var target DiscordMessage
		ok := d.TargetID != "" && d.Resolved != nil
		if ok {
			target, ok = d.Resolved.Messages[d.TargetID]
		}
		if !ok {
			return platform.Parsed{}, fmt.Errorf("%w: a message command without its resolved target", platform.ErrMalformed)
		}
		ev.Text, ev.MessageID = target.Content, d.TargetID
		ev.Attachments = attachments(target.Attachments, target.Flags)
		// The target is what the person asks about: the agent gets it as
		// the message quoted, and learns when it is one of the app's own.
		ev.Quote = &message.Quote{MessageID: d.TargetID, Text: target.Content}
		if a := target.Author; a != nil && a.ID != "" {
			ev.Quote.Sender = &message.Sender{ID: a.ID, Name: cmp.Or(a.GlobalName, a.Username), IsBot: a.Bot}
			ev.Quote.Parley = a.Bot && a.ID == r.ApplicationID
		}
	default:
		return ignored(in.ID, platform.IgnoredUnsupported, note(noteUnsupported)), nil
	}
	if strings.TrimSpace(ev.Text) == "" && len(ev.Attachments) == 0 {
		return ignored(in.ID, platform.IgnoredNoText, note(noteNoText)), nil
	}
	return accepted(ev, DiscordCallbackDeferredChannelMessage), nil
}

// component turns a press of a button or a string select into an answer.
func (r *Receiver) component(in DiscordInteraction, at time.Time) (platform.Parsed, error) {
	ev, err := r.event(in, at, message.KindAnswer, DiscordCallbackDeferredUpdateMessage)
	if err != nil {
		return platform.Parsed{}, err
	}
	d := in.Data
	switch {
	case d == nil || d.CustomID == "":
		return platform.Parsed{}, fmt.Errorf("%w: a component interaction without custom_id", platform.ErrMalformed)
	case in.Message == nil || in.Message.ID == "":
		return platform.Parsed{}, fmt.Errorf("%w: a component interaction without its message", platform.ErrMalformed)
	}
	// Acknowledged silently: nothing changes on the pressed message.
	quiet := &DiscordInteractionResponse{Type: DiscordCallbackDeferredUpdateMessage}
	if ev.Sender.IsBot {
		return ignored(in.ID, platform.IgnoredBot, quiet), nil
	}
	switch d.ComponentType {
	case DiscordComponentButton, DiscordComponentStringSelect:
	default:
		// A user, role or channel select: nothing Parley sends.
		return ignored(in.ID, platform.IgnoredUnsupported, quiet), nil
	}
	ev.Press = &message.Press{Data: d.CustomID, MessageID: in.Message.ID}
	if len(d.Values) > 0 {
		ev.Press.Values = d.Values
	}
	return accepted(ev, DiscordCallbackDeferredUpdateMessage), nil
}

// event is what every command and press shares: the application, the
// channel, the person, the time, and the token to answer with.
func (r *Receiver) event(in DiscordInteraction, at time.Time, kind message.Kind, callback int) (message.Event, error) {
	channel := in.ChannelID
	if channel == "" && in.Channel != nil {
		channel = in.Channel.ID
	}
	user, name := in.User, ""
	if in.Member != nil && in.Member.User != nil {
		user, name = in.Member.User, in.Member.Nick
	}
	switch {
	case channel == "":
		return message.Event{}, fmt.Errorf("%w: an interaction without channel_id", platform.ErrMalformed)
	case user == nil || user.ID == "":
		return message.Event{}, fmt.Errorf("%w: an interaction without member.user or user", platform.ErrMalformed)
	case in.Token == "":
		return message.Event{}, fmt.Errorf("%w: an interaction without token", platform.ErrMalformed)
	}
	if name == "" {
		name = user.GlobalName
	}
	if name == "" {
		name = user.Username
	}
	chatType := message.ChatGroup
	if in.GuildID == "" && (in.Channel == nil || in.Channel.Type == DiscordChannelDM) {
		chatType = message.ChatPrivate
	}
	th := message.Thread{Platform: message.Discord, Account: in.ApplicationID, Chat: channel}
	return message.Event{
		Platform:     message.Discord,
		Account:      in.ApplicationID,
		EventID:      in.ID,
		Kind:         kind,
		Thread:       th,
		Sender:       message.Sender{ID: user.ID, Name: name, IsBot: user.Bot},
		ChatType:     chatType,
		Time:         at,
		ReplyContext: &message.ReplyContext{Token: replyToken(callback, in.Token), Until: at.Add(TokenLife)},
	}, nil
}

// accepted is the Parsed of one event: answered with callback once it is
// durable, with an ephemeral "try again" when it could not be made durable
// within Discord's 3 seconds.
func accepted(ev message.Event, callback int) platform.Parsed {
	return platform.Parsed{
		Events:      []message.Event{ev},
		Ack:         reply(DiscordInteractionResponse{Type: callback}),
		Unavailable: note(noteUnavailable).reply(),
		Within:      Within,
	}
}

// ignored is the Parsed of an interaction Parley does not take, answered
// with answer when the interaction needs one.
func ignored(id, reason string, answer *DiscordInteractionResponse) platform.Parsed {
	p := platform.Parsed{Ignored: []platform.Ignored{{Reason: reason, ID: id}}}
	if answer != nil {
		p.Ack = answer.reply()
	}
	return p
}

// note is an ephemeral message to the person who interacted.
func note(text string) *DiscordInteractionResponse {
	return &DiscordInteractionResponse{Type: DiscordCallbackChannelMessageWithSource,
		Data: DiscordCallbackMessage{Content: text, Flags: DiscordFlagEphemeral}}
}

func (a *DiscordInteractionResponse) reply() *platform.Reply { return reply(*a) }

func reply(a DiscordInteractionResponse) *platform.Reply {
	body, _ := json.Marshal(a) // only Parley's own types: cannot fail
	return &platform.Reply{Status: http.StatusOK, ContentType: "application/json", Body: body}
}

// A ReplyContext's Token is the interaction's token behind the callback it
// was answered with, "<callback>:<token>": the sender must know whether the
// interaction's original response is a "thinking" message that the first
// bubble replaces (a command, 5) or the pressed message itself, which a
// reply must never overwrite (a press, 6).
func replyToken(callback int, token string) string { return strconv.Itoa(callback) + ":" + token }

// splitReplyToken undoes replyToken; callback is 0 for a token of any other
// form, which the sender never answers through.
func splitReplyToken(s string) (callback int, token string) {
	cb, tok, ok := strings.Cut(s, ":")
	if !ok || tok == "" {
		return 0, ""
	}
	switch cb {
	case "5":
		return DiscordCallbackDeferredChannelMessage, tok
	case "6":
		return DiscordCallbackDeferredUpdateMessage, tok
	}
	return 0, ""
}
