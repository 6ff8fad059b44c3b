package main

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeline"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/discord"
	"github.com/parleyhq/parley/shared/platform/line"
	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/platform/telegram"
	"github.com/parleyhq/parley/shared/platform/whatsapp"
)

// A user's own credentials, none of them the demo's.
const (
	ownLineSecret = "aaaabbbbccccddddeeeeffff00001111"
	ownLineBot    = "U1234567890abcdef1234567890abcdef"
)

// TestDemoIdentityOnlyWithDemoCredentials_Finding12 (issue 23, finding
// 12): under make run with one's own LINE channel secret and token but no
// LINE_BOT_USER_ID, the demo bot's id stayed and every webhook of the
// user's bot was refused (403); with one's own WhatsApp credentials but no
// WHATSAPP_PHONE_NUMBER_ID, the demo number stayed and every message was
// acked and ignored. A platform's demo values now apply only while the user
// set none of its settings: with one's own, a missing identity is not
// needed (nothing is scoped, and a notice says so) or make run refuses to
// start, naming the variable. One case per platform with demo values.
func TestDemoIdentityOnlyWithDemoCredentials_Finding12(t *testing.T) {
	t.Parallel()
	cases := []struct {
		platform message.Platform
		own      map[string]string
		// refused is the variable the refusal to start names; "" starts.
		refused string
		// unset is the demo identity that must not apply.
		unset string
	}{
		{message.Telegram, map[string]string{telegram.SettingBotToken: "5550001234:AAUsersOwnTokenNotTheDemoOne_98765"}, telegram.SettingWebhookSecret, telegram.SettingWebhookSecret},
		{message.Slack, map[string]string{slack.SettingSigningSecret: "users-own-signing-secret", slack.SettingBotToken: "xoxb-users-own"}, "", slack.SettingTeamID},
		{message.Discord, map[string]string{discord.SettingPublicKey: strings.Repeat("ab", 32), discord.SettingBotToken: "users-own-discord-token"}, discord.SettingApplicationID, discord.SettingApplicationID},
		{message.LINE, map[string]string{line.SettingChannelSecret: ownLineSecret, line.SettingChannelAccessToken: "users-own-line-token"}, "", line.SettingBotUserID},
		{message.WhatsApp, map[string]string{whatsapp.SettingAppSecret: "users-own-app-secret", whatsapp.SettingVerifyToken: "users-own-verify", whatsapp.SettingAccessToken: "users-own-graph-token"}, whatsapp.SettingPhoneNumberID, whatsapp.SettingPhoneNumberID},
	}
	for _, c := range cases {
		t.Run(string(c.platform), func(t *testing.T) {
			t.Parallel()
			env, notices, err := localEnv(func(k string) string { return c.own[k] }, map[string]string{})
			if c.refused != "" {
				if err == nil || !strings.Contains(err.Error(), c.refused) {
					t.Fatalf("make run starts with %v and no %s (demo value %q): %v", keys(c.own), c.refused, env(c.unset), err)
				}
				return
			}
			if err != nil {
				t.Fatalf("make run refuses %v: %v", keys(c.own), err)
			}
			if v := env(c.unset); v != "" {
				t.Fatalf("the demo %s %q applies with the user's own %v", c.unset, v, keys(c.own))
			}
			if !strings.Contains(strings.Join(notices, "\n"), c.unset) {
				t.Errorf("no notice says %s is unset: %q", c.unset, notices)
			}
			a, _ := registry.Lookup(c.platform)
			if _, err := a.NewReceiver(platform.Env(env)); err != nil {
				t.Fatalf("the receiver does not start: %v", err)
			}
			if _, err := a.NewSender(platform.Env(env), http.DefaultClient); err != nil {
				t.Fatalf("the sender does not start: %v", err)
			}
		})
	}

	// The user's own LINE bot's webhook is taken, not refused for naming
	// another bot than the demo's.
	env, _, err := localEnv(func(k string) string { return cases[3].own[k] }, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := line.Adapter.NewReceiver(platform.Env(env))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	body := []byte(`{"destination":"` + ownLineBot + `","events":[{"type":"message","mode":"active","timestamp":` +
		strconv.FormatInt(now.UnixMilli(), 10) + `,"webhookEventId":"01KOWN000000000000000000AA","deliveryContext":{"isRedelivery":false},` +
		`"source":{"type":"user","userId":"U0000000000000000000000000000ada"},"replyToken":"r","message":{"id":"1","type":"text","quoteToken":"q","text":"hi"}}]}`)
	req := &platform.Request{Method: http.MethodPost, Header: fakeline.Headers(ownLineSecret, body), Body: body, Now: now}
	if err := r.Verify(req); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if p, err := r.Parse(req); err != nil || len(p.Events) != 1 {
		t.Fatalf("the user's own bot's webhook: %+v, %v", p, err)
	}

	// With nothing of the user's, every demo value applies, as before.
	env, _, err = localEnv(func(string) string { return "" }, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range demo {
		if env(k) != v {
			t.Errorf("demo %s = %q, want %q", k, env(k), v)
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
