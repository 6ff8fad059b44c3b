package whatsapp

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

var (
	adaLovelace = message.Sender{ID: ada, Name: "Ada Lovelace"}
	graceHopper = message.Sender{ID: grace, Name: "Grace Hopper"}
)

func at(sec int64) time.Time { return time.Unix(sec, 0).UTC() }

// win is the customer-service window a person's message at sec opens.
func win(sec int64) *message.ReplyContext {
	return &message.ReplyContext{Token: message.WindowToken, Until: at(sec).Add(Window)}
}

func status(id, state string, sec int64, to, tag string) message.Event {
	return message.Event{
		Platform: message.WhatsApp, Account: testPhone, EventID: id + ":" + state, Kind: message.KindStatus,
		Thread: chat(to), ChatType: message.ChatPrivate, Time: at(sec),
		Status: &message.Status{MessageID: id, State: state, Tag: tag},
	}
}

// Tags of the samples' statuses: the idempotency keys ("<intent id>#<unit
// id>") Parley sent its messages with, as biz_opaque_callback_data.
const (
	tagAnswer = "9c1e0f7a2b3d4c5e6f708192a3b4c5d6#1"
	tagFailed = "9c1e0f7a2b3d4c5e6f708192a3b4c5d6#2"
	tagBatch  = "e3b0c44298fc1c149afbf4c8996fb924#1"
)

