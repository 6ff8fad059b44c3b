package googlechat

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakegooglechat"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/platformtest"
)

// TestConformance runs the contract every chat adapter keeps against the
// fake Google Chat, with tokens signed by its fake Chat issuer.
func TestConformance(t *testing.T) {
	t.Parallel()
	api, _ := issuers()
	status := func(name string, class message.FailureClass) platformtest.FaultCase {
		return platformtest.FaultCase{Name: name, Fault: fakeapi.Fault{Error: name}, Class: class}
	}
	platformtest.Run(t, platformtest.Harness{
		Adapter: Adapter,
		Env: map[string]string{
			SettingProjectNumber:  testProject,
			SettingServiceAccount: fakegooglechat.ServiceAccountJSON("https://oauth2.googleapis.com/token"),
			SettingChatKeysURL:    chatKeysURL(),
		},
		BaseURLSetting:  SettingAPIBaseURL,
		FakeURLSettings: map[string]string{SettingTokenURL: fakegooglechat.TokenPath},
		Fake: func(rec *fakeapi.Recorder) http.Handler {
			return fakegooglechat.New(fakegooglechat.Options{Recorder: rec, ChatIssuer: api.ChatIssuer(), GoogleIssuer: api.GoogleIssuer()})
		},
		// The "secret" is the audience: a token for another project is
		// the wrong signature.
		Sign: func(project string, _ []byte, at time.Time) http.Header {
			return fakegooglechat.SignFor(api.ChatIssuer(), project, at)
		},
		SecretSetting:   SettingProjectNumber,
		AuthHeaders:     []string{"Authorization"},
		Features:        platformtest.Features{PublicCredential: true, MaxSkew: fakegooglechat.TokenLife + ClockSkew, Presses: true},
		Samples:         platformtest.Samples{Dir: eventsDir, At: sampleNow, Want: sampleExpectations()},
		Malformed:       malformed(),
		Thread:          thread,
		WrongCredential: func(_, v string) string { return otherAccount(v) },
		Faults: []platformtest.FaultCase{
			{Name: "ResourceExhausted", Fault: fakeapi.Fault{Error: "RESOURCE_EXHAUSTED", RetryAfter: 30 * time.Second}, Class: message.FailRateLimit, RetryAfter: 30 * time.Second},
			status("INVALID_ARGUMENT", message.FailInvalidPayload),
			status("UNAUTHENTICATED", message.FailAuth),
			status("PERMISSION_DENIED", message.FailPermission),
			status("NOT_FOUND", message.FailNotFound),
			status("ALREADY_EXISTS", message.FailConflict),
			status("INTERNAL", message.FailUnknown),
			status("UNAVAILABLE", message.FailUnknown),
			status("DEADLINE_EXCEEDED", message.FailUnknown),
			{Name: "HTTP404WithoutBody", Fault: fakeapi.Fault{Status: 404, Error: ""}, Class: message.FailNotFound},
		},
		Inert: func(text string, d fakeapi.Delivery) error {
			if d.Text != Inert(text) {
				return errors.New("the text is not made inert: " + d.Text)
			}
			if v, ok := d.Args["cardsV2"]; ok && string(v) != "null" {
				return errors.New("a text message carries cards")
			}
			return nil
		},
		PlatformLimit: fakegooglechat.MaxMessage,
	})
}

// malformed are signed bodies Parse refuses with ErrMalformed.
func malformed() map[string][]byte {
	space := `"space":{"name":"` + room + `","type":"ROOM"}`
	user := `"user":{"name":"` + grace + `","type":"HUMAN"}`
	msg := func(name string) string {
		return `"message":{"name":"` + name + `","sender":{"name":"` + grace + `","type":"HUMAN"},"text":"hi","space":{"name":"` + room + `"}}`
	}
	return map[string][]byte{
		"NoType":               []byte(`{"eventTime":"2025-11-29T16:00:00Z",` + space + `,` + user + `}`),
		"MessageWithoutName":   []byte(`{"type":"MESSAGE","eventTime":"2025-11-29T16:00:00Z",` + space + `,` + user + `,"message":{"text":"hi"}}`),
		"MessageNameOddSpace":  []byte(`{"type":"MESSAGE","eventTime":"2025-11-29T16:00:00Z",` + space + `,` + user + `,` + msg("spaces/other/messages/1.1") + `}`),
		"NoSpace":              []byte(`{"type":"MESSAGE","eventTime":"2025-11-29T16:00:00Z",` + user + `,"message":{"name":"` + room + `/messages/1.1","sender":{"name":"` + grace + `"},"text":"hi"}}`),
		"SpaceWithSlashes":     []byte(`{"type":"MESSAGE","eventTime":"2025-11-29T16:00:00Z","space":{"name":"spaces/../x"},` + user + `,` + msg(room+"/messages/1.1") + `}`),
		"BadTime":              []byte(`{"type":"MESSAGE","eventTime":"soon",` + space + `,` + user + `,` + msg(room+"/messages/1.1") + `}`),
		"ThreadOfAnotherSpace": []byte(`{"type":"MESSAGE","eventTime":"2025-11-29T16:00:00Z",` + space + `,` + user + `,"message":{"name":"` + room + `/messages/1.1","sender":{"name":"` + grace + `"},"text":"hi","thread":{"name":"spaces/other/threads/x"}}}`),
		"ClickWithoutMessage":  []byte(`{"type":"CARD_CLICKED","eventTime":"2025-11-29T16:00:00Z",` + space + `,` + user + `,"action":{"actionMethodName":"parley","parameters":[{"key":"data","value":"q1"}]}}`),
		"TextNotString":        []byte(`{"type":"MESSAGE","eventTime":"2025-11-29T16:00:00Z",` + space + `,` + user + `,"message":{"name":"` + room + `/messages/1.1","text":7}}`),
	}
}

