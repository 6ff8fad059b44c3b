package teams

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketeams"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/platformtest"
	"github.com/parleyhq/parley/shared/split"
)

// TestConformance runs the contract every chat adapter keeps against the
// fake Teams, with tokens signed by its fake issuer.
func TestConformance(t *testing.T) {
	t.Parallel()
	iss, meta := issuer()
	code := func(c string, class message.FailureClass) platformtest.FaultCase {
		return platformtest.FaultCase{Name: c, Fault: fakeapi.Fault{Error: c}, Class: class}
	}
	status := func(name string, st int, class message.FailureClass) platformtest.FaultCase {
		return platformtest.FaultCase{Name: name, Fault: fakeapi.Fault{Status: st}, Class: class}
	}
	platformtest.Run(t, platformtest.Harness{
		Adapter: Adapter,
		Env: map[string]string{
			SettingAppID:             testApp,
			SettingTenantID:          testTenant,
			SettingAppPassword:       testPassword,
			SettingOpenIDMetadataURL: meta,
		},
		BaseURLSetting:  SettingServiceURL,
		FakeURLSettings: map[string]string{SettingLoginURL: faketeams.LoginPath},
		Fake: func(rec *fakeapi.Recorder) http.Handler {
			return faketeams.New(faketeams.Options{Recorder: rec, Issuer: iss})
		},
		// The "secret" is the audience: a token for another app id is
		// the wrong signature.
		Sign: func(app string, body []byte, at time.Time) http.Header {
			return faketeams.SignFor(iss, app, body, at)
		},
		SecretSetting: SettingAppID,
		AuthHeaders:   []string{"Authorization"},
		Features:      platformtest.Features{PublicCredential: true, MaxSkew: faketeams.TokenLife + ClockSkew, Presses: true},
		Samples:       platformtest.Samples{Dir: eventsDir, At: sampleNow, Want: sampleExpectations()},
		Malformed:     malformed(),
		Thread:        personal,
		Faults: []platformtest.FaultCase{
			{Name: "Throttled", Fault: fakeapi.Fault{Error: "Throttled", RetryAfter: 30 * time.Second}, Class: message.FailRateLimit, RetryAfter: 30 * time.Second},
			code("PreconditionFailed", message.FailTransient),
			code("BotNotRegistered", message.FailAuth),
			code("Unauthorized", message.FailAuth),
			code("ConversationBlockedByUser", message.FailPermission),
			code("BotNotInConversationRoster", message.FailPermission),
			code("BotDisabledByAdmin", message.FailPermission),
			code("ConversationNotFound", message.FailNotFound),
			code("MessageSizeTooBig", message.FailInvalidPayload),
			code("BadArgument", message.FailInvalidPayload),
			code("ServiceError", message.FailUnknown),
			code("BadGateway", message.FailUnknown),
			code("GatewayTimeout", message.FailUnknown),
			status("HTTP503", 503, message.FailUnknown),
			status("HTTP404WithoutBody", 404, message.FailNotFound),
			status("HTTP400", 400, message.FailInvalidPayload),
		},
		// Plain text, no entities: Teams shows it as written and
		// mentions nobody.
		Inert: func(text string, d fakeapi.Delivery) error {
			var got TeamsActivity
			raw, _ := json.Marshal(d.Args)
			if err := json.Unmarshal(raw, &got); err != nil {
				return err
			}
			switch {
			case got.TextFormat != "plain":
				return errors.New("textFormat " + got.TextFormat + ", want plain")
			case len(got.Entities) > 0:
				return errors.New("the message carries entities (mentions)")
			case got.Text != text || len(got.Attachments) > 0:
				return errors.New("the text is not sent as written")
			}
			return nil
		},
		PlatformLimit: platformLimit(),
	})
}

// platformLimit is the longest text, in UTF-16 units, whose activity the
// connector takes: its 40 KB of UTF-16, less the rest of the body.
func platformLimit() int {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(TeamsActivity{Type: TeamsActivityMessage, Text: "x", TextFormat: "plain"})
	return faketeams.MaxPayload/2 - (split.Count(buf.String(), message.CountUTF16) - 1)
}

// malformed are signed bodies Parse refuses with ErrMalformed.
func malformed() map[string][]byte {
	act := func(extra string) []byte {
		return []byte(`{"channelId":"msteams","serviceUrl":"` + sampleSvc + `"` + extra + `}`)
	}
	conv := `,"conversation":{"id":"` + personalConv + `","conversationType":"personal","tenantId":"` + testTenant + `"}`
	from := `,"from":{"id":"` + ada + `"}`
	return map[string][]byte{
		"NoType":               act(conv + from + `,"id":"1","timestamp":"2025-11-29T16:00:00Z","text":"x"`),
		"NoConversation":       act(`,"type":"message"` + from + `,"id":"1","timestamp":"2025-11-29T16:00:00Z","text":"x"`),
		"MessageWithoutID":     act(`,"type":"message"` + conv + from + `,"timestamp":"2025-11-29T16:00:00Z","text":"x"`),
		"MessageWithoutFrom":   act(`,"type":"message"` + conv + `,"id":"1","timestamp":"2025-11-29T16:00:00Z","text":"x"`),
		"BadTimestamp":         act(`,"type":"message"` + conv + from + `,"id":"1","timestamp":"soon","text":"x"`),
		"TextNotString":        act(`,"type":"message"` + conv + from + `,"id":"1","timestamp":"2025-11-29T16:00:00Z","text":7`),
		"ConversationSlashes":  act(`,"type":"message","conversation":{"id":"a:1/../x","conversationType":"personal"}` + from + `,"id":"1","timestamp":"2025-11-29T16:00:00Z","text":"x"`),
		"ExecuteWithoutAction": act(`,"type":"invoke","name":"adaptiveCard/action"` + conv + from + `,"id":"1","timestamp":"2025-11-29T16:00:00Z","value":[]`),
		"TrailingGarbage":      append(act(`,"type":"message"`+conv+from+`,"id":"1","timestamp":"2025-11-29T16:00:00Z","text":"x"`), " x"...),
	}
}

