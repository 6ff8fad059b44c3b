package discord

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// The answers the receiver gives, written out as Discord reads them.
var (
	deferredMessage = &platform.Reply{Status: 200, ContentType: "application/json", Body: []byte(`{"type":5}`)}
	deferredUpdate  = &platform.Reply{Status: 200, ContentType: "application/json", Body: []byte(`{"type":6}`)}
	tryAgain        = &platform.Reply{Status: 200, ContentType: "application/json",
		Body: []byte(`{"type":4,"data":{"content":"Sorry, that did not reach the agent. Please try again in a moment.","flags":64}}`)}
)

func ephemeral(text string) *platform.Reply {
	return &platform.Reply{Status: 200, ContentType: "application/json", Body: []byte(`{"type":4,"data":{"content":"` + text + `","flags":64}}`)}
}

var (
	ada   = message.Sender{ID: "1309000000000000042", Name: "Ada"}
	grace = message.Sender{ID: "1309000000000000043", Name: "Grace H."}
)

// at is a sample's time: 2025-11-29 16:mm:ss UTC.
func at(mm, ss int) time.Time { return time.Date(2025, 11, 29, 16, mm, ss, 0, time.UTC) }

// replyFor is the reply context of an interaction made at t: its token
// behind the callback it was answered with, for 15 minutes.
func replyFor(callback, token string, t time.Time) *message.ReplyContext {
	return &message.ReplyContext{Token: callback + ":" + token, Until: t.Add(15 * time.Minute)}
}