// sampleExpectations is what each file of events/whatsapp parses to.
func sampleExpectations() map[string]platform.Parsed {
	failed := status(idFailed, message.StatusFailed, 1764432200, ada, tagFailed)
	failed.Status.Code, failed.Status.Reason, failed.Status.Class = "131047", "Re-engagement message", message.FailPermission
	return map[string]platform.Parsed{
		"text.json": {Events: []message.Event{{
			Platform: message.WhatsApp, Account: testPhone, EventID: idText, Kind: message.KindMessage,
			Thread: chat(ada), Sender: adaLovelace, Text: "what's on my calendar today?",
			MessageID: idText, ChatType: message.ChatPrivate, Time: at(1764432000), ReplyContext: win(1764432000),
		}}},
		// Ada quotes Parley's answer: the reply names it.
		"reply.json": {Events: []message.Event{{
			Platform: message.WhatsApp, Account: testPhone, EventID: idReply, Kind: message.KindMessage,
			Thread: chat(ada), Sender: adaLovelace, Text: "make it shorter, please",
			MessageID: idReply, ReplyTo: idAnswered, ChatType: message.ChatPrivate, Time: at(1764432060), ReplyContext: win(1764432060),
		}}},
		// Ada presses "Lisbon" (q0:0) on Parley's question.
		"button-reply.json": {Events: []message.Event{{
			Platform: message.WhatsApp, Account: testPhone, EventID: idButton, Kind: message.KindAnswer,
			Thread: chat(ada), Sender: adaLovelace, MessageID: idButton, ChatType: message.ChatPrivate, Time: at(1764432120), ReplyContext: win(1764432120),
			Press: &message.Press{Data: "q0:0", MessageID: idQuestion},
		}}},
		// Grace picks the fifth row (q1:4) of a list question.
		"list-reply.json": {Events: []message.Event{{
			Platform: message.WhatsApp, Account: testPhone, EventID: idList, Kind: message.KindAnswer,
			Thread: chat(grace), Sender: graceHopper, MessageID: idList, ChatType: message.ChatPrivate, Time: at(1764432150), ReplyContext: win(1764432150),
			Press: &message.Press{Data: "q1:4", MessageID: idListQ},
		}}},
		// A photo with a caption: the caption is the text.
		"image.json": {Events: []message.Event{{
			Platform: message.WhatsApp, Account: testPhone, EventID: idImage, Kind: message.KindMessage,
			Thread: chat(ada), Sender: adaLovelace, Text: "the whiteboard after the meeting",
			MessageID: idImage, ChatType: message.ChatPrivate, Time: at(1764432160), ReplyContext: win(1764432160),
			Attachments: []message.Attachment{{Kind: message.AttachImage, MIME: "image/jpeg", PlatformID: "1003383421387256"}},
		}}},
		// A voice note and a PDF, in one delivery.
		"media.json": {Events: []message.Event{
			{
				Platform: message.WhatsApp, Account: testPhone, EventID: idVoice, Kind: message.KindMessage,
				Thread: chat(ada), Sender: adaLovelace, MessageID: idVoice, ChatType: message.ChatPrivate, Time: at(1764432230), ReplyContext: win(1764432230),
				Attachments: []message.Attachment{{Kind: message.AttachVoice, MIME: "audio/ogg; codecs=opus", PlatformID: "1003383421387301"}},
			},
			{
				Platform: message.WhatsApp, Account: testPhone, EventID: idDocument, Kind: message.KindMessage,
				Thread: chat(ada), Sender: adaLovelace, Text: "is this my gate?", MessageID: idDocument, ChatType: message.ChatPrivate, Time: at(1764432235), ReplyContext: win(1764432235),
				Attachments: []message.Attachment{{Kind: message.AttachFile, MIME: "application/pdf", Name: "boarding-pass.pdf", PlatformID: "1003383421387302"}},
			},
		}},
		"status-sent.json":      {Events: []message.Event{status(idStatus, message.StatusSent, 1764432170, ada, tagAnswer)}},
		"status-delivered.json": {Events: []message.Event{status(idStatus, message.StatusDelivered, 1764432175, ada, tagAnswer)}},
		"status-read.json":      {Events: []message.Event{status(idStatus, message.StatusRead, 1764432180, ada, tagAnswer)}},
		"status-failed.json":    {Events: []message.Event{failed}},
		// Two of Grace's messages and a status of Parley's message to her,
		// in one POST: every one, in order.
		"batch.json": {Events: []message.Event{
			{
				Platform: message.WhatsApp, Account: testPhone, EventID: idBatch1, Kind: message.KindMessage,
				Thread: chat(grace), Sender: graceHopper, Text: "two quick things",
				MessageID: idBatch1, ChatType: message.ChatPrivate, Time: at(1764432220), ReplyContext: win(1764432220),
			},
			{
				Platform: message.WhatsApp, Account: testPhone, EventID: idBatch2, Kind: message.KindMessage,
				Thread: chat(grace), Sender: graceHopper, Text: "first: is the 3pm still on?",
				MessageID: idBatch2, ChatType: message.ChatPrivate, Time: at(1764432221), ReplyContext: win(1764432221),
			},
			status(idBatchOut, message.StatusDelivered, 1764432222, grace, tagBatch),
		}},
		"other-field.json":  {Ignored: []platform.Ignored{{Reason: platform.IgnoredUnsupported, ID: testWABA}}},
		"other-number.json": {Ignored: []platform.Ignored{{Reason: IgnoredOtherAccount, ID: otherPhone}}},
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	body := readSample(t, "text.json")
	with := func(mutate func(*platform.Request)) *platform.Request {
		req := signed(body)
		mutate(req)
		return req
	}
	sha1Only := with(func(r *platform.Request) {
		mac := hmac.New(sha1.New, []byte(testAppSecret))
		mac.Write(body)
		r.Header.Del(SignatureHeader)
		r.Header.Set("X-Hub-Signature", "sha1="+hex.EncodeToString(mac.Sum(nil)))
	})
	cases := []struct {
		name string
		r    *Receiver
		req  *platform.Request
		want error
	}{
		{"Signed", nil, signed(body), nil},
		{"UpperCaseHex", nil, with(func(r *platform.Request) {
			r.Header.Set(SignatureHeader, "sha256="+strings.ToUpper(strings.TrimPrefix(r.Header.Get(SignatureHeader), "sha256=")))
		}), nil},
		{"TamperedBody", nil, with(func(r *platform.Request) { r.Body = append([]byte(nil), body[:len(body)-2]...) }), platform.ErrUnauthorized},
		{"OtherSecret", &Receiver{AppSecret: testAppSecret + "x", VerifyToken: testVerifyToken}, signed(body), platform.ErrUnauthorized},
		{"Missing", nil, with(func(r *platform.Request) { r.Header.Del(SignatureHeader) }), platform.ErrUnauthorized},
		{"Empty", nil, with(func(r *platform.Request) { r.Header.Set(SignatureHeader, "") }), platform.ErrUnauthorized},
		{"TwoHeaders", nil, with(func(r *platform.Request) { r.Header.Add(SignatureHeader, "sha256=00") }), platform.ErrUnauthorized},
		{"NoPrefix", nil, with(func(r *platform.Request) {
			r.Header.Set(SignatureHeader, strings.TrimPrefix(r.Header.Get(SignatureHeader), "sha256="))
		}), platform.ErrUnauthorized},
		{"SHA1Prefix", nil, with(func(r *platform.Request) {
			r.Header.Set(SignatureHeader, "sha1="+strings.TrimPrefix(r.Header.Get(SignatureHeader), "sha256="))
		}), platform.ErrUnauthorized},
		{"NotHex", nil, with(func(r *platform.Request) { r.Header.Set(SignatureHeader, "sha256=zz") }), platform.ErrUnauthorized},
		{"Short", nil, with(func(r *platform.Request) { r.Header.Set(SignatureHeader, r.Header.Get(SignatureHeader)[:30]) }), platform.ErrUnauthorized},
		// The legacy SHA-1 signature is never enough.
		{"SHA1HeaderOnly", nil, sha1Only, platform.ErrUnauthorized},
		{"NoSecretConfigured", &Receiver{VerifyToken: testVerifyToken}, with(func(r *platform.Request) {
			r.Header.Set(SignatureHeader, "sha256="+hex.EncodeToString(Sign("", body)))
		}), platform.ErrUnauthorized},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := tc.r
			if r == nil {
				r = newTestReceiver(t)
			}
			err := r.Verify(tc.req)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
			if strings.Contains(err.Error(), testAppSecret) {
				t.Fatalf("the error shows the secret: %v", err)
			}
		})
	}
}