// sampleExpectations is what each file of events/googlechat parses to.
func sampleExpectations() map[string]platform.Parsed {
	at := func(s string) time.Time { t, _ := time.Parse(time.RFC3339Nano, s); return t }
	acked := func(p platform.Parsed) platform.Parsed { p.Ack = emptyAck; return p }
	one := func(e message.Event) platform.Parsed { return acked(platform.Parsed{Events: []message.Event{e}}) }
	ig := func(reason, id string) platform.Parsed {
		return acked(platform.Parsed{Ignored: []platform.Ignored{{Reason: reason, ID: id}}})
	}
	dmMsg := message.Event{
		Platform: message.GoogleChat, Account: testProject, EventID: dmSpace + "/messages/Msg00000001.Msg00000001", Kind: message.KindMessage,
		Thread: dm, Sender: message.Sender{ID: ada, Name: "Ada Lovelace"}, Text: "hello from Google Chat",
		MessageID: dmSpace + "/messages/Msg00000001.Msg00000001", ChatType: message.ChatPrivate, Time: at("2025-11-29T16:00:00.123456Z"),
	}
	spaceMsg := message.Event{
		Platform: message.GoogleChat, Account: testProject, EventID: room + "/messages/Msg00000002.Msg00000002", Kind: message.KindMessage,
		Thread: thread, Sender: message.Sender{ID: grace, Name: "Grace Hopper"}, Text: "what is the status of the release?",
		MessageID: room + "/messages/Msg00000002.Msg00000002", ChatType: message.ChatGroup, Time: at("2025-11-29T16:01:00.456789Z"),
	}
	click := message.Event{
		Platform: message.GoogleChat, Account: testProject, Kind: message.KindAnswer,
		EventID: room + "/messages/Msg00000003.Msg00000003/clicks/" + grace + "/2025-11-29T16:03:00.000Z",
		Thread:  thread, Sender: message.Sender{ID: grace, Name: "Grace Hopper"}, ChatType: message.ChatGroup, Time: at("2025-11-29T16:03:00Z"),
		Press: &message.Press{Data: "q1:0:0", MessageID: room + "/messages/Msg00000003.Msg00000003"},
	}
	choice := click
	choice.EventID = room + "/messages/Msg00000004.Msg00000004/clicks/" + grace + "/2025-11-29T16:03:30.000Z"
	choice.Time = at("2025-11-29T16:03:30Z")
	choice.Press = &message.Press{Data: "q2:0:s", Values: []string{"q2:0:1", "q2:0:3"}, MessageID: room + "/messages/Msg00000004.Msg00000004"}
	return map[string]platform.Parsed{
		"message-dm.json": one(dmMsg),
		// Ada uploads a PDF and shares a Drive document, with a question:
		// the Drive file, which the app cannot read, is described as such.
		"file-dm.json": one(message.Event{
			Platform: message.GoogleChat, Account: testProject, EventID: dmSpace + "/messages/Pdf000000001.Pdf000000001", Kind: message.KindMessage,
			Thread: dm, Sender: message.Sender{ID: ada, Name: "Ada Lovelace"}, Text: "is this my gate?",
			MessageID: dmSpace + "/messages/Pdf000000001.Pdf000000001", ChatType: message.ChatPrivate, Time: at("2025-11-29T16:04:00.25Z"),
			Attachments: []message.Attachment{
				{Kind: message.AttachFile, MIME: "application/pdf", Name: "boarding-pass.pdf", PlatformID: "ClxzcGFjZXMvZG1BZGEwMDAwMDAxL21lc3NhZ2VzL1BkZjAwMDAwMDAwMS5QZGYwMDAwMDAwMDE"},
				{Index: 1, Kind: message.AttachFile, MIME: "application/vnd.google-apps.document", Name: "itinerary", PlatformID: "1FakeDriveFileIdForParleyTests0000", Reason: message.ReasonNotServed},
			},
		}),
		"message-space.json":       one(spaceMsg),
		"card-clicked.json":        one(click),
		"card-clicked-choice.json": one(choice),
		"added-to-space.json":      ig(platform.IgnoredMembership, room),
		"removed-from-space.json":  ig(platform.IgnoredMembership, room),
		"message-from-bot.json":    ig(platform.IgnoredBot, room+"/messages/Msg00000005.Msg00000005"),
	}
}
