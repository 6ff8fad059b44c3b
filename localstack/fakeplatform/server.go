package fakeplatform

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakegooglechat"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeline"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeslack"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketeams"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketelegram"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakewhatsapp"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/discord"
	"github.com/parleyhq/parley/shared/platform/googlechat"
	"github.com/parleyhq/parley/shared/platform/line"
	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/platform/teams"
	"github.com/parleyhq/parley/shared/platform/telegram"
	"github.com/parleyhq/parley/shared/platform/whatsapp"
)

// Options configure a Server.
type Options struct {
	// TelegramToken is the bot token the Bot API accepts; any other token
	// gets Telegram's 401. Empty refuses every Telegram call.
	TelegramToken string
	// SlackToken is the bot token the Web API accepts; any other gets
	// Slack's invalid_auth. Empty refuses every Slack call.
	SlackToken string
	// DiscordToken is the bot token the Discord API accepts (interaction
	// webhooks need none).
	DiscordToken string
	// LineToken is the channel access token the Messaging API accepts;
	// any other gets LINE's 401.
	LineToken string
	// WhatsAppToken is the access token the Cloud API accepts (any other
	// gets 190), and WhatsAppPhoneNumberID the number it sends from.
	WhatsAppToken, WhatsAppPhoneNumberID string
	// Now stamps deliveries and message ids. Defaults to time.Now.
	Now func() time.Time
	// Out, when set, gets one line per delivered message (see the package
	// doc). Defaults to nil: nothing is printed.
	Out io.Writer
	// PressHint, when set, is printed under each control of a printed
	// question: how to press it.
	PressHint func(d Delivery, c fakeapi.Control) string
}

// The recorder's types, shared by every fake.
type (
	// Delivery is a message a fake platform accepted.
	Delivery = fakeapi.Delivery
	// Action is a chat action a fake platform accepted.
	Action = fakeapi.Action
	// Fault is a failure queued for the next matching send.
	Fault = fakeapi.Fault
)

// fake is how the composite builds one platform's fake.
type fake struct {
	// baseURL is the adapter's setting that points its sender at the API.
	baseURL string
	new     func(opt Options, rec *fakeapi.Recorder) http.Handler
	// more are further URL settings the fake serves, by key, each the
	// path below the fake's root (Teams' token endpoint and issuer).
	more map[string]string
}

// fakes is the fake of every chat platform, by platform.
// TestEveryPlatformHasAFake fails while a registry platform has none.
var fakes = map[message.Platform]fake{
	message.Telegram: {telegram.SettingAPIBaseURL, func(opt Options, rec *fakeapi.Recorder) http.Handler {
		return faketelegram.New(faketelegram.Options{Token: opt.TelegramToken, Recorder: rec})
	}, nil},
	message.Slack: {slack.SettingAPIBaseURL, func(opt Options, rec *fakeapi.Recorder) http.Handler {
		return fakeslack.New(fakeslack.Options{Token: opt.SlackToken, Recorder: rec})
	}, nil},
	message.Discord: {discord.SettingAPIBaseURL, func(opt Options, rec *fakeapi.Recorder) http.Handler {
		return fakediscord.New(fakediscord.Options{Token: opt.DiscordToken, Recorder: rec})
	}, map[string]string{discord.SettingCDNBaseURL: ""}},
	message.LINE: {line.SettingAPIBaseURL, func(opt Options, rec *fakeapi.Recorder) http.Handler {
		return fakeline.New(fakeline.Options{Token: opt.LineToken, Recorder: rec})
	}, map[string]string{line.SettingDataAPIBaseURL: ""}},
	message.WhatsApp: {whatsapp.SettingAPIBaseURL, func(opt Options, rec *fakeapi.Recorder) http.Handler {
		return fakewhatsapp.New(fakewhatsapp.Options{Token: opt.WhatsAppToken, PhoneNumberID: opt.WhatsAppPhoneNumberID, Recorder: rec})
	}, nil},
	// The test identities of events/teams: the fake's Entra knows that
	// app and tenant, and its issuer signs the activities (Sign).
	message.Teams: {teams.SettingServiceURL, func(opt Options, rec *fakeapi.Recorder) http.Handler {
		return faketeams.New(faketeams.Options{Recorder: rec})
	}, map[string]string{teams.SettingLoginURL: faketeams.LoginPath, teams.SettingOpenIDMetadataURL: faketeams.MetadataPath}},
	// The test project of events/googlechat: its service account's
	// tokens come from the fake, and its issuers sign the events.
	message.GoogleChat: {googlechat.SettingAPIBaseURL, func(opt Options, rec *fakeapi.Recorder) http.Handler {
		return fakegooglechat.New(fakegooglechat.Options{Recorder: rec})
	}, map[string]string{
		googlechat.SettingTokenURL: fakegooglechat.TokenPath, googlechat.SettingChatKeysURL: fakegooglechat.ChatKeysPath,
		googlechat.SettingGoogleKeysURL: fakegooglechat.GoogleKeysPath,
	}},
}

