package events_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/syncbuf"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	stypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/parleyhq/parley/localstack/callcount"
	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/ingress"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/metrics"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/events"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/platform/telegram"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/standardwebhooks"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
	"github.com/parleyhq/parley/shared/triage"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// The samples' test values (events/README.md, events/events/README.md).
const (
	eventsSecret   = "whsec_cGFybGV5LWV2ZW50cy10ZXN0LWtleS0wMDAx"
	githubSecret   = "parley-github-test-secret"
	telegramSecret = "parley-telegram-test-secret"
	telegramToken  = "7000000001:AAFakeTokenForParleyTests_0123456789"
	botID          = "7000000001"
	team           = "T0TEAM0001"
	githubTarget   = "telegram:7000000001:-1001000000002:77"
)

// The events sources of the tests: the samples' senders, and "alerts", the
// sender of the events the tests make up, all signing with the test secret.
var (
	testSources = `{"alerts":{"targets":["telegram:7000000001:*","slack:T0TEAM0001:*"]},` +
		`"alertmanager":{"targets":["telegram:7000000001:-1001000000001:*"]},"cron":{"targets":["telegram:7000000001:42"]},` +
		`"ci":{"targets":["slack:T0TEAM0001:C0CHAN0001:*"]}}`
	testSecrets = `{"alerts":"` + eventsSecret + `","alertmanager":"` + eventsSecret + `","cron":"` + eventsSecret + `","ci":"` + eventsSecret + `"}`
	canonical   = map[message.Platform]platform.Canonicalizer{message.Telegram: telegram.CanonicalTarget, message.Slack: slack.CanonicalTarget(team)}
)

// ada is Ada's private chat with the test bot: the conversation the
// proactive events below and the human sample message share.
var ada = message.Thread{Platform: message.Telegram, Account: botID, Chat: "42"}

// clock is a settable clock shared by the pipeline and the signer.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// harness is one test's Parley ingress on its own table and queues.
type harness struct {
	t       testing.TB
	env     *emulatortest.Env
	calls   *callcount.Counter
	db      *dynamodb.Client
	sqs     *sqs.Client
	store   *dynamostore.Store
	clock   *clock
	logs    *syncbuf.Buffer
	events  http.Handler // the events function
	human   http.Handler // the Telegram function, with the same triage
	secret  standardwebhooks.Secret
	cfg     triage.Config
	inbound string
}

func newHarness(t testing.TB, cfg triage.Config) *harness {
	t.Helper()
	env := emulatortest.New(t)
	h := &harness{t: t, env: env, clock: &clock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}, logs: &syncbuf.Buffer{}, cfg: cfg, inbound: env.Resources.InboundURL}
	var err error
	if h.secret, err = standardwebhooks.ParseSecret(eventsSecret); err != nil {
		t.Fatal(err)
	}
	h.start()
	return h
}

// start builds every function anew on the same table and queues: a cold
// start of each, with fresh clients and no state carried in memory.
func (h *harness) start() {
	t := h.t
	t.Helper()
	cfg, calls := callcount.Attach(h.env.AWS)
	h.calls = calls
	h.db, h.sqs = dynamodb.NewFromConfig(cfg), sqs.NewFromConfig(cfg)
	h.store = dynamostore.New(h.db, h.env.Resources.Table)
	log := slog.New(slog.NewJSONHandler(h.logs, nil))
	tr, err := triage.New(h.cfg, h.store, log)
	if err != nil {
		t.Fatal(err)
	}
	sources, err := events.ParseSources(testSources, testSecrets, githubSecret, githubTarget, canonical)
	if err != nil {
		t.Fatal(err)
	}
	rec := &events.Receiver{Sources: sources, Canonical: canonical}
	if err := rec.Validate(); err != nil {
		t.Fatal(err)
	}
	tg, err := telegram.NewReceiver(telegramSecret, telegramToken)
	if err != nil {
		t.Fatal(err)
	}
	q := queue.New(h.sqs, h.inbound)
	h.events = &ingress.Pipeline{Receiver: rec, Claims: h.store, Queue: q, Triage: tr, Now: h.clock.Now, Log: log}
	h.human = &ingress.Pipeline{Receiver: tg, Claims: h.store, Queue: q, Triage: tr, Now: h.clock.Now, Log: log}
}

