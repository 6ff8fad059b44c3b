package runner_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/syncbuf"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/parleyhq/parley/localstack/awsfault"
	"github.com/parleyhq/parley/localstack/callcount"
	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakegooglechat"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketeams"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketelegram"
	"github.com/parleyhq/parley/localstack/runner"
	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/app"
	"github.com/parleyhq/parley/shared/config"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/platform/discord"
	"github.com/parleyhq/parley/shared/platform/googlechat"
	"github.com/parleyhq/parley/shared/platform/line"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/platform/teams"
	"github.com/parleyhq/parley/shared/platform/telegram"
	"github.com/parleyhq/parley/shared/platform/whatsapp"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/standardwebhooks"
	"github.com/parleyhq/parley/shared/store/dynamostore"
	"github.com/parleyhq/parley/shared/urlfetch"
)

// Test identities: the values events/README.md documents for the samples.
const (
	tgToken       = "7000000001:AAFakeTokenForParleyTests_0123456789"
	tgBotID       = "7000000001"
	tgSecret      = "parley-telegram-test-secret"
	slackSecret   = "8f742231b10e8888abcd99yyyzzz85a5"
	slackToken    = "xoxb-parley-test"
	agentSecret   = "parley-agent-test-secret"
	eventsSecret  = "whsec_cGFybGV5LWV2ZW50cy10ZXN0LWtleS0wMDAx"
	quietInterval = 1500 * time.Millisecond
	lineSecret    = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
	lineToken     = "parley-line-test-channel-access-token"
	lineBot       = "Ub0770000000000000000000000000001"
	waSecret      = "4f0c1e2d3b5a69788796a5b4c3d2e1f0"
	waVerify      = "parley-whatsapp-verify-token"
	waToken       = "EAAParleyFakeWhatsAppAccessTokenForTests0123456789"
	waPhone       = "106540352242922"
)

// clock is real time plus an offset tests can move forward, shared by every
// function of one harness (as Lambda functions share the wall clock).
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
}

// countingAgent is the echo agent behind a real HTTP server, recording each
// call: its turn id and, per thread, the order texts arrived in.
type countingAgent struct {
	echo agent.Echo
	mu   sync.Mutex
	// turns counts calls per turn id.
	turns map[string]int
	// order lists texts per thread key, in arrival order.
	order map[string][]string
	// fail, when set, answers instead of the echo agent.
	fail func(req agent.TurnRequest) (status int, ok bool)
	// answer, when set, answers with an envelope instead of the echo
	// agent.
	answer func(req agent.TurnRequest) (envelope string, ok bool)
	// stream, when set, answers with a streamed reply of these lines
	// (agent.StreamType) instead of the echo agent; abort after them cuts
	// the connection before the stream ends.
	stream func(req agent.TurnRequest) (lines []string, abort bool, ok bool)
	// streamPause is the pause after each streamed line; 50 ms unless set.
	streamPause time.Duration
	// answers lists the answers to questions the agent got, in order.
	answers []agent.Answer
	// reqs lists every request, in arrival order.
	reqs []agent.TurnRequest
}

func (a *countingAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req agent.TurnRequest
	_ = json.Unmarshal(body, &req)
	a.mu.Lock()
	a.turns[req.TurnID]++
	a.order[req.ThreadKey] = append(a.order[req.ThreadKey], req.Event.Text)
	a.reqs = append(a.reqs, req)
	if req.Answer != nil {
		a.answers = append(a.answers, *req.Answer)
	}
	fail, answer, stream, pause := a.fail, a.answer, a.stream, cmp.Or(a.streamPause, 50*time.Millisecond)
	a.mu.Unlock()
	if stream != nil {
		if lines, abort, ok := stream(req); ok {
			w.Header().Set("Content-Type", agent.StreamType)
			for _, l := range lines {
				_, _ = io.WriteString(w, l+"\n")
				w.(http.Flusher).Flush()
				time.Sleep(pause)
			}
			if abort {
				panic(http.ErrAbortHandler) // the connection breaks off mid-stream
			}
			return
		}
	}
	if fail != nil {
		if status, ok := fail(req); ok {
			w.WriteHeader(status)
			return
		}
	}
	if answer != nil {
		if env, ok := answer(req); ok {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, env)
			return
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	a.echo.ServeHTTP(w, r)
}

func (a *countingAgent) calls() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, c := range a.turns {
		n += c
	}
	return n
}

