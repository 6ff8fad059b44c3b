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
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/parleyhq/parley/localstack/console"
	"github.com/parleyhq/parley/localstack/emulator"
	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakegooglechat"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketeams"
	"github.com/parleyhq/parley/localstack/localstate"
	"github.com/parleyhq/parley/localstack/runner"
	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/app"
	"github.com/parleyhq/parley/shared/config"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/operator"
	"github.com/parleyhq/parley/shared/platform"
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
// the demo bot's or workspace's chats on a platform the user configured
// (own: the settings they set): a demo default must never break a user's
// configuration. It returns a notice per dropped source, and adds nothing
// when the user configured any events source themselves.
func demoEvents(vars map[string]string, getenv config.Getenv, own map[message.Platform][]string) []string {
	for _, k := range []string{"PARLEY_EVENTS_SOURCES", resources.SecretEventsSecrets, resources.SecretGitHubWebhookSecret, "PARLEY_GITHUB_TARGET"} {
		if getenv(k) != "" {
			delete(vars, resources.SecretGitHubWebhookSecret)
			return nil
		}
	}
	type src struct {
		Targets []string `json:"targets"`
	}
	sources, secrets := map[string]src{}, map[string]string{}
	var notices []string
	for _, d := range demoSources {
		if set := own[d.platform]; len(set) > 0 {
			notices = append(notices, fmt.Sprintf("demo events source %q dropped: it targets the demo %s chat %s, and %s is your own; set PARLEY_EVENTS_SOURCES to target yours",
				d.name, d.platform, d.target, strings.Join(set, ", ")))
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

// localEnv is make run's settings: the user's environment over local (the
// fakes' URLs, the echo agent, the emulators' resources) and the demo
// values. A chat platform's demo values apply only while the user set none
// of them: its identities (LINE_BOT_USER_ID, WHATSAPP_PHONE_NUMBER_ID…)
// belong to the demo credentials, and with the user's own they would
// refuse or ignore every webhook. With the user's own settings, one the
// platform needs and the user left unset stops make run, named; one it can
// do without (nothing is scoped then) gets a notice. A demo default never
// breaks a user's configuration, and never drops anything silently.
func localEnv(getenv config.Getenv, local map[string]string) (config.Getenv, []string, error) {
	vars := map[string]string{}
	for k, v := range local {
		vars[k] = v
	}
	byPlatform := map[string]bool{}
	// own is, for each platform the user configured, the demo-backed
	// settings they set, and unset those they did not.
	own, unset := map[message.Platform][]string{}, map[message.Platform][]string{}
	for _, a := range registry.Chat() {
		var keys []string
		for _, s := range a.Settings() {
			if _, ok := demo[s.Key]; ok {
				keys = append(keys, s.Key)
				byPlatform[s.Key] = true
			}
		}
		for _, k := range keys {
			if getenv(k) != "" {
				own[a.Platform()] = append(own[a.Platform()], k)
			} else {
				unset[a.Platform()] = append(unset[a.Platform()], k)
			}
		}
		if len(own[a.Platform()]) == 0 {
			for _, k := range keys {
				vars[k] = demo[k]
			}
		}
	}
	for k, v := range demo {
		if !byPlatform[k] {
			vars[k] = v
		}
	}
	notices := demoEvents(vars, getenv, own)
	env := func(k string) string { return cmp.Or(getenv(k), vars[k]) }

	var errs []error
	for _, a := range registry.Chat() {
		p, set := a.Platform(), own[a.Platform()]
		if len(set) == 0 {
			continue
		}
		_, rerr := a.NewReceiver(platform.Env(env))
		_, serr := a.NewSender(platform.Env(env), http.DefaultClient)
		if errors.Is(serr, platform.ErrNotConfigured) {
			var need []string
			for _, s := range a.Settings() {
				if s.Secret && s.Half&platform.Send != 0 && env(s.Key) == "" {
					need = append(need, s.Key)
				}
			}
			serr = fmt.Errorf("it sends nothing without %s", strings.Join(need, " and "))
		}
		if err := errors.Join(rerr, serr); err != nil {
			errs = append(errs, fmt.Errorf("%s: you set %s, so none of the demo %s settings apply; set the rest of yours: %w",
				p, strings.Join(set, ", "), p, err))
			continue
		}
		for _, k := range unset[p] {
			notices = append(notices, fmt.Sprintf("%s is unset: you set %s, so the demo's does not apply (%s)", k, strings.Join(set, ", "), docOf(a, k)))
		}
	}
	return env, notices, errors.Join(errs...)
}

// docOf is what the setting key of a says it is.
func docOf(a platform.Adapter, key string) string {
	for _, s := range a.Settings() {
		if s.Key == key {
			return s.Doc
		}
	}
	return ""
}

// fakeRoot is where the fake platforms are served.
const fakeRoot = "/fake"

// ready is told the runner's address once it serves (tests wait on it).
type ready func(addr string)

// run starts everything and blocks until ctx ends. Once up, it says where
// in local.json beside the log (localstate): parley --local reads it.
func run(ctx context.Context, out io.Writer, getenv config.Getenv, onReady ready) error {
	var state string
	defer func() {
		if state != "" {
			localstate.Remove(state)
		}
	}()
	return serve(ctx, out, getenv, func(s started) {
		state = filepath.Join(filepath.Dir(s.log), filepath.Base(localstate.Path))
		if err := localstate.Write(state, localstate.State{Env: s.env, Log: s.log, Listen: s.addr}); err != nil {
			fmt.Fprintf(out, "note: %s not written (parley --local will not find this run): %v\n", state, err)
			state = ""
		}
		if onReady != nil {
			onReady(s.addr)
		}
	})
}

// started is what a running local stack tells its caller: where it serves,
// the fake platforms, whose deliveries a load run checks, and what reaches
// its emulators and resources, and its log.
type started struct {
	addr string
	fake *fakeplatform.Server
	env  []string
	log  string
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
	here := fakeplatform.BaseURLs(base + fakeRoot)
	here["PARLEY_AGENT_URL"] = base + "/agent/echo"
	for _, kv := range res.Env() {
		k, v, _ := strings.Cut(kv, "=")
		here[k] = v
	}
	env, notices, err := localEnv(getenv, here)
	if err != nil {
		return err
	}
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
	deps := app.Deps{Config: cfg, Log: log, DynamoDB: dynamodb.NewFromConfig(awsCfg), SQS: sqs.NewFromConfig(awsCfg)}.WithObjects(awsCfg)
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
	// The files the samples of events/ attach, for make post.
	fake.ServeSamples()
	agentSecret, err := standardwebhooks.ParseSecret(cfg.Agent.Secret)
	if err != nil {
		return fmt.Errorf("%s: %w", resources.SecretAgentSecret, err)
	}
	local.Mux.Handle("/agent/echo", agent.Echo{Secret: agentSecret, Media: base + "/media"})
	// The fakes, each under /fake/<platform>/, where BaseURLs pointed the
	// adapters; a registry platform without a fake stops make run here.
	for _, a := range registry.Chat() {
		if _, ok := fake.For(a.Platform()); !ok {
			return fmt.Errorf("no fake platform for %s under localstack/fakeplatform", a.Platform())
		}
	}
	local.Mux.Handle(fakeRoot+"/", http.StripPrefix(fakeRoot, fake.Handler()))
	cons, err := newConsole(deps, env, base, logPath, fake, getenv)
	if err != nil {
		return err
	}
	local.Mux.Handle(console.Prefix, cons)
	local.Mux.Handle(strings.TrimSuffix(console.Prefix, "/"), cons)

	srv := &http.Server{Handler: local.Mux, ReadHeaderTimeout: 10 * time.Second}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server stopped", "error", err)
		}
	})
	wg.Go(func() { local.Run(ctx, log) })

	banner(out, base, logPath, cfg, getenv, notices)
	onReady(started{addr: ln.Addr().String(), fake: fake, env: append(stack.Env(), res.Env()...), log: logPath})

	<-ctx.Done()
	fmt.Fprintln(out, "\nstopping…")
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	wg.Wait()
	return stack.Stop()
}

