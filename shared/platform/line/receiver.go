package line

import (
	"bytes"
	"crypto/hmac"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// SignatureHeader carries Base64(HMAC-SHA256(channel secret, body)) on every
// webhook request. LINE signs no timestamp.
const SignatureHeader = "X-Line-Signature"

// ReplyTokenValidity is how long after its event a reply token is taken to
// be usable (ReplyContext.Until). LINE's reference says a reply token must
// be used within one minute of receiving the webhook and that later use is
// not guaranteed; developers measured 30 s in earlier years. A reply
// refused for its token falls back to a push within the same send, so a
// token that expires sooner costs one call, never the message.
const ReplyTokenValidity = time.Minute

// MaxEvents is the most events Parley takes from one webhook request. LINE
// documents no bound and batches only what arrives together (a handful);
// each event costs the webhook a dedupe claim and an enqueue, one after
// another, so a request beyond this is refused (422, ErrUnprocessable)
// before anything is written rather than run out the platform's patience
// half done. The body limit (1 MiB) would otherwise allow thousands.
const MaxEvents = 100

// Stable reasons of dropped events that are LINE's own (the others are
// platform.Ignored*).
const (
	// IgnoredStandby: the channel is in standby mode (another module holds
	// the chat); LINE asks bots not to send then.
	IgnoredStandby = "standby"
	// IgnoredNoSender: a group or room message without source.userId (LINE
	// includes it only for LINE on iOS and Android): Parley cannot tell who
	// wrote, which a turn and a question's owner need.
	IgnoredNoSender = "no_sender"
)

var _ platform.Receiver = (*Receiver)(nil)

// Receiver is the receive half of the LINE adapter.
//
// One request carries a batch of events for the bot named by destination.
// The console's "Verify" sends an empty batch, answered 200 (Parsed.Reply)
// with nothing stored. Each event is its own message.Event, in LINE's
// order, deduplicated on its webhookEventId (a ULID LINE keeps when it
// redelivers, with deliveryContext.isRedelivery set), scoped by
// destination (Account). The thread is the source's chat: source.groupId,
// roomId or, in a one-to-one chat, userId (ChatType private; group
// otherwise). The sender is source.userId.
//
//   - A text message is a KindMessage with its text (a leading mention of
//     the bot removed), MessageID = its id, QuoteToken = its quoteToken
//     (what a reply needs to quote it: LINE quotes by token, not by
//     message id) and ReplyTo = the quotedMessageId of the message it
//     quotes, if any.
//
//   - An image, video, audio or file message is a KindMessage without text
//     and with one attachment (attachment): its content the turn fetches
//     from the content API (Client.Download).
//
//   - An unsend is a KindDelete of the message it names (unsend.messageId),
//     taken only when the deployment asks for edits (PARLEY_EDITS).
//
//   - A postback is a KindAnswer with Press{Data: postback.data}; no
//     MessageID (a quick reply names no message, and is gone once used).
//
//   - Each message and postback carries its replyToken in ReplyContext, with
//     Until = the event's time + ReplyTokenValidity.
//
//   - A sticker is a KindMessage with one sticker attachment, described
//     (its package and sticker ids, its keywords) with
//     message.ReasonNotServed: LINE serves no sticker's image to a bot. A
//     file another service holds (contentProvider "external") is
//     described the same way.
//
// Dropped with a stable reason: other message types (locations:
// "no_text"), a text left empty ("no_text"), a postback without data
// ("unsupported"), events in standby mode ("standby"),
// group messages without a user id ("no_sender") and every other event type
// (follow, unfollow, join, leave, member events, beacons …: "unsupported").
type Receiver struct {
	// ChannelSecret is the channel secret (Basic settings). Required: an
	// empty secret refuses every request.
	ChannelSecret string
	// BotUserID, when set, is the bot's user id (LINE_BOT_USER_ID): a
	// request for another destination is refused (403, ErrForbidden), so a
	// wrong setting shows at the console's "Verify" instead of as sends
	// refused later.
	BotUserID string
}

// Validate reports every configuration problem at once.
func (r *Receiver) Validate() error {
	var errs []error
	if r.ChannelSecret == "" {
		errs = append(errs, errors.New("line: LINE_CHANNEL_SECRET is required"))
	}
	if err := checkBotUserID(r.BotUserID); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Platform returns message.LINE.
func (r *Receiver) Platform() message.Platform { return message.LINE }

// Verify checks X-Line-Signature: Base64(HMAC-SHA256(channel secret, raw
// body)), compared in constant time. Nothing dates the request; redeliveries
// are signed like first deliveries and the dedupe key covers them.
func (r *Receiver) Verify(req *platform.Request) error {
	if r.ChannelSecret == "" {
		return fmt.Errorf("%w: no channel secret configured", platform.ErrUnauthorized)
	}
	sigs := req.Header.Values(SignatureHeader)
	switch {
	case len(sigs) == 0 || sigs[0] == "":
		return fmt.Errorf("%w: missing %s", platform.ErrUnauthorized, SignatureHeader)
	case len(sigs) > 1:
		return fmt.Errorf("%w: more than one %s", platform.ErrUnauthorized, SignatureHeader)
	}
	got, err := base64.StdEncoding.DecodeString(strings.TrimSpace(sigs[0]))
	if err != nil {
		return fmt.Errorf("%w: %s is not base64", platform.ErrUnauthorized, SignatureHeader)
	}
	if !hmac.Equal(got, Sign(r.ChannelSecret, req.Body)) {
		return fmt.Errorf("%w: %s does not match", platform.ErrUnauthorized, SignatureHeader)
	}
	return nil
}

// Sign is the signature's MAC: HMAC-SHA256(secret, body). The header value
// is its standard Base64.
func Sign(secret string, body []byte) []byte {
	return platform.HMACSHA256(secret, body)
}

// verified is the answer to the console's "Verify" (an empty batch): LINE
// wants a 200 and reads nothing else.
var verified = platform.Reply{Status: http.StatusOK, ContentType: "text/plain; charset=utf-8", Body: []byte("OK")}

// Parse decodes a verified request: the batch, then each event by its type.
func (r *Receiver) Parse(req *platform.Request) (platform.Parsed, error) {
	body := bytes.TrimSpace(req.Body)
	if len(body) == 0 || body[0] != '{' {
		return platform.Parsed{}, fmt.Errorf("%w: line webhook is not a JSON object", platform.ErrMalformed)
	}
	var cb LineCallback
	if err := json.Unmarshal(body, &cb); err != nil {
		return platform.Parsed{}, fmt.Errorf("%w: line webhook does not decode", platform.ErrMalformed)
	}
	switch {
	case !chatID(cb.Destination):
		return platform.Parsed{}, fmt.Errorf("%w: line webhook without a destination", platform.ErrMalformed)
	case cb.Events == nil:
		return platform.Parsed{}, fmt.Errorf("%w: line webhook without events", platform.ErrMalformed)
	case r.BotUserID != "" && cb.Destination != r.BotUserID:
		return platform.Parsed{}, fmt.Errorf("%w: the webhook is for another bot than %s", platform.ErrForbidden, SettingBotUserID)
	case len(*cb.Events) > MaxEvents:
		return platform.Parsed{}, fmt.Errorf("%w: %d events in one request, at most %d", platform.ErrUnprocessable, len(*cb.Events), MaxEvents)
	}
	events := *cb.Events
	if len(events) == 0 {
		reply := verified
		return platform.Parsed{Reply: &reply}, nil
	}
	var out platform.Parsed
	for i, raw := range events {
		ev, ignored, err := r.event(req, cb.Destination, raw)
		if err != nil {
			return platform.Parsed{}, fmt.Errorf("%w (event %d)", err, i)
		}
		if ignored != nil {
			out.Ignored = append(out.Ignored, *ignored)
			continue
		}
		out.Events = append(out.Events, ev)
	}
	return out, nil
}

// event decodes one event: an event to enqueue, or the reason it is
// dropped.
func (r *Receiver) event(req *platform.Request, bot string, raw json.RawMessage) (message.Event, *platform.Ignored, error) {
	var ev LineEvent
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &ev) != nil {
		return message.Event{}, nil, fmt.Errorf("%w: line event is not an event object", platform.ErrMalformed)
	}
	if !chatID(ev.WebhookEventID) {
		return message.Event{}, nil, fmt.Errorf("%w: line event without webhookEventId", platform.ErrMalformed)
	}
	ignore := func(reason string) (message.Event, *platform.Ignored, error) {
		return message.Event{}, &platform.Ignored{Reason: reason, ID: ev.WebhookEventID}, nil
	}
	// LINE signs the body alone: an event's own time is what tells a
	// replay past the dedupe window.
	if req.Stale(eventTime(ev.Timestamp)) {
		return ignore(platform.IgnoredStale)
	}
	switch ev.Type {
	case LineEventMessage, LineEventPostback, LineEventUnsend:
	default:
		return ignore(platform.IgnoredUnsupported)
	}
	if ev.Mode == LineModeStandby {
		return ignore(IgnoredStandby)
	}
	thread, chatType, sender, err := source(bot, ev.Source)
	if err != nil {
		return message.Event{}, nil, err
	}
	out := message.Event{
		Platform: message.LINE,
		Account:  bot,
		EventID:  ev.WebhookEventID,
		Thread:   thread,
		ChatType: chatType,
		Time:     eventTime(ev.Timestamp),
	}
	if ev.ReplyToken != "" {
		out.ReplyContext = &message.ReplyContext{Token: ev.ReplyToken, Until: out.Time.Add(ReplyTokenValidity)}
	}
	if ev.Type == LineEventUnsend {
		if ev.Unsend == nil || !chatID(ev.Unsend.MessageID) {
			return message.Event{}, nil, fmt.Errorf("%w: line unsend event without the message it unsends", platform.ErrMalformed)
		}
		if sender == "" {
			return ignore(IgnoredNoSender)
		}
		out.Kind, out.Sender, out.MessageID = message.KindDelete, message.Sender{ID: sender}, ev.Unsend.MessageID
		return out, nil, nil
	}

	if ev.Type == LineEventPostback {
		var pb LinePostbackContent
		if len(ev.Postback) == 0 || ev.Postback[0] != '{' || json.Unmarshal(ev.Postback, &pb) != nil {
			return message.Event{}, nil, fmt.Errorf("%w: line postback event without postback", platform.ErrMalformed)
		}
		if pb.Data == "" {
			// A rich menu's or template's postback of nothing: no control
			// Parley sends.
			return ignore(platform.IgnoredUnsupported)
		}
		if sender == "" {
			return ignore(IgnoredNoSender)
		}
		out.Kind = message.KindAnswer
		out.Sender = message.Sender{ID: sender}
		out.Press = &message.Press{Data: pb.Data}
		return out, nil, nil
	}

	var m LineMessageContent
	if len(ev.Message) == 0 || ev.Message[0] != '{' || json.Unmarshal(ev.Message, &m) != nil {
		return message.Event{}, nil, fmt.Errorf("%w: line message event without message", platform.ErrMalformed)
	}
	var text string
	switch m.Type {
	case LineMessageText:
		text = stripSelfMention(m.Text, m.Mention)
		if strings.TrimSpace(text) == "" {
			return ignore(platform.IgnoredNoText)
		}
	case LineMessageImage, LineMessageVideo, LineMessageAudio, LineMessageFile:
		if !chatID(m.ID) {
			return message.Event{}, nil, fmt.Errorf("%w: line %s message without its id", platform.ErrMalformed, m.Type)
		}
		out.Attachments = []message.Attachment{attachment(m)}
	case LineMessageSticker:
		if !chatID(m.ID) || !chatID(m.PackageID) || !chatID(m.StickerID) {
			return message.Event{}, nil, fmt.Errorf("%w: line sticker message without its ids", platform.ErrMalformed)
		}
		// A message sticker's text is what the person wrote on it.
		text = m.Text
		out.Attachments = []message.Attachment{sticker(m)}
	default:
		return ignore(platform.IgnoredNoText)
	}
	if sender == "" {
		return ignore(IgnoredNoSender)
	}
	out.Kind = message.KindMessage
	out.Sender = message.Sender{ID: sender}
	out.Text = text
	out.MessageID, out.QuoteToken = m.ID, m.QuoteToken
	out.ReplyTo = m.QuotedMessageID
	return out, nil, nil
}

// source is the event's thread, chat type and sender (the user id, "" when
// LINE left it out).
func source(bot string, s *LineSource) (message.Thread, string, string, error) {
	if s == nil {
		return message.Thread{}, "", "", fmt.Errorf("%w: line event without source", platform.ErrMalformed)
	}
	var chat, chatType string
	switch s.Type {
	case LineSourceUser:
		chat, chatType = s.UserID, message.ChatPrivate
	case LineSourceGroup:
		chat, chatType = s.GroupID, message.ChatGroup
	case LineSourceRoom:
		chat, chatType = s.RoomID, message.ChatGroup
	default:
		return message.Thread{}, "", "", fmt.Errorf("%w: line source of unknown type", platform.ErrMalformed)
	}
	if !chatID(chat) || (s.UserID != "" && !chatID(s.UserID)) {
		return message.Thread{}, "", "", fmt.Errorf("%w: line %s source without a valid id", platform.ErrMalformed, s.Type)
	}
	return message.Thread{Platform: message.LINE, Account: bot, Chat: chat}, chatType, s.UserID, nil
}

// eventTime reads LINE's millisecond timestamp; the zero time for none.
func eventTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// stripSelfMention removes a mention of the bot that opens the text (how a
// person addresses the bot in a group: "@Parley what's up?") and the space
// after it, so the agent gets what was said to it. Mentions count UTF-16
// code units; a mention that does not fit the text is left alone.
func stripSelfMention(text string, m *LineMention) string {
	if m == nil {
		return text
	}
	for _, who := range m.Mentionees {
		if !who.IsSelf || who.Index != 0 || who.Length <= 0 {
			continue
		}
		cut, ok := utf16Offset(text, who.Length)
		if !ok {
			return text
		}
		return strings.TrimLeft(text[cut:], " \t\n\u3000")
	}
	return text
}

// utf16Offset is the byte offset in s after n UTF-16 code units, if that
// falls on a character boundary within s.
func utf16Offset(s string, n int) (int, bool) {
	units := 0
	for i, r := range s {
		if units == n {
			return i, true
		}
		if units > n {
			return 0, false
		}
		units += utf16.RuneLen(r)
	}
	return len(s), units == n
}
