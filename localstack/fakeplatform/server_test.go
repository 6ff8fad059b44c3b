package fakeplatform_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/syncbuf"

	"go.uber.org/goleak"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeslack"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketelegram"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/platform/telegram"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	tgToken    = "7000000001:AAFakeTokenForParleyTests_0123456789"
	slackToken = "xoxb-0000000001-0000000002-FakeSlackTokenForTests"
)

// clock is a manual clock for deliveries.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type setup struct {
	fake  *fakeplatform.Server
	srv   *httptest.Server
	clock *clock
	out   *syncbuf.Buffer
	tg    *telegram.Client
	slack *slack.Client
}

func newSetup(t *testing.T) *setup {
	t.Helper()
	c := &clock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	out := &syncbuf.Buffer{}
	fake := fakeplatform.New(fakeplatform.Options{TelegramToken: tgToken, SlackToken: slackToken, Now: c.Now, Out: out})
	srv := httptest.NewServer(fake.Handler())
	t.Cleanup(srv.Close)
	return &setup{
		fake: fake, srv: srv, clock: c, out: out,
		tg:    &telegram.Client{Token: tgToken, BaseURL: srv.URL + "/telegram", HTTP: srv.Client()},
		slack: &slack.Client{Token: slackToken, BaseURL: srv.URL + "/slack/api", HTTP: srv.Client()},
	}
}

func tgThread(chat, thread string) message.Thread {
	return message.Thread{Platform: message.Telegram, Account: "7000000001", Chat: chat, Thread: thread}
}

func slackThread(chat, thread string) message.Thread {
	return message.Thread{Platform: message.Slack, Account: "T0TEAM0001", Chat: chat, Thread: thread}
}

func class(err error) message.FailureClass {
	if err == nil {
		return ""
	}
	return message.ClassOf(err)
}

