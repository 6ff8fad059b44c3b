package slack

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeslack"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/platformtest"
)

// TestConformance runs the contract every chat adapter keeps against the
// fake Web API.
func TestConformance(t *testing.T) {
	t.Parallel()
	fault := func(name, code string, class message.FailureClass) platformtest.FaultCase {
		return platformtest.FaultCase{Name: name, Fault: fakeapi.Fault{Error: code}, Class: class}
	}
	platformtest.Run(t, platformtest.Harness{
		Adapter: Adapter,
		Env: map[string]string{
			SettingSigningSecret: testSecret,
			SettingBotToken:      testToken,
			SettingTeamID:        team,
		},
		BaseURLSetting: SettingAPIBaseURL,
		Fake: func(rec *fakeapi.Recorder) http.Handler {
			return fakeslack.New(fakeslack.Options{Token: testToken, Recorder: rec})
		},
		Sign:          func(secret string, body []byte, at time.Time) http.Header { return fakeslack.Sign(secret, at, body) },
		SecretSetting: SettingSigningSecret,
		AuthHeaders:   []string{TimestampHeader, SignatureHeader},
		Features:      platformtest.Features{SignsBody: true, MaxSkew: MaxSkew, Presses: true},
		Samples:       platformtest.Samples{Dir: eventsDir, At: sampleNow, Want: sampleExpectations()},
		Handshakes: []platformtest.Handshake{{
			Name: "URLVerification", Signed: true,
			Body: []byte(`{"token":"ZZZZZZWSxiZZZ2yIvs3peJ","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`),
			Want: platform.Reply{Status: 200, ContentType: "text/plain; charset=utf-8", Body: []byte("3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P")},
		}},
		Malformed: map[string][]byte{
			"BlockActionsWithoutContainer": interaction(`{"type":"block_actions","team":{"id":"T0TEAM0001"},"user":{"id":"U0ADA00001"},"actions":[{"value":"q0:0","action_ts":"1.2"}]}`),
			"BlockActionsWithoutTeam":      interaction(`{"type":"block_actions","user":{"id":"U0ADA00001"},"container":{"type":"message","message_ts":"1.1","channel_id":"C1"},"actions":[{"value":"q0:0","action_ts":"1.2"}]}`),
			"BlockActionsWithoutActions":   interaction(`{"type":"block_actions","team":{"id":"T0TEAM0001"},"user":{"id":"U0ADA00001"},"container":{"type":"message","message_ts":"1.1","channel_id":"C1"},"actions":[]}`),
			"ActionWithoutTS":              interaction(`{"type":"block_actions","team":{"id":"T0TEAM0001"},"user":{"id":"U0ADA00001"},"container":{"type":"message","message_ts":"1.1","channel_id":"C1"},"actions":[{"value":"q0:0"}]}`),
			"PayloadNotAnObject":           interaction(`["block_actions"]`),
		},
		Thread: channel("1764432060.000200"),
		Faults: []platformtest.FaultCase{
			{Name: "HTTP429", Fault: fakeapi.Fault{Status: 429, RetryAfter: 30 * time.Second}, Class: message.FailRateLimit, RetryAfter: 30 * time.Second},
			{Name: "RatelimitedCode", Fault: fakeapi.Fault{Error: "ratelimited", RetryAfter: 3 * time.Second}, Class: message.FailRateLimit, RetryAfter: 3 * time.Second},
			fault("MessageLimitExceeded", "message_limit_exceeded", message.FailRateLimit),
			fault("NotAuthed", "not_authed", message.FailAuth),
			fault("InvalidAuth", "invalid_auth", message.FailAuth),
			fault("TokenRevoked", "token_revoked", message.FailAuth),
			fault("MissingScope", "missing_scope", message.FailAuth),
			fault("NotInChannel", "not_in_channel", message.FailPermission),
			fault("IsArchived", "is_archived", message.FailPermission),
			fault("RestrictedAction", "restricted_action", message.FailPermission),
			fault("ChannelNotFound", "channel_not_found", message.FailNotFound),
			fault("ThreadNotFound", "thread_not_found", message.FailNotFound),
			fault("MsgTooLong", "msg_too_long", message.FailInvalidPayload),
			fault("NoText", "no_text", message.FailInvalidPayload),
			fault("InvalidBlocks", "invalid_blocks", message.FailInvalidPayload),
			// Slack documents that part of the operation may have
			// succeeded before these two.
			fault("InternalError", "internal_error", message.FailUnknown),
			fault("FatalError", "fatal_error", message.FailUnknown),
			fault("ServiceUnavailable", "service_unavailable", message.FailTransient),
			fault("RequestTimeout", "request_timeout", message.FailTransient),
			// Slack answered, so nothing was posted; retries are bounded.
			fault("UnknownCode", "brand_new_condition", message.FailTransient),
			{Name: "HTTP500", Fault: fakeapi.Fault{Status: 500}, Class: message.FailUnknown},
			{Name: "HTTP503", Fault: fakeapi.Fault{Status: 503}, Class: message.FailUnknown},
			{Name: "HTTP404WrongBaseURL", Fault: fakeapi.Fault{Status: 404}, Class: message.FailAuth},
			{Name: "HTTP400", Fault: fakeapi.Fault{Status: 400}, Class: message.FailInvalidPayload},
		},
		// & < > escaped, so no <!channel>, <@U…> or masked link is live,
		// link_names off, so no bare @here pings, and mrkdwn off, so *b*
		// is not bold; nothing (parse, blocks) that would render the text
		// another way.
		Inert: func(text string, d fakeapi.Delivery) error {
			escaped := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(text)
			if d.Text != escaped {
				return errors.New("the text is not escaped: " + d.Text)
			}
			for _, k := range []string{"link_names", "mrkdwn"} {
				var on bool
				if raw, ok := d.Args[k]; !ok || json.Unmarshal(raw, &on) != nil || on {
					return errors.New(k + " is not false")
				}
			}
			for _, k := range []string{"parse", "blocks", "attachments"} {
				if _, ok := d.Args[k]; ok {
					return errors.New("the call sets " + k)
				}
			}
			return nil
		},
		PlatformLimit: fakeslack.TextLimit,
	})
}

// interaction is an interactivity form body with payload as its JSON.
func interaction(payload string) []byte {
	return []byte(InteractionPayloadField + "=" + url.QueryEscape(payload))
}
