package whatsapp

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakewhatsapp"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/platformtest"
)

// TestConformance runs the contract every chat adapter keeps against the
// fake Cloud API.
func TestConformance(t *testing.T) {
	t.Parallel()
	code := func(name, code string, class message.FailureClass, wait time.Duration) platformtest.FaultCase {
		return platformtest.FaultCase{Name: name, Fault: fakeapi.Fault{Error: code}, Class: class, RetryAfter: wait}
	}
	platformtest.Run(t, platformtest.Harness{
		Adapter: Adapter,
		Env: map[string]string{
			SettingAppSecret:     testAppSecret,
			SettingVerifyToken:   testVerifyToken,
			SettingAccessToken:   testToken,
			SettingPhoneNumberID: testPhone,
		},
		BaseURLSetting: SettingAPIBaseURL,
		Fake: func(rec *fakeapi.Recorder) http.Handler {
			return fakewhatsapp.New(fakewhatsapp.Options{Token: testToken, PhoneNumberID: testPhone, Recorder: rec})
		},
		Sign:          func(secret string, body []byte, _ time.Time) http.Header { return fakewhatsapp.Sign(secret, body) },
		SecretSetting: SettingAppSecret,
		AuthHeaders:   []string{SignatureHeader},
		// Meta signs no timestamp: a replay is caught by the wamid dedupe.
		Features: platformtest.Features{SignsBody: true, Presses: true},
		Samples:  platformtest.Samples{Dir: eventsDir, At: sampleNow, Want: sampleExpectations()},
		Handshakes: []platformtest.Handshake{
			{
				Name: "Verification", Method: http.MethodGet,
				Query: fakewhatsapp.HandshakeQuery(testVerifyToken, "1158201444"),
				Want:  platform.Reply{Status: 200, ContentType: "text/plain; charset=utf-8", Body: []byte("1158201444")},
			},
			{
				Name: "VerificationWithAWrongToken", Method: http.MethodGet,
				Query: fakewhatsapp.HandshakeQuery("not-the-token", "1158201444"),
				Want:  platform.Reply{Status: 403, ContentType: "text/plain; charset=utf-8", Body: []byte("verify token does not match")},
			},
		},
		Malformed: malformed(),
		Thread:    chat(ada),
		Faults: []platformtest.FaultCase{
			// The 24-hour window is closed: only a template reaches them.
			code("ReEngagement131047", fakewhatsapp.CodeReEngagement, message.FailPermission, 0),
			code("Throughput130429", fakewhatsapp.CodeThroughput, message.FailRateLimit, waitThroughput),
			code("PairRate131056", fakewhatsapp.CodePairRate, message.FailRateLimit, waitPair),
			code("BusinessRateLimit80007", "80007", message.FailRateLimit, waitApp),
			code("AppRateLimit4", "4", message.FailRateLimit, waitApp),
			code("SpamRateLimit131048", "131048", message.FailRateLimit, waitSpam),
			{Name: "ThroughputWithRetryAfter", Fault: fakeapi.Fault{Error: fakewhatsapp.CodeThroughput, RetryAfter: 3 * time.Second}, Class: message.FailRateLimit, RetryAfter: 3 * time.Second},
			code("TokenExpired190", "190", message.FailAuth, 0),
			code("AuthException0", "0", message.FailAuth, 0),
			code("PermissionDenied10", "10", message.FailPermission, 0),
			code("PermissionsError200", "200", message.FailPermission, 0),
			code("PolicyBlock368", "368", message.FailPermission, 0),
			code("Undeliverable131026", "131026", message.FailPermission, 0),
			code("InvalidParameter100", "100", message.FailInvalidPayload, 0),
			code("NoSuchPhoneNumber100_33", "100/33", message.FailNotFound, 0),
			code("MissingParameter131008", "131008", message.FailInvalidPayload, 0),
			code("InvalidValue131009", "131009", message.FailInvalidPayload, 0),
			code("MaintenanceMode131057", "131057", message.FailTransient, 0),
			code("Unknown1", "1", message.FailUnknown, 0),
			code("Service2", "2", message.FailUnknown, 0),
			code("SomethingWentWrong131000", "131000", message.FailUnknown, 0),
			code("ServiceUnavailable131016", "131016", message.FailUnknown, 0),
			// A code Parley does not know goes by its HTTP status.
			code("NewCodeWith400", "139999", message.FailInvalidPayload, 0),
			{Name: "NewCodeWith500", Fault: fakeapi.Fault{Error: "139999", Status: 500}, Class: message.FailUnknown},
			{Name: "NewCodeWith403", Fault: fakeapi.Fault{Error: "139999", Status: 403}, Class: message.FailPermission},
			// An edge's page, no Graph envelope.
			{Name: "HTTP500", Fault: fakeapi.Fault{Status: 500}, Class: message.FailUnknown},
			{Name: "HTTP502", Fault: fakeapi.Fault{Status: 502}, Class: message.FailUnknown},
			{Name: "HTTP503", Fault: fakeapi.Fault{Status: 503}, Class: message.FailUnknown},
			{Name: "HTTP404WrongBaseURL", Fault: fakeapi.Fault{Status: 404}, Class: message.FailAuth},
			{Name: "HTTP429WithoutRetryAfter", Fault: fakeapi.Fault{Status: 429}, Class: message.FailRateLimit, RetryAfter: waitThroughput},
			{Name: "HTTP400", Fault: fakeapi.Fault{Status: 400}, Class: message.FailInvalidPayload},
		},
		// A plain text message with link previews off, and no marker
		// WhatsApp formats left in the body.
		Inert: func(text string, d fakeapi.Delivery) error {
			if fakeapi.Str(d.Args, "type") != "text" || d.Args["interactive"] != nil {
				return errors.New("not a plain text message")
			}
			var body WhatsAppText
			if err := json.Unmarshal(d.Args["text"], &body); err != nil {
				return errors.New("no text object")
			}
			if raw := string(d.Args["text"]); !strings.Contains(raw, `"preview_url":false`) {
				return errors.New("preview_url is not false: " + raw)
			}
			if body.Body != d.Text || body.Body != inert(text) {
				return errors.New("the body is not the inert text: " + body.Body)
			}
			if strings.ContainsAny(body.Body, "*_~`") {
				return errors.New("a formatting marker is left: " + body.Body)
			}
			return nil
		},
	})
}
