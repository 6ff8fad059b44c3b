// Package localtest starts Parley as make run does, for a test: every
// function (runner) on a fresh table and queue pair on the emulators, the
// echo agent and every platform's fake over real HTTP, with the test
// identities of events/README.md, its JSON log in a file, and the local
// state parley --local reads. Import it only from _test files.
package localtest

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakegooglechat"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketeams"
	"github.com/parleyhq/parley/localstack/localstate"
	"github.com/parleyhq/parley/localstack/runner"
	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/app"
	"github.com/parleyhq/parley/shared/config"
	"github.com/parleyhq/parley/shared/platform/discord"
	"github.com/parleyhq/parley/shared/platform/googlechat"
	"github.com/parleyhq/parley/shared/platform/line"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/platform/teams"
	"github.com/parleyhq/parley/shared/platform/telegram"
	"github.com/parleyhq/parley/shared/platform/whatsapp"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// The test identities of events/README.md.
const (
	TelegramToken  = "7000000001:AAFakeTokenForParleyTests_0123456789"
	TelegramSecret = "parley-telegram-test-secret"
	SlackToken     = "xoxb-parley-test"
	LineToken      = "parley-line-test-channel-access-token"
	WhatsAppToken  = "EAAParleyFakeWhatsAppAccessTokenForTests0123456789"
	WhatsAppPhone  = "106540352242922"
	agentSecret    = "parley-agent-test-secret"
)

// Stack is a running local Parley.
type Stack struct {
	Env  *emulatortest.Env
	Fake *fakeplatform.Server
	// URL is the runner's: its webhooks, and what a test mounts on Mux.
	URL string
	Mux *http.ServeMux
	// Vars are its settings; Deps what its functions were built from.
	Vars map[string]string
	Deps app.Deps
	// Log is its JSON log file, State the local state that names it.
	Log, State string
	// Signer signs webhooks as the platforms do, for its fakes.
	Signer fakeplatform.Signer
}

// Options tune Start.
type Options struct {
	// Env overrides settings.
	Env map[string]string
}

// Start starts a stack, stopped at the test's end.
func Start(t testing.TB, opt Options) *Stack {
	t.Helper()
	env := emulatortest.New(t)
	s := &Stack{Env: env}
	s.Fake = fakeplatform.New(fakeplatform.Options{TelegramToken: TelegramToken, SlackToken: SlackToken, DiscordToken: fakediscord.BotToken,
		LineToken: LineToken, WhatsAppToken: WhatsAppToken, WhatsAppPhoneNumberID: WhatsAppPhone})
	s.Mux = http.NewServeMux()
	srv := httptest.NewServer(s.Mux)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	secret, err := standardwebhooks.ParseSecret(agentSecret)
	if err != nil {
		t.Fatal(err)
	}
	s.Mux.Handle("/agent/echo", agent.Echo{Secret: secret})
	s.Mux.Handle("/fake/", http.StripPrefix("/fake", s.Fake.Handler()))
	s.Vars = map[string]string{
		telegram.SettingBotToken: TelegramToken, telegram.SettingWebhookSecret: TelegramSecret,
		slack.SettingSigningSecret: "8f742231b10e8888abcd99yyyzzz85a5", slack.SettingBotToken: SlackToken, slack.SettingTeamID: "T0TEAM0001",
		discord.SettingPublicKey: fakediscord.PublicKey, discord.SettingApplicationID: fakediscord.ApplicationID, discord.SettingBotToken: fakediscord.BotToken,
		line.SettingChannelSecret: "0f1e2d3c4b5a69788796a5b4c3d2e1f0", line.SettingChannelAccessToken: LineToken,
		line.SettingBotUserID:     "Ub0770000000000000000000000000001",
		whatsapp.SettingAppSecret: "4f0c1e2d3b5a69788796a5b4c3d2e1f0", whatsapp.SettingVerifyToken: "parley-whatsapp-verify-token",
		whatsapp.SettingAccessToken: WhatsAppToken, whatsapp.SettingPhoneNumberID: WhatsAppPhone,
		teams.SettingAppID: faketeams.AppID, teams.SettingTenantID: faketeams.TenantID, teams.SettingAppPassword: faketeams.Password,
		googlechat.SettingProjectNumber: fakegooglechat.ProjectNumber, googlechat.SettingServiceAccount: fakegooglechat.ServiceAccountJSON("https://oauth2.googleapis.com/token"),
		resources.SecretAgentSecret: agentSecret, "PARLEY_AGENT_URL": s.URL + "/agent/echo", "PARLEY_BUBBLE_DELAY": "300ms", "PARLEY_SEND_TIMEOUT": "2s",
	}
	for _, kv := range env.Resources.Env() {
		k, v, _ := strings.Cut(kv, "=")
		s.Vars[k] = v
	}
	for k, v := range fakeplatform.BaseURLs(s.URL + "/fake") {
		s.Vars[k] = v
	}
	for k, v := range opt.Env {
		s.Vars[k] = v
	}
	getenv := func(k string) string { return s.Vars[k] }
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s.Log = filepath.Join(dir, "parley-local.log")
	logFile, err := os.Create(s.Log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		logFile.Close()
		if t.Failed() {
			if b, err := os.ReadFile(s.Log); err == nil {
				t.Logf("function logs:\n%s", b)
			}
		}
	})
	s.Deps = app.Deps{Config: cfg, Log: slog.New(slog.NewJSONHandler(logFile, nil)), DynamoDB: env.DynamoDB, SQS: env.SQS}.WithObjects(env.AWS)
	local, err := runner.New(s.Deps)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range local.Pollers {
		p.WaitTime = time.Second
	}
	s.Mux.Handle("/", local.Mux)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { local.Run(ctx, s.Deps.Log); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	s.Signer = fakeplatform.Signer{Env: getenv, FakeRoot: s.URL + "/fake"}

	// What make run writes: the emulators' endpoints and the resources.
	var stEnv []string
	if env.Stack != nil {
		stEnv = env.Stack.Env()
	}
	s.State = filepath.Join(dir, "local.json")
	if err := localstate.Write(s.State, localstate.State{Env: append(stEnv, env.Resources.Env()...), Log: s.Log, Listen: srv.Listener.Addr().String()}); err != nil {
		t.Fatal(err)
	}
	return s
}

// Getenv reads the stack's settings.
func (s *Stack) Getenv(k string) string { return s.Vars[k] }
