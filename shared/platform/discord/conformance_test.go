package discord

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/platformtest"
)

// TestConformance runs the contract every chat adapter keeps against the
// fake Discord API.
func TestConformance(t *testing.T) {
	t.Parallel()
	code := func(name, code string, class message.FailureClass) platformtest.FaultCase {
		return platformtest.FaultCase{Name: name, Fault: fakeapi.Fault{Error: code}, Class: class}
	}
	status := func(name string, st int, class message.FailureClass) platformtest.FaultCase {
		return platformtest.FaultCase{Name: name, Fault: fakeapi.Fault{Status: st}, Class: class}
	}
	platformtest.Run(t, platformtest.Harness{
		Adapter: publicKeyAsSecret{Adapter},
		Env: map[string]string{
			SettingPublicKey:     testPublicKey,
			SettingApplicationID: testApp,
			SettingBotToken:      testToken,
		},
		BaseURLSetting: SettingAPIBaseURL,
		Fake: func(rec *fakeapi.Recorder) http.Handler {
			return fakediscord.New(fakediscord.Options{Token: testToken, ApplicationID: testApp, Recorder: rec})
		},
		Sign: func(publicKey string, body []byte, at time.Time) http.Header {
			return fakediscord.Sign(keyFor(publicKey), at, body)
		},
		SecretSetting: SettingPublicKey,
		AuthHeaders:   []string{SignatureHeader, TimestampHeader},
		Features:      platformtest.Features{SignsBody: true, MaxSkew: MaxSkew, Presses: true},
		Samples:       platformtest.Samples{Dir: eventsDir, At: sampleNow, Want: sampleExpectations()},
		Handshakes: []platformtest.Handshake{{
			Name: "Ping", Signed: true,
			Body: []byte(`{"application_id":"1309000000000000001","entitlements":[],"id":"1444357236326400001","token":"fake.1444357236326400001.0.b223239772587f367f68","type":1,"version":1}`),
			Want: platform.Reply{Status: 200, ContentType: "application/json", Body: []byte(`{"type":1}`)},
		}},
		Malformed: malformed(),
		Thread:    guild,
		Faults: []platformtest.FaultCase{
			{Name: "HTTP429", Fault: fakeapi.Fault{Status: 429, RetryAfter: 30 * time.Second}, Class: message.FailRateLimit, RetryAfter: 30 * time.Second},
			// retry_after 1.5 in the body, Retry-After: 2: the longer.
			{Name: "HTTP429Fraction", Fault: fakeapi.Fault{Status: 429, RetryAfter: 1500 * time.Millisecond}, Class: message.FailRateLimit, RetryAfter: 2 * time.Second},
			{Name: "ChannelWriteLimit", Fault: fakeapi.Fault{Error: "20028", RetryAfter: 5 * time.Second}, Class: message.FailRateLimit, RetryAfter: 5 * time.Second},
			{Name: "Slowmode", Fault: fakeapi.Fault{Error: "20016", RetryAfter: 9 * time.Second}, Class: message.FailRateLimit, RetryAfter: 9 * time.Second},
			code("Unauthorized", "40001", message.FailAuth),
			code("InvalidToken", "50014", message.FailAuth),
			code("MissingAccess", "50001", message.FailPermission),
			code("MissingPermissions", "50013", message.FailPermission),
			code("CannotMessageUser", "50007", message.FailPermission),
			code("NonTextChannel", "50008", message.FailPermission),
			code("ArchivedThread", "50083", message.FailPermission),
			code("UnknownChannel", "10003", message.FailNotFound),
			code("UnknownMessage", "10008", message.FailNotFound),
			code("InvalidFormBody", "50035", message.FailInvalidPayload),
			code("EmptyMessage", "50006", message.FailInvalidPayload),
			code("AutoMod", "200000", message.FailInvalidPayload),
			// Discord answered, and refused: nothing was posted.
			code("UnknownCode", "99999", message.FailInvalidPayload),
			status("HTTP500", 500, message.FailUnknown),
			status("HTTP502", 502, message.FailUnknown),
			status("HTTP503", 503, message.FailUnknown),
			status("HTTP401", 401, message.FailAuth),
			status("HTTP403", 403, message.FailPermission),
			status("HTTP404WrongBaseURL", 404, message.FailAuth),
			status("HTTP400", 400, message.FailInvalidPayload),
		},
		// Nothing notifies (allowed_mentions parses nothing, replies ping
		// nobody) and nothing renders: the content shows the text as
		// written, with no markdown left live.
		Inert: func(text string, d fakeapi.Delivery) error {
			var am DiscordAllowedMentions
			if raw, ok := d.Args["allowed_mentions"]; !ok || json.Unmarshal(raw, &am) != nil ||
				!reflect.DeepEqual(am, DiscordAllowedMentions{Parse: []string{}}) || string(raw) != `{"parse":[],"replied_user":false}` {
				return errors.New(`allowed_mentions is not {"parse":[],"replied_user":false}`)
			}
			var content string
			_ = json.Unmarshal(d.Args["content"], &content)
			if agentText := "<!channel> <@U1> <https://x|y> *b* _i_ `c` <b>x</b> &amp; @everyone @here"; text == agentText {
				// Written out once by hand: the URL stays as written.
				const want = `\<!channel\> \<@U1\> \<https://x|y> \*b\* \_i\_ \` + "`c\\`" + ` \<b\>x\</b\> &amp; @everyone @here`
				if content != want {
					return errors.New("content " + content + ", want " + want)
				}
			}
			if view(content) != text {
				return errors.New("Discord shows " + view(content))
			}
			if err := live(content); err != nil {
				return err
			}
			for _, k := range []string{"tts", "embeds", "flags"} {
				if _, ok := d.Args[k]; ok {
					return errors.New("the call sets " + k)
				}
			}
			return nil
		},
		PlatformLimit: PlatformLimit,
	})
}

// publicKeyAsSecret is Adapter with DISCORD_PUBLIC_KEY marked secret, for
// the suite alone: platformtest requires Harness.SecretSetting to be a
// secret of the receive half, and Discord's receive credential is a public
// key, which the adapter keeps out of Secrets Manager (TestPublicKeyIsNot
// Secret). Every other check runs on the adapter itself. It goes once
// platformtest accepts a public verification key.
type publicKeyAsSecret struct{ platform.Adapter }

func (a publicKeyAsSecret) Settings() []platform.Setting {
	out := a.Adapter.Settings()
	for i := range out {
		if out[i].Key == SettingPublicKey {
			out[i].Secret = true
		}
	}
	return out
}

// malformed are signed bodies Parse refuses with ErrMalformed.
func malformed() map[string][]byte {
	cmd := func(extra string) []byte {
		return []byte(`{"application_id":"1309000000000000001","id":"1444357362155520001","type":2` + extra + `}`)
	}
	const whole = `,"channel_id":"1309000000000000200","token":"t","member":{"user":{"id":"1309000000000000042"}}`
	press := func(extra string) []byte {
		return []byte(`{"application_id":"1309000000000000001","id":"1444357739642880001","type":3` + whole + extra + `}`)
	}
	return map[string][]byte{
		"NoType":                       []byte(`{"application_id":"1309000000000000001","id":"1444357362155520001"}`),
		"NoApplication":                []byte(`{"id":"1444357362155520001","type":2}`),
		"IDNotSnowflake":               []byte(`{"application_id":"1309000000000000001","id":"soon","type":1}`),
		"IDZero":                       []byte(`{"application_id":"1309000000000000001","id":"0","type":1}`),
		"TypeNotNumber":                []byte(`{"application_id":"1309000000000000001","id":"1444357362155520001","type":"2"}`),
		"CommandWithoutChannel":        cmd(`,"token":"t","member":{"user":{"id":"1309000000000000042"}},"data":{"name":"ask","type":1}`),
		"CommandWithoutUser":           cmd(`,"token":"t","channel_id":"1309000000000000200","data":{"name":"ask","type":1}`),
		"CommandWithoutToken":          cmd(`,"channel_id":"1309000000000000200","user":{"id":"1309000000000000042"},"data":{"name":"ask","type":1}`),
		"CommandWithoutData":           cmd(whole),
		"OptionNotString":              cmd(whole + `,"data":{"name":"ask","type":1,"options":[{"name":"text","type":3,"value":7}]}`),
		"OptionOfAnotherType":          cmd(whole + `,"data":{"name":"ask","type":1,"options":[{"name":"text","type":4,"value":"7"}]}`),
		"MessageCommandWithoutTarget":  cmd(whole + `,"data":{"name":"Ask the agent","type":3,"target_id":"1444356900000000001"}`),
		"MessageCommandOtherTarget":    cmd(whole + `,"data":{"name":"Ask the agent","type":3,"target_id":"1","resolved":{"messages":{"2":{"id":"2","content":"x"}}}}`),
		"PressWithoutCustomID":         press(`,"data":{"component_type":2},"message":{"id":"1444357400000000001"}`),
		"PressWithoutMessage":          press(`,"data":{"component_type":2,"custom_id":"q1:0:0"}`),
		"PressWithoutData":             press(`,"message":{"id":"1444357400000000001"}`),
		"SelectValuesNotStrings":       press(`,"data":{"component_type":3,"custom_id":"q2:0:s","values":[1,2]},"message":{"id":"1444357400000000001"}`),
		"UserNotAnObject":              cmd(`,"channel_id":"1309000000000000200","token":"t","user":"ada","data":{"name":"ask","type":1}`),
		"ChannelNotAnObject":           cmd(whole + `,"channel":7,"data":{"name":"ask","type":1}`),
		"ResolvedMessagesNotAnObject":  cmd(whole + `,"data":{"name":"Ask the agent","type":3,"target_id":"1","resolved":{"messages":[]}}`),
		"FileOptionNotAnID":            cmd(whole + `,"data":{"name":"ask","type":1,"options":[{"name":"file","type":11,"value":7}]}`),
		"FileOptionOfAnotherType":      cmd(whole + `,"data":{"name":"ask","type":1,"options":[{"name":"file","type":3,"value":"7"}]}`),
		"FileOptionUnresolved":         cmd(whole + `,"data":{"name":"ask","type":1,"options":[{"name":"file","type":11,"value":"7"}],"resolved":{"attachments":{"8":{"id":"8"}}}}`),
		"AttachmentSizeNotANumber":     cmd(whole + `,"data":{"name":"ask","type":1,"options":[{"name":"file","type":11,"value":"7"}],"resolved":{"attachments":{"7":{"id":"7","size":"big"}}}}`),
		"NotAnObject":                  []byte(`["type",1]`),
		"TrailingGarbageAfterTheValue": []byte(`{"application_id":"1309000000000000001","id":"1444357236326400001","type":1} x`),
	}
}

func TestPublicKeyIsNotSecret(t *testing.T) {
	t.Parallel()
	for _, s := range Adapter.Settings() {
		if s.Key == SettingPublicKey && (s.Secret || s.Half != platform.Receive) {
			t.Fatalf("%s: %+v; want a non-secret setting of the receive half: a public key belongs in the template, not Secrets Manager", s.Key, s)
		}
	}
}