func TestDeliveries(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	ctx := context.Background()

	send := func(c interface {
		Send(context.Context, message.Outgoing) (message.Receipt, error)
	}, m message.Outgoing) string {
		t.Helper()
		rc, err := c.Send(ctx, m)
		if err != nil {
			t.Fatalf("Send: %v", err)
		}
		return rc.MessageIDs[0]
	}
	ids := []string{
		send(s.tg, message.Outgoing{Thread: tgThread("42", ""), Content: message.Text("on it")}),
	}
	s.clock.Add(1200 * time.Millisecond)
	ids = append(ids, send(s.tg, message.Outgoing{Thread: tgThread("42", ""), Content: message.Text("your flight moved to 8pm\ngate B12"), ReplyTo: "101"}))
	s.clock.Add(500 * time.Millisecond)
	ids = append(ids, send(s.tg, message.Outgoing{Thread: tgThread("-1001000000002", "77"), Content: message.Text("changelog drafted")}))
	s.clock.Add(250 * time.Millisecond)
	ids = append(ids, send(s.slack, message.Outgoing{Thread: slackThread("C0CHAN0001", "1764432060.000200"), Content: message.Text("draft ready")}))
	ids = append(ids, send(s.slack, message.Outgoing{Thread: slackThread("C0CHAN0001", "1764432060.000200"), Content: message.Text("second bubble")}))
	ids = append(ids, send(s.slack, message.Outgoing{Thread: slackThread("D0DM000001", ""), Content: message.Text("hi")}))

	// Telegram ids count up per chat; Slack ts values are unix time with
	// a microsecond sequence, increasing per channel with the clock frozen.
	want := []string{"1", "2", "1", "1795953601.950000", "1795953601.950001", "1795953601.950000"}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Fatalf("message ids = %v, want %v", ids, want)
	}

	got := s.fake.Delivered()
	for i := range got {
		// Args are what each API got; the text is all they share.
		if fakeapi.Str(got[i].Args, "text") != got[i].Text {
			t.Fatalf("delivery %d: Args %v do not hold its text", i, got[i].Args)
		}
		got[i].Args = nil
	}
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	wantD := []fakeplatform.Delivery{
		{Platform: message.Telegram, Chat: "42", Text: "on it", At: t0, MessageID: "1"},
		{Platform: message.Telegram, Chat: "42", Text: "your flight moved to 8pm\ngate B12", ReplyTo: "101", At: t0.Add(1200 * time.Millisecond), MessageID: "2"},
		{Platform: message.Telegram, Chat: "-1001000000002", Thread: "77", Text: "changelog drafted", At: t0.Add(1700 * time.Millisecond), MessageID: "1"},
		{Platform: message.Slack, Chat: "C0CHAN0001", Thread: "1764432060.000200", Text: "draft ready", At: t0.Add(1950 * time.Millisecond), MessageID: want[3]},
		{Platform: message.Slack, Chat: "C0CHAN0001", Thread: "1764432060.000200", Text: "second bubble", At: t0.Add(1950 * time.Millisecond), MessageID: want[4]},
		{Platform: message.Slack, Chat: "D0DM000001", Text: "hi", At: t0.Add(1950 * time.Millisecond), MessageID: want[5]},
	}
	if fmt.Sprint(got) != fmt.Sprint(wantD) {
		t.Fatalf("Delivered\n got %+v\nwant %+v", got, wantD)
	}
	fresh := s.fake.Delivered()
	fresh[0].Text = "mutated"
	if s.fake.Delivered()[0].Text != "on it" {
		t.Fatal("Delivered does not return a copy")
	}

	wantOut := `[+0.00s] telegram chat=42 | on it
[+1.20s] telegram chat=42 | your flight moved to 8pm
                          | gate B12
[+0.50s] telegram chat=-1001000000002 thread=77 | changelog drafted
[+0.25s] slack chat=C0CHAN0001 thread=1764432060.000200 | draft ready
[+0.00s] slack chat=C0CHAN0001 thread=1764432060.000200 | second bubble
[+0.00s] slack chat=D0DM000001 | hi
`
	if s.out.String() != wantOut {
		t.Fatalf("Out\n got:\n%s\nwant:\n%s", s.out.String(), wantOut)
	}
	if s.fake.Calls() != 6 {
		t.Fatalf("Calls = %d, want 6", s.fake.Calls())
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("TelegramFloodControl", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t)
		s.fake.Inject(fakeplatform.Fault{Platform: message.Telegram, Status: 429, RetryAfter: 2500 * time.Millisecond})
		_, err := s.tg.Send(ctx, message.Outgoing{Thread: tgThread("42", ""), Content: message.Text("x")})
		var se *message.SendError
		if !errors.As(err, &se) || se.Class != message.FailRateLimit || se.RetryAfter != 3*time.Second || se.Reason != "Too Many Requests: retry after 3" {
			t.Fatalf("got %v", err)
		}
		if _, err := s.tg.Send(ctx, message.Outgoing{Thread: tgThread("42", ""), Content: message.Text("x")}); err != nil {
			t.Fatalf("the fault outlived Times: %v", err)
		}
		if s.fake.Calls() != 2 || len(s.fake.Delivered()) != 1 {
			t.Fatalf("Calls = %d, Delivered = %d", s.fake.Calls(), len(s.fake.Delivered()))
		}
	})

	t.Run("TelegramStatuses", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t)
		want := map[int]message.FailureClass{400: message.FailInvalidPayload, 401: message.FailAuth, 403: message.FailPermission, 502: message.FailUnknown}
		for status, cl := range want {
			s.fake.Inject(fakeplatform.Fault{Platform: message.Telegram, Status: status})
			_, err := s.tg.Send(ctx, message.Outgoing{Thread: tgThread("42", ""), Content: message.Text("x")})
			if class(err) != cl {
				t.Errorf("status %d: %v, want %s", status, err, cl)
			}
		}
	})

	t.Run("SlackRateLimit", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t)
		s.fake.Inject(fakeplatform.Fault{Platform: message.Slack, Status: 429, RetryAfter: 30 * time.Second, Times: 2})
		for range 2 {
			_, err := s.slack.Send(ctx, message.Outgoing{Thread: slackThread("C1", ""), Content: message.Text("x")})
			var se *message.SendError
			if !errors.As(err, &se) || se.Class != message.FailRateLimit || se.RetryAfter != 30*time.Second || se.Status != 429 {
				t.Fatalf("got %v", err)
			}
		}
		if _, err := s.slack.Send(ctx, message.Outgoing{Thread: slackThread("C1", ""), Content: message.Text("x")}); err != nil {
			t.Fatalf("third send: %v", err)
		}
	})

	t.Run("SlackErrorCodeAndChatMatch", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t)
		s.fake.Inject(fakeplatform.Fault{Chat: "C0GONE0001", Error: "channel_not_found"})
		// Another chat is not affected, and does not use the fault up.
		if _, err := s.slack.Send(ctx, message.Outgoing{Thread: slackThread("C1", ""), Content: message.Text("x")}); err != nil {
			t.Fatalf("other chat: %v", err)
		}
		if _, err := s.tg.Send(ctx, message.Outgoing{Thread: tgThread("42", ""), Content: message.Text("x")}); err != nil {
			t.Fatalf("other platform: %v", err)
		}
		_, err := s.slack.Send(ctx, message.Outgoing{Thread: slackThread("C0GONE0001", ""), Content: message.Text("x")})
		if class(err) != message.FailNotFound {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("DropResponseAfterCommit", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t)
		s.fake.Inject(fakeplatform.Fault{Platform: message.Telegram, DropResponseAfterCommit: true})
		s.fake.Inject(fakeplatform.Fault{Platform: message.Slack, DropResponseAfterCommit: true})
		_, err := s.tg.Send(ctx, message.Outgoing{Thread: tgThread("42", ""), Content: message.Text("maybe sent")})
		if class(err) != message.FailUnknown {
			t.Fatalf("telegram: %v", err)
		}
		_, err = s.slack.Send(ctx, message.Outgoing{Thread: slackThread("D1", ""), Content: message.Text("maybe sent")})
		if class(err) != message.FailUnknown {
			t.Fatalf("slack: %v", err)
		}
		got := s.fake.Delivered()
		if len(got) != 2 || got[0].Text != "maybe sent" || got[1].Text != "maybe sent" {
			t.Fatalf("the messages were not recorded: %+v", got)
		}
	})

	t.Run("DelayPastTheClientDeadline", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t)
		// The deadline leaves a loaded machine time to send the request
		// (50 ms did not always); the answer comes long after it.
		s.fake.Inject(fakeplatform.Fault{Platform: message.Slack, Delay: 3 * time.Second})
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err := s.slack.Send(cctx, message.Outgoing{Thread: slackThread("D1", ""), Content: message.Text("slow")})
		if class(err) != message.FailUnknown {
			t.Fatalf("got %v, want unknown", err)
		}
		// The slow platform still delivers it.
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
		defer wcancel()
		got, err := s.fake.WaitFor(wctx, 1)
		if err != nil || got[0].Text != "slow" {
			t.Fatalf("WaitFor: %+v, %v", got, err)
		}
	})
}

