package telegram

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketelegram"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/platformtest"
)

// TestConformance runs the contract every chat adapter keeps against the
// fake Bot API.
func TestConformance(t *testing.T) {
	t.Parallel()
	platformtest.Run(t, harness())
}

func harness() platformtest.Harness {
	return platformtest.Harness{
		Adapter: Adapter,
		Env: map[string]string{
			SettingBotToken:      testToken,
			SettingWebhookSecret: testSecret,
		},
		BaseURLSetting: SettingAPIBaseURL,
		Fake: func(rec *fakeapi.Recorder) http.Handler {
			return faketelegram.New(faketelegram.Options{Token: testToken, Recorder: rec})
		},
		// Telegram sends the secret_token as it was given to setWebhook,
		// and signs neither the body nor a time.
		Sign:          func(secret string, _ []byte, _ time.Time) http.Header { return faketelegram.Headers(secret) },
		SecretSetting: SettingWebhookSecret,
		AuthHeaders:   []string{SecretHeader},
		Features:      platformtest.Features{Presses: true},
		Samples:       platformtest.Samples{Dir: eventsDir, At: sampleNow, Want: sampleExpectations()},
		Malformed: map[string][]byte{
			"CallbackWithoutID": []byte(`{"update_id":5,"callback_query":{"from":{"id":42,"is_bot":false,"first_name":"Ada"},"message":{"message_id":1,"chat":{"id":42,"type":"private"},"date":1},"chat_instance":"1","data":"q0:0"}}`),
			"CallbackNotObject": []byte(`{"update_id":5,"callback_query":[1]}`),
		},
		Thread: topic,
		Faults: []platformtest.FaultCase{
			{Name: "ChatNotFound", Fault: fakeapi.Fault{Status: 400}, Class: message.FailInvalidPayload},
			{Name: "Unauthorized", Fault: fakeapi.Fault{Status: 401}, Class: message.FailAuth},
			{Name: "Blocked", Fault: fakeapi.Fault{Status: 403}, Class: message.FailPermission},
			{Name: "KickedFromGroup", Fault: fakeapi.Fault{Status: 403, Error: "Forbidden: bot was kicked from the supergroup chat"}, Class: message.FailPermission},
			{Name: "MalformedTokenPath", Fault: fakeapi.Fault{Status: 404}, Class: message.FailAuth},
			{Name: "Conflict", Fault: fakeapi.Fault{Status: 409}, Class: message.FailConflict},
			{Name: "FloodControl", Fault: fakeapi.Fault{Status: 429, RetryAfter: 35 * time.Second}, Class: message.FailRateLimit, RetryAfter: 35 * time.Second},
			{Name: "FloodControlRoundsUp", Fault: fakeapi.Fault{Status: 429, RetryAfter: 1500 * time.Millisecond}, Class: message.FailRateLimit, RetryAfter: 2 * time.Second},
			// Telegram documents no 5xx as "not processed" (ADR 0003).
			{Name: "InternalServerError", Fault: fakeapi.Fault{Status: 500}, Class: message.FailUnknown},
			{Name: "BadGateway", Fault: fakeapi.Fault{Status: 502}, Class: message.FailUnknown},
		},
		// No parse_mode and no entities: Telegram shows the text verbatim.
		Inert: func(text string, d fakeapi.Delivery) error {
			for _, k := range []string{"parse_mode", "entities"} {
				if _, ok := d.Args[k]; ok {
					return errors.New("the call sets " + k)
				}
			}
			if d.Text != text {
				return errors.New("the text was changed on the way")
			}
			return nil
		},
	}
}
