package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/parleyhq/parley/localstack/emulator"
	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakegooglechat"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketeams"
	"github.com/parleyhq/parley/localstack/runner"
	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/app"
	"github.com/parleyhq/parley/shared/awsjson"
	"github.com/parleyhq/parley/shared/config"
	"github.com/parleyhq/parley/shared/ddb"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/discord"
	"github.com/parleyhq/parley/shared/platform/events"
	"github.com/parleyhq/parley/shared/platform/googlechat"
	"github.com/parleyhq/parley/shared/platform/line"
	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/platform/teams"
	"github.com/parleyhq/parley/shared/platform/telegram"
	"github.com/parleyhq/parley/shared/platform/whatsapp"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// Local demo values, used when the environment leaves them unset. They are
// the test identities documented in events/README.md, so the samples there
// post as they are.
var demo = map[string]string{
	telegram.SettingBotToken:            "7000000001:AAFakeTokenForParleyTests_0123456789",
	telegram.SettingWebhookSecret:       "parley-telegram-test-secret",
	slack.SettingSigningSecret:          "8f742231b10e8888abcd99yyyzzz85a5",
	slack.SettingBotToken:               "xoxb-parley-local",
	"SLACK_TEAM_ID":                     "T0TEAM0001",
	resources.SecretAgentSecret:         "parley-local-agent-secret",
	resources.SecretGitHubWebhookSecret: demoGitHubSecret,
	"PARLEY_BUBBLE_DELAY":               "1200ms",
	discord.SettingPublicKey:            fakediscord.PublicKey,
	discord.SettingApplicationID:        fakediscord.ApplicationID,
	discord.SettingBotToken:             fakediscord.BotToken,
	line.SettingChannelSecret:           demoLineSecret,
	line.SettingChannelAccessToken:      "parley-line-test-channel-access-token",
	line.SettingBotUserID:               demoLineBot,
	whatsapp.SettingAppSecret:           demoWhatsAppSecret,
	whatsapp.SettingVerifyToken:         "parley-whatsapp-verify-token",
	whatsapp.SettingAccessToken:         "EAAParleyFakeWhatsAppAccessTokenForTests0123456789",
	whatsapp.SettingPhoneNumberID:       "106540352242922",
	teams.SettingAppID:                  faketeams.AppID,
	teams.SettingTenantID:               faketeams.TenantID,
	teams.SettingAppPassword:            faketeams.Password,
	googlechat.SettingProjectNumber:     fakegooglechat.ProjectNumber,
	// Its token_uri is replaced by the fake's (GOOGLECHAT_OAUTH_URL).
	googlechat.SettingServiceAccount: fakegooglechat.ServiceAccountJSON("https://oauth2.googleapis.com/token"),
}

// The LINE and WhatsApp test identities of events/README.md.
const (
	demoLineSecret     = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
	demoLineBot        = "Ub0770000000000000000000000000001"
	demoWhatsAppSecret = "4f0c1e2d3b5a69788796a5b4c3d2e1f0"
)

// The demo events sources: the senders of the samples under events/events/,
// each reaching the sample chats of the demo bot or workspace, all signing
// with the test secret.
const (
	demoEventsSecret = "whsec_cGFybGV5LWV2ZW50cy10ZXN0LWtleS0wMDAx"
	demoGitHubSecret = "parley-github-test-secret"
)

var demoSources = []struct {
	name, target string
	platform     message.Platform
}{
	{"alertmanager", "telegram:7000000001:-1001000000001:*", message.Telegram},
	{"cron", "telegram:7000000001:42", message.Telegram},
	{"ci", "slack:T0TEAM0001:C0CHAN0001:*", message.Slack},
	// GitHub deliveries go to the sample forum topic.
	{events.SourceGitHub, "telegram:7000000001:-1001000000002:77", message.Telegram},
}