// Server is every registry platform's fake, sharing one Recorder: one list
// of deliveries, one fault queue, one printed conversation. It is safe for
// concurrent use.
type Server struct {
	rec     *fakeapi.Recorder
	apis    map[message.Platform]http.Handler
	handler *http.ServeMux
}

// New returns a Server with a fake for every platform of the registry.
func New(opt Options) *Server {
	s := &Server{
		rec:     fakeapi.New(fakeapi.Options{Now: opt.Now, Out: opt.Out, PressHint: opt.PressHint}),
		apis:    map[message.Platform]http.Handler{},
		handler: http.NewServeMux(),
	}
	for _, a := range registry.Chat() {
		p := a.Platform()
		f, ok := fakes[p]
		if !ok {
			continue // For says so; TestEveryPlatformHasAFake fails
		}
		api := f.new(opt, s.rec)
		s.apis[p] = api
		prefix := "/" + string(p)
		s.handler.Handle(prefix+"/", http.StripPrefix(prefix, api))
	}
	return s
}

// Handler serves every platform's fake under /<platform>/ (see the package
// doc), where BaseURLs points the adapters.
func (s *Server) Handler() http.Handler { return s.handler }

// For is the fake API of p, served at its own root.
func (s *Server) For(p message.Platform) (http.Handler, bool) {
	api, ok := s.apis[p]
	return api, ok
}

// BaseURLs points every registry platform's adapter at its fake under
// root, where Handler is served: its API base URL setting (by key) is
// root + "/" + platform.
func BaseURLs(root string) map[string]string {
	out := map[string]string{}
	for _, a := range registry.Chat() {
		if f, ok := fakes[a.Platform()]; ok {
			out[f.baseURL] = root + "/" + string(a.Platform())
			for k, path := range f.more {
				out[k] = root + "/" + string(a.Platform()) + path
			}
		}
	}
	return out
}

// Recorder is the recorder every fake of s shares.
func (s *Server) Recorder() *fakeapi.Recorder { return s.rec }

// Delivered returns a copy of every delivered message, in acceptance order.
func (s *Server) Delivered() []Delivery { return s.rec.Delivered() }

// Actions returns a copy of every accepted chat action.
func (s *Server) Actions() []Action { return s.rec.Actions() }

// Calls is the number of send attempts received, failed ones included.
func (s *Server) Calls() int { return s.rec.Calls() }

// Inject queues f for the next matching send(s).
func (s *Server) Inject(f Fault) { s.rec.Inject(f) }

// WaitFor blocks until at least n messages were delivered, and returns them
// all. When ctx ends first it returns what was delivered and ctx's error.
func (s *Server) WaitFor(ctx context.Context, n int) ([]Delivery, error) {
	return s.rec.WaitFor(ctx, n)
}

// SignSlack returns the headers Slack sends with a request made at ts
// (fakeslack.Sign): the v0 signature and the body's Content-Type.
func SignSlack(secret string, ts time.Time, body []byte) http.Header {
	return fakeslack.Sign(secret, ts, body)
}

// The timestamps of the platforms that sign none Parley checks: Telegram's
// message dates (seconds), LINE's event timestamps (milliseconds),
// WhatsApp's message and status timestamps (seconds, as strings).
var (
	telegramDate  = regexp.MustCompile(`"date"(\s*):(\s*)-?\d+`)
	lineTimestamp = regexp.MustCompile(`"timestamp"(\s*):(\s*)-?\d+`)
	waTimestamp   = regexp.MustCompile(`"timestamp"(\s*):(\s*)"\d*"`)
)

// Dated is a sample webhook body of platform as the platform would send it
// at now: every Telegram date, LINE timestamp or WhatsApp timestamp set to
// now, the rest byte for byte. Parley ignores an event of those platforms
// whose own time is past the dedupe window (a replay), and the samples
// under events/ are dated 2025-11-29.
func Dated(p message.Platform, body []byte, now time.Time) []byte {
	switch p {
	case message.Telegram:
		return telegramDate.ReplaceAll(body, []byte(`"date"${1}:${2}`+strconv.FormatInt(now.Unix(), 10)))
	case message.LINE:
		return lineTimestamp.ReplaceAll(body, []byte(`"timestamp"${1}:${2}`+strconv.FormatInt(now.UnixMilli(), 10)))
	case message.WhatsApp:
		return waTimestamp.ReplaceAll(body, []byte(`"timestamp"${1}:${2}"`+strconv.FormatInt(now.Unix(), 10)+`"`))
	}
	return body
}

// TelegramHeaders returns the headers Telegram sends with a webhook update
// when setWebhook was given secret (faketelegram.Headers).
func TelegramHeaders(secret string) http.Header { return faketelegram.Headers(secret) }
