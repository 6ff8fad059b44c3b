package telegram

import (
	"encoding/json"
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

// Test credentials. The samples in events/telegram were sent to this bot;
// make run registers the same secret with the local runner.
const (
	testSecret = "parley-telegram-test-secret"
	testToken  = "7000000001:AAFakeTokenForParleyTests_0123456789"
	testBotID  = "7000000001"
	eventsDir  = "../../../events/telegram"
)

// window is how far before Now ingress sets Request.Oldest by default:
// the dedupe window (8 days) less its margin (an hour).
const window = 8*24*time.Hour - time.Hour

func newTestReceiver(t testing.TB) *Receiver {
	t.Helper()
	r, err := NewReceiver(testSecret, testToken)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func request(body []byte, secret ...string) *platform.Request {
	h := http.Header{}
	for _, s := range secret {
		h.Add(SecretHeader, s)
	}
	return &platform.Request{Method: http.MethodPost, Header: h, Body: body, Now: time.Unix(1764432000, 0)}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	r := newTestReceiver(t)
	cases := []struct {
		name string
		r    *Receiver
		req  *platform.Request
		want error
	}{
		{"RightSecret", r, request([]byte(`{}`), testSecret), nil},
		{"WrongSecret", r, request([]byte(`{}`), "parley-telegram-test-secreT"), platform.ErrUnauthorized},
		{"SecretPrefix", r, request([]byte(`{}`), "parley"), platform.ErrUnauthorized},
		{"MissingHeader", r, request([]byte(`{}`)), platform.ErrUnauthorized},
		{"EmptyHeader", r, request([]byte(`{}`), ""), platform.ErrUnauthorized},
		{"TwoHeaders", r, request([]byte(`{}`), testSecret, "other"), platform.ErrUnauthorized},
		{"NoSecretConfiguredRefusesEmpty", &Receiver{BotID: testBotID}, request([]byte(`{}`), ""), platform.ErrUnauthorized},
		{"NoSecretConfiguredRefusesMissing", &Receiver{BotID: testBotID}, request([]byte(`{}`)), platform.ErrUnauthorized},
		{"NoSecretConfiguredRefusesAny", &Receiver{BotID: testBotID}, request([]byte(`{}`), testSecret), platform.ErrUnauthorized},
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
				t.Fatalf("error leaks the secret: %v", err)
			}
		})
	}
}

func user42() message.Sender { return message.Sender{ID: "42", Name: "Ada Lovelace"} }

// sampleNow is when the samples are received: a few minutes after they
// were sent (a press carries no time of its own, so it is stamped with it).
var sampleNow = time.Unix(1764432240, 0).UTC()