// newConsole is the console at /console: over the operator's view of this
// run (its table, queues and log), the fakes' deliveries, and a signer with
// this run's settings.
func newConsole(deps app.Deps, env config.Getenv, base, logPath string, fake *fakeplatform.Server, getenv config.Getenv) (*console.Console, error) {
	target, err := operator.TargetFromEnv(env, logPath)
	if err != nil {
		return nil, err
	}
	return console.New(console.Options{
		Operator: operator.New(target, deps.DynamoDB, deps.SQS), Recorder: fake.Recorder(), Base: base,
		Signer:      fakeplatform.Signer{Env: env, FakeRoot: base + fakeRoot},
		AllowRemote: getenv("PARLEY_CONSOLE_ALLOW_REMOTE") != "",
	})
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

  console         %[1]s/console/   (talk as a person on any platform, every step of every message)
  webhooks        %[7]s
  agent           %[2]s (it posts later replies to %[1]s/reply, its own messages to %[1]s/send)
  platform APIs   %[1]s%[3]s/<platform> (fakes)
  function logs   %[4]s (JSON)

Post a sample Telegram update, dated now (paste it in another terminal):

  curl -sS %[1]s/telegram -H 'Content-Type: application/json' \
    -H 'X-Telegram-Bot-Api-Secret-Token: %[5]s' \
    --data-binary "$(sed "s/\"date\": [0-9]*/\"date\": $(date +%%s)/" events/telegram/message.json)"

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
