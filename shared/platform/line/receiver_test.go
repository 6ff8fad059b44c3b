package line

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeline"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// Test identities. The samples in events/line were sent to this bot.
const (
	testSecret = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
	testToken  = "parley-line-test-channel-access-token+0123456789/abcdefghijklmnopqrstuvwxyz="
	bot        = "Ub0770000000000000000000000000001"
	ada        = "Uada00000000000000000000000000042"
	grace      = "U9ace0000000000000000000000000043"
	group      = "C9e0000000000000000000000000c0de1"
	eventsDir  = "../../../events/line"
)

// sampleNow is when the samples are received: a few seconds after the last
// was sent.
var sampleNow = time.Date(2025, 11, 29, 16, 5, 0, 0, time.UTC)

// window is how far before Now ingress sets Request.Oldest by default:
// the dedupe window (8 days) less its margin (an hour).
const window = 8*24*time.Hour - time.Hour

func newTestReceiver(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{ChannelSecret: testSecret, BotUserID: bot}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	return r
}

// signed is body as LINE sends it, signed with the test secret.
func signed(body []byte) *platform.Request {
	return &platform.Request{Method: http.MethodPost, Header: fakeline.Headers(testSecret, body), Body: body, Now: sampleNow}
}

func readSample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(eventsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func chat(id string) message.Thread {
	return message.Thread{Platform: message.LINE, Account: bot, Chat: id}
}

func at(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func reply(token string, ms int64) *message.ReplyContext {
	return &message.ReplyContext{Token: token, Until: at(ms).Add(time.Minute)}
}

// sampleExpectations is what each payload in events/line parses to; the
// conformance suite (TestConformance) verifies and parses every file.
func sampleExpectations() map[string]platform.Parsed {
	// The batch's message ids, by quote token.
	msgIDs := map[string]string{"Qx1aB2cD3eF4gH5iJ6kL7mN8-Ada2": "583011253812345003", "Rz2bC3dE4fG5hI6jK7lM8nO9-Grace2": "583011253823456004", "Sa3cD4eF5gH6iJ7kL8mN9oP0-Ada3": "583011253834567005"}
	adaText := message.Event{
		Platform: message.LINE, Account: bot, EventID: "01KB7Z8Y0R3GZ5M2WQ4N6P8T0A", Kind: message.KindMessage,
		Thread: chat(ada), Sender: message.Sender{ID: ada}, Text: "what's the weather in Lisbon tomorrow?",
		MessageID: "583011239467942001", QuoteToken: "q3Plxr4AgKd1a0F1oK0Gz9vN7-Ada1", ChatType: message.ChatPrivate, Time: at(1764432000123),
		ReplyContext: reply("b60d432864f44d079f6d8efe86cf404b", 1764432000123),
	}
	batch := func(id string, th message.Thread, who, text, quote string, chatType string, ms int64, token string) message.Event {
		return message.Event{
			Platform: message.LINE, Account: bot, EventID: id, Kind: message.KindMessage, Thread: th,
			Sender: message.Sender{ID: who}, Text: text, MessageID: msgIDs[quote], QuoteToken: quote, ChatType: chatType, Time: at(ms),
			ReplyContext: reply(token, ms),
		}
	}
	return map[string]platform.Parsed{
		"verify.json":       {Reply: &platform.Reply{Status: 200, ContentType: "text/plain; charset=utf-8", Body: []byte("OK")}},
		"message-user.json": {Events: []message.Event{adaText}},
		// A redelivery keeps its webhookEventId: the same event, the same
		// dedupe key.
		"redelivery.json": {Events: []message.Event{adaText}},
		"message-group.json": {Events: []message.Event{{
			Platform: message.LINE, Account: bot, EventID: "01KB7ZABCD4H5J6K7M8N9P0Q1R", Kind: message.KindMessage,
			Thread: chat(group), Sender: message.Sender{ID: grace},
			// The leading mention of the bot is what addressed it, not
			// what was said to it.
			Text:      "can you remind everyone at 10:15?",
			MessageID: "583011246633221002", QuoteToken: "yHc2m0QpLw8sX4bT6vZ1n3R5-Grace1", ReplyTo: "600000000000000007",
			ChatType: message.ChatGroup, Time: at(1764432060456),
			ReplyContext: reply("8f2e1c0b9a7d4e6f8a1b2c3d4e5f6a7b", 1764432060456),
		}}},
		"batch.json": {Events: []message.Event{
			batch("01KB7ZC0A1B2C3D4E5F6G7H8J9", chat(ada), ada, "also book a table for two", "Qx1aB2cD3eF4gH5iJ6kL7mN8-Ada2", message.ChatPrivate, 1764432120100, "0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
			batch("01KB7ZC0A1B2C3D4E5F6G7H8JA", chat(group), grace, "and order the cake", "Rz2bC3dE4fG5hI6jK7lM8nO9-Grace2", message.ChatGroup, 1764432120200, "1b2c3d4e5f60718293a4b5c6d7e8f90a"),
			batch("01KB7ZC0A1B2C3D4E5F6G7H8JB", chat(ada), ada, "at 8pm, please", "Sa3cD4eF5gH6iJ7kL8mN9oP0-Ada3", message.ChatPrivate, 1764432120300, "2c3d4e5f60718293a4b5c6d7e8f90a1b"),
		}},
		"postback.json": {Events: []message.Event{{
			Platform: message.LINE, Account: bot, EventID: "01KB7ZE5S6T7V8W9X0Y1Z2A3B4", Kind: message.KindAnswer,
			Thread: chat(ada), Sender: message.Sender{ID: ada}, ChatType: message.ChatPrivate, Time: at(1764432180000),
			Press:        &message.Press{Data: "q1:0:0"},
			ReplyContext: reply("3d4e5f60718293a4b5c6d7e8f90a1b2c", 1764432180000),
		}}},
		// Ada sends a photo, a PDF and a voice note: three events, each a
		// message with one attachment and no text.
		"files.json": {Events: []message.Event{
			adaFile("01KB7ZM1A2B3C4D5E6F7G8H9J0", "583011267045678101", "Pq1Rs2Tu3Vw4Xy5Za6Bc7-Ada5", "5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d", 1764432250000,
				message.Attachment{Kind: message.AttachImage, PlatformID: "583011267045678101"}),
			adaFile("01KB7ZM1A2B3C4D5E6F7G8H9J1", "583011267045678102", "", "6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e", 1764432251000,
				message.Attachment{Kind: message.AttachFile, PlatformID: "583011267045678102", Name: "boarding-pass.pdf", Size: 48213}),
			adaFile("01KB7ZM1A2B3C4D5E6F7G8H9J2", "583011267045678103", "", "7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f", 1764432252000,
				message.Attachment{Kind: message.AttachVoice, MIME: "audio/mp4", PlatformID: "583011267045678103", Duration: 4}),
		}},
		// A sticker: described, never fetched (LINE serves bots no
		// sticker image).
		"sticker.json": {Events: []message.Event{
			adaFile("01KB7ZG7C8D9E0F1G2H3J4K5M6", "583011267045678006", "Tb4dE5fG6hI7jK8lM9nO0pQ1-Ada4", "4e5f60718293a4b5c6d7e8f90a1b2c3d", 1764432240000,
				message.Attachment{Kind: message.AttachSticker, PlatformID: "11537/52002734", Name: "Hello, greeting", Reason: message.ReasonNotServed}),
		}},
		"follow.json": {Ignored: []platform.Ignored{{Reason: platform.IgnoredUnsupported, ID: "01KB7ZH8N9P0Q1R2S3T4V5W6X7"}}},
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	r := newTestReceiver(t)
	body := readSample(t, "message-user.json")
	with := func(sigs ...string) *platform.Request {
		h := http.Header{}
		for _, s := range sigs {
			h.Add(SignatureHeader, s)
		}
		return &platform.Request{Method: http.MethodPost, Header: h, Body: body}
	}
	good := fakeline.Sign(testSecret, body)
	cases := []struct {
		name string
		r    *Receiver
		req  *platform.Request
		want error
	}{
		{"Signed", r, with(good), nil},
		{"Missing", r, with(), platform.ErrUnauthorized},
		{"Empty", r, with(""), platform.ErrUnauthorized},
		{"Twice", r, with(good, good), platform.ErrUnauthorized},
		{"NotBase64", r, with("not base64!"), platform.ErrUnauthorized},
		{"Hex", r, with(strings.Repeat("ab", 32)), platform.ErrUnauthorized},
		{"OtherSecret", r, with(fakeline.Sign(testSecret+"x", body)), platform.ErrUnauthorized},
		{"Truncated", r, with(good[:len(good)-4]), platform.ErrUnauthorized},
		{"OtherBody", r, with(fakeline.Sign(testSecret, append(body, ' '))), platform.ErrUnauthorized},
		{"NoSecretConfigured", &Receiver{}, with(fakeline.Sign("", body)), platform.ErrUnauthorized},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.r.Verify(tc.req)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
			if strings.Contains(err.Error(), testSecret) {
				t.Fatalf("the error shows the secret: %v", err)
			}
		})
	}
}

// TestSignMatchesOpenSSL: the signature is what the LINE Platform's
// documented recipe gives, computed apart from Go:
//
//	openssl dgst -sha256 -hmac 0f1e2d3c4b5a69788796a5b4c3d2e1f0 -binary < events/line/verify.json | base64
func TestSignMatchesOpenSSL(t *testing.T) {
	t.Parallel()
	const want = "L+v+zeYoy1HEnHgzcefLvkdr9O/FpGISZPNcGqqZMug="
	body := readSample(t, "verify.json")
	if got := fakeline.Sign(testSecret, body); got != want {
		t.Fatalf("fakeline.Sign = %s, want %s", got, want)
	}
	req := &platform.Request{Method: http.MethodPost, Header: http.Header{SignatureHeader: {want}}, Body: body}
	if err := newTestReceiver(t).Verify(req); err != nil {
		t.Fatalf("Verify refused the openssl signature: %v", err)
	}
}

// event is a webhook body of one event, with the test bot as destination.
func event(ev string) []byte {
	return []byte(`{"destination":"` + bot + `","events":[` + ev + `]}`)
}

const base = `"webhookEventId":"01KB7ZZZZZZZZZZZZZZZZZZZZZ","deliveryContext":{"isRedelivery":false},"timestamp":1764432000000,"replyToken":"r0","mode":"active"`

func TestParse(t *testing.T) {
	t.Parallel()
	r := newTestReceiver(t)
	const id = "01KB7ZZZZZZZZZZZZZZZZZZZZZ"
	ignored := func(reason string) platform.Parsed {
		return platform.Parsed{Ignored: []platform.Ignored{{Reason: reason, ID: id}}}
	}
	text := func(src, msg string) []byte {
		return event(`{"type":"message","source":` + src + `,"message":` + msg + `,` + base + `}`)
	}
	adaSrc := `{"type":"user","userId":"` + ada + `"}`
	// file is Ada's message "1" with one attachment and no text.
	file := func(a message.Attachment) platform.Parsed {
		return platform.Parsed{Events: []message.Event{{
			Platform: message.LINE, Account: bot, EventID: id, Kind: message.KindMessage, Thread: chat(ada),
			Sender: message.Sender{ID: ada}, MessageID: "1", QuoteToken: "q", ChatType: message.ChatPrivate, Time: at(1764432000000),
			ReplyContext: reply("r0", 1764432000000), Attachments: []message.Attachment{a},
		}}}
	}
	noQuote := func(p platform.Parsed) platform.Parsed { p.Events[0].QuoteToken = ""; return p }
	withText := func(p platform.Parsed, text string) platform.Parsed { p.Events[0].Text = text; return p }
	room := `{"type":"room","roomId":"R200000000000000000000000000000f1","userId":"` + grace + `"}`
	cases := []struct {
		name string
		body []byte
		want platform.Parsed
		err  error
	}{
		{"Image", text(adaSrc, `{"type":"image","id":"1","quoteToken":"q","contentProvider":{"type":"line"},"imageSet":{"id":"s","index":1,"total":2}}`), file(message.Attachment{Kind: message.AttachImage, PlatformID: "1"}), nil},
		{"ImageElsewhere", text(adaSrc, `{"type":"image","id":"1","quoteToken":"q","contentProvider":{"type":"external","originalContentUrl":"https://example.com/a.jpg"}}`), file(message.Attachment{Kind: message.AttachImage, PlatformID: "1", Reason: message.ReasonNotServed}), nil},
		{"MessageSticker", text(adaSrc, `{"type":"sticker","id":"1","quoteToken":"q","packageId":"789","stickerId":"10855","stickerResourceType":"MESSAGE","keywords":["hi"],"text":"see you at 8"}`),
			withText(file(message.Attachment{Kind: message.AttachSticker, PlatformID: "789/10855", Name: "hi", Reason: message.ReasonNotServed}), "see you at 8"), nil},
		{"StickerWithoutIDs", text(adaSrc, `{"type":"sticker","id":"1","quoteToken":"q","packageId":"789"}`), platform.Parsed{}, platform.ErrMalformed},
		{"Video", text(adaSrc, `{"type":"video","id":"1","quoteToken":"q","duration":60499,"contentProvider":{"type":"line"}}`), file(message.Attachment{Kind: message.AttachVideo, PlatformID: "1", Duration: 60}), nil},
		{"VoiceNote", text(adaSrc, `{"type":"audio","id":"1","duration":4500,"contentProvider":{"type":"line"}}`), noQuote(file(message.Attachment{Kind: message.AttachVoice, MIME: "audio/mp4", PlatformID: "1", Duration: 5})), nil},
		{"File", text(adaSrc, `{"type":"file","id":"1","fileName":"pass.pdf","fileSize":48213}`), noQuote(file(message.Attachment{Kind: message.AttachFile, PlatformID: "1", Name: "pass.pdf", Size: 48213})), nil},
		{"FileWithoutID", text(adaSrc, `{"type":"file","fileName":"pass.pdf","fileSize":48213}`), platform.Parsed{}, platform.ErrMalformed},
		{"Location", text(adaSrc, `{"type":"location","id":"1","latitude":35.6,"longitude":139.7}`), ignored(platform.IgnoredNoText), nil},
		{"BlankText", text(adaSrc, `{"type":"text","id":"1","quoteToken":"q","text":" \n"}`), ignored(platform.IgnoredNoText), nil},
		{"OnlyTheMention", text(adaSrc, `{"type":"text","id":"1","quoteToken":"q","text":"@Parley ","mention":{"mentionees":[{"index":0,"length":7,"type":"user","isSelf":true}]}}`), ignored(platform.IgnoredNoText), nil},
		{"Standby", event(`{"type":"message","source":` + adaSrc + `,"message":{"type":"text","id":"1","quoteToken":"q","text":"hi"},"webhookEventId":"` + id + `","timestamp":1,"mode":"standby"}`), ignored(IgnoredStandby), nil},
		{"GroupWithoutUser", text(`{"type":"group","groupId":"`+group+`"}`, `{"type":"text","id":"1","quoteToken":"q","text":"hi"}`), ignored(IgnoredNoSender), nil},
		// Ingress takes a deletion only when the deployment asks for edits.
		{"Unsend", event(`{"type":"unsend","unsend":{"messageId":"600000000000000009"},"source":` + adaSrc + `,` + base + `}`), platform.Parsed{Events: []message.Event{{
			Platform: message.LINE, Account: bot, EventID: id, Kind: message.KindDelete, Thread: chat(ada),
			Sender: message.Sender{ID: ada}, MessageID: "600000000000000009", ChatType: message.ChatPrivate, Time: at(1764432000000),
			ReplyContext: reply("r0", 1764432000000),
		}}}, nil},
		{"UnsendWithoutMessage", event(`{"type":"unsend","unsend":{},"source":` + adaSrc + `,` + base + `}`), platform.Parsed{}, platform.ErrMalformed},
		{"Join", event(`{"type":"join","source":{"type":"group","groupId":"` + group + `"},` + base + `}`), ignored(platform.IgnoredUnsupported), nil},
		{"FutureEventType", event(`{"type":"hologram","hologram":[1,2],` + base + `}`), ignored(platform.IgnoredUnsupported), nil},
		{"PostbackWithoutData", event(`{"type":"postback","postback":{"data":"","params":{"date":"2025-12-01"}},"source":` + adaSrc + `,` + base + `}`), ignored(platform.IgnoredUnsupported), nil},
		{"Room", text(room, `{"type":"text","id":"1","quoteToken":"q","text":"hi"}`), platform.Parsed{Events: []message.Event{{
			Platform: message.LINE, Account: bot, EventID: id, Kind: message.KindMessage, Thread: chat("R200000000000000000000000000000f1"),
			Sender: message.Sender{ID: grace}, Text: "hi", MessageID: "1", QuoteToken: "q", ChatType: message.ChatGroup, Time: at(1764432000000),
			ReplyContext: reply("r0", 1764432000000),
		}}}, nil},
		// A mention of someone else, or one not at the start, stays.
		{"OtherMention", text(adaSrc, `{"type":"text","id":"1","quoteToken":"q","text":"@Grace hi","mention":{"mentionees":[{"index":0,"length":6,"type":"user","isSelf":false}]}}`), platform.Parsed{Events: []message.Event{{
			Platform: message.LINE, Account: bot, EventID: id, Kind: message.KindMessage, Thread: chat(ada),
			Sender: message.Sender{ID: ada}, Text: "@Grace hi", MessageID: "1", QuoteToken: "q", ChatType: message.ChatPrivate, Time: at(1764432000000),
			ReplyContext: reply("r0", 1764432000000),
		}}}, nil},
		// Mention offsets count UTF-16 units: an emoji is two.
		{"MentionAfterEmojiName", text(adaSrc, `{"type":"text","id":"1","quoteToken":"q","text":"@😀bot  go","mention":{"mentionees":[{"index":0,"length":6,"type":"user","isSelf":true}]}}`), platform.Parsed{Events: []message.Event{{
			Platform: message.LINE, Account: bot, EventID: id, Kind: message.KindMessage, Thread: chat(ada),
			Sender: message.Sender{ID: ada}, Text: "go", MessageID: "1", QuoteToken: "q", ChatType: message.ChatPrivate, Time: at(1764432000000),
			ReplyContext: reply("r0", 1764432000000),
		}}}, nil},
		{"MentionPastTheText", text(adaSrc, `{"type":"text","id":"1","quoteToken":"q","text":"@b","mention":{"mentionees":[{"index":0,"length":9,"type":"user","isSelf":true}]}}`), platform.Parsed{Events: []message.Event{{
			Platform: message.LINE, Account: bot, EventID: id, Kind: message.KindMessage, Thread: chat(ada),
			Sender: message.Sender{ID: ada}, Text: "@b", MessageID: "1", QuoteToken: "q", ChatType: message.ChatPrivate, Time: at(1764432000000),
			ReplyContext: reply("r0", 1764432000000),
		}}}, nil},
		{"NoReplyToken", event(`{"type":"message","source":` + adaSrc + `,"message":{"type":"text","id":"1","quoteToken":"q","text":"hi"},"webhookEventId":"` + id + `","timestamp":1764432000000,"mode":"active"}`), platform.Parsed{Events: []message.Event{{
			Platform: message.LINE, Account: bot, EventID: id, Kind: message.KindMessage, Thread: chat(ada),
			Sender: message.Sender{ID: ada}, Text: "hi", MessageID: "1", QuoteToken: "q", ChatType: message.ChatPrivate, Time: at(1764432000000),
		}}}, nil},

		{"AnotherBot", []byte(`{"destination":"` + ada + `","events":[]}`), platform.Parsed{}, platform.ErrForbidden},
		{"TooManyEvents", []byte(`{"destination":"` + bot + `","events":[` + strings.Repeat(`{},`, MaxEvents) + `{}]}`), platform.Parsed{}, platform.ErrUnprocessable},
		{"NoDestination", []byte(`{"events":[]}`), platform.Parsed{}, platform.ErrMalformed},
		{"DestinationNotAnID", []byte(`{"destination":"U 1","events":[]}`), platform.Parsed{}, platform.ErrMalformed},
		{"NoEvents", []byte(`{"destination":"` + bot + `"}`), platform.Parsed{}, platform.ErrMalformed},
		{"NullEvents", []byte(`{"destination":"` + bot + `","events":null}`), platform.Parsed{}, platform.ErrMalformed},
		{"EventNotAnObject", event(`7`), platform.Parsed{}, platform.ErrMalformed},
		{"EventWithoutID", event(`{"type":"follow","timestamp":1}`), platform.Parsed{}, platform.ErrMalformed},
		{"MessageWithoutSource", event(`{"type":"message","message":{"type":"text","id":"1","text":"hi"},` + base + `}`), platform.Parsed{}, platform.ErrMalformed},
		{"MessageWithoutMessage", event(`{"type":"message","source":` + adaSrc + `,` + base + `}`), platform.Parsed{}, platform.ErrMalformed},
		{"PostbackWithoutPostback", event(`{"type":"postback","source":` + adaSrc + `,` + base + `}`), platform.Parsed{}, platform.ErrMalformed},
		{"SourceOfUnknownType", text(`{"type":"channel","userId":"`+ada+`"}`, `{"type":"text","id":"1","text":"hi"}`), platform.Parsed{}, platform.ErrMalformed},
		{"UserSourceWithoutUser", text(`{"type":"user"}`, `{"type":"text","id":"1","text":"hi"}`), platform.Parsed{}, platform.ErrMalformed},
		{"ChatWithSpaces", text(`{"type":"group","groupId":"C 1","userId":"`+ada+`"}`, `{"type":"text","id":"1","text":"hi"}`), platform.Parsed{}, platform.ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := signed(tc.body)
			if err := r.Verify(req); err != nil {
				t.Fatalf("Verify: %v", err)
			}
			got, err := r.Parse(req)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Parse = %+v, %v; want %v", got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Parse\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestUnscopedReceiver: without LINE_BOT_USER_ID every destination is
// taken, and each scopes its own events.
func TestUnscopedReceiver(t *testing.T) {
	t.Parallel()
	r := &Receiver{ChannelSecret: testSecret}
	body := []byte(strings.ReplaceAll(string(readSample(t, "message-user.json")), bot, grace))
	p, err := r.Parse(signed(body))
	if err != nil || len(p.Events) != 1 || p.Events[0].Account != grace || p.Events[0].Thread.Account != grace {
		t.Fatalf("Parse = %+v, %v", p, err)
	}
}

func TestReceiverValidate(t *testing.T) {
	t.Parallel()
	for name, r := range map[string]*Receiver{
		"NoSecret":     {BotUserID: bot},
		"BasicID":      {ChannelSecret: testSecret, BotUserID: "@parley"},
		"UpperCaseHex": {ChannelSecret: testSecret, BotUserID: strings.ToUpper(bot)},
	} {
		if err := r.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, r)
		} else if strings.Contains(err.Error(), testSecret) {
			t.Errorf("%s: the error shows the secret", name)
		}
	}
}

// TestStaleEventIsIgnored_Finding11 (issue 23, finding 11): LINE signs only
// the body, so an event whose own timestamp is past Request.Oldest (the
// dedupe window) is a replay the dedupe key may no longer catch: it is
// ignored, alone, and the rest of its batch is taken.
func TestStaleEventIsIgnored_Finding11(t *testing.T) {
	t.Parallel()
	r := newTestReceiver(t)
	req := signed(readSample(t, "batch.json"))
	// The batch's first event (16:02:00.100) is older than the bound, the
	// others (.200, .300) are not.
	req.Oldest = time.UnixMilli(1764432120150)
	p, err := r.Parse(req)
	if err != nil {
		t.Fatal(err)
	}
	want := []platform.Ignored{{Reason: platform.IgnoredStale, ID: "01KB7ZC0A1B2C3D4E5F6G7H8J9"}}
	if !reflect.DeepEqual(p.Ignored, want) || len(p.Events) != 2 || p.Events[0].EventID != "01KB7ZC0A1B2C3D4E5F6G7H8JA" {
		t.Fatalf("got %+v", p)
	}
	// Without a bound, or within it, every event is taken.
	req.Oldest = sampleNow.Add(-window)
	if p, err := r.Parse(req); err != nil || len(p.Events) != 3 {
		t.Fatalf("within the window: %+v, %v", p, err)
	}
}

// adaFile is Ada's message id (quoted by quote) sent at ms, with one
// attachment and no text.
func adaFile(eventID, id, quote, replyToken string, ms int64, a message.Attachment) message.Event {
	return message.Event{
		Platform: message.LINE, Account: bot, EventID: eventID, Kind: message.KindMessage, Thread: chat(ada),
		Sender: message.Sender{ID: ada}, MessageID: id, QuoteToken: quote, ChatType: message.ChatPrivate, Time: at(ms),
		ReplyContext: reply(replyToken, ms), Attachments: []message.Attachment{a},
	}
}