func (a *countingAgent) gotAnswers() []agent.Answer {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]agent.Answer(nil), a.answers...)
}

// requests is every request of threadKey the agent got, in order.
func (a *countingAgent) requests(threadKey string) []agent.TurnRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []agent.TurnRequest
	for _, r := range a.reqs {
		if r.ThreadKey == threadKey {
			out = append(out, r)
		}
	}
	return out
}

func (a *countingAgent) texts(threadKey string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.order[threadKey]...)
}

// logBuffer collects the functions' JSON log lines; a failing test prints them.
type logBuffer struct{ syncbuf.Buffer }

// lines returns the log records whose fields include every key=value given.
func (l *logBuffer) lines(kv ...string) []map[string]any {
	var out []map[string]any
	for _, line := range l.Lines() {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		ok := true
		for i := 0; i+1 < len(kv); i += 2 {
			ok = ok && fmt.Sprint(rec[kv[i]]) == kv[i+1]
		}
		if ok {
			out = append(out, rec)
		}
	}
	return out
}

type harness struct {
	t      testing.TB
	env    *emulatortest.Env
	fake   *fakeplatform.Server
	agent  *countingAgent
	url    string // the runner's HTTP server
	calls  *callcount.Counter
	faults *awsfault.Injector
	clock  *clock
	store  *dynamostore.Store
	logs   *logBuffer
	cfg    config.Config
	// tgAPI is the fake Bot API's root, where Telegram acts on a
	// webhook's answer.
	tgAPI string
	// release starts the pollers held back by options.
	release func()
	// lost records the conditional writes whose answer was lost, with
	// options.lostAnswers.
	lost *lostWrites
	// durations times each function's invocations, with options.timed.
	durations *durations
	// turns is the turn function's poller, which counts its invocations.
	turns *runner.Poller
}

type options struct {
	// env overrides configuration variables.
	env map[string]string
	// holdDelivery starts without the delivery poller; release starts it.
	holdDelivery bool
	// lostAnswers loses the first answer of every conditional DynamoDB
	// write after DynamoDB applied it, so the SDK retries each (see
	// lostWrites).
	lostAnswers bool
	// timed times every invocation of each function (durations).
	timed bool
	// fetch bounds delivery's fetches of agents' media URLs (app.Deps.Fetch).
	fetch urlfetch.Options
}