// demoEvents adds the demo events sources to vars, except those that name
// the demo bot's or workspace's chats when the user brought their own bot or
// workspace: a demo default must never break a user's configuration. It
// returns a notice per dropped source, and adds nothing when the user
// configured any events source themselves.
func demoEvents(vars map[string]string, getenv config.Getenv) []string {
	for _, k := range []string{"PARLEY_EVENTS_SOURCES", resources.SecretEventsSecrets, resources.SecretGitHubWebhookSecret, "PARLEY_GITHUB_TARGET"} {
		if getenv(k) != "" {
			delete(vars, resources.SecretGitHubWebhookSecret)
			return nil
		}
	}
	own := map[message.Platform]string{}
	if getenv(telegram.SettingBotToken) != "" {
		own[message.Telegram] = "TELEGRAM_BOT_TOKEN"
	}
	if getenv(slack.SettingBotToken) != "" {
		own[message.Slack] = "SLACK_BOT_TOKEN"
		if getenv("SLACK_TEAM_ID") == "" {
			delete(vars, "SLACK_TEAM_ID")
		}
	}
	type src struct {
		Targets []string `json:"targets"`
	}
	sources, secrets := map[string]src{}, map[string]string{}
	var notices []string
	for _, d := range demoSources {
		if v, ok := own[d.platform]; ok {
			notices = append(notices, fmt.Sprintf("demo events source %q dropped: it targets the demo %s chat %s, and %s is your own; set PARLEY_EVENTS_SOURCES to target yours",
				d.name, d.platform, d.target, v))
			continue
		}
		if d.name == events.SourceGitHub {
			vars["PARLEY_GITHUB_TARGET"] = d.target
			continue
		}
		sources[d.name] = src{Targets: []string{d.target}}
		secrets[d.name] = demoEventsSecret
	}
	if _, ok := vars["PARLEY_GITHUB_TARGET"]; !ok {
		delete(vars, resources.SecretGitHubWebhookSecret)
	}
	if len(sources) > 0 {
		b, _ := json.Marshal(sources)
		vars["PARLEY_EVENTS_SOURCES"] = string(b)
		b, _ = json.Marshal(secrets)
		vars[resources.SecretEventsSecrets] = string(b)
	}
	return notices
}

// fakeRoot is where the fake platforms are served.
const fakeRoot = "/fake"

// ready is told the runner's address once it serves (tests wait on it).
type ready func(addr string)

// run starts everything and blocks until ctx ends.
func run(ctx context.Context, out io.Writer, getenv config.Getenv, onReady ready) error {
	return serve(ctx, out, getenv, func(s started) {
		if onReady != nil {
			onReady(s.addr)
		}
	})
}

// started is what a running local stack tells its caller: where it serves,
// and the fake platforms, whose deliveries a load run checks.
type started struct {
	addr string
	fake *fakeplatform.Server
}

