package slack

import (
	"bytes"
	"crypto/hmac"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// Request headers Slack signs every request with: Events API and
// interactivity alike.
const (
	TimestampHeader = "X-Slack-Request-Timestamp"
	SignatureHeader = "X-Slack-Signature"
)

// MaxSkew is how far a request's timestamp may be from now, either way,
// before it is refused as a replay.
const MaxSkew = 5 * time.Minute

var _ platform.Receiver = (*Receiver)(nil)

// IgnoredParleyEcho is the reason for a message that carries Parley's own
// origin tag: an echo of the error line, a notice, a system send.
const IgnoredParleyEcho = "parley_echo"

// Receiver is the receive half of the Slack adapter.
//
// It answers url_verification, and turns "message" events (plain, thread
// broadcasts, file shares with text) and "app_mention" events into one
// message.Event each. It drops the app's own messages ("bot") and echoes of
// Parley's operational output, by their metadata tag ("parley_echo");
// another bot's message is an event with Sender.IsBot, which the webhook
// core drops unless PARLEY_ALLOW_BOTS is on. It drops edits ("edited"), deletions ("deleted"), messages left without
// text ("no_text", also a bare mention of the bot), and every other event
// or subtype ("unsupported").
//
// Interactivity requests come to the same URL, signed the same way, as a
// form whose payload field holds JSON. A block_actions payload on a message
// becomes one message.KindAnswer per action, a press with Press{Data: the
// action's value, or its selected option's; MessageID: the message's ts}, in
// the message's channel and thread. Every other payload (shortcuts, modal
// submissions, presses in a modal or the App Home) is dropped
// ("unsupported"). Slack waits 3 seconds for the answer (Parsed.Within).
//
// # Event ids
//
// EventID is "<channel>:<ts>" of the message, not the envelope's event_id.
// When a user mentions the app in a channel it also reads, Slack sends two
// events for that one message, an app_mention and a message, each with its
// own event_id. Keyed on channel and ts they share one dedupe key, so the
// agent is asked once. Slack's retries repeat the same body, so they share it
// too.
//
// # Threads
//
// A message inside a thread replies into that thread (thread_ts). A top-level
// channel message starts a thread on itself (Thread = its ts) unless
// ReplyInChannel is set. Direct messages are answered inline (Thread empty):
// DMs read as a chat, and consecutive DM messages then share one ordering
// key, so turns of one DM conversation run in order.
type Receiver struct {
	// SigningSecret is the app's Signing Secret (Basic Information page).
	// Required: an empty secret refuses every request.
	SigningSecret string
	// ReplyInChannel answers top-level channel messages in the channel
	// instead of in a thread started on the message. Defaults to false:
	// replies go into a thread, which keeps a busy channel readable.
	ReplyInChannel bool
}

// Platform returns message.Slack.
func (r *Receiver) Platform() message.Platform { return message.Slack }

// Verify checks Slack's v0 signature over the raw body: hex
// HMAC-SHA256(signing secret, "v0:" + timestamp + ":" + body), compared in
// constant time, with the timestamp within MaxSkew of req.Now (the wall clock
// when req.Now is zero). Retries (X-Slack-Retry-Num) are signed like first
// deliveries and need nothing special: the dedupe key covers them.
func (r *Receiver) Verify(req *platform.Request) error {
	if r.SigningSecret == "" {
		return fmt.Errorf("%w: no signing secret configured", platform.ErrUnauthorized)
	}
	ts := req.Header.Get(TimestampHeader)
	sig := req.Header.Get(SignatureHeader)
	switch {
	case ts == "":
		return fmt.Errorf("%w: missing %s", platform.ErrUnauthorized, TimestampHeader)
	case sig == "":
		return fmt.Errorf("%w: missing %s", platform.ErrUnauthorized, SignatureHeader)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %s is not a unix time", platform.ErrMalformed, TimestampHeader)
	}
	hexSig, ok := strings.CutPrefix(sig, "v0=")
	if !ok {
		return fmt.Errorf("%w: %s is not a v0 signature", platform.ErrUnauthorized, SignatureHeader)
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return fmt.Errorf("%w: %s is not hex", platform.ErrUnauthorized, SignatureHeader)
	}
	if !hmac.Equal(got, Sign(r.SigningSecret, ts, req.Body)) {
		return fmt.Errorf("%w: %s does not match", platform.ErrUnauthorized, SignatureHeader)
	}
	// Checked after the signature, so a stale verdict means "authentic but
	// old" (a replay, or a skewed clock), never a forgery.
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

// Sign is the v0 signature's MAC: HMAC-SHA256(secret, "v0:" + ts + ":" +
// body). The header value is "v0=" + hex of it.
func Sign(secret, ts string, body []byte) []byte {
	return platform.HMACSHA256(secret, []byte("v0:"+ts+":"), body)
}

// Parse decodes a verified request: a JSON body is an Events API
// envelope, decoded first and then its inner event by type; anything else
// is an interactivity form.
func (r *Receiver) Parse(req *platform.Request) (platform.Parsed, error) {
	body := bytes.TrimSpace(req.Body)
	if len(body) > 0 && body[0] == '{' {
		return r.event(body)
	}
	return r.interaction(body)
}

func (r *Receiver) event(body []byte) (platform.Parsed, error) {
	var env SlackEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return platform.Parsed{}, fmt.Errorf("%w: slack envelope does not decode", platform.ErrMalformed)
	}
	ignore := func(reason string) (platform.Parsed, error) {
		return platform.Parsed{Ignored: []platform.Ignored{{Reason: reason, ID: env.EventID}}}, nil
	}
	switch env.Type {
	case SlackTypeURLVerification:
		if env.Challenge == "" {
			return platform.Parsed{}, fmt.Errorf("%w: url_verification without challenge", platform.ErrMalformed)
		}
		return platform.Parsed{Reply: &platform.Reply{
			Status:      http.StatusOK,
			ContentType: "text/plain; charset=utf-8",
			Body:        []byte(env.Challenge),
		}}, nil
	case SlackTypeEventCallback:
	default:
		// app_rate_limited and whatever Slack adds later.
		return ignore(platform.IgnoredUnsupported)
	}

	if len(env.Event) == 0 || env.Event[0] != '{' {
		return platform.Parsed{}, fmt.Errorf("%w: event_callback without event", platform.ErrMalformed)
	}
	var kind struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(env.Event, &kind); err != nil {
		return platform.Parsed{}, fmt.Errorf("%w: slack event does not decode", platform.ErrMalformed)
	}
	var botUser string
	if len(env.Authorizations) > 0 {
		botUser = env.Authorizations[0].UserID
	}
	switch kind.Type {
	case SlackEventMessage, SlackEventAppMention:
	case SlackEventReactionAdded, SlackEventReactionRemoved:
		return r.reaction(env, botUser, ignore)
	default:
		return ignore(platform.IgnoredUnsupported)
	}
	var ev SlackMessageEvent
	if err := json.Unmarshal(env.Event, &ev); err != nil {
		return platform.Parsed{}, fmt.Errorf("%w: slack %s event does not decode", platform.ErrMalformed, kind.Type)
	}
	if md := ev.Metadata; md != nil && md.EventType == MetadataEventType && md.EventPayload.Origin == message.OriginParley {
		// Parley's own operational output, echoed (by its bot, or by a
		// bot relaying it): dropped by tag, before any bot rule. The same
		// text from anyone untagged is a message like any other.
		return ignore(IgnoredParleyEcho)
	}
	if ev.Subtype == SlackSubtypeBotMessage && (ev.BotID == "" || ev.User == botUser) {
		return ignore(platform.IgnoredBot)
	}
	switch ev.Subtype {
	case "", SlackSubtypeThreadBroadcast, SlackSubtypeFileShare, SlackSubtypeBotMessage:
	case SlackSubtypeMessageChanged:
		return r.edit(env, ev, botUser, ignore)
	case SlackSubtypeMessageDeleted:
		return r.deleted(env, ev, botUser, ignore)
	default:
		return ignore(platform.IgnoredUnsupported)
	}
	if botUser != "" && ev.User == botUser {
		return ignore(platform.IgnoredBot) // Parley's own message
	}
	isBot := ev.BotID != ""
	sender := ev.User
	if sender == "" && isBot {
		sender = ev.BotID // an integration's bot_message names no user
	}
	if sender == "" {
		return ignore(platform.IgnoredUnsupported)
	}

	team := env.TeamID
	if team == "" && len(env.Authorizations) > 0 {
		team = env.Authorizations[0].TeamID
	}
	if team == "" || ev.Channel == "" || ev.TS == "" {
		return platform.Parsed{}, fmt.Errorf("%w: slack message without team_id, channel or ts", platform.ErrMalformed)
	}
	text := stripMention(ev.Text, botUser)
	files := attachments(ev.Files)
	if strings.TrimSpace(text) == "" && len(files) == 0 {
		return ignore(platform.IgnoredNoText)
	}

	im := isIM(ev)
	thread := r.thread(team, ev.Channel, ev.TS, ev.ThreadTS, im)
	out := message.Event{
		Platform:  message.Slack,
		Account:   team,
		EventID:   ev.Channel + ":" + ev.TS,
		Kind:      message.KindMessage,
		Thread:    thread,
		Sender:    message.Sender{ID: sender, IsBot: isBot},
		Text:      text,
		MessageID: ev.TS,
		ChatType:  message.ChatGroup,
		Time:      tsTime(ev.TS, env.EventTime),
	}
	out.Attachments = files
	if im {
		out.ChatType = message.ChatPrivate
	}
	if ev.ThreadTS != "" && ev.ThreadTS != ev.TS {
		out.ReplyTo = ev.ThreadTS
	}
	return platform.Parsed{Events: []message.Event{out}}, nil
}

// isIM reports whether ev is in a direct message: app_mention carries no
// channel_type, and DM channel ids start with D.
func isIM(ev SlackMessageEvent) bool {
	return ev.ChannelType == SlackChannelIM || (ev.ChannelType == "" && strings.HasPrefix(ev.Channel, "D"))
}

// thread is where a reply to the message ts (in thread threadTS, if any)
// goes: its thread; a top-level channel message starts one on itself
// unless ReplyInChannel.
func (r *Receiver) thread(team, channel, ts, threadTS string, im bool) message.Thread {
	t := message.Thread{Platform: message.Slack, Account: team, Chat: channel, Thread: threadTS}
	if t.Thread == "" && !im && !r.ReplyInChannel {
		t.Thread = ts
	}
	return t
}

// team is the workspace an envelope is from.
func teamOf(env SlackEnvelope) string {
	if env.TeamID == "" && len(env.Authorizations) > 0 {
		return env.Authorizations[0].TeamID
	}
	return env.TeamID
}

// edit turns a message_changed event into an edit of the message it names,
// in the thread its replies go to: what it says now. An edit whose text did
// not change (Slack adds a link's preview) is no edit; the app's own edits
// (its questions' progress) and other bots' are dropped.
func (r *Receiver) edit(env SlackEnvelope, ev SlackMessageEvent, botUser string, ignore func(string) (platform.Parsed, error)) (platform.Parsed, error) {
	m, team := ev.Message, teamOf(env)
	switch {
	case m == nil || m.TS == "" || team == "" || ev.Channel == "" || ev.TS == "":
		return platform.Parsed{}, fmt.Errorf("%w: slack message_changed without the message, team, channel or ts", platform.ErrMalformed)
	case m.BotID != "" || m.User == "" || m.User == botUser:
		return ignore(platform.IgnoredBot)
	case ev.PreviousMessage != nil && ev.PreviousMessage.Text == m.Text:
		return ignore(platform.IgnoredEdited)
	}
	im := ev.ChannelType == SlackChannelIM || strings.HasPrefix(ev.Channel, "D")
	out := message.Event{
		Platform: message.Slack, Account: team, EventID: "edit:" + ev.Channel + ":" + m.TS + ":" + ev.TS, Kind: message.KindEdit,
		Thread: r.thread(team, ev.Channel, m.TS, m.ThreadTS, im), Sender: message.Sender{ID: m.User},
		Text: stripMention(m.Text, botUser), MessageID: m.TS, ChatType: chatType(im), Time: tsTime(ev.TS, env.EventTime),
	}
	return platform.Parsed{Events: []message.Event{out}}, nil
}

// deleted turns a message_deleted event into a deletion of the message it
// names, by the person who wrote it. The app's own messages and other
// bots' are dropped.
func (r *Receiver) deleted(env SlackEnvelope, ev SlackMessageEvent, botUser string, ignore func(string) (platform.Parsed, error)) (platform.Parsed, error) {
	prev, team := ev.PreviousMessage, teamOf(env)
	switch {
	case ev.DeletedTS == "" || team == "" || ev.Channel == "":
		return platform.Parsed{}, fmt.Errorf("%w: slack message_deleted without deleted_ts, team or channel", platform.ErrMalformed)
	case prev == nil || prev.User == "":
		return ignore(platform.IgnoredUnsupported) // nobody to say who deleted what
	case prev.BotID != "" || prev.User == botUser:
		return ignore(platform.IgnoredBot)
	}
	im := ev.ChannelType == SlackChannelIM || strings.HasPrefix(ev.Channel, "D")
	out := message.Event{
		Platform: message.Slack, Account: team, EventID: "del:" + ev.Channel + ":" + ev.DeletedTS, Kind: message.KindDelete,
		Thread: r.thread(team, ev.Channel, ev.DeletedTS, prev.ThreadTS, im), Sender: message.Sender{ID: prev.User},
		MessageID: ev.DeletedTS, ChatType: chatType(im), Time: tsTime(ev.TS, env.EventTime),
	}
	return platform.Parsed{Events: []message.Event{out}}, nil
}

// reaction turns reaction_added or reaction_removed on a message into a
// reaction event, keyed by the envelope's event_id (Slack's retries repeat
// it). The event does not say which thread the message is in: it is the
// channel's (in a direct message, the conversation's own thread).
func (r *Receiver) reaction(env SlackEnvelope, botUser string, ignore func(string) (platform.Parsed, error)) (platform.Parsed, error) {
	var ev SlackReactionEvent
	if err := json.Unmarshal(env.Event, &ev); err != nil {
		return platform.Parsed{}, fmt.Errorf("%w: slack %s event does not decode", platform.ErrMalformed, "reaction")
	}
	team := teamOf(env)
	switch {
	case ev.Item.Type != "message":
		return ignore(platform.IgnoredUnsupported) // a file's reaction
	case team == "" || ev.Item.Channel == "" || ev.Item.TS == "" || ev.User == "" || ev.Reaction == "":
		return platform.Parsed{}, fmt.Errorf("%w: slack reaction without team, channel, ts, user or reaction", platform.ErrMalformed)
	case ev.User == botUser:
		return ignore(platform.IgnoredBot)
	}
	id := env.EventID
	if id == "" {
		id = ev.Item.Channel + ":" + ev.Item.TS + ":" + ev.User + ":" + ev.Reaction + ":" + ev.EventTS
	}
	im := strings.HasPrefix(ev.Item.Channel, "D")
	out := message.Event{
		Platform: message.Slack, Account: team, EventID: "react:" + id, Kind: message.KindReaction,
		Thread: message.Thread{Platform: message.Slack, Account: team, Chat: ev.Item.Channel},
		Sender: message.Sender{ID: ev.User}, ChatType: chatType(im), Time: tsTime(ev.EventTS, env.EventTime),
		Reaction: &message.Reaction{MessageID: ev.Item.TS, Emoji: EmojiFromName(ev.Reaction), Removed: ev.Type == SlackEventReactionRemoved},
	}
	return platform.Parsed{Events: []message.Event{out}}, nil
}

func chatType(im bool) string {
	if im {
		return message.ChatPrivate
	}
	return message.ChatGroup
}

// interactionWithin is how long Slack waits for the answer to an
// interactivity request before it shows the person an error.
const interactionWithin = 3 * time.Second

// interaction decodes an interactivity request: the JSON payload of its
// form, then a block_actions press on a message.
func (r *Receiver) interaction(body []byte) (platform.Parsed, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return platform.Parsed{}, fmt.Errorf("%w: slack request is neither a JSON object nor a form", platform.ErrMalformed)
	}
	payloads := form[InteractionPayloadField]
	if len(payloads) != 1 {
		return platform.Parsed{}, fmt.Errorf("%w: slack form without exactly one payload field", platform.ErrMalformed)
	}
	payload := strings.TrimSpace(payloads[0])
	var in SlackInteraction
	if !strings.HasPrefix(payload, "{") || json.Unmarshal([]byte(payload), &in) != nil {
		return platform.Parsed{}, fmt.Errorf("%w: slack interactivity payload is not a JSON object", platform.ErrMalformed)
	}
	c := in.Container
	switch {
	case in.Type == SlackInteractionBlockActions && c == nil:
		return platform.Parsed{}, fmt.Errorf("%w: slack block_actions without container", platform.ErrMalformed)
	case in.Type != SlackInteractionBlockActions, c.Type != SlackContainerMessage:
		// A shortcut, a modal, the App Home: no question Parley asked. Its
		// id for the log is its time: trigger_id and response_url are
		// short-lived rights to act, kept out of logs.
		id := in.ActionTS
		if id == "" && len(in.Actions) > 0 {
			id = in.Actions[0].ActionTS
		}
		return platform.Parsed{Ignored: []platform.Ignored{{Reason: platform.IgnoredUnsupported, ID: id}}}, nil
	}

	var team, user, channel string
	if in.User != nil {
		user, team = in.User.ID, in.User.TeamID
	}
	if in.Team != nil && in.Team.ID != "" {
		team = in.Team.ID
	}
	channel = c.ChannelID
	if channel == "" && in.Channel != nil {
		channel = in.Channel.ID
	}
	if team == "" || user == "" || channel == "" || c.MessageTS == "" || len(in.Actions) == 0 {
		return platform.Parsed{}, fmt.Errorf("%w: slack block_actions without team, user, channel, message ts or actions", platform.ErrMalformed)
	}
	thread := c.ThreadTS
	if thread == "" && in.Message != nil {
		thread = in.Message.ThreadTS
	}
	if thread == c.MessageTS {
		// The pressed message is a thread's parent: it lives in the
		// channel, where its question was asked.
		thread = ""
	}
	chatType := message.ChatGroup
	if strings.HasPrefix(channel, "D") {
		chatType = message.ChatPrivate
	}

	out := platform.Parsed{Within: interactionWithin}
	for _, a := range in.Actions {
		if a.ActionTS == "" {
			return platform.Parsed{}, fmt.Errorf("%w: slack action without action_ts", platform.ErrMalformed)
		}
		id := channel + ":" + c.MessageTS + ":" + a.ActionTS
		data := a.Value
		var values []string
		switch {
		case data == "" && a.SelectedOption != nil:
			data = a.SelectedOption.Value
		case data == "" && (a.Type == "checkboxes" || a.Type == "multi_static_select"):
			// The whole choice, every time it changes: Done submits it.
			data = a.ActionID
			values = []string{}
			for _, o := range a.SelectedOptions {
				values = append(values, o.Value)
			}
		}
		if data == "" {
			// A link button, a date picker, a multi-select: nothing of a
			// control Parley sends.
			out.Ignored = append(out.Ignored, platform.Ignored{Reason: platform.IgnoredUnsupported, ID: id})
			continue
		}
		out.Events = append(out.Events, message.Event{
			Platform: message.Slack,
			Account:  team,
			EventID:  id,
			Kind:     message.KindAnswer,
			Thread:   message.Thread{Platform: message.Slack, Account: team, Chat: channel, Thread: thread},
			Sender:   message.Sender{ID: user},
			ChatType: chatType,
			Time:     tsTime(a.ActionTS, 0),
			Press:    &message.Press{Data: data, Values: values, MessageID: c.MessageTS},
		})
	}
	if len(out.Events) == 0 {
		out.Within = 0
	}
	return out, nil
}