func TestHandshake(t *testing.T) {
	t.Parallel()
	r := newTestReceiver(t)
	get := func(q url.Values) *platform.Request {
		return &platform.Request{Method: http.MethodGet, Header: http.Header{}, Query: q, Now: sampleNow}
	}
	query := func(mode, token, challenge string) url.Values {
		q := url.Values{}
		for k, v := range map[string]string{HubMode: mode, HubVerifyToken: token, HubChallenge: challenge} {
			if v != "" {
				q.Set(k, v)
			}
		}
		return q
	}
	text := "text/plain; charset=utf-8"
	forbidden := &platform.Reply{Status: 403, ContentType: text, Body: []byte("verify token does not match")}
	cases := []struct {
		name string
		r    *Receiver
		req  *platform.Request
		want *platform.Reply
	}{
		{"RightToken", nil, get(query("subscribe", testVerifyToken, "1158201444")),
			&platform.Reply{Status: 200, ContentType: text, Body: []byte("1158201444")}},
		{"WrongToken", nil, get(query("subscribe", testVerifyToken+"x", "1158201444")), forbidden},
		{"WrongTokenOfTheSameLength", nil, get(query("subscribe", strings.Replace(testVerifyToken, "n", "m", 1), "1158201444")), forbidden},
		{"MissingToken", nil, get(query("subscribe", "", "1158201444")), forbidden},
		{"TwoTokens", nil, get(url.Values{HubMode: {"subscribe"}, HubVerifyToken: {testVerifyToken, testVerifyToken}, HubChallenge: {"1"}}), forbidden},
		{"MissingChallenge", nil, get(query("subscribe", testVerifyToken, "")),
			&platform.Reply{Status: 400, ContentType: text, Body: []byte("missing hub.challenge")}},
		{"HugeChallenge", nil, get(query("subscribe", testVerifyToken, strings.Repeat("9", maxChallenge+1))),
			&platform.Reply{Status: 400, ContentType: text, Body: []byte("missing hub.challenge")}},
		{"NoVerifyTokenConfigured", &Receiver{AppSecret: testAppSecret}, get(query("subscribe", "", "1")), forbidden},
		// Not a handshake: the webhook core answers those.
		{"MissingMode", nil, get(query("", testVerifyToken, "1")), nil},
		{"OtherMode", nil, get(query("unsubscribe", testVerifyToken, "1")), nil},
		{"PlainGet", nil, get(url.Values{}), nil},
		{"Post", nil, func() *platform.Request {
			req := signed([]byte(`{}`))
			req.Query = query("subscribe", testVerifyToken, "1")
			return req
		}(), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rr := tc.r
			if rr == nil {
				rr = r
			}
			got, ok := rr.Handshake(tc.req)
			if ok != (tc.want != nil) || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Handshake = %+v, %v; want %+v", got, ok, tc.want)
			}
		})
	}
}