// serve starts everything, tells onReady, and blocks until ctx ends.
func serve(ctx context.Context, out io.Writer, getenv config.Getenv, onReady func(started)) error {
	listen := cmp.Or(getenv("PARLEY_LISTEN"), "127.0.0.1:8787")
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listen on %s (set PARLEY_LISTEN to use another address): %w", listen, err)
	}
	base := "http://" + ln.Addr().String()

	fmt.Fprintln(out, "starting DynamoDB Local and fauxqs…")
	stack, err := emulator.Start(ctx, emulator.Options{})
	if err != nil {
		ln.Close()
		return fmt.Errorf("start the emulators (did `make setup` run?): %w", err)
	}
	defer stack.Stop()
	if err := stack.Setenv(); err != nil {
		return err
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return fmt.Errorf("AWS config: %w", err)
	}
	res, err := emulator.Provision(ctx, awsCfg, "parley-local")
	if err != nil {
		return fmt.Errorf("create the table and queues: %w", err)
	}

	// Every registry platform's adapter at its fake, under /fake/<platform>.
	vars := fakeplatform.BaseURLs(base + fakeRoot)
	vars["PARLEY_AGENT_URL"] = base + "/agent/echo"
	for k, v := range demo {
		vars[k] = v
	}
	if getenv(teams.SettingAppID) != "" {
		// A Teams app of the user's own: the demo app's tenant and
		// password would only mix with it.
		delete(vars, teams.SettingTenantID)
		delete(vars, teams.SettingAppPassword)
	}
	if getenv(googlechat.SettingProjectNumber) != "" {
		// A Chat app of the user's own: not the demo service account.
		delete(vars, googlechat.SettingServiceAccount)
	}
	notices := demoEvents(vars, getenv)
	for _, kv := range res.Env() {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	env := func(k string) string { return cmp.Or(getenv(k), vars[k]) }
	cfg, err := config.FromEnv(env)
	if err != nil {
		return err
	}

	logPath, logFile, err := openLog(getenv)
	if err != nil {
		return err
	}
	defer logFile.Close()
	log := slog.New(slog.NewJSONHandler(logFile, &slog.HandlerOptions{Level: cfg.LogLevel}))
	deps := app.Deps{Config: cfg, Log: log, DynamoDB: ddb.New(awsCfg), SQS: awsjson.New(awsCfg, awsjson.SQS)}
	local, err := runner.New(deps)
	if err != nil {
		return err
	}

	fake := fakeplatform.New(fakeplatform.Options{
		TelegramToken: cfg.Platforms(telegram.SettingBotToken), SlackToken: cfg.Platforms(slack.SettingBotToken),
		DiscordToken: cfg.Platforms(discord.SettingBotToken), LineToken: cfg.Platforms(line.SettingChannelAccessToken),
		WhatsAppToken: cfg.Platforms(whatsapp.SettingAccessToken), WhatsAppPhoneNumberID: cfg.Platforms(whatsapp.SettingPhoneNumberID),
		Out:       out,
		PressHint: pressHint,
	})
	agentSecret, err := standardwebhooks.ParseSecret(cfg.Agent.Secret)
	if err != nil {
		return fmt.Errorf("%s: %w", resources.SecretAgentSecret, err)
	}
	local.Mux.Handle("/agent/echo", agent.Echo{Secret: agentSecret})
	// The fakes, each under /fake/<platform>/, where BaseURLs pointed the
	// adapters; a registry platform without a fake stops make run here.
	for _, a := range registry.Chat() {
		if _, ok := fake.For(a.Platform()); !ok {
			return fmt.Errorf("no fake platform for %s under localstack/fakeplatform", a.Platform())
		}
	}
	local.Mux.Handle(fakeRoot+"/", http.StripPrefix(fakeRoot, fake.Handler()))

	srv := &http.Server{Handler: local.Mux, ReadHeaderTimeout: 10 * time.Second}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server stopped", "error", err)
		}
	})
	wg.Go(func() { local.Run(ctx, log) })

	banner(out, base, logPath, cfg, getenv, notices)
	onReady(started{addr: ln.Addr().String(), fake: fake})

	<-ctx.Done()
	fmt.Fprintln(out, "\nstopping…")
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	wg.Wait()
	return stack.Stop()
}

func openLog(getenv config.Getenv) (string, *os.File, error) {
	path := cmp.Or(getenv("PARLEY_LOCAL_LOG"), filepath.Join(".parley", "parley-local.log"))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return "", nil, fmt.Errorf("open the log: %w", err)
	}
	return path, f, nil
}

func banner(out io.Writer, base, logPath string, cfg config.Config, getenv config.Getenv, notices []string) {
	slackBody := "events/slack/message-im.json"
	// A secret the user set is theirs: never printed.
	hookSecret := demo[telegram.SettingWebhookSecret]
	if getenv(telegram.SettingWebhookSecret) != "" {
		hookSecret = "<your TELEGRAM_WEBHOOK_SECRET>"
	}
	var hooks []string
	for _, a := range registry.Chat() {
		hooks = append(hooks, base+"/"+string(a.Platform()))
	}
	hooks = append(hooks, base+"/"+resources.Events.Name)
	fmt.Fprintf(out, `
Parley is running locally.

  webhooks        %[7]s
  agent           %[2]s (it posts later replies to %[1]s/reply, its own messages to %[1]s/send)
  platform APIs   %[1]s%[3]s/<platform> (fakes)
  function logs   %[4]s (JSON)

Post a sample Telegram update (paste it in another terminal):

  curl -sS %[1]s/telegram -H 'Content-Type: application/json' \
    -H 'X-Telegram-Bot-Api-Secret-Token: %[5]s' \
    --data-binary @events/telegram/message.json

Post it twice: the second answer says "duplicate" and nothing more is sent.
Slack and proactive events carry signatures with a 5-minute window; let Parley
sign one for you (make post FILE=… does the same):

  go run ./localstack/cmd/parley-local post %[6]s
  go run ./localstack/cmd/parley-local post events/events/alert.json

Delivered bubbles appear below, with the time since the previous one. Ctrl-C stops everything.

`, base, cfg.Agent.URL, fakeRoot, logPath, hookSecret, slackBody, strings.Join(hooks, "  "))
	for _, n := range notices {
		fmt.Fprintln(out, "note:", n)
	}
	if len(notices) > 0 {
		fmt.Fprintln(out)
	}
}