// sampleExpectations is what each file of events/teams parses to.
func sampleExpectations() map[string]platform.Parsed {
	at := func(s string) time.Time { t, _ := time.Parse(time.RFC3339Nano, s); return t }
	rc := func(ts string) *message.ReplyContext {
		return &message.ReplyContext{Token: sampleSvc, Until: at(ts).Add(ReplyContextLife)}
	}
	ev := func(conv, id, ts string, th message.Thread, who, name, chatType string) message.Event {
		return message.Event{
			Platform: message.Teams, Account: testApp, EventID: conv + "|" + id, Kind: message.KindMessage,
			Thread: th, Sender: message.Sender{ID: who, Name: name}, MessageID: id, ChatType: chatType,
			Time: at(ts), ReplyContext: rc(ts),
		}
	}
	personalMsg := ev(personalConv, "1764432000123", "2025-11-29T16:00:00.123Z", personal, ada, "Ada Lovelace", message.ChatPrivate)
	personalMsg.Text = "hello from Teams"
	channelMsg := ev(channel+";messageid=1764431000000", "1764432060456", "2025-11-29T16:01:00.456Z", thread, grace, "Grace Hopper", message.ChatGroup)
	channelMsg.Text, channelMsg.ReplyTo = "what is the status of the release?", "1764431000000"
	groupMsg := ev(groupConv, "1764432120789", "2025-11-29T16:02:00.789Z", group, grace, "Grace Hopper", message.ChatGroup)
	groupMsg.Text = "summarise this chat for <at>Ada Lovelace</at>"
	submit := ev(personalConv, "1764432180000", "2025-11-29T16:03:00Z", personal, ada, "Ada Lovelace", message.ChatPrivate)
	submit.Kind, submit.Press = message.KindAnswer, &message.Press{Data: "q1:0:0", MessageID: "1764432100000"}
	execute := ev(groupConv, "f:1764432210000", "2025-11-29T16:03:30Z", group, grace, "Grace Hopper", message.ChatGroup)
	execute.Kind, execute.Press = message.KindAnswer, &message.Press{Data: "q2:0:s", Values: []string{"q2:0:1", "q2:0:3"}, MessageID: "1764432150000"}
	fileMsg := ev(personalConv, "1764432240500", "2025-11-29T16:04:00.5Z", personal, ada, "Ada Lovelace", message.ChatPrivate)
	fileMsg.Text = "is this my gate?"
	fileMsg.Attachments = []message.Attachment{
		{Kind: message.AttachFile, MIME: "application/pdf", Name: "boarding-pass.pdf",
			PlatformID: "https://contoso-my.sharepoint.example/personal/ada_contoso_com/_layouts/15/download.aspx?UniqueId=3c1b2a90-0000-4000-8000-0000000ada01&Translate=false&tempauth=fake.parley.test"},
		{Index: 1, Kind: message.AttachImage, PlatformID: "https://smba.trafficmanager.net/amer/v3/attachments/0-wus-d3-ada0000000000000000000000000001/views/original"},
	}
	one := func(e message.Event) platform.Parsed { return platform.Parsed{Events: []message.Event{e}} }
	ig := func(reason, id string) platform.Parsed {
		return platform.Parsed{Ignored: []platform.Ignored{{Reason: reason, ID: id}}}
	}
	exec := one(execute)
	exec.Ack = invokeReply(&TeamsInvokeResponse{StatusCode: 200, Type: "application/vnd.microsoft.activity.message", Value: noteReceived})
	exec.Unavailable = invokeReply(&TeamsInvokeResponse{StatusCode: 503, Type: "application/vnd.microsoft.error", Value: map[string]string{"code": "ServiceUnavailable", "message": noteUnavailable}})
	return map[string]platform.Parsed{
		"message-personal.json": one(personalMsg),
		// Ada uploads a PDF and pastes a photo in her chat with the bot: the
		// HTML rendering Teams attaches too is no file.
		"file-personal.json":       one(fileMsg),
		"message-channel.json":     one(channelMsg),
		"message-groupchat.json":   one(groupMsg),
		"submit-press.json":        one(submit),
		"execute-press.json":       exec,
		"conversation-update.json": ig(platform.IgnoredMembership, "f:1764431940000"),
		"message-update.json":      ig(platform.IgnoredEdited, "1764432000123"),
		"message-reaction.json":    ig(platform.IgnoredUnsupported, "f:1764432270000"),
	}
}
