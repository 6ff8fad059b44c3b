package slack

import (
	"bytes"
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// testSecret signs the samples in tests. It is the example signing secret of
// Slack's "Verifying requests from Slack" page, so the published test vector
// below checks Sign against Slack's own arithmetic.
const (
	testSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	eventsDir  = "../../../events/slack"
	team       = "T0TEAM0001"
)

// sampleNow is a minute after the samples were sent.
var sampleNow = time.Unix(1764432240, 0)

// signed builds a request the way Slack sends it: the v0 signature over the
// raw body and the timestamp header, computed here independently of Sign.
func signed(body []byte, ts time.Time, now time.Time) *platform.Request {
	tss := strconv.FormatInt(ts.Unix(), 10)
	h := http.Header{}
	h.Set(TimestampHeader, tss)
	h.Set(SignatureHeader, "v0="+hex.EncodeToString(hmacSHA256(testSecret, "v0:"+tss+":"+string(body))))
	h.Set("Content-Type", "application/json")
	return &platform.Request{Method: http.MethodPost, Header: h, Body: body, Now: now}
}

func TestSignMatchesSlacksPublishedExample(t *testing.T) {
	t.Parallel()
	body := "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
	const want = "a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
	if got := hex.EncodeToString(Sign(testSecret, "1531420618", []byte(body))); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
	h := http.Header{}
	h.Set(TimestampHeader, "1531420618")
	h.Set(SignatureHeader, "v0="+want)
	r := &Receiver{SigningSecret: testSecret}
	req := &platform.Request{Method: http.MethodPost, Header: h, Body: []byte(body), Now: time.Unix(1531420618+60, 0)}
	if err := r.Verify(req); err != nil {
		t.Fatalf("Verify(Slack's example) = %v", err)
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	body := []byte(`{"type":"event_callback"}`)
	now := sampleNow
	with := func(mutate func(*platform.Request)) *platform.Request {
		req := signed(body, now, now)
		mutate(req)
		return req
	}
	cases := []struct {
		name string
		r    *Receiver
		req  *platform.Request
		want error
	}{
		{"Signed", nil, signed(body, now, now), nil},
		{"FourMinutesOld", nil, signed(body, now.Add(-4*time.Minute), now), nil},
		{"FourMinutesAhead", nil, signed(body, now.Add(4*time.Minute), now), nil},
		{"Retry", nil, with(func(r *platform.Request) {
			r.Header.Set("X-Slack-Retry-Num", "2")
			r.Header.Set("X-Slack-Retry-Reason", "http_timeout")
		}), nil},
		{"SixMinutesOld", nil, signed(body, now.Add(-6*time.Minute), now), platform.ErrStale},
		{"SixMinutesAhead", nil, signed(body, now.Add(6*time.Minute), now), platform.ErrStale},
		{"TamperedBody", nil, with(func(r *platform.Request) { r.Body = []byte(`{"type":"event_callback" }`) }), platform.ErrUnauthorized},
		{"TamperedTimestamp", nil, with(func(r *platform.Request) {
			r.Header.Set(TimestampHeader, strconv.FormatInt(now.Unix()+1, 10))
		}), platform.ErrUnauthorized},
		{"OtherSecret", &Receiver{SigningSecret: testSecret + "x"}, signed(body, now, now), platform.ErrUnauthorized},
		{"MissingTimestamp", nil, with(func(r *platform.Request) { r.Header.Del(TimestampHeader) }), platform.ErrUnauthorized},
		{"MissingSignature", nil, with(func(r *platform.Request) { r.Header.Del(SignatureHeader) }), platform.ErrUnauthorized},
		{"GarbledTimestamp", nil, with(func(r *platform.Request) { r.Header.Set(TimestampHeader, "yesterday") }), platform.ErrMalformed},
		{"OtherVersion", nil, with(func(r *platform.Request) {
			r.Header.Set(SignatureHeader, "v1="+strings.TrimPrefix(r.Header.Get(SignatureHeader), "v0="))
		}), platform.ErrUnauthorized},
		{"NotHex", nil, with(func(r *platform.Request) { r.Header.Set(SignatureHeader, "v0=zz") }), platform.ErrUnauthorized},
		{"ShortSignature", nil, with(func(r *platform.Request) { r.Header.Set(SignatureHeader, r.Header.Get(SignatureHeader)[:20]) }), platform.ErrUnauthorized},
		{"NoSecretConfigured", &Receiver{}, func() *platform.Request {
			// Even a request signed with the empty secret is refused.
			req := signed(body, now, now)
			req.Header.Set(SignatureHeader, "v0="+hex.EncodeToString(Sign("", req.Header.Get(TimestampHeader), body)))
			return req
		}(), platform.ErrUnauthorized},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := tc.r
			if r == nil {
				r = &Receiver{SigningSecret: testSecret}
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
			if strings.Contains(err.Error(), testSecret) {
				t.Fatalf("error leaks the secret: %v", err)
			}
		})
	}
}

func TestVerifyZeroNowUsesWallClock(t *testing.T) {
	t.Parallel()
	body := []byte(`{}`)
	req := signed(body, time.Now(), time.Time{})
	if err := (&Receiver{SigningSecret: testSecret}).Verify(req); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	req = signed(body, time.Now().Add(-time.Hour), time.Time{})
	if err := (&Receiver{SigningSecret: testSecret}).Verify(req); !errors.Is(err, platform.ErrStale) {
		t.Fatalf("Verify = %v, want ErrStale", err)
	}
}

func channel(thread string) message.Thread {
	return message.Thread{Platform: message.Slack, Account: team, Chat: "C0CHAN0001", Thread: thread}
}

var dm = message.Thread{Platform: message.Slack, Account: team, Chat: "D0DM000001"}

var ada = message.Sender{ID: "U0ADA00001"}

// mention is the one Event both halves of the app_mention + message pair
// must produce.
var mention = message.Event{
	Platform: message.Slack, Account: team, EventID: "C0CHAN0001:1764432060.000200", Kind: message.KindMessage,
	Thread: channel("1764432060.000200"), Sender: ada, Text: "draft a reply to Grace about the launch date",
	MessageID: "1764432060.000200", ChatType: message.ChatGroup, Time: time.Date(2025, 11, 29, 16, 1, 0, 200_000, time.UTC),
}

func sampleExpectations() map[string]platform.Parsed {
	return map[string]platform.Parsed{
		"message-im.json": {Events: []message.Event{{
			Platform: message.Slack, Account: team, EventID: "D0DM000001:1764432000.000100", Kind: message.KindMessage,
			Thread: dm, Sender: ada, Text: "what's on my calendar today?",
			MessageID: "1764432000.000100", ChatType: message.ChatPrivate, Time: time.Date(2025, 11, 29, 16, 0, 0, 100_000, time.UTC),
		}}},
		// Ada shares a PDF and a voice clip in her DM, with a question.
		"file-share.json": {Events: []message.Event{{
			Platform: message.Slack, Account: team, EventID: "D0DM000001:1764432240.000700", Kind: message.KindMessage,
			Thread: dm, Sender: ada, Text: "is this my gate?",
			MessageID: "1764432240.000700", ChatType: message.ChatPrivate, Time: time.Date(2025, 11, 29, 16, 4, 0, 700_000, time.UTC),
			Attachments: []message.Attachment{
				{Kind: message.AttachFile, MIME: "application/pdf", Size: 48213, Name: "boarding-pass.pdf", PlatformID: "F0PDF000001"},
				{Index: 1, Kind: message.AttachVoice, MIME: "audio/webm", Size: 2062, Name: "audio_message.webm", PlatformID: "F0VOICE0001", Duration: 3},
			},
		}}},
		"app-mention.json":     {Events: []message.Event{mention}},
		"message-channel.json": {Events: []message.Event{mention}},
		"thread-reply.json": {Events: []message.Event{{
			Platform: message.Slack, Account: team, EventID: "C0CHAN0001:1764432120.000300", Kind: message.KindMessage,
			Thread: channel("1764432060.000200"), Sender: ada, Text: "make it shorter, please",
			MessageID: "1764432120.000300", ReplyTo: "1764432060.000200", ChatType: message.ChatGroup,
			Time: time.Date(2025, 11, 29, 16, 2, 0, 300_000, time.UTC),
		}}},
		"retry.json": {Events: []message.Event{{
			Platform: message.Slack, Account: team, EventID: "D0DM000001:1764432180.000400", Kind: message.KindMessage,
			Thread: dm, Sender: ada, Text: "are you still there?",
			MessageID: "1764432180.000400", ChatType: message.ChatPrivate, Time: time.Date(2025, 11, 29, 16, 3, 0, 400_000, time.UTC),
		}}},
		"bot-message.json": {Ignored: []platform.Ignored{{Reason: "bot", ID: "Ev0BOTMSG01"}}},
		// An edit is an event of its own; ingress takes it only when the
		// deployment asks for edits (PARLEY_EDITS).
		"message-changed.json": {Events: []message.Event{{
			Platform: message.Slack, Account: team, EventID: "edit:D0DM000001:1764432000.000100:1764432030.000150", Kind: message.KindEdit,
			Thread: message.Thread{Platform: message.Slack, Account: team, Chat: "D0DM000001"}, Sender: message.Sender{ID: "U0ADA00001"},
			Text: "what's on my calendar tomorrow?", MessageID: "1764432000.000100", ChatType: message.ChatPrivate,
			Time: time.Date(2025, 11, 29, 16, 0, 30, 150_000, time.UTC),
		}}},
		// Ada's 👍 on a bubble Parley sent in her DM.
		"reaction-added.json": {Events: []message.Event{{
			Platform: message.Slack, Account: team, EventID: "react:Ev0REACT001", Kind: message.KindReaction,
			Thread: message.Thread{Platform: message.Slack, Account: team, Chat: "D0DM000001"}, Sender: message.Sender{ID: "U0ADA00001"},
			ChatType: message.ChatPrivate, Time: time.Date(2025, 11, 29, 16, 1, 0, 300_000, time.UTC),
			Reaction: &message.Reaction{MessageID: "1764432001.000200", Emoji: "👍"},
		}}},
		"url-verification.json": {Reply: &platform.Reply{Status: 200, ContentType: "text/plain; charset=utf-8",
			Body: []byte("3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P")}},
		// Ada presses Yes on the question Parley asked in the mention's
		// thread.
		"block-actions.txt": {Within: 3 * time.Second, Events: []message.Event{{
			Platform: message.Slack, Account: team, EventID: "C0CHAN0001:1764432100.000500:1764432200.123456", Kind: message.KindAnswer,
			Thread: channel("1764432060.000200"), Sender: ada, ChatType: message.ChatGroup,
			Time:  time.Date(2025, 11, 29, 16, 3, 20, 123_456_000, time.UTC),
			Press: &message.Press{Data: "q0:0", MessageID: "1764432100.000500"},
		}}},
		// Ada picks Porto from a select on a question in her DM.
		"block-actions-select.txt": {Within: 3 * time.Second, Events: []message.Event{{
			Platform: message.Slack, Account: team, EventID: "D0DM000001:1764432210.000600:1764432230.654321", Kind: message.KindAnswer,
			Thread: dm, Sender: ada, ChatType: message.ChatPrivate,
			Time:  time.Date(2025, 11, 29, 16, 3, 50, 654_321_000, time.UTC),
			Press: &message.Press{Data: "q1:1", MessageID: "1764432210.000600"},
		}}},
		"shortcut.txt": {Ignored: []platform.Ignored{{Reason: "unsupported", ID: "1764432290.000001"}}},
	}
}

func readSample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(eventsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMentionPairIsOneEvent: Slack sends app_mention and message for one
// mention, with different event_ids; they must dedupe to one key.
func TestMentionPairIsOneEvent(t *testing.T) {
	t.Parallel()
	r := &Receiver{SigningSecret: testSecret}
	var keys []string
	for _, name := range []string{"app-mention.json", "message-channel.json"} {
		p, err := r.Parse(signed(readSample(t, name), sampleNow, sampleNow))
		if err != nil || len(p.Events) != 1 {
			t.Fatalf("%s: %+v, %v", name, p, err)
		}
		keys = append(keys, p.Events[0].Key(), p.Events[0].Thread.Key())
	}
	if keys[0] != keys[2] || keys[1] != keys[3] {
		t.Fatalf("the pair has different keys: %q", keys)
	}
	if !strings.Contains(string(readSample(t, "app-mention.json")), `"event_id": "Ev0MENTION1"`) ||
		!strings.Contains(string(readSample(t, "message-channel.json")), `"event_id": "Ev0MESSAGE1"`) {
		t.Fatal("the samples should carry different event_ids, as Slack sends them")
	}
}

// TestRetryIsTheSameEvent: a retry is the same body with retry headers.
func TestRetryIsTheSameEvent(t *testing.T) {
	t.Parallel()
	r := &Receiver{SigningSecret: testSecret}
	body := readSample(t, "retry.json")
	first := signed(body, sampleNow, sampleNow)
	retry := signed(body, sampleNow.Add(time.Minute), sampleNow.Add(time.Minute))
	retry.Header.Set("X-Slack-Retry-Num", "1")
	retry.Header.Set("X-Slack-Retry-Reason", "http_timeout")
	var got []platform.Parsed
	for _, req := range []*platform.Request{first, retry} {
		if err := r.Verify(req); err != nil {
			t.Fatalf("Verify: %v", err)
		}
		p, err := r.Parse(req)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		got = append(got, p)
	}
	if !reflect.DeepEqual(got[0], got[1]) || got[0].Events[0].Key() != got[1].Events[0].Key() {
		t.Fatalf("retry differs:\n%+v\n%+v", got[0], got[1])
	}
}

// callback wraps an inner event in an event_callback envelope.
func callback(inner string) []byte {
	return []byte(`{"team_id":"T0TEAM0001","type":"event_callback","event_id":"Ev1","event_time":1764432000,` +
		`"authorizations":[{"enterprise_id":null,"team_id":"T0TEAM0001","user_id":"U0BOT00001","is_bot":true,"is_enterprise_install":false}],` +
		`"event":` + inner + `}`)
}

func TestParse(t *testing.T) {
	t.Parallel()
	ignored := func(reason string) platform.Parsed {
		return platform.Parsed{Ignored: []platform.Ignored{{Reason: reason, ID: "Ev1"}}}
	}
	event := func(thread message.Thread, text, chatType string) platform.Parsed {
		return platform.Parsed{Events: []message.Event{{
			Platform: message.Slack, Account: team, EventID: thread.Chat + ":1764432000.000100", Kind: message.KindMessage,
			Thread: thread, Sender: ada, Text: text, MessageID: "1764432000.000100", ChatType: chatType,
			Time: time.Date(2025, 11, 29, 16, 0, 0, 100_000, time.UTC),
		}}}
	}
	botEvent := func(sender string) platform.Parsed {
		p := event(channel("1764432000.000100"), "hi there", message.ChatGroup)
		p.Events[0].Sender = message.Sender{ID: sender, IsBot: true}
		return p
	}
	msg := func(extra string) []byte {
		return callback(`{"type":"message","user":"U0ADA00001","text":"<@U0BOT00001> hi there","ts":"1764432000.000100","channel":"C0CHAN0001","channel_type":"channel"` + extra + `}`)
	}
	cases := []struct {
		name string
		r    Receiver
		body []byte
		want platform.Parsed
	}{
		{"ReplyInChannel", Receiver{ReplyInChannel: true}, msg(""), event(channel(""), "hi there", message.ChatGroup)},
		{"ThreadBroadcast", Receiver{}, callback(`{"type":"message","subtype":"thread_broadcast","user":"U0ADA00001","text":"done","ts":"1764432000.000100","thread_ts":"1764431000.000001","channel":"C0CHAN0001","channel_type":"channel"}`),
			platform.Parsed{Events: []message.Event{{
				Platform: message.Slack, Account: team, EventID: "C0CHAN0001:1764432000.000100", Kind: message.KindMessage,
				Thread: channel("1764431000.000001"), Sender: ada, Text: "done", MessageID: "1764432000.000100", ReplyTo: "1764431000.000001",
				ChatType: message.ChatGroup, Time: time.Date(2025, 11, 29, 16, 0, 0, 100_000, time.UTC),
			}}}},
		{"FileShareWithText", Receiver{}, msg(`,"subtype":"file_share","files":[{"id":"F1","name":"pass.pdf","mimetype":"application/pdf","size":4821,"mode":"hosted"}]`),
			withFiles(event(channel("1764432000.000100"), "hi there", message.ChatGroup),
				message.Attachment{Kind: message.AttachFile, PlatformID: "F1", Name: "pass.pdf", MIME: "application/pdf", Size: 4821})},
		{"FileShareWithoutText", Receiver{}, callback(`{"type":"message","subtype":"file_share","user":"U0ADA00001","text":"","ts":"1764432000.000100","channel":"C0CHAN0001","files":[` +
			`{"id":"F1","mimetype":"audio/webm","subtype":"slack_audio","duration_ms":4200},{"id":"F2","mimetype":"image/png","original_w":640,"original_h":480},` +
			`{"id":"F3","mode":"tombstone"},{"id":"F4","mode":"external"}]}`),
			withFiles(event(channel("1764432000.000100"), "", message.ChatGroup),
				message.Attachment{Kind: message.AttachVoice, PlatformID: "F1", MIME: "audio/webm", Duration: 4},
				message.Attachment{Index: 1, Kind: message.AttachImage, PlatformID: "F2", MIME: "image/png", Width: 640, Height: 480},
				message.Attachment{Index: 2, Kind: message.AttachFile, PlatformID: "F4", Reason: message.ReasonNotServed})},
		{"FileShareOfADeletedFile", Receiver{}, callback(`{"type":"message","subtype":"file_share","user":"U0ADA00001","text":"","ts":"1764432000.000100","channel":"C0CHAN0001","files":[{"id":"F3","mode":"tombstone"}]}`), ignored("no_text")},
		{"BareMention", Receiver{}, callback(`{"type":"app_mention","user":"U0ADA00001","text":"<@U0BOT00001>","ts":"1764432000.000100","channel":"C0CHAN0001"}`), ignored("no_text")},
		{"LegacyMention", Receiver{}, callback(`{"type":"app_mention","user":"U0ADA00001","text":"<@U0BOT00001|parley>  hi there","ts":"1764432000.000100","channel":"C0CHAN0001"}`),
			event(channel("1764432000.000100"), "hi there", message.ChatGroup)},
		{"MentionNotLeading", Receiver{}, callback(`{"type":"app_mention","user":"U0ADA00001","text":"ask <@U0BOT00001> hi","ts":"1764432000.000100","channel":"C0CHAN0001"}`),
			event(channel("1764432000.000100"), "ask <@U0BOT00001> hi", message.ChatGroup)},
		{"OtherUserWithLongerID", Receiver{}, callback(`{"type":"message","user":"U0ADA00001","text":"<@U0BOT000012> hi","ts":"1764432000.000100","channel":"C0CHAN0001","channel_type":"channel"}`),
			event(channel("1764432000.000100"), "<@U0BOT000012> hi", message.ChatGroup)},
		{"MentionInDM", Receiver{}, callback(`{"type":"app_mention","user":"U0ADA00001","text":"<@U0BOT00001> hi there","ts":"1764432000.000100","channel":"D0DM000001"}`),
			event(dm, "hi there", message.ChatPrivate)},
		{"GroupDMStartsThread", Receiver{}, callback(`{"type":"message","user":"U0ADA00001","text":"hi there","ts":"1764432000.000100","channel":"G0MPIM0001","channel_type":"mpim"}`),
			event(message.Thread{Platform: message.Slack, Account: team, Chat: "G0MPIM0001", Thread: "1764432000.000100"}, "hi there", message.ChatGroup)},
		{"TimeFromEventTime", Receiver{}, callback(`{"type":"message","user":"U0ADA00001","text":"x","ts":"odd","channel":"D0DM000001","channel_type":"im"}`),
			platform.Parsed{Events: []message.Event{{
				Platform: message.Slack, Account: team, EventID: "D0DM000001:odd", Kind: message.KindMessage,
				Thread: dm, Sender: ada, Text: "x", MessageID: "odd", ChatType: message.ChatPrivate, Time: time.Unix(1764432000, 0).UTC(),
			}}}},
		{"OwnMessageWithoutBotID", Receiver{}, callback(`{"type":"message","user":"U0BOT00001","text":"echo","ts":"1764432000.000100","channel":"D0DM000001","channel_type":"im"}`), ignored("bot")},
		// Another bot's message is an event marked IsBot: the webhook core
		// drops it unless PARLEY_ALLOW_BOTS is on.
		{"BotMessageSubtype", Receiver{}, msg(`,"subtype":"bot_message","bot_id":"B0OTHER001"`), botEvent("U0ADA00001")},
		{"OtherBot", Receiver{}, msg(`,"bot_id":"B0OTHER001"`), botEvent("U0ADA00001")},
		{"IntegrationWithoutUser", Receiver{}, callback(`{"type":"message","subtype":"bot_message","bot_id":"B0OTHER001","text":"hi there","ts":"1764432000.000100","channel":"C0CHAN0001","channel_type":"channel"}`), botEvent("B0OTHER001")},
		{"BotMessageWithoutBotID", Receiver{}, msg(`,"subtype":"bot_message"`), ignored("bot")},
		// Parley's own operational output, echoed by a bot, is dropped by
		// its tag; the same text untagged is not.
		{"TaggedEcho", Receiver{}, msg(`,"bot_id":"B0OTHER001","metadata":{"event_type":"parley_unit","event_payload":{"unit":"i#error#1","origin":"parley"}}`), ignored("parley_echo")},
		{"AgentTagIsNoEcho", Receiver{}, msg(`,"bot_id":"B0OTHER001","metadata":{"event_type":"parley_unit","event_payload":{"unit":"i#b1#1","origin":"agent"}}`), botEvent("U0ADA00001")},
		{"OtherAppsMetadata", Receiver{}, msg(`,"bot_id":"B0OTHER001","metadata":{"event_type":"task_created","event_payload":{"origin":"parley"}}`), botEvent("U0ADA00001")},
		{"DeletedUnknownAuthor", Receiver{}, callback(`{"type":"message","subtype":"message_deleted","hidden":true,"channel":"C0CHAN0001","ts":"1764432001.000000","deleted_ts":"1764432000.000100"}`), ignored("unsupported")},
		{"Deleted", Receiver{}, callback(`{"type":"message","subtype":"message_deleted","hidden":true,"channel":"C0CHAN0001","ts":"1764432001.000000","deleted_ts":"1764432000.000100","previous_message":{"type":"message","user":"U0ADA00001","text":"oops","ts":"1764432000.000100"}}`),
			platform.Parsed{Events: []message.Event{{Platform: message.Slack, Account: "T0TEAM0001", EventID: "del:C0CHAN0001:1764432000.000100", Kind: message.KindDelete,
				Thread: message.Thread{Platform: message.Slack, Account: "T0TEAM0001", Chat: "C0CHAN0001", Thread: "1764432000.000100"}, Sender: message.Sender{ID: "U0ADA00001"},
				MessageID: "1764432000.000100", ChatType: message.ChatGroup, Time: time.Date(2025, 11, 29, 16, 0, 1, 0, time.UTC)}}}},
		{"DeletedByTheBot", Receiver{}, callback(`{"type":"message","subtype":"message_deleted","channel":"C0CHAN0001","ts":"1764432001.000000","deleted_ts":"1764432000.000100","previous_message":{"type":"message","user":"U0BOT00001","bot_id":"B1","text":"x","ts":"1764432000.000100"}}`), ignored("bot")},
		{"EditedByTheBot", Receiver{}, callback(`{"type":"message","subtype":"message_changed","channel":"C0CHAN0001","ts":"1764432001.000000","message":{"type":"message","user":"U0BOT00001","bot_id":"B1","text":"q0 answered","ts":"1764432000.000100"}}`), ignored("bot")},
		{"EditUnchanged", Receiver{}, callback(`{"type":"message","subtype":"message_changed","channel":"C0CHAN0001","ts":"1764432001.000000","message":{"type":"message","user":"U0ADA00001","text":"see https://x.test","ts":"1764432000.000100"},"previous_message":{"type":"message","user":"U0ADA00001","text":"see https://x.test","ts":"1764432000.000100"}}`), ignored("edited")},
		{"Reaction", Receiver{}, callback(`{"type":"reaction_added","user":"U0ADA00001","reaction":"+1::skin-tone-3","item":{"type":"message","channel":"D0DM000001","ts":"1764432000.000100"},"item_user":"U0BOT00001","event_ts":"1764432002.000200"}`),
			platform.Parsed{Events: []message.Event{{Platform: message.Slack, Account: "T0TEAM0001", EventID: "react:Ev1", Kind: message.KindReaction,
				Thread: message.Thread{Platform: message.Slack, Account: "T0TEAM0001", Chat: "D0DM000001"}, Sender: message.Sender{ID: "U0ADA00001"},
				ChatType: message.ChatPrivate, Time: time.Date(2025, 11, 29, 16, 0, 2, 200_000, time.UTC),
				Reaction: &message.Reaction{MessageID: "1764432000.000100", Emoji: "👍"}}}}},
		{"ReactionRemovedCustom", Receiver{}, callback(`{"type":"reaction_removed","user":"U0ADA00001","reaction":"partyparrot","item":{"type":"message","channel":"C0CHAN0001","ts":"1764432000.000100"},"event_ts":"1764432002.000200"}`),
			platform.Parsed{Events: []message.Event{{Platform: message.Slack, Account: "T0TEAM0001", EventID: "react:Ev1", Kind: message.KindReaction,
				Thread: message.Thread{Platform: message.Slack, Account: "T0TEAM0001", Chat: "C0CHAN0001"}, Sender: message.Sender{ID: "U0ADA00001"},
				ChatType: message.ChatGroup, Time: time.Date(2025, 11, 29, 16, 0, 2, 200_000, time.UTC),
				Reaction: &message.Reaction{MessageID: "1764432000.000100", Emoji: ":partyparrot:", Removed: true}}}}},
		{"ReactionOnAFile", Receiver{}, callback(`{"type":"reaction_added","user":"U0ADA00001","reaction":"eyes","item":{"type":"file","file":"F1"},"event_ts":"1764432002.000200"}`), ignored("unsupported")},
		{"ReactionByTheBot", Receiver{}, callback(`{"type":"reaction_added","user":"U0BOT00001","reaction":"eyes","item":{"type":"message","channel":"C0CHAN0001","ts":"1"},"event_ts":"1764432002.000200"}`), ignored("bot")},
		{"ChannelJoin", Receiver{}, msg(`,"subtype":"channel_join"`), ignored("unsupported")},
		{"NoUser", Receiver{}, callback(`{"type":"message","text":"hi","ts":"1764432000.000100","channel":"C0CHAN0001"}`), ignored("unsupported")},
		{"AppRateLimited", Receiver{}, []byte(`{"token":"x","type":"app_rate_limited","team_id":"T0TEAM0001","minute_rate_limited":1518467820,"api_app_id":"A0APP00001"}`),
			platform.Parsed{Ignored: []platform.Ignored{{Reason: "unsupported"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := tc.r
			r.SigningSecret = testSecret
			got, err := r.Parse(signed(tc.body, sampleNow, sampleNow))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseMalformed(t *testing.T) {
	t.Parallel()
	r := &Receiver{SigningSecret: testSecret}
	for name, body := range map[string][]byte{
		"Empty":              []byte(``),
		"Form":               []byte(`payload=%7B%22type%22%3A%22block_actions%22%7D`),
		"Array":              []byte(`[]`),
		"Truncated":          []byte(`{"type":"event_callback","event":{"type":"message","text":"hi`),
		"TypeNotString":      []byte(`{"type":7}`),
		"NoChallenge":        []byte(`{"type":"url_verification"}`),
		"NoEvent":            []byte(`{"type":"event_callback","team_id":"T0TEAM0001","event_id":"Ev1"}`),
		"EventNotObject":     []byte(`{"type":"event_callback","team_id":"T0TEAM0001","event":"hi"}`),
		"EventNull":          []byte(`{"type":"event_callback","team_id":"T0TEAM0001","event":null}`),
		"EventTypeNotString": callback(`{"type":["message"]}`),
		"TextNotString":      callback(`{"type":"message","user":"U0ADA00001","text":{"hi":1},"ts":"1","channel":"C1"}`),
		"NoChannel":          callback(`{"type":"message","user":"U0ADA00001","text":"hi","ts":"1764432000.000100"}`),
		"NoTS":               callback(`{"type":"message","user":"U0ADA00001","text":"hi","channel":"C0CHAN0001"}`),
		"NoTeam":             []byte(`{"type":"event_callback","event":{"type":"message","user":"U0ADA00001","text":"hi","ts":"1","channel":"C1"}}`),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := r.Parse(signed(body, sampleNow, sampleNow))
			if !errors.Is(err, platform.ErrMalformed) {
				t.Fatalf("Parse(%s) = %v, want ErrMalformed", body, err)
			}
			if strings.Contains(err.Error(), "hi") {
				t.Fatalf("error quotes the body: %v", err)
			}
		})
	}
}

func TestTSTime(t *testing.T) {
	t.Parallel()
	cases := map[string]time.Time{
		"1764432000.000100": time.Unix(1764432000, 100_000).UTC(),
		"1764432000":        time.Unix(1764432000, 0).UTC(),
		"1764432000.5":      time.Unix(1764432000, 500_000_000).UTC(),
		"1764432000.x":      time.Unix(7, 0).UTC(),
		"-1.0":              time.Unix(7, 0).UTC(),
		"1.0000000001":      time.Unix(7, 0).UTC(),
		"":                  time.Unix(7, 0).UTC(),
	}
	for ts, want := range cases {
		if got := tsTime(ts, 7); !got.Equal(want) {
			t.Errorf("tsTime(%q) = %v, want %v", ts, got, want)
		}
	}
	if got := tsTime("", 0); !got.IsZero() {
		t.Errorf("tsTime with nothing = %v, want zero", got)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := (&Receiver{}).Validate(); err == nil {
		t.Fatal("Validate accepted an empty secret")
	}
	if err := (&Receiver{SigningSecret: testSecret}).Validate(); err != nil {
		t.Fatal(err)
	}
	if (&Receiver{}).Platform() != message.Slack {
		t.Fatal("wrong platform")
	}
}

func TestParseInteraction(t *testing.T) {
	t.Parallel()
	// press builds a block_actions payload on message 1764432100.000500.
	press := func(container, actions string) []byte {
		return interaction(`{"type":"block_actions","team":{"id":"T0TEAM0001"},"user":{"id":"U0ADA00001","team_id":"T0TEAM0001"},` +
			`"container":` + container + `,"trigger_id":"tr1","actions":` + actions + `}`)
	}
	inChannel := `{"type":"message","message_ts":"1764432100.000500","channel_id":"C0CHAN0001"}`
	yes := `[{"type":"button","action_id":"a","value":"q0:0","action_ts":"1764432200.000001"}]`
	answer := func(thread message.Thread, data, actionTS string) message.Event {
		return message.Event{
			Platform: message.Slack, Account: team, EventID: thread.Chat + ":1764432100.000500:" + actionTS, Kind: message.KindAnswer,
			Thread: thread, Sender: ada, ChatType: message.ChatGroup, Time: tsTime(actionTS, 0),
			Press: &message.Press{Data: data, MessageID: "1764432100.000500"},
		}
	}
	cases := []struct {
		name string
		body []byte
		want platform.Parsed
	}{
		{"TopLevelMessage", press(inChannel, yes), platform.Parsed{Within: 3 * time.Second, Events: []message.Event{answer(channel(""), "q0:0", "1764432200.000001")}}},
		// A message that became a thread's parent carries thread_ts = its
		// own ts; it still lives in the channel.
		{"ThreadParent", press(`{"type":"message","message_ts":"1764432100.000500","channel_id":"C0CHAN0001","thread_ts":"1764432100.000500"}`, yes),
			platform.Parsed{Within: 3 * time.Second, Events: []message.Event{answer(channel(""), "q0:0", "1764432200.000001")}}},
		{"ThreadFromTheMessage", interaction(`{"type":"block_actions","team":{"id":"T0TEAM0001"},"user":{"id":"U0ADA00001"},"container":` + inChannel +
			`,"message":{"type":"message","ts":"1764432100.000500","thread_ts":"1764432060.000200"},"actions":` + yes + `}`),
			platform.Parsed{Within: 3 * time.Second, Events: []message.Event{answer(channel("1764432060.000200"), "q0:0", "1764432200.000001")}}},
		// An Enterprise Grid org install: no team object, the user's team.
		{"TeamOfTheUser", interaction(`{"type":"block_actions","team":null,"user":{"id":"U0ADA00001","team_id":"T0TEAM0001"},"container":` + inChannel + `,"actions":` + yes + `}`),
			platform.Parsed{Within: 3 * time.Second, Events: []message.Event{answer(channel(""), "q0:0", "1764432200.000001")}}},
		{"ChannelFromTheChannel", interaction(`{"type":"block_actions","team":{"id":"T0TEAM0001"},"user":{"id":"U0ADA00001"},"container":{"type":"message","message_ts":"1764432100.000500"},"channel":{"id":"C0CHAN0001"},"actions":` + yes + `}`),
			platform.Parsed{Within: 3 * time.Second, Events: []message.Event{answer(channel(""), "q0:0", "1764432200.000001")}}},
		{"EachActionIsAPress", press(inChannel, `[{"type":"button","value":"q0:0","action_ts":"1764432200.000001"},{"type":"static_select","selected_option":{"value":"q1:2"},"action_ts":"1764432200.000002"},{"type":"button","url":"https://example.com","action_ts":"1764432200.000003"}]`),
			platform.Parsed{Within: 3 * time.Second,
				Events:  []message.Event{answer(channel(""), "q0:0", "1764432200.000001"), answer(channel(""), "q1:2", "1764432200.000002")},
				Ignored: []platform.Ignored{{Reason: "unsupported", ID: "C0CHAN0001:1764432100.000500:1764432200.000003"}}}},
		{"LinkButtonOnly", press(inChannel, `[{"type":"button","url":"https://example.com","action_ts":"1764432200.000003"}]`),
			platform.Parsed{Ignored: []platform.Ignored{{Reason: "unsupported", ID: "C0CHAN0001:1764432100.000500:1764432200.000003"}}}},
		{"PressInAModal", press(`{"type":"view","view_id":"V0VIEW0001"}`, yes), platform.Parsed{Ignored: []platform.Ignored{{Reason: "unsupported", ID: "1764432200.000001"}}}},
		{"ViewSubmission", interaction(`{"type":"view_submission","team":{"id":"T0TEAM0001"},"user":{"id":"U0ADA00001"},"trigger_id":"tr2","view":{"id":"V1"}}`),
			platform.Parsed{Ignored: []platform.Ignored{{Reason: "unsupported"}}}},
		{"MessageAction", interaction(`{"type":"message_action","callback_id":"ask","action_ts":"1764432299.000001","trigger_id":"tr3","channel":{"id":"C0CHAN0001"}}`),
			platform.Parsed{Ignored: []platform.Ignored{{Reason: "unsupported", ID: "1764432299.000001"}}}},
	}
	r := &Receiver{SigningSecret: testSecret}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := signed(tc.body, sampleNow, sampleNow)
			if err := r.Verify(req); err != nil {
				t.Fatalf("Verify: %v", err)
			}
			got, err := r.Parse(req)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestPressRetryIsTheSamePress: the same payload posted again (a retry, a
// double submit) is the same event key; another press is not.
func TestPressRetryIsTheSamePress(t *testing.T) {
	t.Parallel()
	r := &Receiver{SigningSecret: testSecret}
	body := readSample(t, "block-actions.txt")
	first, err := r.Parse(signed(body, sampleNow, sampleNow))
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.Parse(signed(body, sampleNow.Add(time.Minute), sampleNow.Add(time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	other, err := r.Parse(signed(bytes.Replace(body, []byte("1764432200.123456"), []byte("1764432201.000001"), 1), sampleNow, sampleNow))
	if err != nil {
		t.Fatal(err)
	}
	if first.Events[0].Key() != again.Events[0].Key() || first.Events[0].Key() == other.Events[0].Key() {
		t.Fatalf("keys %q, %q, %q", first.Events[0].Key(), again.Events[0].Key(), other.Events[0].Key())
	}
}

// withFiles is p with atts on its one event.
func withFiles(p platform.Parsed, atts ...message.Attachment) platform.Parsed {
	p.Events[0].Attachments = atts
	return p
}