func sampleExpectations() map[string]platform.Parsed {
	cmd := func(ev message.Event) platform.Parsed {
		return platform.Parsed{Events: []message.Event{ev}, Ack: deferredMessage, Unavailable: tryAgain, Within: 3 * time.Second}
	}
	press := func(ev message.Event) platform.Parsed {
		return platform.Parsed{Events: []message.Event{ev}, Ack: deferredUpdate, Unavailable: tryAgain, Within: 3 * time.Second}
	}
	return map[string]platform.Parsed{
		"ping.json": {Reply: &platform.Reply{Status: 200, ContentType: "application/json", Body: []byte(`{"type":1}`)}},
		// Ada runs /ask in #general.
		"command-guild.json": cmd(message.Event{
			Platform: message.Discord, Account: testApp, EventID: "1444357362155520001", Kind: message.KindMessage,
			Thread: guild, Sender: ada, Text: "what's the weather in Lisbon tomorrow?", ChatType: message.ChatGroup, Time: at(0, 30),
			ReplyContext: replyFor("5", "fake.1444357362155520001.1309000000000000200.a509eabbbcbdd07d9fe3", at(0, 30)),
		}),
		// Ada runs /ask in her DM with the bot.
		"command-dm.json": cmd(message.Event{
			Platform: message.Discord, Account: testApp, EventID: "1444357487984640001", Kind: message.KindMessage,
			Thread: dm, Sender: ada, Text: "what's on my calendar today?", ChatType: message.ChatPrivate, Time: at(1, 0),
			ReplyContext: replyFor("5", "fake.1444357487984640001.1309000000000000300.1e85d535eea8242ca1b6", at(1, 0)),
		}),
		// Ada asks the agent about Grace's message: its text, and its id
		// to reply to.
		"message-command.json": cmd(message.Event{
			Platform: message.Discord, Account: testApp, EventID: "1444357613813760001", Kind: message.KindMessage,
			Thread: guild, Sender: ada, Text: "Can we move the launch to Friday? The **vendor** slipped again.",
			MessageID: "1444356900000000001", ChatType: message.ChatGroup, Time: at(1, 30),
			ReplyContext: replyFor("5", "fake.1444357613813760001.1309000000000000200.cad54e7b1cc9e967e935", at(1, 30)),
			// Grace wrote the message Ada asks about.
			Quote: &message.Quote{MessageID: "1444356900000000001", Text: "Can we move the launch to Friday? The **vendor** slipped again.",
				Sender: &message.Sender{ID: "1309000000000000043", Name: "Grace"}},
		}),
		// Grace (nickname "Grace H.") presses Lisbon on the bot's question.
		"button-press.json": press(message.Event{
			Platform: message.Discord, Account: testApp, EventID: "1444357739642880001", Kind: message.KindAnswer,
			Thread: guild, Sender: grace, ChatType: message.ChatGroup, Time: at(2, 0),
			Press:        &message.Press{Data: "q1:0:0", MessageID: "1444357400000000001"},
			ReplyContext: replyFor("6", "fake.1444357739642880001.1309000000000000200.5c481f2b116dd761d4d4", at(2, 0)),
		}),
		// Ada picks Tuesday and Thursday from a multi-select in her DM.
		"select-press.json": press(message.Event{
			Platform: message.Discord, Account: testApp, EventID: "1444357865472000001", Kind: message.KindAnswer,
			Thread: dm, Sender: ada, ChatType: message.ChatPrivate, Time: at(2, 30),
			Press:        &message.Press{Data: "q2:0:s", Values: []string{"q2:0:1", "q2:0:3"}, MessageID: "1444357700000000001"},
			ReplyContext: replyFor("6", "fake.1444357865472000001.1309000000000000300.bbf6df05e200329dfc7d", at(2, 30)),
		}),
		// Ada gives /ask a PDF and a question about it, in her DM.
		"command-file.json": cmd(message.Event{
			Platform: message.Discord, Account: testApp, EventID: "1444358368788480001", Kind: message.KindMessage,
			Thread: dm, Sender: ada, Text: "is this my gate?", ChatType: message.ChatPrivate, Time: at(4, 30),
			ReplyContext: replyFor("5", "fake.1444358368788480001.1309000000000000300.0b78774aada69a2bf8d0", at(4, 30)),
			Attachments: []message.Attachment{{Kind: message.AttachFile, MIME: "application/pdf", Size: 48213, Name: "boarding-pass.pdf",
				PlatformID: "https://cdn.discordapp.com/attachments/1309000000000000300/1444358300000000077/boarding-pass.pdf?ex=692b1f00&is=6929cd80&hm=7845ff4c2e4d54745507fc0584cbb140a64e5be7da99cc6bcc731bcb63e96d23"}},
		}),
		// Ada asks the agent about Grace's voice message: a voice note, no text.
		"message-command-voice.json": cmd(message.Event{
			Platform: message.Discord, Account: testApp, EventID: "1444358494617600001", Kind: message.KindMessage,
			Thread: guild, Sender: ada, MessageID: "1444358400000000009", ChatType: message.ChatGroup, Time: at(5, 0),
			ReplyContext: replyFor("5", "fake.1444358494617600001.1309000000000000200.c2949cbe0f2ce2ac5d2a", at(5, 0)),
			Quote:        &message.Quote{MessageID: "1444358400000000009", Sender: &message.Sender{ID: "1309000000000000043", Name: "Grace"}},
			Attachments: []message.Attachment{{Kind: message.AttachVoice, MIME: "audio/ogg", Size: 2062, Name: "voice-message.ogg", Duration: 4,
				PlatformID: "https://cdn.discordapp.com/attachments/1309000000000000200/1444358400000000078/voice-message.ogg?ex=692b1f00&is=6929cd80&hm=bf501b132288f1e5b7982db625c6e3366c3498cd33e07e4b48364fd89cead902"}},
		}),
		"command-from-bot.json": {Ignored: []platform.Ignored{{Reason: "bot", ID: "1444357991301120001"}}, Ack: ephemeral("Parley does not answer bots.")},
		"autocomplete.json": {Ignored: []platform.Ignored{{Reason: "unsupported", ID: "1444358117130240001"}},
			Ack: &platform.Reply{Status: 200, ContentType: "application/json", Body: []byte(`{"type":8,"data":{"choices":[]}}`)}},
		"other-command.json": {Ignored: []platform.Ignored{{Reason: "unsupported", ID: "1444358242959360001"}}, Ack: ephemeral("This is not something Parley answers.")},
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

// TestTestKey: the samples' documented key pair is one, and is the fake's.
func TestTestKey(t *testing.T) {
	t.Parallel()
	if got := hex.EncodeToString(testKey().Public().(ed25519.PublicKey)); got != testPublicKey {
		t.Fatalf("the seed's public key is %s; documented %s", got, testPublicKey)
	}
	if fakediscord.PublicKey != testPublicKey {
		t.Fatalf("the fake's public key is %s; documented %s", fakediscord.PublicKey, testPublicKey)
	}
	if fakediscord.KeySeed != testSeed || fakediscord.ApplicationID != testApp {
		t.Fatal("the fake's test identities differ from the samples'")
	}
	for _, f := range []string{"README.md"} {
		doc := string(readSample(t, f))
		for _, want := range []string{testSeed, testPublicKey, testApp} {
			if !strings.Contains(doc, want) {
				t.Errorf("events/discord/%s does not document %s", f, want)
			}
		}
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	body := readSample(t, "command-guild.json")
	now := sampleNow
	with := func(mutate func(*platform.Request)) *platform.Request {
		req := signed(body, now, now)
		mutate(req)
		return req
	}
	other, _ := NewReceiver(hex.EncodeToString(keyFor("another app").Public().(ed25519.PublicKey)), testApp)
	cases := []struct {
		name string
		r    *Receiver
		req  *platform.Request
		want error
	}{
		{"Signed", nil, signed(body, now, now), nil},
		{"UpperCaseHex", nil, with(func(r *platform.Request) {
			r.Header.Set(SignatureHeader, strings.ToUpper(r.Header.Get(SignatureHeader)))
		}), nil},
		{"FourMinutesOld", nil, signed(body, now.Add(-4*time.Minute), now), nil},
		{"FourMinutesAhead", nil, signed(body, now.Add(4*time.Minute), now), nil},
		{"SixMinutesOld", nil, signed(body, now.Add(-6*time.Minute), now), platform.ErrStale},
		{"SixMinutesAhead", nil, signed(body, now.Add(6*time.Minute), now), platform.ErrStale},
		{"TamperedBody", nil, with(func(r *platform.Request) { r.Body = bytes.Replace(r.Body, []byte("Lisbon"), []byte("Lisboa"), 1) }), platform.ErrUnauthorized},
		{"TamperedTimestamp", nil, with(func(r *platform.Request) {
			r.Header.Set(TimestampHeader, strconv.FormatInt(now.Unix()+1, 10))
		}), platform.ErrUnauthorized},
		{"OtherApplicationsKey", other, signed(body, now, now), platform.ErrUnauthorized},
		{"MissingSignature", nil, with(func(r *platform.Request) { r.Header.Del(SignatureHeader) }), platform.ErrUnauthorized},
		{"MissingTimestamp", nil, with(func(r *platform.Request) { r.Header.Del(TimestampHeader) }), platform.ErrUnauthorized},
		{"NotHex", nil, with(func(r *platform.Request) { r.Header.Set(SignatureHeader, "zz") }), platform.ErrUnauthorized},
		{"ShortSignature", nil, with(func(r *platform.Request) { r.Header.Set(SignatureHeader, r.Header.Get(SignatureHeader)[:64]) }), platform.ErrUnauthorized},
		{"LongSignature", nil, with(func(r *platform.Request) { r.Header.Set(SignatureHeader, r.Header.Get(SignatureHeader)+"00") }), platform.ErrUnauthorized},
		// A timestamp Discord never sends, signed all the same: still 401,
		// as Discord requires of every failure.
		{"SignedGarbledTimestamp", nil, func() *platform.Request {
			req := signed(body, now, now)
			req.Header.Set(TimestampHeader, "yesterday")
			req.Header.Set(SignatureHeader, hex.EncodeToString(ed25519.Sign(testKey(), append([]byte("yesterday"), body...))))
			return req
		}(), platform.ErrUnauthorized},
		{"NoKeyConfigured", &Receiver{ApplicationID: testApp}, signed(body, now, now), platform.ErrUnauthorized},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := tc.r
			if r == nil {
				r = testReceiver()
			}
			err := r.Verify(tc.req)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.want) || platform.StatusOf(err) != 401 {
				t.Fatalf("Verify = %v, want %v (401)", err, tc.want)
			}
		})
	}
}