func TestNewReceiver(t *testing.T) {
	t.Parallel()
	if _, err := NewReceiver(testAppSecret, testVerifyToken, ""); err != nil {
		t.Fatalf("the phone number id is optional on receive: %v", err)
	}
	_, err := NewReceiver("", "", "+1555")
	for _, want := range []string{SettingAppSecret, SettingVerifyToken, SettingPhoneNumberID} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewReceiver without anything = %v, want it to name %s", err, want)
		}
	}
}

// change wraps a messages value in a notification.
func change(value string) []byte {
	return []byte(`{"object":"whatsapp_business_account","entry":[{"id":"` + testWABA + `","changes":[{"field":"messages","value":` + value + `}]}]}`)
}

func messagesValue(phone, messages string) string {
	return `{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550001234","phone_number_id":"` + phone + `"},` +
		`"contacts":[{"profile":{"name":"Ada Lovelace"},"wa_id":"` + ada + `"}],"messages":[` + messages + `]}`
}

func TestParse(t *testing.T) {
	t.Parallel()
	msg := func(fields string) []byte {
		return change(messagesValue(testPhone, `{"from":"`+ada+`","id":"wamid.X1","timestamp":"1764432000",`+fields+`}`))
	}
	one := func(ev message.Event) platform.Parsed { return platform.Parsed{Events: []message.Event{ev}} }
	base := message.Event{
		Platform: message.WhatsApp, Account: testPhone, EventID: "wamid.X1", Thread: chat(ada), Sender: adaLovelace,
		MessageID: "wamid.X1", ChatType: message.ChatPrivate, Time: at(1764432000), ReplyContext: win(1764432000),
	}
	text := base
	text.Kind, text.Text = message.KindMessage, "hi"
	ignored := func(reason, id string) platform.Parsed {
		return platform.Parsed{Ignored: []platform.Ignored{{Reason: reason, ID: id}}}
	}
	media := func(a message.Attachment, caption string) platform.Parsed {
		e := base
		e.Kind, e.Text, e.Attachments = message.KindMessage, caption, []message.Attachment{a}
		return one(e)
	}
	cases := []struct {
		name string
		r    *Receiver
		body []byte
		want platform.Parsed
	}{
		{"NumericTimestamp", nil, change(messagesValue(testPhone, `{"from":"`+ada+`","id":"wamid.X1","timestamp":1764432000,"type":"text","text":{"body":"hi"}}`)), one(text)},
		{"NoContactName", nil, change(`{"metadata":{"phone_number_id":"` + testPhone + `"},"messages":[{"from":"` + ada + `","id":"wamid.X1","timestamp":"1764432000","type":"text","text":{"body":"hi"}}]}`),
			func() platform.Parsed { e := text; e.Sender.Name = ""; return one(e) }()},
		{"BlankText", nil, msg(`"type":"text","text":{"body":" \n "}`), ignored(platform.IgnoredNoText, "wamid.X1")},
		{"TextWithoutText", nil, msg(`"type":"text"`), ignored(platform.IgnoredNoText, "wamid.X1")},
		{"Reaction", nil, msg(`"type":"reaction","reaction":{"message_id":"wamid.P","emoji":"👍"}`),
			func() platform.Parsed {
				e := base
				e.Kind, e.MessageID, e.ReplyContext = message.KindReaction, "", nil
				e.Reaction = &message.Reaction{MessageID: "wamid.P", Emoji: "👍"}
				return one(e)
			}()},
		{"ReactionRemoved", nil, msg(`"type":"reaction","reaction":{"message_id":"wamid.P","emoji":""}`),
			func() platform.Parsed {
				e := base
				e.Kind, e.MessageID, e.ReplyContext = message.KindReaction, "", nil
				e.Reaction = &message.Reaction{MessageID: "wamid.P", Removed: true}
				return one(e)
			}()},
		{"Sticker", nil, msg(`"type":"sticker","sticker":{"id":"1","mime_type":"image/webp","animated":false}`), media(message.Attachment{Kind: message.AttachSticker, MIME: "image/webp", PlatformID: "1"}, "")},
		{"AudioFile", nil, msg(`"type":"audio","audio":{"id":"2","mime_type":"audio/mpeg","voice":false}`), media(message.Attachment{Kind: message.AttachAudio, MIME: "audio/mpeg", PlatformID: "2"}, "")},
		{"VideoWithCaption", nil, msg(`"context":{"from":"15550001234","id":"wamid.P"},"type":"video","video":{"id":"3","mime_type":"video/mp4","caption":"look"}`),
			func() platform.Parsed {
				p := media(message.Attachment{Kind: message.AttachVideo, MIME: "video/mp4", PlatformID: "3"}, "look")
				p.Events[0].ReplyTo = "wamid.P"
				return p
			}()},
		{"Location", nil, msg(`"type":"location","location":{"latitude":38.7,"longitude":-9.1}`), ignored(platform.IgnoredUnsupported, "wamid.X1")},
		{"TemplateButton", nil, msg(`"type":"button","button":{"payload":"STOP","text":"Stop promotions"}`), ignored(platform.IgnoredUnsupported, "wamid.X1")},
		{"FlowReply", nil, msg(`"type":"interactive","interactive":{"type":"nfm_reply","nfm_reply":{"response_json":"{}"}}`), ignored(platform.IgnoredUnsupported, "wamid.X1")},
		{"ButtonReplyWithoutID", nil, msg(`"type":"interactive","interactive":{"type":"button_reply","button_reply":{"title":"Yes"}}`), ignored(platform.IgnoredUnsupported, "wamid.X1")},
		{"PressWithoutContext", nil, msg(`"type":"interactive","interactive":{"type":"button_reply","button_reply":{"id":"q0:1","title":"Porto"}}`),
			func() platform.Parsed {
				e := base
				e.Kind, e.Press = message.KindAnswer, &message.Press{Data: "q0:1"}
				return one(e)
			}()},
		{"GroupMessage", nil, msg(`"group_id":"120363000000000001","type":"text","text":{"body":"hi all"}`), ignored(platform.IgnoredUnsupported, "wamid.X1")},
		{"UnknownStatus", nil, change(`{"metadata":{"phone_number_id":"` + testPhone + `"},"statuses":[{"id":"wamid.P","status":"deleted","timestamp":"1","recipient_id":"` + ada + `"}]}`),
			ignored(platform.IgnoredUnsupported, "wamid.P:deleted")},
		{"ErrorsOnly", nil, change(`{"metadata":{"phone_number_id":"` + testPhone + `"},"errors":[{"code":131000,"title":"Something went wrong"}]}`),
			ignored(platform.IgnoredUnsupported, testWABA)},
		{"OtherObject", nil, []byte(`{"object":"page","entry":[{"id":"1","changes":[]}]}`), ignored(platform.IgnoredUnsupported, "")},
		{"NoEntries", nil, []byte(`{"object":"whatsapp_business_account","entry":[]}`), ignored(platform.IgnoredUnsupported, "")},
		// Without a configured number every number is answered.
		{"AnyNumberWhenNotScoped", &Receiver{AppSecret: testAppSecret, VerifyToken: testVerifyToken},
			change(messagesValue(otherPhone, `{"from":"`+ada+`","id":"wamid.X1","timestamp":"1764432000","type":"text","text":{"body":"hi"}}`)),
			func() platform.Parsed {
				e := text
				e.Account, e.Thread.Account = otherPhone, otherPhone
				return one(e)
			}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := tc.r
			if r == nil {
				r = newTestReceiver(t)
			}
			got, err := r.Parse(signed(tc.body))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Parse\n got %s\nwant %s", show(got), show(tc.want))
			}
		})
	}
}