func TestWaitForAndConcurrency(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	const perChat = 15
	chats := []string{"41", "42", "43"}
	var wg sync.WaitGroup
	errs := make(chan error, perChat*len(chats)*2)
	for _, chat := range chats {
		wg.Go(func() {
			for i := range perChat {
				if _, err := s.tg.Send(ctx, message.Outgoing{Thread: tgThread(chat, ""), Content: message.Text(strconv.Itoa(i))}); err != nil {
					errs <- err
				}
			}
		})
		wg.Go(func() {
			for i := range perChat {
				if _, err := s.slack.Send(ctx, message.Outgoing{Thread: slackThread("C"+chat, ""), Content: message.Text(strconv.Itoa(i))}); err != nil {
					errs <- err
				}
			}
		})
	}
	total := 2 * perChat * len(chats)
	got, err := s.fake.WaitFor(ctx, total)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err != nil || len(got) < total {
		t.Fatalf("WaitFor: %d, %v", len(got), err)
	}
	// Per chat, ids increase in delivery order and texts keep send order.
	last := map[string]string{}
	next := map[string]int{}
	for _, d := range s.fake.Delivered() {
		key := string(d.Platform) + d.Chat
		if d.Text != strconv.Itoa(next[key]) {
			t.Fatalf("%s: text %q out of order", key, d.Text)
		}
		next[key]++
		if prev, ok := last[key]; ok && !less(d.Platform, prev, d.MessageID) {
			t.Fatalf("%s: id %s after %s", key, d.MessageID, prev)
		}
		last[key] = d.MessageID
	}

	// WaitFor gives up with ctx.
	short, cancelShort := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancelShort()
	got, err = s.fake.WaitFor(short, total+1)
	if !errors.Is(err, context.DeadlineExceeded) || len(got) != total {
		t.Fatalf("WaitFor past the end: %d, %v", len(got), err)
	}
}