func TestVerifyZeroNowUsesWallClock(t *testing.T) {
	t.Parallel()
	body := []byte(`{}`)
	if err := testReceiver().Verify(signed(body, time.Now(), time.Time{})); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if err := testReceiver().Verify(signed(body, time.Now().Add(-time.Hour), time.Time{})); !errors.Is(err, platform.ErrStale) {
		t.Fatalf("Verify = %v, want ErrStale", err)
	}
}

func TestNewReceiver(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct{ key, app string }{
		"NoKey":          {"", testApp},
		"KeyNotHex":      {strings.Repeat("z", 64), testApp},
		"KeyTooShort":    {testPublicKey[:62], testApp},
		"NoApplication":  {testPublicKey, ""},
		"AppNotANumber":  {testPublicKey, "parley"},
		"AppLeadingZero": {testPublicKey, "0" + testApp},
	} {
		if r, err := NewReceiver(c.key, c.app); err == nil {
			t.Errorf("%s: NewReceiver = %+v, want an error", name, r)
		} else if c.key != "" && strings.Contains(err.Error(), c.key) {
			t.Errorf("%s: the error quotes the key: %v", name, err)
		}
	}
	r, err := Adapter.NewReceiver(func(k string) string {
		return map[string]string{SettingPublicKey: testPublicKey, SettingApplicationID: testApp}[k]
	})
	if err != nil || r.Platform() != message.Discord {
		t.Fatalf("NewReceiver = %v, %v", r, err)
	}
}

