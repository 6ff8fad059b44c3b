package line

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeline"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/platformtest"
)

// TestConformance runs the contract every chat adapter keeps against the
// fake Messaging API.
func TestConformance(t *testing.T) {
	t.Parallel()
	status := func(name string, code int, class message.FailureClass) platformtest.FaultCase {
		return platformtest.FaultCase{Name: name, Fault: fakeapi.Fault{Status: code}, Class: class}
	}
	platformtest.Run(t, platformtest.Harness{
		Adapter: Adapter,
		Env: map[string]string{
			SettingChannelSecret:      testSecret,
			SettingChannelAccessToken: testToken,
			SettingBotUserID:          bot,
		},
		BaseURLSetting: SettingAPIBaseURL,
		Fake: func(rec *fakeapi.Recorder) http.Handler {
			return fakeline.New(fakeline.Options{Token: testToken, Recorder: rec})
		},
		IssueReplyToken: func(api http.Handler, chat string) string { return api.(*fakeline.API).IssueReplyToken(chat) },
		Sign:            func(secret string, body []byte, _ time.Time) http.Header { return fakeline.Headers(secret, body) },
		SecretSetting:   SettingChannelSecret,
		AuthHeaders:     []string{SignatureHeader},
		// LINE signs the body and no timestamp.
		Features: platformtest.Features{SignsBody: true, Presses: true},
		Samples:  platformtest.Samples{Dir: eventsDir, At: sampleNow, Want: sampleExpectations()},
		Handshakes: []platformtest.Handshake{{
			Name: "Verify", Signed: true,
			Body: []byte(`{"destination":"` + bot + `","events":[]}`),
			Want: platform.Reply{Status: 200, ContentType: "text/plain; charset=utf-8", Body: []byte("OK")},
		}},
		Malformed: map[string][]byte{
			"NoDestination":   []byte(`{"events":[]}`),
			"NoEvents":        []byte(`{"destination":"` + bot + `"}`),
			"EventsNotAList":  []byte(`{"destination":"` + bot + `","events":{}}`),
			"EventWithoutID":  event(`{"type":"message","timestamp":1,"source":{"type":"user","userId":"` + ada + `"}}`),
			"TextWithoutBody": event(`{"type":"message","source":{"type":"user","userId":"` + ada + `"},` + base + `}`),
		},
		Thread: chat(ada),
		Faults: []platformtest.FaultCase{
			{Name: "RateLimitedWithoutRetryAfter", Fault: fakeapi.Fault{Status: 429}, Class: message.FailRateLimit, RetryAfter: RateLimitWait},
			{Name: "MonthlyLimit", Fault: fakeapi.Fault{Status: 429, Error: fakeline.MonthlyLimitMessage}, Class: message.FailPermission},
			status("HTTP400", 400, message.FailInvalidPayload),
			status("HTTP401", 401, message.FailAuth),
			status("HTTP403", 403, message.FailPermission),
			status("HTTP404WrongBaseURL", 404, message.FailAuth),
			// Without a retry key (the suite's sends carry no idempotency
			// key) a 409 proves nothing.
			status("HTTP409WithoutRetryKey", 409, message.FailUnknown),
			status("HTTP413", 413, message.FailInvalidPayload),
			// LINE's retry guide: a 5xx may have been accepted.
			status("HTTP500", 500, message.FailUnknown),
			status("HTTP502", 502, message.FailUnknown),
			status("HTTP503", 503, message.FailUnknown),
			status("HTTP504", 504, message.FailUnknown),
		},
		// A plain "text" message: no textV2 (its {placeholders} become
		// mentions), no emojis (its $ become LINE emoji), the text as the
		// agent wrote it.
		Inert: func(text string, d fakeapi.Delivery) error {
			var msgs []map[string]json.RawMessage
			if err := json.Unmarshal(d.Args["messages"], &msgs); err != nil || len(msgs) != 1 {
				return errors.New("not one message")
			}
			var typ, got string
			_ = json.Unmarshal(msgs[0]["type"], &typ)
			_ = json.Unmarshal(msgs[0]["text"], &got)
			if typ != "text" || got != text || d.Text != text {
				return errors.New("not a text message of the text as written: " + typ)
			}
			for _, k := range []string{"emojis", "substitution", "sender"} {
				if _, ok := msgs[0][k]; ok {
					return errors.New("the message sets " + k)
				}
			}
			return nil
		},
	})
}