type ack struct {
	OK     bool `json:"ok"`
	Events []struct {
		EventID string `json:"event_id"`
		Result  string `json:"result"`
		Reason  string `json:"reason"`
	} `json:"events"`
}

type response struct {
	status int
	ack    ack
	body   string
}

// outcome is an event's result, or "status <code>" for a refused request.
func (r response) outcome() string {
	if r.status != http.StatusOK || len(r.ack.Events) != 1 {
		return fmt.Sprintf("status %d", r.status)
	}
	e := r.ack.Events[0]
	if e.Reason != "" {
		return e.Result + "/" + e.Reason
	}
	return e.Result
}

// ghSecret is githubSecret, parsed.
var ghSecret = func() standardwebhooks.Secret {
	s, err := standardwebhooks.ParseSecret(githubSecret)
	if err != nil {
		panic(err)
	}
	return s
}()

// cronTo is a payload of the cron source for a Telegram chat of the test bot.
func cronTo(id, chat string) []byte {
	b, _ := json.Marshal(map[string]any{"id": id, "source": "cron", "text": "tick",
		"target": map[string]string{"platform": "telegram", "account": botID, "chat": chat}})
	return b
}

func payload(id, text string, th message.Thread) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": id, "source": "alerts", "text": text,
		"target": map[string]string{"platform": string(th.Platform), "account": th.Account, "chat": th.Chat},
	})
	return b
}

func serve(h http.Handler, req *http.Request) response {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return decode(w.Code, w.Body.Bytes())
}

func decode(status int, body []byte) response {
	r := response{status: status, body: string(body)}
	if status == http.StatusOK {
		_ = json.Unmarshal(body, &r.ack)
	}
	return r
}

// post sends a signed proactive event for Ada's chat at the clock's time.
func (h *harness) post(id string) response {
	return h.postBody(id, payload(id, "disk full", ada))
}

func (h *harness) postBody(id string, body []byte) response {
	req := httptest.NewRequest(http.MethodPost, "/events", bytes.NewReader(body))
	req.Header = events.SignRequest(h.secret, id, h.clock.Now(), body)
	return serve(h.events, req)
}

// postHuman sends Ada's Telegram message (events/telegram/message.json) with
// update_id set to id, dated at the clock's time (an older date is a replay
// past the dedupe window).
func (h *harness) postHuman(id int) response {
	body := bytes.Replace(readFile(h.t, "../../../events/telegram/message.json"), []byte("900000001"), fmt.Appendf(nil, "%d", id), 1)
	body = bytes.Replace(body, []byte(`"date": 1764432000`), fmt.Appendf(nil, `"date": %d`, h.clock.Now().Unix()), 1)
	req := httptest.NewRequest(http.MethodPost, "/telegram", bytes.NewReader(body))
	req.Header.Set(telegram.SecretHeader, telegramSecret)
	return serve(h.human, req)
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (h *harness) want(r response, want string) {
	h.t.Helper()
	if r.outcome() != want {
		h.t.Fatalf("outcome %s, want %s (body %s)", r.outcome(), want, r.body)
	}
}

// counterItem reads the conversation's raw triage record; nil when absent.
func (h *harness) counterItem(th message.Thread) map[string]dtypes.AttributeValue {
	h.t.Helper()
	out, err := h.env.DynamoDB.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(h.env.Resources.Table), ConsistentRead: aws.Bool(true),
		Key: map[string]dtypes.AttributeValue{"pk": &dtypes.AttributeValueMemberS{Value: triage.CounterKey(th)}},
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return out.Item
}

func (h *harness) count(th message.Thread, day string) int {
	h.t.Helper()
	c, err := h.store.GetCounter(context.Background(), triage.CounterKey(th))
	if errors.Is(err, store.ErrNotFound) {
		return 0
	}
	if err != nil {
		h.t.Fatal(err)
	}
	return c.Days[day]
}

// queued is the number of messages on inbound.fifo (fauxqs counts exactly).
func (h *harness) queued() int {
	h.t.Helper()
	out, err := h.env.SQS.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(h.inbound),
		AttributeNames: []stypes.QueueAttributeName{stypes.QueueAttributeNameApproximateNumberOfMessages, stypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible},
	})
	if err != nil {
		h.t.Fatal(err)
	}
	n := 0
	for _, v := range out.Attributes {
		var k int
		fmt.Sscan(v, &k)
		n += k
	}
	return n
}