// interaction is a body of the test application, with fields.
func interaction(fields string) []byte {
	return []byte(`{"application_id":"1309000000000000001","id":"1444357362155520001","token":"tok",` + fields + `}`)
}

// cdnFile is an attachment's URL as Discord gives it: on its CDN, signed.
const cdnFile = "https://cdn.discordapp.com/attachments/1309000000000000200/1444357000000000077/plant.png?ex=692b1f00&is=6929cd80&hm=0a1b2c3d"

func TestParse(t *testing.T) {
	t.Parallel()
	const member = `"guild_id":"1309000000000000100","channel_id":"1309000000000000200","member":{"nick":null,"user":{"id":"1309000000000000042","username":"ada","global_name":"Ada"}}`
	ask := func(text string) string {
		return `"type":2,` + member + `,"data":{"id":"1","name":"ask","type":1,"options":[{"name":"text","type":3,"value":` + strconv.Quote(text) + `}]}`
	}
	event := func(th message.Thread, sender message.Sender, text, chatType string) message.Event {
		return message.Event{
			Platform: message.Discord, Account: testApp, EventID: "1444357362155520001", Kind: message.KindMessage,
			Thread: th, Sender: sender, Text: text, ChatType: chatType, Time: at(0, 30),
			ReplyContext: &message.ReplyContext{Token: "5:tok", Until: at(15, 30)},
		}
	}
	message1 := func(ev message.Event) platform.Parsed {
		return platform.Parsed{Events: []message.Event{ev}, Ack: deferredMessage, Unavailable: tryAgain, Within: 3 * time.Second}
	}
	ignored := func(reason string, ack *platform.Reply) platform.Parsed {
		return platform.Parsed{Ignored: []platform.Ignored{{Reason: reason, ID: "1444357362155520001"}}, Ack: ack}
	}
	press := func(data string) string {
		return `"type":3,` + member + `,"message":{"id":"1444357400000000001"},"data":` + data
	}
	answer := func(p *message.Press) platform.Parsed {
		return platform.Parsed{Events: []message.Event{{
			Platform: message.Discord, Account: testApp, EventID: "1444357362155520001", Kind: message.KindAnswer,
			Thread: guild, Sender: ada, ChatType: message.ChatGroup, Time: at(0, 30), Press: p,
			ReplyContext: &message.ReplyContext{Token: "6:tok", Until: at(15, 30)},
		}}, Ack: deferredUpdate, Unavailable: tryAgain, Within: 3 * time.Second}
	}
	cases := []struct {
		name string
		body []byte
		want platform.Parsed
	}{
		{"AskKeepsTheTextAsWritten", interaction(ask("  *bold* <@1> ")), message1(event(guild, ada, "  *bold* <@1> ", message.ChatGroup))},
		{"AskWithoutText", interaction(`"type":2,` + member + `,"data":{"name":"ask","type":1}`), ignored("no_text", ephemeral("There is no text to send to the agent."))},
		{"AskWithBlankText", interaction(ask(" \n ")), ignored("no_text", ephemeral("There is no text to send to the agent."))},
		{"AskIgnoresOtherOptions", interaction(`"type":2,` + member + `,"data":{"name":"ask","type":1,"options":[{"name":"tone","type":4,"value":3},{"name":"text","type":3,"value":"hi"}]}`),
			message1(event(guild, ada, "hi", message.ChatGroup))},
		{"NicknameFirst", interaction(`"type":2,"guild_id":"1","channel_id":"1309000000000000200","member":{"nick":"Countess","user":{"id":"1309000000000000042","username":"ada","global_name":"Ada"}},"data":{"name":"ask","type":1,"options":[{"name":"text","type":3,"value":"hi"}]}`),
			message1(event(guild, message.Sender{ID: ada.ID, Name: "Countess"}, "hi", message.ChatGroup))},
		{"UsernameLast", interaction(`"type":2,"channel_id":"1309000000000000300","user":{"id":"1309000000000000042","username":"ada","global_name":null},"data":{"name":"ask","type":1,"options":[{"name":"text","type":3,"value":"hi"}]}`),
			message1(event(dm, message.Sender{ID: ada.ID, Name: "ada"}, "hi", message.ChatPrivate))},
		{"ChannelFromTheChannelObject", interaction(`"type":2,"channel":{"id":"1309000000000000300","type":1},"user":{"id":"1309000000000000042","global_name":"Ada"},"data":{"name":"ask","type":1,"options":[{"name":"text","type":3,"value":"hi"}]}`),
			message1(event(dm, ada, "hi", message.ChatPrivate))},
		{"GroupDMIsAGroup", interaction(`"type":2,"channel":{"id":"1309000000000000300","type":3},"channel_id":"1309000000000000300","user":{"id":"1309000000000000042","global_name":"Ada"},"data":{"name":"ask","type":1,"options":[{"name":"text","type":3,"value":"hi"}]}`),
			message1(event(dm, ada, "hi", message.ChatGroup))},
		{"MessageCommandWithoutTextOrFile", interaction(`"type":2,` + member + `,"data":{"name":"Ask the agent","type":3,"target_id":"5","resolved":{"messages":{"5":{"id":"5","content":"","attachments":[]}}}}`),
			ignored("no_text", ephemeral("There is no text to send to the agent."))},
		// A voice message alone is asked about: its one file is a voice note.
		{"MessageCommandOnAVoiceMessage", interaction(`"type":2,` + member + `,"data":{"name":"Ask the agent","type":3,"target_id":"5","resolved":{"messages":{"5":{"id":"5","content":"","flags":8192,` +
			`"attachments":[{"id":"9","filename":"voice-message.ogg","content_type":"audio/ogg","size":9210,"url":"` + cdnFile + `","duration_secs":3.6,"waveform":"AAA="}]}}}}`),
			message1(func() message.Event {
				ev := event(guild, ada, "", message.ChatGroup)
				ev.MessageID = "5"
				ev.Quote = &message.Quote{MessageID: "5"}
				ev.Attachments = []message.Attachment{{Kind: message.AttachVoice, MIME: "audio/ogg", Size: 9210, Name: "voice-message.ogg", PlatformID: cdnFile, Duration: 4}}
				return ev
			}())},
		{"AskWithAFileAlone", interaction(`"type":2,` + member + `,"data":{"name":"ask","type":1,"options":[{"name":"file","type":11,"value":"77"}],` +
			`"resolved":{"attachments":{"77":{"id":"77","filename":"plant.png","content_type":"image/png","size":4821,"url":"` + cdnFile + `","width":800,"height":-1}}}}`),
			message1(func() message.Event {
				ev := event(guild, ada, "", message.ChatGroup)
				ev.Attachments = []message.Attachment{{Kind: message.AttachImage, MIME: "image/png", Size: 4821, Name: "plant.png", PlatformID: cdnFile, Width: 800}}
				return ev
			}())},
		{"AskWithTextAndAPDF", interaction(`"type":2,` + member + `,"data":{"name":"ask","type":1,"options":[{"name":"text","type":3,"value":"my gate?"},{"name":"file","type":11,"value":"77"}],` +
			`"resolved":{"attachments":{"77":{"id":"77","filename":"pass.pdf","content_type":"application/pdf","size":48213,"url":"` + cdnFile + `"}}}}`),
			message1(func() message.Event {
				ev := event(guild, ada, "my gate?", message.ChatGroup)
				ev.Attachments = []message.Attachment{{Kind: message.AttachFile, MIME: "application/pdf", Size: 48213, Name: "pass.pdf", PlatformID: cdnFile}}
				return ev
			}())},
		// Asked about one of the app's own messages: the quote says so.
		{"MessageCommandOnTheAppsMessage", interaction(`"type":2,` + member + `,"data":{"name":"Ask the agent","type":3,"target_id":"5","resolved":{"messages":{"5":{"id":"5","content":"gate B12","author":{"id":"` + testApp + `","username":"parley","bot":true}}}}}`),
			message1(func() message.Event {
				ev := event(guild, ada, "gate B12", message.ChatGroup)
				ev.MessageID = "5"
				ev.Quote = &message.Quote{MessageID: "5", Text: "gate B12", Sender: &message.Sender{ID: testApp, Name: "parley", IsBot: true}, Parley: true}
				return ev
			}())},
		{"UserCommand", interaction(`"type":2,` + member + `,"data":{"name":"Ask the agent","type":2,"target_id":"5"}`), ignored("unsupported", ephemeral("This is not something Parley answers."))},
		{"ChatInputNamedLikeTheMessageCommand", interaction(`"type":2,` + member + `,"data":{"name":"Ask the agent","type":1}`), ignored("unsupported", ephemeral("This is not something Parley answers."))},
		{"ModalSubmit", interaction(`"type":5,` + member + `,"data":{"custom_id":"m1","components":[]}`), ignored("unsupported", ephemeral("This is not something Parley answers."))},
		{"FutureType", interaction(`"type":42`), platform.Parsed{Ignored: []platform.Ignored{{Reason: "unsupported", ID: "1444357362155520001"}}}},
		{"Button", interaction(press(`{"component_type":2,"custom_id":"q1:0:1"}`)), answer(&message.Press{Data: "q1:0:1", MessageID: "1444357400000000001"})},
		{"SelectWithNothingChosen", interaction(press(`{"component_type":3,"custom_id":"q2:0:s","values":[]}`)), answer(&message.Press{Data: "q2:0:s", MessageID: "1444357400000000001"})},
		{"UserSelect", interaction(press(`{"component_type":5,"custom_id":"u","values":["1309000000000000043"]}`)), ignored("unsupported", deferredUpdate)},
		{"PressByABot", interaction(`"type":3,"channel_id":"1309000000000000200","member":{"user":{"id":"9","bot":true}},"message":{"id":"1"},"data":{"component_type":2,"custom_id":"q1:0:1"}`),
			ignored("bot", deferredUpdate)},
	}
	r := testReceiver()
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
				t.Fatalf("\n got %s\nwant %s", show(got), show(tc.want))
			}
		})
	}
}

