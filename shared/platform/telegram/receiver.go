package telegram

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// SecretHeader carries the secret_token given to setWebhook on every update.
const SecretHeader = "X-Telegram-Bot-Api-Secret-Token"

var _ platform.Receiver = (*Receiver)(nil)

// Receiver is the receive half of the Telegram adapter: it checks the webhook
// secret and turns an Update into at most one message.Event.
//
// Handled: "message" updates with text or a caption, in private chats,
// groups, supergroups and forum topics, and "callback_query" updates, the
// presses of inline keyboard buttons on the bot's messages
// (message.KindAnswer). Dropped with a reason: messages from bots ("bot"),
// edits ("edited"), messages with neither text nor caption ("no_text"), and
// everything else ("unsupported"): channel posts (a broadcast channel has no
// sender to converse with, and a bot admin of a channel should not answer
// its own channel), automatic forwards of those posts into a linked
// discussion group, presses on inline-mode messages (no chat Parley posted
// in) or of game buttons (no data), and membership updates.
//
// # Presses
//
// A press is an answer with Press{Data: callback_data, MessageID: the
// pressed message's message_id, AckID: the callback_query id}, from the
// user who pressed, in the chat (and forum topic) of the pressed message.
// Its EventID is "cb:" and the callback_query id, scoped by the bot like
// update ids (the prefix keeps the two id spaces apart):
// Telegram's redelivery of the update repeats it. The update dates nothing,
// so its Time is when it was received.
//
// A press is answered by the webhook itself, once it is durable
// (Parsed.Ack): the answer is answerCallbackQuery as a Bot API method,
// which Telegram calls for the bot when it reads the webhook's response.
// Telegram refuses to answer a query a few seconds old, and the press's
// turn may wait behind the thread's other turns; the press itself stays
// on the thread's queue, in order. Its turn answers nothing more
// (Client.Acknowledge).
type Receiver struct {
	// WebhookSecret is the secret_token given to setWebhook (1-256 of
	// A-Z a-z 0-9 _ -). Required: an empty secret refuses every request.
	WebhookSecret string
	// BotID is the bot's numeric id, the bot token's prefix (see
	// BotIDFromToken). update_id is unique per bot, so it scopes event ids.
	// Required.
	BotID string
}