// malformed are signed bodies that are not what Meta sends: refused (400),
// so nothing half-read is enqueued.
func malformed() map[string][]byte {
	msg := func(m string) []byte { return change(messagesValue(testPhone, m)) }
	return map[string][]byte{
		"EntryNotAList":          []byte(`{"object":"whatsapp_business_account","entry":{"id":"1"}}`),
		"ValueNotAnObject":       change(`"messages"`),
		"ValueMissing":           []byte(`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages"}]}]}`),
		"NoPhoneNumberID":        change(`{"metadata":{},"messages":[{"from":"1","id":"wamid.X","type":"text","text":{"body":"hi"}}]}`),
		"MessageWithoutID":       msg(`{"from":"` + ada + `","timestamp":"1","type":"text","text":{"body":"hi"}}`),
		"MessageWithoutFrom":     msg(`{"id":"wamid.X","timestamp":"1","type":"text","text":{"body":"hi"}}`),
		"MessageWithoutType":     msg(`{"from":"` + ada + `","id":"wamid.X","timestamp":"1"}`),
		"MessageNotAnObject":     msg(`"hello"`),
		"TextOfTheWrongType":     msg(`{"from":"` + ada + `","id":"wamid.X","timestamp":"1","type":"text","text":"hi"}`),
		"TimestampOfWrongType":   msg(`{"from":"` + ada + `","id":"wamid.X","timestamp":{},"type":"text","text":{"body":"hi"}}`),
		"InteractiveWithoutBody": msg(`{"from":"` + ada + `","id":"wamid.X","timestamp":"1","type":"interactive"}`),
		"ImageWithoutItsObject":  msg(`{"from":"` + ada + `","id":"wamid.X","timestamp":"1","type":"image"}`),
		"MediaIDNotANumber":      msg(`{"from":"` + ada + `","id":"wamid.X","timestamp":"1","type":"document","document":{"id":"../../me"}}`),
		"MediaIDTooLong":         msg(`{"from":"` + ada + `","id":"wamid.X","timestamp":"1","type":"audio","audio":{"id":"123456789012345678901234567890123"}}`),
		"MediaOfTheWrongType":    msg(`{"from":"` + ada + `","id":"wamid.X","timestamp":"1","type":"video","video":{"id":7}}`),
		"StatusWithoutRecipient": change(`{"metadata":{"phone_number_id":"` + testPhone + `"},"statuses":[{"id":"wamid.P","status":"read","timestamp":"1"}]}`),
		"StatusWithoutID":        change(`{"metadata":{"phone_number_id":"` + testPhone + `"},"statuses":[{"status":"read","timestamp":"1","recipient_id":"1"}]}`),
	}
}