// start runs every function of Parley, wired exactly as make run wires them
// (runner.New → app constructors), on a fresh table and queue pair, against a
// fake platform and the echo agent over real HTTP. SDK calls pass through a
// fault injector and a call counter.
func start(t testing.TB, opt options) *harness {
	t.Helper()
	env := emulatortest.New(t)
	h := &harness{t: t, env: env, clock: &clock{}, logs: &logBuffer{}, faults: awsfault.New()}

	h.fake = fakeplatform.New(fakeplatform.Options{
		TelegramToken: tgToken, SlackToken: slackToken, DiscordToken: fakediscord.BotToken, LineToken: lineToken,
		WhatsAppToken: waToken, WhatsAppPhoneNumberID: waPhone,
	})
	fakeSrv := httptest.NewServer(h.fake.Handler())
	t.Cleanup(fakeSrv.Close)

	secret, err := standardwebhooks.ParseSecret(agentSecret)
	if err != nil {
		t.Fatal(err)
	}
	h.agent = &countingAgent{echo: agent.Echo{Secret: secret, Now: h.clock.Now}, turns: map[string]int{}, order: map[string][]string{}}
	agentSrv := httptest.NewServer(h.agent)
	t.Cleanup(agentSrv.Close)

	vars := map[string]string{
		resources.EnvTable:               env.Resources.Table,
		resources.EnvInboundQueueURL:     env.Resources.InboundURL,
		resources.EnvOutboundQueueURL:    env.Resources.OutboundURL,
		resources.EnvInboundDLQURL:       env.Resources.InboundDLQURL,
		resources.EnvOutboundDLQURL:      env.Resources.OutboundDLQURL,
		telegram.SettingBotToken:         tgToken,
		telegram.SettingWebhookSecret:    tgSecret,
		slack.SettingSigningSecret:       slackSecret,
		slack.SettingBotToken:            slackToken,
		discord.SettingPublicKey:         fakediscord.PublicKey,
		discord.SettingApplicationID:     fakediscord.ApplicationID,
		discord.SettingBotToken:          fakediscord.BotToken,
		line.SettingChannelSecret:        lineSecret,
		line.SettingChannelAccessToken:   lineToken,
		line.SettingBotUserID:            lineBot,
		whatsapp.SettingAppSecret:        waSecret,
		whatsapp.SettingVerifyToken:      waVerify,
		whatsapp.SettingAccessToken:      waToken,
		whatsapp.SettingPhoneNumberID:    waPhone,
		teams.SettingAppID:               faketeams.AppID,
		teams.SettingTenantID:            faketeams.TenantID,
		teams.SettingAppPassword:         faketeams.Password,
		googlechat.SettingProjectNumber:  fakegooglechat.ProjectNumber,
		googlechat.SettingServiceAccount: fakegooglechat.ServiceAccountJSON("https://oauth2.googleapis.com/token"),
		resources.SecretAgentSecret:      agentSecret,
		resources.SecretEventsSecrets:    `{"cron":"` + eventsSecret + `"}`,
		"PARLEY_EVENTS_SOURCES":          `{"cron":{"targets":["telegram:` + tgBotID + `:*","slack:T0TEAM0001:*"]}}`,
		"SLACK_TEAM_ID":                  "T0TEAM0001",
		"PARLEY_AGENT_URL":               agentSrv.URL,
		"PARLEY_AGENT_TIMEOUT":           "5s",
		"PARLEY_BUBBLE_DELAY":            "1ms",
		"PARLEY_SEND_TIMEOUT":            "2s",
		"PARLEY_LOG_LEVEL":               "debug",
		resources.EnvMediaBucket:         env.Resources.MediaBucket,
		"PARLEY_MEDIA_PATH_STYLE":        "true",
	}
	// Every platform's adapter at its fake, as make run points them.
	for k, v := range fakeplatform.BaseURLs(fakeSrv.URL) {
		vars[k] = v
	}
	h.tgAPI = vars[telegram.SettingAPIBaseURL]
	for k, v := range opt.env {
		vars[k] = v
	}
	h.cfg, err = config.FromEnv(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatalf("config: %v", err)
	}

	if opt.lostAnswers {
		h.lost = &lostWrites{seen: map[string]int{}}
		for _, op := range []string{"PutItem", "UpdateItem", "DeleteItem"} {
			h.faults.Add(awsfault.Fault{Op: "DynamoDB." + op, LostAnswer: true, Times: 1 << 30,
				Match: func(in any) bool { return writeLabel(in) != "" }, OnFire: h.lost.add})
		}
	}
	awsCfg := h.faults.Attach(env.AWS)
	awsCfg, h.calls = callcount.Attach(awsCfg)
	deps := app.Deps{
		Config:   h.cfg,
		Log:      slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		DynamoDB: dynamodb.NewFromConfig(awsCfg),
		SQS:      sqs.NewFromConfig(awsCfg),
		Now:      h.clock.Now,
		Fetch:    opt.fetch,
	}.WithObjects(awsCfg)
	h.store = dynamostore.New(env.DynamoDB, env.Resources.Table)
	local, err := runner.New(deps)
	if err != nil {
		t.Fatalf("runner: %v", err)
	}
	var held []*runner.Poller
	mux := http.Handler(local.Mux)
	if opt.timed {
		h.durations = newDurations()
		mux = h.durations.timeURL(mux)
	}
	for i, p := range local.Pollers {
		p.WaitTime = time.Second
		if opt.timed {
			fn := resources.Turn.Name
			if p.QueueURL == env.Resources.OutboundURL {
				fn = resources.Delivery.Name
			}
			p.Handler = h.durations.timeSQS(fn, p.Handler)
		}
		if p.QueueURL == env.Resources.InboundURL {
			h.turns = p
		}
		if opt.holdDelivery && p.QueueURL == env.Resources.OutboundURL {
			held = append(held, p)
			local.Pollers = slices.Delete(local.Pollers, i, i+1)
		}
	}
	srv := httptest.NewServer(mux)
	h.url = srv.URL
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		local.Run(ctx, deps.Log)
		close(done)
	}()
	var heldDone sync.WaitGroup
	h.release = func() {
		for _, p := range held {
			heldDone.Go(func() { _ = p.Run(ctx) })
		}
		held = nil
	}
	t.Cleanup(func() {
		cancel()
		<-done
		heldDone.Wait()
		srv.Close()
		if t.Failed() {
			t.Logf("function logs:\n%s", h.logs.String())
		}
	})
	return h
}

