package fakeplatform_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakegooglechat"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketeams"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/discord"
	"github.com/parleyhq/parley/shared/platform/googlechat"
	"github.com/parleyhq/parley/shared/platform/line"
	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/platform/teams"
	"github.com/parleyhq/parley/shared/platform/telegram"
	"github.com/parleyhq/parley/shared/platform/whatsapp"
)

// The test identities of events/README.md.
var composeEnv = map[string]string{
	telegram.SettingWebhookSecret: "parley-telegram-test-secret", telegram.SettingBotToken: "7000000001:AAFakeTokenForParleyTests_0123456789",
	slack.SettingSigningSecret: "8f742231b10e8888abcd99yyyzzz85a5", slack.SettingTeamID: "T0TEAM0001",
	discord.SettingPublicKey: fakediscord.PublicKey, discord.SettingApplicationID: fakediscord.ApplicationID,
	line.SettingChannelSecret: "0f1e2d3c4b5a69788796a5b4c3d2e1f0", line.SettingBotUserID: "Ub0770000000000000000000000000001",
	whatsapp.SettingAppSecret: "4f0c1e2d3b5a69788796a5b4c3d2e1f0", whatsapp.SettingPhoneNumberID: "106540352242922",
	whatsapp.SettingVerifyToken: "parley-whatsapp-verify-token",
	teams.SettingAppID:          faketeams.AppID, teams.SettingTenantID: faketeams.TenantID,
	googlechat.SettingProjectNumber: fakegooglechat.ProjectNumber,
}

// TestSayIsWhatTheReceiverTakes: what the console's composer posts, on
// every platform and chat type it offers, is verified and parsed by the
// platform's own receiver into one message holding the text, of the chat
// type asked (a thread's in a thread; a Slack channel's mention starts
// one). Teams' and Google Chat's tokens are verified against the fakes'
// issuers, fetched.
func TestSayIsWhatTheReceiverTakes(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(fakeplatform.New(fakeplatform.Options{}).Handler())
	t.Cleanup(srv.Close)
	urls := fakeplatform.BaseURLs(srv.URL)
	env := func(k string) string {
		if v, ok := urls[k]; ok {
			return v
		}
		return composeEnv[k]
	}
	s := fakeplatform.Signer{Env: env, FakeRoot: srv.URL}
	now := time.Now()
	for _, a := range registry.Chat() {
		p := a.Platform()
		types := fakeplatform.ChatTypes(p)
		if len(types) == 0 {
			t.Errorf("%s: no chat type to compose in", p)
		}
		for i, ct := range types {
			t.Run(string(p)+"/"+ct, func(t *testing.T) {
				w, err := s.Say(fakeplatform.Said{Platform: p, ChatType: ct, Text: "hello <b>there</b>", At: now, Seq: int64(1000 + i)})
				if err != nil {
					t.Fatal(err)
				}
				r, err := a.NewReceiver(platform.Env(env))
				if err != nil {
					t.Fatal(err)
				}
				req := &platform.Request{Method: http.MethodPost, Header: w.Header, Body: w.Body, Now: now, Oldest: now.Add(-time.Hour)}
				verify := r.Verify
				if cv, ok := r.(platform.ContextVerifier); ok {
					verify = func(req *platform.Request) error { return cv.VerifyContext(context.Background(), req) }
				}
				if err := verify(req); err != nil {
					t.Fatalf("verify: %v", err)
				}
				parsed, err := r.Parse(req)
				if err != nil {
					t.Fatalf("parse: %v", err)
				}
				if len(parsed.Events) != 1 || parsed.Events[0].Kind != message.KindMessage {
					t.Fatalf("parsed %+v, ignored %+v: want one message", parsed.Events, parsed.Ignored)
				}
				ev := parsed.Events[0]
				want := message.ChatPrivate
				if ct != fakeplatform.ChatPrivate {
					want = message.ChatGroup
				}
				threaded := ct == fakeplatform.ChatThread || p == message.Slack && ct == fakeplatform.ChatGroup
				if ev.Text != "hello <b>there</b>" || ev.ChatType != want || threaded != (ev.Thread.Thread != "") {
					t.Errorf("event %q in %+v (%s), want the text in a %s chat", ev.Text, ev.Thread, ev.ChatType, ct)
				}
			})
		}
	}
	if _, err := s.Say(fakeplatform.Said{Platform: message.WhatsApp, ChatType: fakeplatform.ChatGroup, Text: "x", At: now}); err == nil {
		t.Error("a WhatsApp group: want it refused, the samples have none")
	}
}