func less(p message.Platform, a, b string) bool {
	if p == message.Telegram {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x < y
	}
	return len(a) == len(b) && a < b
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	for path, status := range map[string]int{
		"/telegram/bot" + tgToken + "/getMe":         200,
		"/telegram/bot" + tgToken + "/deleteWebhook": 404,
		"/bot" + tgToken + "/getMe":                  404, // every fake lives under its platform
		"/slack/api/chat.postMessage":                200, // Slack's own not_authed, as HTTP 200
		"/slack/chat.scheduleMessage":                404,
		"/discord/":                                  404,
		"/elsewhere":                                 404,
	} {
		resp, err := http.Post(s.srv.URL+path, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != status {
			t.Errorf("%s: %d, want %d", path, resp.StatusCode, status)
		}
	}
	// For serves one platform's fake at its own root.
	api, ok := s.fake.For(message.Telegram)
	if !ok {
		t.Fatal("no Telegram fake")
	}
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/bot"+tgToken+"/getMe", strings.NewReader(`{}`)))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"is_bot":true`) {
		t.Fatalf("For(telegram) getMe: %d %s", rec.Code, rec.Body)
	}
}

// TestEveryPlatformHasAFake: the registry is the list of platforms; each
// has a fake behind Handler, and BaseURLs points one of the adapter's own
// URL settings at it.
func TestEveryPlatformHasAFake(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	urls := fakeplatform.BaseURLs("http://fake.test/fake")
	if len(urls) < len(registry.Chat()) {
		t.Errorf("BaseURLs = %v for %d platforms", urls, len(registry.Chat()))
	}
	for k, u := range urls {
		if !strings.HasPrefix(u, "http://fake.test/fake/") {
			t.Errorf("BaseURLs sets %s to %s, outside the fakes", k, u)
		}
	}
	for _, a := range registry.Chat() {
		p := a.Platform()
		if _, ok := s.fake.For(p); !ok {
			t.Errorf("%s has no fake: add one under localstack/fakeplatform and to fakes", p)
			continue
		}
		found := false
		for _, set := range a.Settings() {
			if u, ok := urls[set.Key]; ok {
				found = found || (set.Kind == platform.KindURL && u == "http://fake.test/fake/"+string(p))
			}
		}
		if !found {
			t.Errorf("%s: BaseURLs %v sets none of its URL settings to its fake", p, urls)
		}
	}
}

// TestSigningHelpers: the composite's helpers are the fakes' own, which
// their tests check against the adapters' receivers on the real samples.
func TestSigningHelpers(t *testing.T) {
	t.Parallel()
	now := time.Unix(1764432240, 0)
	for _, body := range [][]byte{[]byte(`{"type":"event_callback"}`), []byte(`payload=%7B%7D`)} {
		if got, want := fakeplatform.SignSlack("s3cret", now, body), fakeslack.Sign("s3cret", now, body); !reflect.DeepEqual(got, want) {
			t.Errorf("SignSlack(%s) = %v, want %v", body, got, want)
		}
	}
	if got, want := fakeplatform.TelegramHeaders("s3cret"), faketelegram.Headers("s3cret"); !reflect.DeepEqual(got, want) || got.Get("X-Telegram-Bot-Api-Secret-Token") != "s3cret" {
		t.Errorf("TelegramHeaders = %v, want %v", got, want)
	}
}