// post sends a webhook and returns the status and body.
func (h *harness) post(path string, hdr http.Header, body []byte) (int, string) {
	h.t.Helper()
	code, _, answer := h.postFull(path, hdr, body)
	return code, answer
}

// postFull is post, with the answer's Content-Type.
func (h *harness) postFull(path string, hdr http.Header, body []byte) (int, string, string) {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.url+path, bytes.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// postTelegram posts an update with the webhook secret, and does with the
// answer what Telegram does: a Bot API method in it (a press's
// answerCallbackQuery) is called on the fake, for the bot.
func (h *harness) postTelegram(body []byte) (int, string) {
	h.t.Helper()
	code, ct, answer := h.postFull("/telegram", fakeplatform.TelegramHeaders(tgSecret), body)
	if err := faketelegram.ActOnAnswer(context.Background(), http.DefaultClient, h.tgAPI, tgToken, code, ct, []byte(answer)); err != nil {
		// Telegram tells no one; a second answer to one press (a
		// redelivered update) is refused, as Telegram refuses it.
		h.t.Logf("Telegram acting on the webhook's answer: %v", err)
	}
	return code, answer
}

// postSlack posts an Events API body, signed now.
func (h *harness) postSlack(body []byte) (int, string) {
	return h.post("/slack", fakeplatform.SignSlack(slackSecret, h.clock.Now(), body), body)
}

// telegramUpdate builds a private-chat text message update.
func telegramUpdate(updateID int, chat int64, text string) []byte {
	b, _ := json.Marshal(map[string]any{
		"update_id": updateID,
		"message": map[string]any{
			"message_id": updateID % 1_000_000, "date": time.Now().Unix(), "text": text,
			"from": map[string]any{"id": chat, "is_bot": false, "first_name": "Ada"},
			"chat": map[string]any{"id": chat, "type": "private", "first_name": "Ada"},
		},
	})
	return b
}

// slackDM builds a DM message event.
func slackDM(channel, ts, text string) []byte {
	b, _ := json.Marshal(map[string]any{
		"type": "event_callback", "team_id": "T0TEAM0001", "api_app_id": "A0APP00001",
		"event_id": "Ev" + strings.ReplaceAll(ts, ".", ""), "event_time": time.Now().Unix(),
		"authorizations": []map[string]any{{"team_id": "T0TEAM0001", "user_id": "U0BOT00001", "is_bot": true}},
		"event": map[string]any{
			"type": "message", "channel": channel, "channel_type": "im", "user": "U0ADA00001", "text": text, "ts": ts,
		},
	})
	return b
}

// waitDelivered waits until the fake platform holds at least n messages.
func (h *harness) waitDelivered(n int, within time.Duration) []fakeplatform.Delivery {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	got, err := h.fake.WaitFor(ctx, n)
	if err != nil {
		h.t.Fatalf("waiting for %d deliveries: got %d: %v", n, len(h.fake.Delivered()), err)
	}
	return got
}

// quiesce waits until both queues hold nothing, visible or in flight, for a
// little while: every turn and every delivery has finished.
func (h *harness) quiesce(within time.Duration) {
	h.t.Helper()
	deadline := time.Now().Add(within)
	calm := time.Time{}
	for time.Now().Before(deadline) {
		if h.queued(h.env.Resources.InboundURL)+h.queued(h.env.Resources.OutboundURL) == 0 {
			if calm.IsZero() {
				calm = time.Now()
			}
			if time.Since(calm) >= quietInterval {
				return
			}
		} else {
			calm = time.Time{}
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.t.Fatalf("queues still busy after %s", within)
}

func (h *harness) queued(url string) int {
	out, err := h.env.SQS.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{
			sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		},
	})
	if err != nil {
		h.t.Fatalf("queue attributes: %v", err)
	}
	n := 0
	for _, v := range out.Attributes {
		k, _ := strconv.Atoi(v)
		n += k
	}
	return n
}

// intentFor reads the send intent of an event key.
func (h *harness) intentFor(eventKey string) intent.Intent {
	h.t.Helper()
	in, err := h.store.GetIntent(context.Background(), intent.IDFor(eventKey))
	if err != nil {
		h.t.Fatalf("intent of %s: %v", eventKey, err)
	}
	return in
}

func texts(ds []fakeplatform.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Text
	}
	return out
}