// NewReceiver builds a Receiver from the webhook secret and the bot token,
// and validates it.
func NewReceiver(webhookSecret, botToken string) (*Receiver, error) {
	id, err := BotIDFromToken(botToken)
	if err != nil {
		return nil, err
	}
	r := &Receiver{WebhookSecret: webhookSecret, BotID: id}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// Validate reports every configuration problem at once.
func (r *Receiver) Validate() error {
	var errs []error
	if !validSecret(r.WebhookSecret) {
		errs = append(errs, errors.New("telegram: "+SettingWebhookSecret+" (the secret_token given to setWebhook) must be 1-256 characters of A-Z a-z 0-9 _ -"))
	}
	if !digits(r.BotID) {
		errs = append(errs, errors.New("telegram: BotID must be the bot's numeric id"))
	}
	return errors.Join(errs...)
}

// BotIDFromToken returns the numeric bot id a bot token starts with
// ("123456:ABC-DEF..." → "123456"). The error never holds the token.
func BotIDFromToken(token string) (string, error) {
	id, rest, ok := strings.Cut(token, ":")
	if !ok || !digits(id) || rest == "" {
		return "", errors.New("telegram: bot token is not <bot id>:<secret>")
	}
	return id, nil
}

func validSecret(s string) bool {
	if len(s) < 1 || len(s) > 256 {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

func digits(s string) bool {
	if s == "" || len(s) > 19 {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Platform returns message.Telegram.
func (r *Receiver) Platform() message.Platform { return message.Telegram }

// Verify checks that the request carries the webhook secret.
// Telegram signs nothing and sends no timestamp: the secret is all there is.
func (r *Receiver) Verify(req *platform.Request) error {
	if r.WebhookSecret == "" {
		return fmt.Errorf("%w: no webhook secret configured", platform.ErrUnauthorized)
	}
	got := req.Header.Values(SecretHeader)
	if len(got) == 0 {
		return fmt.Errorf("%w: missing %s", platform.ErrUnauthorized, SecretHeader)
	}
	// Comparing digests keeps the comparison constant-time in the secret's
	// length too (ConstantTimeCompare returns early on a length mismatch).
	want := sha256.Sum256([]byte(r.WebhookSecret))
	have := sha256.Sum256([]byte(got[0]))
	if len(got) != 1 || subtle.ConstantTimeCompare(want[:], have[:]) != 1 {
		return fmt.Errorf("%w: wrong %s", platform.ErrUnauthorized, SecretHeader)
	}
	return nil
}

// update is TelegramUpdate with update_id as a pointer, so a missing id is
// told apart from 0. The outer field shadows the embedded one.
type update struct {
	TelegramUpdate
	UpdateID *int64 `json:"update_id"`
}

// Parse decodes a verified update.
func (r *Receiver) Parse(req *platform.Request) (platform.Parsed, error) {
	body := bytes.TrimSpace(req.Body)
	if len(body) == 0 || body[0] != '{' {
		return platform.Parsed{}, fmt.Errorf("%w: telegram update is not a JSON object", platform.ErrMalformed)
	}
	var u update
	if err := json.Unmarshal(body, &u); err != nil {
		return platform.Parsed{}, fmt.Errorf("%w: telegram update does not decode", platform.ErrMalformed)
	}
	if u.UpdateID == nil {
		return platform.Parsed{}, fmt.Errorf("%w: telegram update has no update_id", platform.ErrMalformed)
	}
	id := strconv.FormatInt(*u.UpdateID, 10)
	ignore := func(reason string) (platform.Parsed, error) {
		return platform.Parsed{Ignored: []platform.Ignored{{Reason: reason, ID: id}}}, nil
	}

	m := u.Message
	switch {
	case u.EditedMessage != nil:
		return r.edit(id, u.EditedMessage, req, ignore)
	case u.EditedChannelPost != nil:
		return ignore(platform.IgnoredEdited)
	case u.MessageReaction != nil:
		return r.reaction(id, u.MessageReaction, req, ignore)
	case u.CallbackQuery != nil:
		// A press has no date of its own (its message's is the question's),
		// and it is bounded by its question instead: answered once, closed
		// within PARLEY_QUESTION_TTL (at most 7 days).
		return r.press(id, u.CallbackQuery, req.Now)
	case m == nil, m.IsAutomaticForward:
		return ignore(platform.IgnoredUnsupported)
	case m.Date > 0 && req.Stale(time.Unix(m.Date, 0)):
		// Telegram signs nothing: a message's date is what tells a replay
		// past the dedupe window.
		return ignore(platform.IgnoredStale)
	case m.From != nil && m.From.IsBot:
		return ignore(platform.IgnoredBot)
	}
	text := m.Text
	if text == "" {
		text = m.Caption
	}
	files := attachments(m)
	if text == "" && len(files) == 0 {
		return ignore(platform.IgnoredNoText)
	}
	ev := message.Event{
		Platform:    message.Telegram,
		Account:     r.BotID,
		EventID:     id,
		Kind:        message.KindMessage,
		Thread:      r.thread(m),
		Sender:      sender(m),
		Text:        text,
		MessageID:   strconv.FormatInt(m.MessageID, 10),
		ChatType:    chatType(m),
		Time:        time.Unix(m.Date, 0).UTC(),
		Attachments: files,
	}
	// Every message in a forum topic "replies" to the topic's creation
	// message; only a reply to something else is a real reply.
	if rt := m.ReplyToMessage; rt != nil && !(m.IsTopicMessage && rt.MessageID == m.MessageThreadID) {
		ev.ReplyTo = strconv.FormatInt(rt.MessageID, 10)
		ev.Quote = r.quote(rt)
	}
	return platform.Parsed{Events: []message.Event{ev}}, nil
}

// quote is what a reply_to_message says of the message replied to: its
// text (or caption), its author, and whether this bot sent it.
func (r *Receiver) quote(rt *TelegramMessage) *message.Quote {
	q := &message.Quote{MessageID: strconv.FormatInt(rt.MessageID, 10), Text: rt.Text}
	if q.Text == "" {
		q.Text = rt.Caption
	}
	if s := sender(rt); s.ID != "" {
		q.Sender = &s
		q.Parley = rt.From != nil && rt.From.IsBot && s.ID == r.BotID
	}
	return q
}

// edit turns an edited_message into an edit of the message it names: its
// text now, from the person who edited it. Every edit of one message is an
// update of its own, so the update id keys it.
func (r *Receiver) edit(id string, m *TelegramMessage, req *platform.Request, ignore func(string) (platform.Parsed, error)) (platform.Parsed, error) {
	at := m.EditDate
	if at == 0 {
		at = m.Date
	}
	switch {
	case m.MessageID == 0 || m.Chat.ID == 0:
		return platform.Parsed{}, fmt.Errorf("%w: telegram edited_message without message_id or chat", platform.ErrMalformed)
	case at > 0 && req.Stale(time.Unix(at, 0)):
		return ignore(platform.IgnoredStale)
	case m.From != nil && m.From.IsBot:
		return ignore(platform.IgnoredBot)
	}
	text := m.Text
	if text == "" {
		text = m.Caption
	}
	ev := message.Event{
		Platform: message.Telegram, Account: r.BotID, EventID: id, Kind: message.KindEdit,
		Thread: r.thread(m), Sender: sender(m), Text: text, MessageID: strconv.FormatInt(m.MessageID, 10),
		ChatType: chatType(m), Time: time.Unix(at, 0).UTC(),
	}
	return platform.Parsed{Events: []message.Event{ev}}, nil
}

// reaction turns a message_reaction update into one reaction event per
// reaction added or taken back (a change from 👍 to ❤ is both), each keyed
// by the update id and its place. The update names no forum topic: the
// event is the chat's.
func (r *Receiver) reaction(id string, u *TelegramMessageReactionUpdated, req *platform.Request, ignore func(string) (platform.Parsed, error)) (platform.Parsed, error) {
	switch {
	case u.MessageID == 0 || u.Chat.ID == 0:
		return platform.Parsed{}, fmt.Errorf("%w: telegram message_reaction without message_id or chat", platform.ErrMalformed)
	case u.Date > 0 && req.Stale(time.Unix(u.Date, 0)):
		return ignore(platform.IgnoredStale)
	case u.User != nil && u.User.IsBot:
		return ignore(platform.IgnoredBot)
	}
	var who message.Sender
	switch {
	case u.User != nil:
		who = user(u.User)
	case u.ActorChat != nil:
		who = message.Sender{ID: strconv.FormatInt(u.ActorChat.ID, 10), Name: u.ActorChat.Title}
	}
	ct := message.ChatGroup
	if u.Chat.Type == TelegramChatPrivate {
		ct = message.ChatPrivate
	}
	msgID := strconv.FormatInt(u.MessageID, 10)
	var out platform.Parsed
	add := func(rt TelegramReactionType, removed bool) {
		emoji := rt.Emoji
		if rt.Type == TelegramReactionCustomEmoji && rt.CustomEmojiID != "" {
			emoji = ":" + rt.CustomEmojiID + ":"
		}
		if emoji == "" {
			return // a paid reaction: no emoji
		}
		out.Events = append(out.Events, message.Event{
			Platform: message.Telegram, Account: r.BotID, EventID: id + ":" + strconv.Itoa(len(out.Events)), Kind: message.KindReaction,
			Thread: message.Thread{Platform: message.Telegram, Account: r.BotID, Chat: strconv.FormatInt(u.Chat.ID, 10)},
			Sender: who, ChatType: ct, Time: time.Unix(u.Date, 0).UTC(),
			Reaction: &message.Reaction{MessageID: msgID, Emoji: emoji, Removed: removed},
		})
	}
	for _, n := range u.New {
		if !slices.Contains(u.Old, n) {
			add(n, false)
		}
	}
	for _, o := range u.Old {
		if !slices.Contains(u.New, o) {
			add(o, true)
		}
	}
	if len(out.Events) == 0 {
		return ignore(platform.IgnoredUnsupported)
	}
	return out, nil
}

// press turns a callback_query into an answer; see Receiver.
func (r *Receiver) press(updateID string, q *TelegramCallbackQuery, now time.Time) (platform.Parsed, error) {
	if q.ID == "" || q.From.ID == 0 {
		return platform.Parsed{}, fmt.Errorf("%w: telegram callback_query without id or from", platform.ErrMalformed)
	}
	m := q.Message
	switch {
	case q.From.IsBot:
		return platform.Parsed{Ignored: []platform.Ignored{{Reason: platform.IgnoredBot, ID: updateID}}}, nil
	case m == nil, m.Chat.ID == 0, m.MessageID == 0, q.Data == "":
		return platform.Parsed{Ignored: []platform.Ignored{{Reason: platform.IgnoredUnsupported, ID: updateID}}}, nil
	}
	ev := message.Event{
		Platform: message.Telegram,
		Account:  r.BotID,
		EventID:  "cb:" + q.ID, // apart from update ids, which share the claim's namespace
		Kind:     message.KindAnswer,
		Thread:   r.thread(m),
		Sender:   user(&q.From),
		ChatType: chatType(m),
		Time:     now.UTC(),
		Press:    &message.Press{Data: q.Data, MessageID: strconv.FormatInt(m.MessageID, 10), AckID: q.ID},
	}
	return platform.Parsed{Events: []message.Event{ev}, Ack: answerPress(q.ID)}, nil
}

// answerPress is the webhook's answer to a press: answerCallbackQuery, as
// the Bot API method Telegram calls for the bot on reading the response
// ("Making requests when getting updates"), which stops the button's
// spinner. It carries no text: what the press decides is known only when
// its turn runs.
func answerPress(queryID string) *platform.Reply {
	body, _ := json.Marshal(struct {
		Method string `json:"method"`
		TelegramAnswerCallbackQuery
	}{"answerCallbackQuery", TelegramAnswerCallbackQuery{CallbackQueryID: queryID}})
	return &platform.Reply{Status: http.StatusOK, ContentType: "application/json", Body: body}
}

// thread is where a reply to m goes: its chat, and its forum topic.
func (r *Receiver) thread(m *TelegramMessage) message.Thread {
	t := message.Thread{Platform: message.Telegram, Account: r.BotID, Chat: strconv.FormatInt(m.Chat.ID, 10)}
	// message_thread_id is also set on replies in non-forum supergroups;
	// only a forum topic is a thread one can post into.
	if m.IsTopicMessage && m.MessageThreadID != 0 {
		t.Thread = strconv.FormatInt(m.MessageThreadID, 10)
	}
	return t
}

func chatType(m *TelegramMessage) string {
	if m.Chat.Type == TelegramChatPrivate {
		return message.ChatPrivate
	}
	return message.ChatGroup
}

// sender is the message's author: the user, or for an anonymous group admin
// the chat it posts as.
func sender(m *TelegramMessage) message.Sender {
	switch {
	case m.From != nil:
		return user(m.From)
	case m.SenderChat != nil:
		return message.Sender{ID: strconv.FormatInt(m.SenderChat.ID, 10), Name: m.SenderChat.Title}
	}
	return message.Sender{}
}

func user(u *TelegramUser) message.Sender {
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if name == "" {
		name = u.Username
	}
	return message.Sender{ID: strconv.FormatInt(u.ID, 10), Name: name, IsBot: u.IsBot}
}

// attachments are the files a message holds: Telegram gives a message at
// most one, and a photo in several sizes, of which the largest is taken.
// A file without a file_id cannot be fetched, and is left out.
func attachments(m *TelegramMessage) []message.Attachment {
	var a message.Attachment
	meta := func(kind message.AttachmentKind, f *TelegramFileMeta, mime string) {
		a = message.Attachment{Kind: kind, PlatformID: f.FileID, MIME: f.MimeType, Size: f.FileSize, Name: f.FileName,
			Width: f.Width, Height: f.Height, Duration: f.Duration}
		if a.MIME == "" {
			a.MIME = mime
		}
	}
	switch {
	case len(m.Photo) > 0:
		p := m.Photo[len(m.Photo)-1]
		a = message.Attachment{Kind: message.AttachImage, PlatformID: p.FileID, MIME: "image/jpeg", Size: p.FileSize, Width: p.Width, Height: p.Height}
	case m.Voice != nil:
		meta(message.AttachVoice, m.Voice, "audio/ogg")
	case m.Audio != nil:
		meta(message.AttachAudio, m.Audio, "")
	case m.VideoNote != nil:
		meta(message.AttachVideo, m.VideoNote, "video/mp4")
		a.Width, a.Height = m.VideoNote.Length, m.VideoNote.Length
	case m.Video != nil:
		meta(message.AttachVideo, m.Video, "")
	case m.Animation != nil:
		meta(message.AttachVideo, m.Animation, "video/mp4")
	case m.Document != nil:
		meta(message.AttachFile, m.Document, "")
	case m.Sticker != nil:
		st := m.Sticker
		a = message.Attachment{Kind: message.AttachSticker, PlatformID: st.FileID, MIME: stickerMIME(st), Size: st.FileSize, Width: st.Width, Height: st.Height}
	}
	if a.PlatformID == "" {
		return nil
	}
	return []message.Attachment{a}
}

// stickerMIME is a sticker's format: WEBP, an animated TGS or a WEBM video.
func stickerMIME(s *TelegramSticker) string {
	switch {
	case s.IsAnimated:
		return "application/x-tgsticker"
	case s.IsVideo:
		return "video/webm"
	}
	return "image/webp"
}