// stripMention removes a leading mention of the bot ("<@U0BOT>" or the older
// "<@U0BOT|name>") and the space after it: the agent gets what was said to
// it, and a message and its app_mention twin read the same.
func stripMention(text, botUser string) string {
	if botUser == "" {
		return text
	}
	rest := strings.TrimLeft(text, " ")
	after, ok := strings.CutPrefix(rest, "<@"+botUser)
	if !ok || after == "" {
		return text
	}
	switch after[0] {
	case '>':
		after = after[1:]
	case '|':
		end := strings.IndexByte(after, '>')
		if end < 0 {
			return text
		}
		after = after[end+1:]
	default:
		return text // a longer user id that starts with the bot's
	}
	return strings.TrimLeft(after, " \t\n")
}

// tsTime reads a Slack ts ("1700000000.000100": unix seconds and a
// per-channel sequence in microseconds), falling back to the envelope's
// event_time.
func tsTime(ts string, eventTime int64) time.Time {
	secs, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(secs, 10, 64)
	if err != nil || s < 0 || len(frac) > 9 {
		return unixOrZero(eventTime)
	}
	var ns int64
	if frac != "" {
		f, err := strconv.ParseUint(frac, 10, 64)
		if err != nil {
			return unixOrZero(eventTime)
		}
		ns = int64(f)
		for range 9 - len(frac) {
			ns *= 10
		}
	}
	return time.Unix(s, ns).UTC()
}