// TestAnotherApplicationIsForbidden: an interaction of another application,
// even signed with this one's key, is refused (403) before anything.
func TestAnotherApplicationIsForbidden(t *testing.T) {
	t.Parallel()
	body := bytes.Replace(readSample(t, "command-guild.json"), []byte(`"application_id": "1309000000000000001"`), []byte(`"application_id": "1309000000000000002"`), 1)
	req := signed(body, sampleNow, sampleNow)
	if err := testReceiver().Verify(req); err != nil {
		t.Fatal(err)
	}
	p, err := testReceiver().Parse(req)
	if !errors.Is(err, platform.ErrForbidden) || platform.StatusOf(err) != 403 {
		t.Fatalf("Parse = %+v, %v; want ErrForbidden", p, err)
	}
}

// TestReplyContextLivesFifteenMinutes: the token answers the interaction for
// TokenLife from the interaction's snowflake time, whenever it arrives.
func TestReplyContextLivesFifteenMinutes(t *testing.T) {
	t.Parallel()
	r := testReceiver()
	for _, name := range []string{"command-guild.json", "button-press.json"} {
		body := readSample(t, name)
		first, _ := r.Parse(signed(body, sampleNow, sampleNow))
		later, _ := r.Parse(signed(body, sampleNow.Add(4*time.Minute), sampleNow.Add(4*time.Minute)))
		ev := first.Events[0]
		if !reflect.DeepEqual(first, later) || !ev.ReplyContext.Until.Equal(ev.Time.Add(15*time.Minute)) {
			t.Fatalf("%s: %+v, later %+v", name, first.Events[0].ReplyContext, later.Events[0].ReplyContext)
		}
	}
}

