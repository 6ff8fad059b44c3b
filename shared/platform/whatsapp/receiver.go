package whatsapp

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
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

// SignatureHeader carries Meta's signature of every webhook POST:
// "sha256=" + hex HMAC-SHA256(app secret, raw body).
const SignatureHeader = "X-Hub-Signature-256"

// IgnoredOtherAccount is the reason for a change of another business phone
// number than the configured one (WHATSAPP_PHONE_NUMBER_ID): one Meta app
// receives the webhooks of every number subscribed to it, and Parley answers
// for one.
const IgnoredOtherAccount = "other_account"

// Handshake query parameters (GET <callback URL>?hub.mode=subscribe&…).
const (
	HubMode        = "hub.mode"
	HubVerifyToken = "hub.verify_token"
	HubChallenge   = "hub.challenge"
	hubSubscribe   = "subscribe"
	// maxChallenge bounds the challenge echoed back: Meta's is a number.
	maxChallenge = 1024
)

var (
	_ platform.Receiver   = (*Receiver)(nil)
	_ platform.Handshaker = (*Receiver)(nil)
)

// Receiver is the receive half of the WhatsApp adapter.
//
// It answers Meta's verification GET (Handshake) and turns a messages
// webhook into events, every one it holds, in order: entries, their
// changes, and in each change its messages, then its statuses.
//
//   - A text message is a message.KindMessage; its EventID and MessageID are
//     its wamid, its thread {Account: the business phone number id, Chat:
//     the sender's wa_id}, private; a quoted reply has ReplyTo = the quoted
//     message's id (context.id).
//   - A reply-button press or a list choice (interactive button_reply,
//     list_reply) is a message.KindAnswer with Press{Data: the button's or
//     row's id, MessageID: the interactive message's id (context.id)}.
//   - A status (sent, delivered, read, failed) of a message Parley sent is
//     a message.KindStatus with Status{MessageID: its wamid, State, Code and
//     Reason from its first error, Class what a failed one's code means
//     (statusClass), Tag the biz_opaque_callback_data the send attached},
//     EventID "<wamid>:<status>" so each state dedupes on its own, and no
//     sender.
//
// An image, document, audio (a voice note when "voice"), video or sticker
// message is a message.KindMessage whose text is its caption, with one
// attachment (mediaAttachment) the turn fetches by its media id
// (Client.Download).
//
// Dropped with a reason: text without text ("no_text"); every other message
// type (location, contacts, template button, flow reply …),
// messages in group chats, statuses of other states, changes of other
// fields, and other objects ("unsupported"); changes of another phone
// number than PhoneNumberID, when it is set ("other_account").
//
// Meta signs no timestamp, so an old request verifies like a new one: the
// wamid dedupe keys (held longer than Meta's 7 days of retries) make a
// replay a duplicate.
type Receiver struct {
	// AppSecret is the Meta app's App Secret (App settings → Basic), the key
	// of X-Hub-Signature-256. Required: an empty secret refuses every
	// request.
	AppSecret string
	// VerifyToken is the Verify token typed into the app's webhook
	// configuration, which Meta's verification GET repeats. Required.
	VerifyToken string
	// PhoneNumberID, when set, is the one business phone number Parley
	// answers for: changes of any other are dropped ("other_account").
	PhoneNumberID string
}