func unixOrZero(sec int64) time.Time {
	if sec <= 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}

// Validate reports a configuration problem.
func (r *Receiver) Validate() error {
	if r.SigningSecret == "" {
		return errors.New("slack: SigningSecret is required")
	}
	return nil
}

// attachments are the files a message shares: those Slack hosts, and
// external ones (a link to a file another service holds, which Slack
// serves no bytes for) described with message.ReasonNotServed. A file
// deleted (tombstone) or hidden by the workspace's plan is left out: there
// is nothing to fetch or to describe.
func attachments(files []SlackFile) []message.Attachment {
	var out []message.Attachment
	for _, f := range files {
		var reason message.AttachmentReason
		switch f.Mode {
		case "", "hosted", "snippet", "post":
		case "external":
			reason = message.ReasonNotServed
		default:
			continue
		}
		if f.ID == "" {
			continue
		}
		a := message.Attachment{Index: len(out), Kind: fileKind(f), MIME: f.Mimetype, Size: f.Size, Name: f.Name, PlatformID: f.ID,
			Width: max(f.OriginalW, 0), Height: max(f.OriginalH, 0), Duration: max(f.DurationMS/1000, 0), Reason: reason}
		out = append(out, a)
	}
	return out
}

// fileKind is what a Slack file is, by its type: a voice clip recorded in
// Slack is slack_audio.
func fileKind(f SlackFile) message.AttachmentKind {
	if f.Subtype == "slack_audio" {
		return message.AttachVoice
	}
	return message.KindOfType(f.Mimetype)
}