func TestParseRefusesMalformed(t *testing.T) {
	t.Parallel()
	r := newTestReceiver(t)
	for name, body := range malformed() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, err := r.Parse(signed(body))
			if !errors.Is(err, platform.ErrMalformed) || platform.StatusOf(err) != http.StatusBadRequest {
				t.Fatalf("Parse = %+v, %v; want ErrMalformed", p, err)
			}
		})
	}
}

// TestFailedStatusClass: a failed status's first error code says why the
// message was not delivered; codes that mean "unknown" or "try again" for a
// send say nothing here (empty: the turn function reads permission).
func TestFailedStatusClass(t *testing.T) {
	t.Parallel()
	r := newTestReceiver(t)
	cases := []struct {
		state string
		code  string
		want  message.FailureClass
	}{
		{"failed", "131047", message.FailPermission},
		{"failed", "131026", message.FailPermission},
		{"failed", "131056", message.FailRateLimit},
		{"failed", "131009", message.FailInvalidPayload},
		{"failed", "200", message.FailPermission},
		{"failed", "131000", ""},
		{"failed", "1", ""},
		{"failed", "131057", ""},
		{"failed", "139999", ""},
		// An error on another state (a warning) classes nothing.
		{"delivered", "131047", ""},
	}
	for _, tc := range cases {
		body := change(`{"metadata":{"phone_number_id":"` + testPhone + `"},"statuses":[{"id":"wamid.P","status":"` + tc.state +
			`","timestamp":"1","recipient_id":"` + ada + `","biz_opaque_callback_data":"i#1","errors":[{"code":` + tc.code + `,"title":"t"}]}]}`)
		p, err := r.Parse(signed(body))
		if err != nil || len(p.Events) != 1 {
			t.Fatalf("%s %s: %+v, %v", tc.state, tc.code, p, err)
		}
		st := p.Events[0].Status
		if st.Class != tc.want || st.Code != tc.code || st.Tag != "i#1" {
			t.Errorf("%s %s: class %q code %q tag %q, want class %q", tc.state, tc.code, st.Class, st.Code, st.Tag, tc.want)
		}
	}
}