// NewReceiver builds a Receiver and validates it.
func NewReceiver(appSecret, verifyToken, phoneNumberID string) (*Receiver, error) {
	r := &Receiver{AppSecret: appSecret, VerifyToken: verifyToken, PhoneNumberID: phoneNumberID}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// Validate reports every configuration problem at once.
func (r *Receiver) Validate() error {
	var errs []error
	if r.AppSecret == "" {
		errs = append(errs, errors.New("whatsapp: "+SettingAppSecret+" is required"))
	}
	if r.VerifyToken == "" {
		errs = append(errs, errors.New("whatsapp: "+SettingVerifyToken+" is required"))
	}
	if r.PhoneNumberID != "" && !digits(r.PhoneNumberID) {
		errs = append(errs, errors.New("whatsapp: "+SettingPhoneNumberID+" is a numeric id"))
	}
	return errors.Join(errs...)
}

// Platform returns message.WhatsApp.
func (r *Receiver) Platform() message.Platform { return message.WhatsApp }

// MaxBodyBytes is the largest webhook Meta documents sending: 3 MB, a batch
// of many changes.
const MaxBodyBytes = 3 << 20

// MaxBody makes the receiver a platform.BodyLimiter.
func (r *Receiver) MaxBody() int64 { return MaxBodyBytes }

// Handshake answers Meta's verification request, a GET with
// hub.mode=subscribe: 200 with hub.challenge as text/plain when
// hub.verify_token is VerifyToken (compared in constant time), 403
// otherwise, 400 when the token is right and the challenge missing. Any
// other request is no handshake (ok is false): the webhook core refuses a
// GET that is not one.
func (r *Receiver) Handshake(req *platform.Request) (*platform.Reply, bool) {
	if req.Method != http.MethodGet || req.Query.Get(HubMode) != hubSubscribe {
		return nil, false
	}
	text := func(status int, body string) *platform.Reply {
		return &platform.Reply{Status: status, ContentType: "text/plain; charset=utf-8", Body: []byte(body)}
	}
	tokens := req.Query[HubVerifyToken]
	if r.VerifyToken == "" || len(tokens) != 1 || !sameSecret(tokens[0], r.VerifyToken) {
		return text(http.StatusForbidden, "verify token does not match"), true
	}
	challenges := req.Query[HubChallenge]
	if len(challenges) != 1 || challenges[0] == "" || len(challenges[0]) > maxChallenge {
		return text(http.StatusBadRequest, "missing hub.challenge"), true
	}
	return text(http.StatusOK, challenges[0]), true
}

// sameSecret compares a and b in constant time, whatever their lengths: the
// digests are of equal length.
func sameSecret(a, b string) bool {
	da, db := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(da[:], db[:]) == 1
}

// Verify checks X-Hub-Signature-256 over the raw body: "sha256=" + hex
// HMAC-SHA256(AppSecret, body), compared in constant time. The older
// X-Hub-Signature (SHA-1) is never enough.
func (r *Receiver) Verify(req *platform.Request) error {
	if r.AppSecret == "" {
		return fmt.Errorf("%w: no app secret configured", platform.ErrUnauthorized)
	}
	sigs := req.Header.Values(SignatureHeader)
	switch {
	case len(sigs) == 0 || sigs[0] == "":
		return fmt.Errorf("%w: missing %s", platform.ErrUnauthorized, SignatureHeader)
	case len(sigs) > 1:
		return fmt.Errorf("%w: more than one %s", platform.ErrUnauthorized, SignatureHeader)
	}
	hexSig, ok := strings.CutPrefix(sigs[0], "sha256=")
	if !ok {
		return fmt.Errorf("%w: %s is not a sha256 signature", platform.ErrUnauthorized, SignatureHeader)
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return fmt.Errorf("%w: %s is not hex", platform.ErrUnauthorized, SignatureHeader)
	}
	if !hmac.Equal(got, Sign(r.AppSecret, req.Body)) {
		return fmt.Errorf("%w: %s does not match", platform.ErrUnauthorized, SignatureHeader)
	}
	return nil
}

// Sign is the signature's MAC: HMAC-SHA256(appSecret, body). The header value
// is "sha256=" + hex of it.
func Sign(appSecret string, body []byte) []byte {
	return platform.HMACSHA256(appSecret, body)
}

// Parse decodes a verified webhook: the notification's entries and changes
// first, then each messages change's value, then each of its messages and
// statuses on its own.
func (r *Receiver) Parse(req *platform.Request) (platform.Parsed, error) {
	body := bytes.TrimSpace(req.Body)
	if len(body) == 0 || body[0] != '{' {
		return platform.Parsed{}, fmt.Errorf("%w: whatsapp webhook is not a JSON object", platform.ErrMalformed)
	}
	var n WhatsAppNotification
	if err := json.Unmarshal(body, &n); err != nil {
		return platform.Parsed{}, fmt.Errorf("%w: whatsapp notification does not decode", platform.ErrMalformed)
	}
	var out platform.Parsed
	ignore := func(reason, id string) { out.Ignored = append(out.Ignored, platform.Ignored{Reason: reason, ID: id}) }
	if n.Object != WhatsAppObjectBusinessAccount {
		// Another product's webhook (a Page, Instagram) sent here.
		ignore(platform.IgnoredUnsupported, "")
		return out, nil
	}
	for _, entry := range n.Entry {
		for _, ch := range entry.Changes {
			if err := r.change(&out, req, entry.ID, ch); err != nil {
				return platform.Parsed{}, err
			}
		}
	}
	if len(out.Events)+len(out.Ignored) == 0 {
		ignore(platform.IgnoredUnsupported, "") // no change at all
	}
	return out, nil
}

// change adds one change's events and ignored updates to out.
func (r *Receiver) change(out *platform.Parsed, req *platform.Request, entryID string, ch WhatsAppChange) error {
	ignore := func(reason, id string) { out.Ignored = append(out.Ignored, platform.Ignored{Reason: reason, ID: id}) }
	if ch.Field != WhatsAppFieldMessages {
		// account_update, message_template_status_update, history …
		ignore(platform.IgnoredUnsupported, entryID)
		return nil
	}
	v := bytes.TrimSpace(ch.Value)
	if len(v) == 0 || v[0] != '{' {
		return fmt.Errorf("%w: whatsapp messages change without a value", platform.ErrMalformed)
	}
	var val WhatsAppValue
	if err := json.Unmarshal(v, &val); err != nil {
		return fmt.Errorf("%w: whatsapp messages value does not decode", platform.ErrMalformed)
	}
	if len(val.Messages)+len(val.Statuses) == 0 {
		// A change that reports errors only, or nothing Parley reads.
		ignore(platform.IgnoredUnsupported, entryID)
		return nil
	}
	phone := val.Metadata.PhoneNumberID
	if phone == "" {
		return fmt.Errorf("%w: whatsapp messages value without metadata.phone_number_id", platform.ErrMalformed)
	}
	if r.PhoneNumberID != "" && phone != r.PhoneNumberID {
		ignore(IgnoredOtherAccount, phone)
		return nil
	}
	names := map[string]string{}
	for _, c := range val.Contacts {
		if c.WaID != "" {
			names[c.WaID] = c.Profile.Name
		}
	}
	for _, raw := range val.Messages {
		if err := r.message(out, req, phone, names, raw); err != nil {
			return err
		}
	}
	for _, raw := range val.Statuses {
		if err := r.status(out, req, phone, raw); err != nil {
			return err
		}
	}
	return nil
}

func (r *Receiver) message(out *platform.Parsed, req *platform.Request, phone string, names map[string]string, raw json.RawMessage) error {
	var m WhatsAppMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("%w: whatsapp message does not decode", platform.ErrMalformed)
	}
	if m.ID == "" || m.From == "" || m.Type == "" {
		return fmt.Errorf("%w: whatsapp message without id, from or type", platform.ErrMalformed)
	}
	ignore := func(reason string) { out.Ignored = append(out.Ignored, platform.Ignored{Reason: reason, ID: m.ID}) }
	// Meta signs the body alone: the message's own time is what tells a
	// replay past the dedupe window (Meta's own retries end within it).
	if req.Stale(unixOrZero(int64(m.Timestamp))) {
		ignore(platform.IgnoredStale)
		return nil
	}
	if m.GroupID != "" {
		// Parley answers the person, never a group on their behalf.
		ignore(platform.IgnoredUnsupported)
		return nil
	}
	ev := message.Event{
		Platform:  message.WhatsApp,
		Account:   phone,
		EventID:   m.ID,
		Thread:    message.Thread{Platform: message.WhatsApp, Account: phone, Chat: m.From},
		Sender:    message.Sender{ID: m.From, Name: names[m.From]},
		MessageID: m.ID,
		ChatType:  message.ChatPrivate,
		Time:      unixOrZero(int64(m.Timestamp)),
	}
	if !ev.Time.IsZero() {
		// The person's message opens the customer-service window: the
		// reply to it may be free-form until it closes.
		ev.ReplyContext = &message.ReplyContext{Token: message.WindowToken, Until: ev.Time.Add(Window)}
	}
	var quoted string
	if m.Context != nil {
		quoted = m.Context.ID
	}
	switch m.Type {
	case WhatsAppTypeText:
		if m.Text == nil || strings.TrimSpace(m.Text.Body) == "" {
			ignore(platform.IgnoredNoText)
			return nil
		}
		ev.Kind = message.KindMessage
		ev.Text = m.Text.Body
		ev.ReplyTo = quoted
	case WhatsAppTypeInteractive:
		var in WhatsAppInteractiveReply
		if i := bytes.TrimSpace(m.Interactive); len(i) == 0 || i[0] != '{' || json.Unmarshal(i, &in) != nil {
			return fmt.Errorf("%w: whatsapp interactive message without its reply", platform.ErrMalformed)
		}
		var data string
		switch {
		case in.Type == WhatsAppInteractiveButtonReply && in.ButtonReply != nil:
			data = in.ButtonReply.ID
		case in.Type == WhatsAppInteractiveListReply && in.ListReply != nil:
			data = in.ListReply.ID
		}
		if data == "" {
			// A flow's reply (nfm_reply), or a control Parley did not send.
			ignore(platform.IgnoredUnsupported)
			return nil
		}
		ev.Kind = message.KindAnswer
		ev.Press = &message.Press{Data: data, MessageID: quoted}
	case WhatsAppTypeReaction:
		if m.Reaction == nil || m.Reaction.MessageID == "" {
			return fmt.Errorf("%w: whatsapp reaction without the message it reacts to", platform.ErrMalformed)
		}
		// A reaction taken back names no emoji: the agent hears which
		// message lost its reaction. A reaction opens no window of its
		// own: the turn finds the person's last message's.
		ev.Kind, ev.MessageID, ev.ReplyContext = message.KindReaction, "", nil
		ev.Reaction = &message.Reaction{MessageID: m.Reaction.MessageID, Emoji: m.Reaction.Emoji, Removed: m.Reaction.Emoji == ""}
	case WhatsAppTypeImage, WhatsAppTypeDocument, WhatsAppTypeAudio, WhatsAppTypeVideo, WhatsAppTypeSticker:
		a, caption, err := mediaAttachment(m)
		if err != nil {
			return err
		}
		ev.Kind = message.KindMessage
		ev.Text, ev.Attachments = caption, []message.Attachment{a}
		ev.ReplyTo = quoted
	default:
		// Locations, contacts, template quick replies (type button),
		// orders, system notices: nothing the agent reads as text, and
		// never a press of a control Parley sent.
		ignore(platform.IgnoredUnsupported)
		return nil
	}
	out.Events = append(out.Events, ev)
	return nil
}