// sampleExpectations is what each payload in events/telegram parses to; the
// conformance suite (TestConformance) verifies and parses every file.
func sampleExpectations() map[string]platform.Parsed {
	private := message.Thread{Platform: message.Telegram, Account: testBotID, Chat: "42"}
	forum := message.Thread{Platform: message.Telegram, Account: testBotID, Chat: "-1001000000002", Thread: "77"}
	return map[string]platform.Parsed{
		"message.json": {Events: []message.Event{{
			Platform: message.Telegram, Account: testBotID, EventID: "900000001", Kind: message.KindMessage,
			Thread: private, Sender: user42(), Text: "what's the weather in Lisbon tomorrow?",
			MessageID: "101", ChatType: message.ChatPrivate, Time: time.Date(2025, 11, 29, 16, 0, 0, 0, time.UTC),
		}}},
		"group-message.json": {Events: []message.Event{{
			Platform: message.Telegram, Account: testBotID, EventID: "900000002", Kind: message.KindMessage,
			// A reply in a non-forum supergroup carries message_thread_id,
			// but it is no topic: the reply goes to the chat.
			Thread: message.Thread{Platform: message.Telegram, Account: testBotID, Chat: "-1001000000001"},
			Sender: message.Sender{ID: "43", Name: "Grace Hopper"}, Text: "@parley_test_bot can you remind everyone at 10:15?",
			MessageID: "2045", ReplyTo: "2040", ChatType: message.ChatGroup, Time: time.Date(2025, 11, 29, 16, 1, 0, 0, time.UTC),
			// The message it replies to is the bot's own.
			Quote: &message.Quote{MessageID: "2040", Text: "The standup moved to 10:30.",
				Sender: &message.Sender{ID: testBotID, Name: "Parley", IsBot: true}, Parley: true},
		}}},
		"topic-message.json": {Events: []message.Event{{
			Platform: message.Telegram, Account: testBotID, EventID: "900000003", Kind: message.KindMessage,
			Thread: forum, Sender: user42(), Text: "draft the changelog for 0.3",
			MessageID: "318", ChatType: message.ChatGroup, Time: time.Date(2025, 11, 29, 16, 2, 0, 0, time.UTC),
		}}},
		"caption-photo.json": {Events: []message.Event{{
			Platform: message.Telegram, Account: testBotID, EventID: "900000006", Kind: message.KindMessage,
			Thread: private, Sender: user42(), Text: "what plant is this?",
			MessageID: "102", ChatType: message.ChatPrivate, Time: time.Date(2025, 11, 29, 16, 4, 0, 0, time.UTC),
			Attachments: []message.Attachment{{Kind: message.AttachImage, PlatformID: "AgACAgQAAxkBAAIBZmdPhotoLarge",
				MIME: "image/jpeg", Size: 84211, Width: 1280, Height: 960}},
		}}},
		"callback-query.json": {Events: []message.Event{{
			Platform: message.Telegram, Account: testBotID, EventID: "cb:4000000000000000101", Kind: message.KindAnswer,
			Thread: private, Sender: user42(), ChatType: message.ChatPrivate, Time: sampleNow,
			Press: &message.Press{Data: "q0:0", MessageID: "103", AckID: "4000000000000000101"},
		}}, Ack: answered("4000000000000000101")},
		"callback-query-topic.json": {Events: []message.Event{{
			Platform: message.Telegram, Account: testBotID, EventID: "cb:4300000000000000102", Kind: message.KindAnswer,
			Thread: forum, Sender: message.Sender{ID: "43", Name: "Grace Hopper"}, ChatType: message.ChatGroup, Time: sampleNow,
			Press: &message.Press{Data: "q1:yes", MessageID: "320", AckID: "4300000000000000102"},
		}}, Ack: answered("4300000000000000102")},
		// An edit is an event of its own; ingress takes it only when the
		// deployment asks for edits (PARLEY_EDITS).
		"edited-message.json": {Events: []message.Event{{
			Platform: message.Telegram, Account: testBotID, EventID: "900000004", Kind: message.KindEdit,
			Thread: private, Sender: user42(), Text: "what's the weather in Porto tomorrow?",
			MessageID: "101", ChatType: message.ChatPrivate, Time: time.Date(2025, 11, 29, 16, 0, 30, 0, time.UTC),
		}}},
		"message-reaction.json": {Events: []message.Event{{
			Platform: message.Telegram, Account: testBotID, EventID: "900000008:0", Kind: message.KindReaction,
			Thread: private, Sender: user42(), ChatType: message.ChatPrivate, Time: time.Date(2025, 11, 29, 16, 1, 30, 0, time.UTC),
			Reaction: &message.Reaction{MessageID: "104", Emoji: "👍"},
		}}},
		"bot-message.json": {Ignored: []platform.Ignored{{Reason: "bot", ID: "900000005"}}},
		"sticker.json": {Events: []message.Event{{
			Platform: message.Telegram, Account: testBotID, EventID: "900000007", Kind: message.KindMessage,
			Thread: private, Sender: user42(), MessageID: "103", ChatType: message.ChatPrivate, Time: time.Date(2025, 11, 29, 16, 5, 0, 0, time.UTC),
			Attachments: []message.Attachment{{Kind: message.AttachSticker, PlatformID: "CAACAgIAAxkBAAIBaGdStickerFileId",
				MIME: "application/x-tgsticker", Size: 18432, Width: 512, Height: 512}},
		}}},
		"voice.json": {Events: []message.Event{{
			Platform: message.Telegram, Account: testBotID, EventID: "900000009", Kind: message.KindMessage,
			Thread: private, Sender: user42(), MessageID: "105", ChatType: message.ChatPrivate, Time: time.Date(2025, 11, 29, 16, 6, 0, 0, time.UTC),
			Attachments: []message.Attachment{{Kind: message.AttachVoice, PlatformID: "AwACAgQAAxkBAAIBaVoiceFileId",
				MIME: "audio/ogg", Size: 9210, Duration: 4}},
		}}},
		"document.json": {Events: []message.Event{{
			Platform: message.Telegram, Account: testBotID, EventID: "900000010", Kind: message.KindMessage,
			Thread: private, Sender: user42(), Text: "is this my gate?", MessageID: "106", ChatType: message.ChatPrivate,
			Time: time.Date(2025, 11, 29, 16, 7, 0, 0, time.UTC),
			Attachments: []message.Attachment{{Kind: message.AttachFile, PlatformID: "BQACAgQAAxkBAAIBalDocFileId",
				MIME: "application/pdf", Size: 48213, Name: "boarding-pass.pdf"}},
		}}},
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	r := newTestReceiver(t)
	ignored := func(reason string) platform.Parsed {
		return platform.Parsed{Ignored: []platform.Ignored{{Reason: reason, ID: "5"}}}
	}
	cases := []struct {
		name string
		body string
		want platform.Parsed
	}{
		// A press on a message sent in inline mode names no chat.
		{"CallbackQueryInlineMessage", `{"update_id":5,"callback_query":{"id":"1","from":{"id":42,"is_bot":false,"first_name":"Ada"},"inline_message_id":"AAEC","chat_instance":"-1","data":"q0:yes"}}`, ignored("unsupported")},
		{"CallbackQueryGame", `{"update_id":5,"callback_query":{"id":"1","from":{"id":42,"is_bot":false,"first_name":"Ada"},"message":{"message_id":9,"chat":{"id":42,"type":"private"},"date":1},"chat_instance":"-1","game_short_name":"snake"}}`, ignored("unsupported")},
		{"CallbackQueryFromABot", `{"update_id":5,"callback_query":{"id":"1","from":{"id":43,"is_bot":true,"first_name":"B"},"message":{"message_id":9,"chat":{"id":42,"type":"private"},"date":1},"chat_instance":"-1","data":"q0:yes"}}`, ignored("bot")},
		// A message older than 48 hours comes as an InaccessibleMessage:
		// its chat and id, date 0. The press is still an answer.
		{"CallbackQueryOnAnOldMessage", `{"update_id":5,"callback_query":{"id":"77","from":{"id":42,"is_bot":false,"first_name":"Ada"},"message":{"message_id":9,"chat":{"id":-1003,"type":"supergroup"},"date":0},"chat_instance":"-1","data":"q0:yes"}}`,
			platform.Parsed{Events: []message.Event{{
				Platform: message.Telegram, Account: testBotID, EventID: "cb:77", Kind: message.KindAnswer,
				Thread: message.Thread{Platform: message.Telegram, Account: testBotID, Chat: "-1003"},
				Sender: message.Sender{ID: "42", Name: "Ada"}, ChatType: message.ChatGroup, Time: time.Unix(1764432000, 0).UTC(),
				Press: &message.Press{Data: "q0:yes", MessageID: "9", AckID: "77"},
			}}, Ack: answered("77")}},
		{"ChannelPost", `{"update_id":5,"channel_post":{"message_id":1,"sender_chat":{"id":-1002,"title":"News","type":"channel"},"chat":{"id":-1002,"title":"News","type":"channel"},"date":1,"text":"hello"}}`, ignored("unsupported")},
		{"EditedChannelPost", `{"update_id":5,"edited_channel_post":{"message_id":1,"chat":{"id":-1002,"type":"channel"},"date":1,"text":"hello"}}`, ignored("edited")},
		{"EditedByABot", `{"update_id":5,"edited_message":{"message_id":1,"from":{"id":43,"is_bot":true,"first_name":"B"},"chat":{"id":42,"type":"private"},"date":1,"edit_date":2,"text":"x"}}`, ignored("bot")},
		// 👍 became ❤: one reaction added, one taken back, each its own
		// event; a custom emoji is named by its id; a paid one has none.
		{"ReactionChanged", `{"update_id":5,"message_reaction":{"chat":{"id":-1003,"type":"supergroup"},"message_id":9,"user":{"id":42,"is_bot":false,"first_name":"Ada"},"date":1,
			"old_reaction":[{"type":"emoji","emoji":"👍"},{"type":"paid"}],"new_reaction":[{"type":"emoji","emoji":"❤"},{"type":"custom_emoji","custom_emoji_id":"5368324170671202286"},{"type":"paid"}]}}`,
			platform.Parsed{Events: []message.Event{
				{Platform: message.Telegram, Account: testBotID, EventID: "5:0", Kind: message.KindReaction,
					Thread: message.Thread{Platform: message.Telegram, Account: testBotID, Chat: "-1003"}, Sender: message.Sender{ID: "42", Name: "Ada"},
					ChatType: message.ChatGroup, Time: time.Unix(1, 0).UTC(), Reaction: &message.Reaction{MessageID: "9", Emoji: "❤"}},
				{Platform: message.Telegram, Account: testBotID, EventID: "5:1", Kind: message.KindReaction,
					Thread: message.Thread{Platform: message.Telegram, Account: testBotID, Chat: "-1003"}, Sender: message.Sender{ID: "42", Name: "Ada"},
					ChatType: message.ChatGroup, Time: time.Unix(1, 0).UTC(), Reaction: &message.Reaction{MessageID: "9", Emoji: ":5368324170671202286:"}},
				{Platform: message.Telegram, Account: testBotID, EventID: "5:2", Kind: message.KindReaction,
					Thread: message.Thread{Platform: message.Telegram, Account: testBotID, Chat: "-1003"}, Sender: message.Sender{ID: "42", Name: "Ada"},
					ChatType: message.ChatGroup, Time: time.Unix(1, 0).UTC(), Reaction: &message.Reaction{MessageID: "9", Emoji: "👍", Removed: true}},
			}}},
		{"ReactionAnonymousAdmin", `{"update_id":5,"message_reaction":{"chat":{"id":-1003,"type":"supergroup"},"message_id":9,"actor_chat":{"id":-1003,"title":"Lab","type":"supergroup"},"date":1,"old_reaction":[],"new_reaction":[{"type":"emoji","emoji":"🔥"}]}}`,
			platform.Parsed{Events: []message.Event{{Platform: message.Telegram, Account: testBotID, EventID: "5:0", Kind: message.KindReaction,
				Thread: message.Thread{Platform: message.Telegram, Account: testBotID, Chat: "-1003"}, Sender: message.Sender{ID: "-1003", Name: "Lab"},
				ChatType: message.ChatGroup, Time: time.Unix(1, 0).UTC(), Reaction: &message.Reaction{MessageID: "9", Emoji: "🔥"}}}}},
		{"ReactionNothingChanged", `{"update_id":5,"message_reaction":{"chat":{"id":42,"type":"private"},"message_id":9,"user":{"id":42,"is_bot":false,"first_name":"Ada"},"date":1,"old_reaction":[{"type":"paid"}],"new_reaction":[]}}`, ignored("unsupported")},
		{"AutomaticForward", `{"update_id":5,"message":{"message_id":9,"sender_chat":{"id":-1002,"title":"News","type":"channel"},"chat":{"id":-1003,"type":"supergroup"},"date":1,"is_automatic_forward":true,"text":"hello"}}`, ignored("unsupported")},
		{"MemberUpdate", `{"update_id":5,"my_chat_member":{"chat":{"id":42,"type":"private"}}}`, ignored("unsupported")},
		{"NewFieldsAreFine", `{"update_id":5,"future_thing":{"x":[1,2]},"message":{"message_id":9,"from":{"id":42,"is_bot":false,"first_name":"Ada","shiny":true},"chat":{"id":42,"type":"private"},"date":1,"text":"hi"}}`,
			platform.Parsed{Events: []message.Event{{
				Platform: message.Telegram, Account: testBotID, EventID: "5", Kind: message.KindMessage,
				Thread: message.Thread{Platform: message.Telegram, Account: testBotID, Chat: "42"},
				Sender: message.Sender{ID: "42", Name: "Ada"}, Text: "hi", MessageID: "9", ChatType: message.ChatPrivate, Time: time.Unix(1, 0).UTC(),
			}}}},
		{"AnonymousAdmin", `{"update_id":5,"message":{"message_id":9,"sender_chat":{"id":-1003,"title":"Lab","type":"supergroup"},"chat":{"id":-1003,"title":"Lab","type":"supergroup"},"date":1,"text":"status?"}}`,
			platform.Parsed{Events: []message.Event{{
				Platform: message.Telegram, Account: testBotID, EventID: "5", Kind: message.KindMessage,
				Thread: message.Thread{Platform: message.Telegram, Account: testBotID, Chat: "-1003"},
				Sender: message.Sender{ID: "-1003", Name: "Lab"}, Text: "status?", MessageID: "9", ChatType: message.ChatGroup, Time: time.Unix(1, 0).UTC(),
			}}}},
		{"UsernameWhenNoName", `{"update_id":5,"message":{"message_id":9,"from":{"id":7,"is_bot":false,"first_name":"","username":"nn"},"chat":{"id":7,"type":"private"},"date":1,"text":"x"}}`,
			platform.Parsed{Events: []message.Event{{
				Platform: message.Telegram, Account: testBotID, EventID: "5", Kind: message.KindMessage,
				Thread: message.Thread{Platform: message.Telegram, Account: testBotID, Chat: "7"},
				Sender: message.Sender{ID: "7", Name: "nn"}, Text: "x", MessageID: "9", ChatType: message.ChatPrivate, Time: time.Unix(1, 0).UTC(),
			}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := r.Parse(request([]byte(tc.body), testSecret))
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
	r := newTestReceiver(t)
	for name, body := range map[string]string{
		"Empty":          ``,
		"NotJSON":        `update_id=5`,
		"Array":          `[{"update_id":5}]`,
		"Null":           `null`,
		"NoUpdateID":     `{"message":{"message_id":1,"chat":{"id":1,"type":"private"},"date":1,"text":"hi"}}`,
		"NullUpdateID":   `{"update_id":null}`,
		"StringUpdateID": `{"update_id":"5"}`,
		"FloatUpdateID":  `{"update_id":5.5}`,
		"Truncated":      `{"update_id":5,"message":{"text":"hi`,
		"BadMessage":     `{"update_id":5,"message":"hi"}`,
		"PressWithoutID": `{"update_id":5,"callback_query":{"from":{"id":42,"first_name":"hi"},"message":{"message_id":9,"chat":{"id":42,"type":"private"},"date":1},"data":"q0"}}`,
		"ReactionNoChat": `{"update_id":5,"message_reaction":{"message_id":9,"date":1,"old_reaction":[],"new_reaction":[{"type":"emoji","emoji":"hi"}]}}`,
		"EditNoMessage":  `{"update_id":5,"edited_message":{"chat":{"id":42,"type":"private"},"date":1,"text":"hi"}}`,
		"PressByNobody":  `{"update_id":5,"callback_query":{"id":"1","message":{"message_id":9,"chat":{"id":42,"type":"private"},"date":1},"data":"hi"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := r.Parse(request([]byte(body), testSecret))
			if !errors.Is(err, platform.ErrMalformed) {
				t.Fatalf("Parse(%q) = %v, want ErrMalformed", body, err)
			}
			if strings.Contains(err.Error(), "hi") {
				t.Fatalf("error quotes the body: %v", err)
			}
		})
	}
}

func TestReceiverConfig(t *testing.T) {
	t.Parallel()
	if id, err := BotIDFromToken(testToken); err != nil || id != testBotID {
		t.Fatalf("BotIDFromToken = %q, %v", id, err)
	}
	for _, bad := range []string{"", "7000000001", ":abc", "70a:abc", "7000000001:", "12345678901234567890:x"} {
		if _, err := BotIDFromToken(bad); err == nil {
			t.Errorf("BotIDFromToken(%q) accepted", bad)
		} else if bad != "" && strings.Contains(err.Error(), bad) {
			t.Errorf("error quotes the token: %v", err)
		}
	}
	if _, err := NewReceiver("", testToken); err == nil {
		t.Error("NewReceiver accepted an empty secret")
	}
	if _, err := NewReceiver("has space", testToken); err == nil {
		t.Error("NewReceiver accepted a secret Telegram would refuse")
	}
	if _, err := NewReceiver(strings.Repeat("a", 257), testToken); err == nil {
		t.Error("NewReceiver accepted a 257-character secret")
	}
	err := (&Receiver{}).Validate()
	if err == nil || !strings.Contains(err.Error(), SettingWebhookSecret) || !strings.Contains(err.Error(), "BotID") {
		t.Errorf("Validate should report both problems, got %v", err)
	}
	if (&Receiver{}).Platform() != message.Telegram {
		t.Error("wrong platform")
	}
}

// TestStaleMessageIsIgnored_Finding11 (issue 23, finding 11): Telegram
// signs nothing, so a message whose date is past Request.Oldest (the dedupe
// window) is a replay the dedupe key may no longer catch: ignored. A press
// is not dated (its message's date is the question's), and stays taken.
func TestStaleMessageIsIgnored_Finding11(t *testing.T) {
	t.Parallel()
	r := newTestReceiver(t)
	now := time.Unix(1764432000, 0)
	stale := now.Add(-9 * 24 * time.Hour).Unix()
	msg := `{"update_id":5,"message":{"message_id":9,"from":{"id":42,"is_bot":false,"first_name":"Ada"},"chat":{"id":42,"type":"private"},"date":` +
		strconv.FormatInt(stale, 10) + `,"text":"hi"}}`
	press := `{"update_id":6,"callback_query":{"id":"1","from":{"id":42,"is_bot":false,"first_name":"Ada"},"message":{"message_id":9,"chat":{"id":42,"type":"private"},"date":` +
		strconv.FormatInt(stale, 10) + `},"chat_instance":"-1","data":"q0:yes"}}`
	req := request([]byte(msg), testSecret)
	req.Oldest = now.Add(-window)
	p, err := r.Parse(req)
	if err != nil || len(p.Events) != 0 || !reflect.DeepEqual(p.Ignored, []platform.Ignored{{Reason: platform.IgnoredStale, ID: "5"}}) {
		t.Fatalf("a message of 9 days ago: %+v, %v", p, err)
	}
	req = request([]byte(press), testSecret)
	req.Oldest = now.Add(-window)
	if p, err := r.Parse(req); err != nil || len(p.Events) != 1 {
		t.Fatalf("a press on a message of 9 days ago: %+v, %v", p, err)
	}
}

// answered is the webhook's answer to the press of callback query id:
// answerCallbackQuery, as Telegram reads a method from a webhook's
// response, written out here by hand.
func answered(id string) *platform.Reply {
	return &platform.Reply{Status: http.StatusOK, ContentType: "application/json",
		Body: []byte(`{"method":"answerCallbackQuery","callback_query_id":"` + id + `"}`)}
}

// TestPressIsAnsweredByItsWebhook_Finding9 (issue 23, finding 9): a press
// was answered by its turn, which may wait behind the thread's other turns
// past the few seconds Telegram takes an answer in. Its webhook answers it
// now, once it is durable (Parsed.Ack), and the turn's Acknowledge makes no
// second answerCallbackQuery (Telegram would refuse it).
func TestPressIsAnsweredByItsWebhook_Finding9(t *testing.T) {
	t.Parallel()
	p, err := newTestReceiver(t).Parse(request(sample(t, "callback-query.json"), testSecret))
	if err != nil || len(p.Events) != 1 || !reflect.DeepEqual(p.Ack, answered("4000000000000000101")) || p.Within != 0 {
		t.Fatalf("the press's webhook answer: %+v, %v", p, err)
	}
	var call map[string]string
	if err := json.Unmarshal(p.Ack.Body, &call); err != nil || call["method"] != "answerCallbackQuery" || len(call) != 2 {
		t.Fatalf("the answer is no Bot API call: %s", p.Ack.Body)
	}
	// A message is answered with Parley's own acknowledgement, as before.
	if p, err := newTestReceiver(t).Parse(request(sample(t, "message.json"), testSecret)); err != nil || p.Ack != nil {
		t.Fatalf("a message's answer: %+v, %v", p, err)
	}
}

func sample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(eventsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