// decisions reads every TriageDecision the logs recorded, as
// "decision/reason", from the EMF part of each decision line.
func (h *harness) decisions() map[string]int {
	h.t.Helper()
	got := map[string]int{}
	for _, line := range h.logs.Lines() {
		var rec struct {
			Msg  string `json:"msg"`
			Kind string `json:"kind"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil || !strings.HasPrefix(rec.Msg, "event ") || rec.Kind != string(message.KindProactive) {
			continue
		}
		if rec.Msg != "event accepted" && rec.Msg != "event suppressed" {
			continue
		}
		points, err := metrics.Decode([]byte(line))
		if err != nil {
			h.t.Fatalf("decision line is not EMF: %v\n%s", err, line)
		}
		if len(points) != 1 || points[0].Name != metrics.TriageDecision || points[0].Namespace != "Parley" || points[0].Value != 1 || len(points[0].Dims) != 1 {
			h.t.Fatalf("decision line records %+v", points)
		}
		d := points[0].Dims[0]
		key := d["decision"]
		if r := d["reason"]; r != "" {
			key += "/" + r
		}
		got[key]++
	}
	return got
}

func berlinTime(t testing.TB, s string) time.Time {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	tt, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

func TestQuietHoursInBerlin(t *testing.T) {
	t.Parallel()
	h := newHarness(t, triage.Config{Default: triage.Policy{TimeZone: "Europe/Berlin", QuietHours: "22:00-07:00"}})
	for i, c := range []struct{ local, want string }{
		{"2026-11-29 23:30", "suppressed/quiet_hours"},
		{"2026-11-30 07:00", "enqueued"},
		{"2026-11-30 06:59", "suppressed/quiet_hours"},
		{"2026-11-30 21:59", "enqueued"},
		{"2026-11-30 22:00", "suppressed/quiet_hours"},
		// Spring forward: 07:00 CEST is 05:00 UTC; 22:00 CEST is 20:00 UTC.
		{"2026-03-29 06:59", "suppressed/quiet_hours"},
		{"2026-03-29 07:00", "enqueued"},
		{"2026-03-29 21:59", "enqueued"},
		{"2026-03-29 22:00", "suppressed/quiet_hours"},
		// Fall back: 07:00 CET is 06:00 UTC; 22:00 CET is 21:00 UTC.
		{"2026-10-25 06:59", "suppressed/quiet_hours"},
		{"2026-10-25 07:00", "enqueued"},
		{"2026-10-25 21:59", "enqueued"},
		{"2026-10-25 22:00", "suppressed/quiet_hours"},
	} {
		h.clock.Set(berlinTime(t, c.local))
		if got := h.post(fmt.Sprintf("q%d", i)).outcome(); got != c.want {
			t.Errorf("event at %s Berlin (%s UTC): %s, want %s", c.local, h.clock.Now().UTC().Format("15:04"), got, c.want)
		}
	}
	if n := h.queued(); n != 6 {
		t.Fatalf("%d events queued, want the 6 outside quiet hours", n)
	}
	if got := h.decisions(); got["accepted"] != 6 || got["suppressed/quiet_hours"] != 7 {
		t.Fatalf("TriageDecision metrics = %v", got)
	}
	if h.counterItem(ada) != nil {
		t.Fatal("quiet hours alone wrote a counter")
	}
}

// fire posts n proactive events for Ada's chat at once, over real HTTP.
func (h *harness) fire(n int) map[string]int {
	srv := httptest.NewServer(h.events)
	defer srv.Close()
	start := make(chan struct{})
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	for i := range n {
		id := fmt.Sprintf("burst-%d", i)
		body := payload(id, "disk full", ada)
		hdr := events.SignRequest(h.secret, id, h.clock.Now(), body)
		wg.Go(func() {
			<-start
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/events", bytes.NewReader(body))
			req.Header = hdr
			resp, err := srv.Client().Do(req)
			if err != nil {
				h.t.Error(err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			r := decode(resp.StatusCode, b)
			mu.Lock()
			got[r.outcome()]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	return got
}

func TestConcurrentEventsNeverExceedTheCap(t *testing.T) {
	t.Parallel()
	t.Run("Cap3", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, triage.Config{Default: triage.Policy{DailyCap: 3}})
		got := h.fire(20)
		if got["enqueued"] != 3 || got["suppressed/daily_cap"] != 17 {
			t.Fatalf("20 concurrent events: %v; want 3 enqueued, 17 daily_cap", got)
		}
		if n := h.count(ada, "2026-11-29"); n != 3 {
			t.Fatalf("count after the burst = %d, want 3", n)
		}
		if n := h.queued(); n != 3 {
			t.Fatalf("%d queued, want 3", n)
		}
		if d := h.decisions(); d["accepted"] != 3 || d["suppressed/daily_cap"] != 17 {
			t.Fatalf("TriageDecision metrics = %v", d)
		}
	})
	t.Run("Cap3Cooldown60s", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, triage.Config{Default: triage.Policy{DailyCap: 3, Cooldown: time.Minute}})
		got := h.fire(20)
		if got["enqueued"] != 1 || got["suppressed/cooldown"] != 19 {
			t.Fatalf("20 concurrent events: %v; want 1 enqueued, 19 cooldown", got)
		}
		if n := h.count(ada, "2026-11-29"); n != 1 {
			t.Fatalf("count after the burst = %d, want 1", n)
		}
		if d := h.decisions(); d["accepted"] != 1 || d["suppressed/cooldown"] != 19 {
			t.Fatalf("TriageDecision metrics = %v", d)
		}
	})
}

func TestSuppressedEventLeavesCountersUnchanged(t *testing.T) {
	t.Parallel()
	h := newHarness(t, triage.Config{Default: triage.Policy{
		TimeZone: "Europe/Berlin", QuietHours: "22:00-07:00", Cooldown: time.Hour, DailyCap: 2,
	}})
	h.clock.Set(berlinTime(t, "2026-11-29 12:00"))
	h.want(h.post("a"), "enqueued")
	before := h.counterItem(ada)
	if before == nil {
		t.Fatal("no counter after an accepted event")
	}
	check := func(what string) {
		t.Helper()
		if after := h.counterItem(ada); !reflect.DeepEqual(before, after) {
			t.Fatalf("%s changed the counter item:\nbefore %v\nafter  %v", what, before, after)
		}
	}
	h.clock.Set(berlinTime(t, "2026-11-29 12:30"))
	h.want(h.post("b"), "suppressed/cooldown")
	check("a cooldown suppression")
	h.clock.Set(berlinTime(t, "2026-11-29 23:30"))
	h.want(h.post("c"), "suppressed/quiet_hours")
	check("a quiet-hours suppression")
	h.want(h.post("a"), "duplicate/duplicate")
	check("a duplicate")

	h.clock.Set(berlinTime(t, "2026-11-29 13:00"))
	h.want(h.post("d"), "enqueued") // exactly one cooldown after a: the cooldown did not restart
	before = h.counterItem(ada)
	h.clock.Set(berlinTime(t, "2026-11-29 15:00"))
	h.want(h.post("e"), "suppressed/daily_cap")
	check("a daily-cap suppression")
	if n := h.count(ada, "2026-11-29"); n != 2 {
		t.Fatalf("count = %d, want 2", n)
	}
	// A new local day starts a new count.
	h.clock.Set(berlinTime(t, "2026-11-30 07:00"))
	h.want(h.post("f"), "enqueued")
}

func TestDuplicateSurvivesRestart(t *testing.T) {
	t.Parallel()
	h := newHarness(t, triage.Config{Default: triage.Policy{TimeZone: "Europe/Berlin", QuietHours: "22:00-07:00", DailyCap: 10}})
	h.clock.Set(berlinTime(t, "2026-11-29 12:00"))
	h.want(h.post("evt-1"), "enqueued")
	h.clock.Set(berlinTime(t, "2026-11-29 12:01")) // a retry: fresh timestamp and signature
	h.want(h.post("evt-1"), "duplicate/duplicate")
	// Suppressed by quiet hours: the id is recorded as seen all the same.
	h.clock.Set(berlinTime(t, "2026-11-29 23:00"))
	h.want(h.post("evt-2"), "suppressed/quiet_hours")

	h.start() // every function restarts: new clients, new triage, same table
	h.clock.Set(berlinTime(t, "2026-11-30 09:00"))
	h.want(h.post("evt-1"), "duplicate/duplicate")
	h.want(h.post("evt-2"), "duplicate/duplicate")
	h.want(h.post("evt-3"), "enqueued")
	if n := h.queued(); n != 2 {
		t.Fatalf("%d queued, want 2 (evt-1, evt-3)", n)
	}
	if d := h.decisions(); d["suppressed/duplicate"] != 3 {
		t.Fatalf("TriageDecision metrics = %v, want 3 duplicates", d)
	}
}

func TestHumanMessageIsNeverSuppressed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, triage.Config{Default: triage.Policy{
		TimeZone: "Europe/Berlin", QuietHours: "22:00-07:00", Cooldown: 24 * time.Hour, DailyCap: 1,
	}})
	h.clock.Set(berlinTime(t, "2026-11-29 21:00"))
	h.want(h.post("fill"), "enqueued") // Ada's chat is at its cap and in its cooldown
	h.clock.Set(berlinTime(t, "2026-11-29 23:30"))
	h.want(h.post("night"), "suppressed/quiet_hours")
	before := h.counterItem(ada)

	h.want(h.postHuman(900000101), "enqueued")
	h.want(h.postHuman(900000102), "enqueued")
	if n := h.queued(); n != 3 {
		t.Fatalf("%d queued, want the first proactive event and both human messages", n)
	}
	if after := h.counterItem(ada); !reflect.DeepEqual(before, after) {
		t.Fatal("a human message touched the triage counters")
	}
	// Its dedupe still applies, and it never became a triage metric.
	h.want(h.postHuman(900000101), "duplicate/duplicate")
	if d := h.decisions(); d["accepted"] != 1 || d["suppressed/quiet_hours"] != 1 || len(d) != 2 {
		t.Fatalf("TriageDecision metrics = %v, want only the proactive events'", d)
	}
}

func TestBadRequestsAreRefusedWithoutWrites(t *testing.T) {
	t.Parallel()
	h := newHarness(t, triage.Config{Default: triage.Policy{DailyCap: 5}})
	now := h.clock.Now()
	good := payload("r1", "disk full", ada)
	wrongSecret, _ := standardwebhooks.ParseSecret("whsec_d3Jvbmc=")
	req := func(hdr http.Header, body []byte) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/events", bytes.NewReader(body))
		r.Header = hdr
		return r
	}
	sign := func(id string, at time.Time, body []byte) http.Header {
		return events.SignRequest(h.secret, id, at, body)
	}
	tampered := sign("r1", now, good)
	for name, c := range map[string]struct {
		req    *http.Request
		status int
	}{
		"bad signature":   {req(events.SignRequest(wrongSecret, "r1", now, good), good), http.StatusUnauthorized},
		"tampered body":   {req(tampered, bytes.Replace(good, []byte("disk"), []byte("DISK"), 1)), http.StatusUnauthorized},
		"stale timestamp": {req(sign("r1", now.Add(-5*time.Minute-time.Second), good), good), http.StatusUnauthorized},
		"future":          {req(sign("r1", now.Add(5*time.Minute+time.Second), good), good), http.StatusUnauthorized},
		"unsigned":        {req(http.Header{}, good), http.StatusUnauthorized},
		"unknown platform": {req(sign("r2", now, payload("r2", "x", message.Thread{Platform: "discord", Account: "1", Chat: "2"})),
			payload("r2", "x", message.Thread{Platform: "discord", Account: "1", Chat: "2"})), http.StatusForbidden},
		// Finding 9.2: a secret reaches only its source's targets.
		"another bot": {req(sign("r3", now, payload("r3", "x", message.Thread{Platform: message.Telegram, Account: "999", Chat: "2"})),
			payload("r3", "x", message.Thread{Platform: message.Telegram, Account: "999", Chat: "2"})), http.StatusForbidden},
		"outside its targets": {req(sign("r6", now, cronTo("r6", "-1001000000001")), cronTo("r6", "-1001000000001")), http.StatusForbidden},
		"malformed":           {req(sign("r4", now, []byte(`{"text":`)), []byte(`{"text":`)), http.StatusBadRequest},
		"unknown field":       {req(sign("r5", now, []byte(`{"txt":"x"}`)), []byte(`{"txt":"x"}`)), http.StatusBadRequest},
		"GET":                 {httptest.NewRequest(http.MethodGet, "/events", nil), http.StatusMethodNotAllowed},
		"github target in the URL": {func() *http.Request {
			b := readFile(t, "../../../events/events/github-push.json")
			r := req(events.SignGitHub(ghSecret, "g1", "push", b), b)
			r.URL.RawQuery = "target=telegram:7000000001:42"
			return r
		}(), http.StatusBadRequest},
	} {
		t.Run(name, func(t *testing.T) {
			h.calls.Reset()
			r := serve(h.events, c.req)
			if r.status != c.status {
				t.Fatalf("status %d, want %d (%s)", r.status, c.status, r.body)
			}
			if n := h.calls.Total(nil); n != 0 {
				t.Fatalf("a refused request made AWS calls: %s", h.calls)
			}
		})
	}
	// Then the genuine request is accepted: nothing above claimed r1.
	h.want(h.postBody("r1", good), "enqueued")
}

// dynamoWrites counts the DynamoDB writes since the last Reset.
func dynamoWrites(c *callcount.Counter) int {
	return c.Total(func(op string) bool { return strings.HasPrefix(op, "DynamoDB.") && callcount.Writes(op) })
}

func TestTriageAddsAtMostTwoWrites(t *testing.T) {
	t.Parallel()
	h := newHarness(t, triage.Config{Default: triage.Policy{Cooldown: time.Second, DailyCap: 1000}})
	h.calls.Reset()
	h.want(h.postHuman(900000201), "enqueued")
	human := dynamoWrites(h.calls)
	h.calls.Reset()
	h.want(h.post("w1"), "enqueued")
	proactive := dynamoWrites(h.calls)
	// A person's message costs its dedupe key alone; a triaged event adds
	// the counter and the settle of a claim that holds what it counted, so
	// a retry is not counted twice.
	if human != 1 || proactive-human > 2 {
		t.Fatalf("DynamoDB writes: human message %d, accepted proactive event %d; want 1, and triage adding at most 2 (%s)", human, proactive, h.calls)
	}
	// Suppressed ones cost no more than an accepted one.
	h.calls.Reset()
	h.want(h.post("w2"), "suppressed/cooldown")
	if n := dynamoWrites(h.calls); n > proactive {
		t.Fatalf("a suppressed event made %d DynamoDB writes, more than an accepted one (%d)", n, proactive)
	}
}

// BenchmarkIngressWrites reports the DynamoDB writes of one event through the
// real pipeline: a human message, and an accepted proactive event whose
// triage checks a cooldown and a cap. The difference is triage's cost.
func BenchmarkIngressWrites(b *testing.B) {
	h := newHarness(b, triage.Config{Default: triage.Policy{Cooldown: time.Nanosecond, DailyCap: 1 << 30}})
	measure := func(b *testing.B, post func(i int) response) float64 {
		h.calls.Reset()
		for i := 0; b.Loop(); i++ {
			h.clock.Set(h.clock.Now().Add(time.Millisecond))
			if r := post(i); r.outcome() != "enqueued" {
				b.Fatalf("event %d: %s", i, r.body)
			}
		}
		per := float64(dynamoWrites(h.calls)) / float64(b.N)
		b.ReportMetric(per, "dynamodb-writes/event")
		return per
	}
	var human float64
	b.Run("human", func(b *testing.B) {
		human = measure(b, func(i int) response { return h.postHuman(910000000 + b.N*1000 + i) })
	})
	b.Run("proactive", func(b *testing.B) {
		per := measure(b, func(i int) response { return h.post(fmt.Sprintf("bench-%d-%d", b.N, i)) })
		b.ReportMetric(per-human, "triage-writes/event")
		// The counter, and the settle of the claim that holds what it
		// counted (a person's message needs neither).
		if per-human > 2 {
			b.Fatalf("triage adds %.2f DynamoDB writes per accepted event, want at most 2", per-human)
		}
	})
}

func TestSamplesThroughThePipeline(t *testing.T) {
	t.Parallel()
	h := newHarness(t, triage.Config{})
	files, _ := filepath.Glob("../../../events/events/*.json")
	for _, f := range files {
		name := filepath.Base(f)
		body := readFile(t, f)
		hdr, err := events.SampleHeaders(name, body, h.secret, ghSecret, h.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/events", bytes.NewReader(body))
		req.Header = hdr
		r := serve(h.events, req)
		want := "enqueued"
		if name == "github-ping.json" {
			want = "ignored"
		}
		if r.status != http.StatusOK || len(r.ack.Events) != 1 || r.ack.Events[0].Result != want {
			t.Errorf("%s: %d %s, want %s", name, r.status, r.body, want)
		}
	}
}

// TestCapturedGitHubDeliveryCannotBeReplayed (finding 9.1): anyone who saw a
// delivery (repo admins on "Recent deliveries", logs, proxies) could re-post
// its body with a new X-GitHub-Delivery and any ?target=, into any chat,
// forever. The same body is a duplicate however its headers change, and no
// URL chooses a target.
func TestCapturedGitHubDeliveryCannotBeReplayed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, triage.Config{})
	body := readFile(t, "../../../events/events/github-issues-opened.json")
	post := func(delivery, event, query string) response {
		req := httptest.NewRequest(http.MethodPost, "/events"+query, bytes.NewReader(body))
		req.Header = events.SignGitHub(ghSecret, delivery, event, body)
		return serve(h.events, req)
	}
	h.want(post("d1f4e3a0-0000-4000-8000-000000000010", "issues", ""), "enqueued")
	h.want(post("ffffffff-0000-4000-8000-00000000dead", "issues", ""), "duplicate/duplicate")
	h.want(post("ffffffff-0000-4000-8000-00000000beef", "push", ""), "duplicate/duplicate")
	h.calls.Reset()
	if r := post("ffffffff-0000-4000-8000-00000000f00d", "issues", "?target=slack:T0TEAM0001:C0CHAN0001"); r.status != http.StatusBadRequest {
		t.Fatalf("a replay with ?target= = %d %s, want 400", r.status, r.body)
	}
	if n := h.calls.Total(nil); n != 0 {
		t.Fatalf("the refused replay made AWS calls: %s", h.calls)
	}
	if n := h.queued(); n != 1 {
		t.Fatalf("%d messages enqueued, want the one delivery", n)
	}
}

// TestVariedTargetsShareOneCooldown (finding 9.2): varying a Slack target's
// account spelling, channel case or thread gave a fresh cooldown, daily cap
// and policy. The target is put in canonical form and the counters are the
// chat's: one policy, one set of counters.
func TestVariedTargetsShareOneCooldown(t *testing.T) {
	t.Parallel()
	h := newHarness(t, triage.Config{Default: triage.Policy{Cooldown: 10 * time.Minute}})
	send := func(id string, target map[string]string) response {
		b, _ := json.Marshal(map[string]any{"id": id, "source": "ci", "text": "deploy failed", "target": target})
		return h.postBody(id, b)
	}
	h.want(send("v1", map[string]string{"platform": "slack", "account": team, "chat": "C0CHAN0001", "thread": "1764432060.000200"}), "enqueued")
	for i, target := range []map[string]string{
		{"platform": "slack", "account": "t0team0001", "chat": "c0chan0001", "thread": "1764432060.0002"},
		{"platform": "slack", "account": team, "chat": "C0CHAN0001", "thread": "1764432999.000100"},
		{"platform": "slack", "account": team, "chat": "C0CHAN0001"},
	} {
		id := fmt.Sprint("v", i+2)
		h.want(send(id, target), "suppressed/cooldown")
	}
	if n := h.queued(); n != 1 {
		t.Fatalf("%d messages enqueued, want the first only", n)
	}
}