// TestStatusKeysAreOnePerState: each state of one message dedupes on its
// own, and a redelivered state is the same key.
func TestStatusKeysAreOnePerState(t *testing.T) {
	t.Parallel()
	r := newTestReceiver(t)
	seen := map[string]string{}
	for _, name := range []string{"status-sent.json", "status-delivered.json", "status-read.json", "status-read.json"} {
		p, err := r.Parse(signed(readSample(t, name)))
		if err != nil || len(p.Events) != 1 {
			t.Fatalf("%s: %+v, %v", name, p, err)
		}
		ev := p.Events[0]
		if ev.Status.MessageID != idStatus {
			t.Fatalf("%s reports on %s", name, ev.Status.MessageID)
		}
		if prev, ok := seen[ev.Key()]; ok && prev != ev.Status.State {
			t.Fatalf("%s and %s share the key %s", prev, ev.Status.State, ev.Key())
		}
		seen[ev.Key()] = ev.Status.State
	}
	if len(seen) != 3 {
		t.Fatalf("three states, %d keys: %v", len(seen), seen)
	}
}

// TestStaleEventIsIgnored_Finding11 (issue 23, finding 11): Meta signs only
// the body, so a message or status whose own timestamp is past
// Request.Oldest (the dedupe window) is a replay the dedupe key may no
// longer catch: it is ignored, alone, and the rest of the notification is
// taken.
func TestStaleEventIsIgnored_Finding11(t *testing.T) {
	t.Parallel()
	r := newTestReceiver(t)
	req := signed(readSample(t, "batch.json"))
	// The batch's messages are of 16:03:40 and :41, its status of :42.
	req.Oldest = time.Unix(1764432221, 0)
	p, err := r.Parse(req)
	if err != nil {
		t.Fatal(err)
	}
	want := []platform.Ignored{{Reason: platform.IgnoredStale, ID: "wamid.FTE1NTUxMjMwMDAyFQIAEhgUM0VCMEdSQzAwMDAwMDAwMDAwMDAwMDY="}}
	if !reflect.DeepEqual(p.Ignored, want) || len(p.Events) != 2 {
		t.Fatalf("got %+v", p)
	}
	req.Oldest = time.Unix(1764432223, 0)
	if p, err := r.Parse(req); err != nil || len(p.Events) != 0 || len(p.Ignored) != 3 || p.Ignored[2].Reason != platform.IgnoredStale {
		t.Fatalf("every event stale: %+v, %v", p, err)
	}
	req.Oldest = sampleNow.Add(-window)
	if p, err := r.Parse(req); err != nil || len(p.Events) != 3 {
		t.Fatalf("within the window: %+v, %v", p, err)
	}
}