// Delivery states Parley reports (WhatsAppStatus.Status).
var states = map[string]bool{
	message.StatusSent:      true,
	message.StatusDelivered: true,
	message.StatusRead:      true,
	message.StatusFailed:    true,
}

func (r *Receiver) status(out *platform.Parsed, req *platform.Request, phone string, raw json.RawMessage) error {
	var s WhatsAppStatus
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("%w: whatsapp status does not decode", platform.ErrMalformed)
	}
	if s.ID == "" || s.Status == "" || s.RecipientID == "" {
		return fmt.Errorf("%w: whatsapp status without id, status or recipient_id", platform.ErrMalformed)
	}
	id := s.ID + ":" + s.Status
	if req.Stale(unixOrZero(int64(s.Timestamp))) {
		out.Ignored = append(out.Ignored, platform.Ignored{Reason: platform.IgnoredStale, ID: id})
		return nil
	}
	if !states[s.Status] {
		// "deleted", "warning", "played" and whatever Meta adds.
		out.Ignored = append(out.Ignored, platform.Ignored{Reason: platform.IgnoredUnsupported, ID: id})
		return nil
	}
	st := &message.Status{MessageID: s.ID, State: s.Status, Tag: s.BizOpaqueCallbackData}
	if len(s.Errors) > 0 {
		e := s.Errors[0]
		if e.Code != 0 {
			st.Code = strconv.Itoa(e.Code)
		}
		if s.Status == message.StatusFailed {
			st.Class = statusClass(e.Code)
		}
		// The title names the error ("Re-engagement message"), never the
		// message's text.
		st.Reason = platform.Reason(cmp.Or(e.Title, e.Message))
	}
	out.Events = append(out.Events, message.Event{
		Platform: message.WhatsApp,
		Account:  phone,
		EventID:  id,
		Kind:     message.KindStatus,
		Thread:   message.Thread{Platform: message.WhatsApp, Account: phone, Chat: s.RecipientID},
		ChatType: message.ChatPrivate,
		Time:     unixOrZero(int64(s.Timestamp)),
		Status:   st,
	})
	return nil
}

func unixOrZero(sec int64) time.Time {
	if sec <= 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}

func digits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