// TestCommandsAreWhatTheReceiverTakes: the registered commands are the
// ones Parse answers, with the option it reads.
func TestCommandsAreWhatTheReceiverTakes(t *testing.T) {
	t.Parallel()
	cmds := Commands()
	if len(cmds) != 2 {
		t.Fatalf("%d commands", len(cmds))
	}
	r := testReceiver()
	for _, c := range cmds {
		data := `{"name":` + strconv.Quote(c.Name) + `,"type":` + strconv.Itoa(c.Type)
		switch c.Type {
		case DiscordCommandChatInput:
			if len(c.Options) != 2 || c.Options[0].Name != OptionText || c.Options[0].Type != DiscordOptionString ||
				c.Options[1].Name != OptionFile || c.Options[1].Type != DiscordOptionAttachment || c.Options[0].Required || c.Options[1].Required {
				t.Fatalf("/%s options %+v", c.Name, c.Options)
			}
			data += `,"options":[{"name":"` + OptionText + `","type":3,"value":"hi"},{"name":"` + OptionFile + `","type":11,"value":"7"}],` +
				`"resolved":{"attachments":{"7":{"id":"7","filename":"a.pdf","url":"` + cdnFile + `"}}}}`
		case DiscordCommandMessage:
			data += `,"target_id":"5","resolved":{"messages":{"5":{"id":"5","content":"hi"}}}}`
		default:
			t.Fatalf("command type %d", c.Type)
		}
		p, err := r.Parse(signed(interaction(`"type":2,"channel_id":"1309000000000000200","user":{"id":"1"},"data":`+data), sampleNow, sampleNow))
		if err != nil || len(p.Events) != 1 || p.Events[0].Text != "hi" || (c.Type == DiscordCommandChatInput && len(p.Events[0].Attachments) != 1) {
			t.Fatalf("%s: %+v, %v", c.Name, p, err)
		}
	}
}
