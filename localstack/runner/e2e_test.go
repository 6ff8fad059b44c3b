package runner_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// readSample reads events/<path>, dated now as its platform (the folder)
// would send it: an older LINE, WhatsApp or Telegram event is ignored as a
// replay past the dedupe window.
func readSample(t testing.TB, path string) []byte {
	t.Helper()
	return readSampleAt(t, path, time.Now())
}

// readSampleAt is readSample dated at.
func readSampleAt(t testing.TB, path string, at time.Time) []byte {
	t.Helper()
	b, err := os.ReadFile("../../events/" + path)
	if err != nil {
		t.Fatal(err)
	}
	dir, _, _ := strings.Cut(path, "/")
	return fakeplatform.Dated(message.Platform(dir), b, at)
}

// TestTelegramUpdateBecomesPacedBubbles: a signed Telegram update comes out at
// the platform as exactly the agent's bubbles, in order, with the bubble delay
// between them.
func TestTelegramUpdateBecomesPacedBubbles(t *testing.T) {
	t.Parallel()
	testTelegramUpdateBecomesPacedBubbles(t, false)
}

func testTelegramUpdateBecomesPacedBubbles(t *testing.T, lost bool) *harness {
	h := start(t, options{lostAnswers: lost, env: map[string]string{"PARLEY_BUBBLE_DELAY": "700ms"}})

	status, body := h.postTelegram(telegramUpdate(1001, 42, "/bubbles on it | your flight moved to 8pm\ngate B12 | safe travels"))
	if status != http.StatusOK {
		t.Fatalf("webhook: %d %s", status, body)
	}
	got := h.waitDelivered(3, 30*time.Second)
	want := []string{"on it", "your flight moved to 8pm\ngate B12", "safe travels"}
	if !slices.Equal(texts(got), want) {
		t.Fatalf("delivered %q, want %q", texts(got), want)
	}
	for i, d := range got {
		if d.Platform != message.Telegram || d.Chat != "42" {
			t.Fatalf("delivery %d went to %s chat %s", i, d.Platform, d.Chat)
		}
		if i > 0 && d.At.Sub(got[i-1].At) < 700*time.Millisecond {
			t.Fatalf("bubble %d came %s after bubble %d, want at least the 700ms bubble delay", i+1, d.At.Sub(got[i-1].At), i)
		}
	}
	h.quiesce(20 * time.Second)
	if n := len(h.fake.Delivered()); n != 3 || h.agent.calls() != 1 {
		t.Fatalf("after settling: %d deliveries, %d agent calls; want 3 and 1", n, h.agent.calls())
	}
	in := h.intentFor("evt#telegram#" + tgBotID + "#1001")
	for _, u := range in.Units {
		if u.State != message.UnitSent || len(u.Receipt) != 1 {
			t.Fatalf("unit %s: state %s receipt %v; want sent with a message id", u.ID, u.State, u.Receipt)
		}
	}
	return h
}

// TestSlackEventBecomesPacedBubbles: the same through Slack's signed Events API,
// from the sample DM, with the echo agent's default two bubbles.
func TestSlackEventBecomesPacedBubbles(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{"PARLEY_BUBBLE_DELAY": "500ms"}})

	status, body := h.postSlack(readSample(t, "slack/message-im.json"))
	if status != http.StatusOK {
		t.Fatalf("webhook: %d %s", status, body)
	}
	got := h.waitDelivered(2, 30*time.Second)
	want := []string{"echo: what's on my calendar today?", "28 characters, via slack"}
	if !slices.Equal(texts(got), want) {
		t.Fatalf("delivered %q, want %q", texts(got), want)
	}
	if got[0].Chat != "D0DM000001" || got[0].Thread != "" {
		t.Fatalf("delivered to %s/%s, want the DM inline", got[0].Chat, got[0].Thread)
	}
	if gap := got[1].At.Sub(got[0].At); gap < 500*time.Millisecond {
		t.Fatalf("second bubble %s after the first, want at least 500ms", gap)
	}
}

// TestSlackMentionPairIsOneTurn: Slack sends app_mention and message for one
// mention; Parley asks the agent once and answers in the message's thread.
func TestSlackMentionPairIsOneTurn(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	for _, f := range []string{"slack/app-mention.json", "slack/message-channel.json"} {
		if status, body := h.postSlack(readSample(t, f)); status != http.StatusOK {
			t.Fatalf("%s: %d %s", f, status, body)
		}
	}
	got := h.waitDelivered(2, 30*time.Second)
	h.quiesce(20 * time.Second)
	if h.agent.calls() != 1 || len(h.fake.Delivered()) != 2 {
		t.Fatalf("%d agent calls, %d deliveries; want 1 and 2", h.agent.calls(), len(h.fake.Delivered()))
	}
	if got[0].Chat != "C0CHAN0001" || got[0].Thread != "1764432060.000200" {
		t.Fatalf("replied into %s thread %q, want the mention's thread", got[0].Chat, got[0].Thread)
	}
}

// TestRedeliveryIsOneTurn: the same update three times — at once, after 2 s,
// and after SQS FIFO's 5-minute deduplication window has passed — gives one
// agent call and one reply (I2).
func TestRedeliveryIsOneTurn(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	update := telegramUpdate(2001, 77, "/one hello once")

	for i := range 2 {
		status, body := h.postTelegram(update)
		if status != http.StatusOK {
			t.Fatalf("delivery %d: %d %s", i+1, status, body)
		}
	}
	time.Sleep(2 * time.Second)
	if status, body := h.postTelegram(update); status != http.StatusOK || !strings.Contains(body, `"duplicate"`) {
		t.Fatalf("redelivery after 2 s: %d %s; want 200 duplicate", status, body)
	}
	h.waitDelivered(1, 30*time.Second)
	h.quiesce(20 * time.Second)

	// Past SQS's window: the queue would take the event again, so only
	// Parley's own records can stop it. Both layers are exercised: the
	// webhook (dedupe claim) and a raw re-enqueue (the turn's claim).
	h.clock.Advance(6 * time.Minute)
	if status, body := h.postTelegram(update); status != http.StatusOK || !strings.Contains(body, `"duplicate"`) {
		t.Fatalf("redelivery after the dedup window: %d %s; want 200 duplicate", status, body)
	}
	ev := message.Event{Platform: message.Telegram, Account: tgBotID, EventID: "2001", Kind: message.KindMessage,
		Thread: message.Thread{Platform: message.Telegram, Account: tgBotID, Chat: "77"}, Text: "/one hello once"}
	raw, err := intent.EncodeInbound(intent.Inbound{Event: ev})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.env.SQS.SendMessage(context.Background(), &sqs.SendMessageInput{
		QueueUrl: aws.String(h.env.Resources.InboundURL), MessageBody: aws.String(string(raw)),
		MessageGroupId: aws.String(message.GroupID(ev.Thread.Key())), MessageDeduplicationId: aws.String("forgotten-by-sqs"),
	}); err != nil {
		t.Fatal(err)
	}
	h.quiesce(20 * time.Second)
	if h.agent.calls() != 1 || len(h.fake.Delivered()) != 1 {
		t.Fatalf("%d agent calls, %d deliveries; want exactly 1 and 1", h.agent.calls(), len(h.fake.Delivered()))
	}
	if len(h.logs.lines("msg", "turn skipped: already handled")) == 0 {
		t.Fatal("the re-enqueued event did not reach the turn's claim")
	}
}

// TestManyThreadsKeepTheirOrder: 50 threads × 5 messages, posted concurrently
// (each thread's messages one after another): every thread's turns run in
// arrival order and its bubbles arrive in plan order; nothing lost or extra (I3).
func TestManyThreadsKeepTheirOrder(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	const threads, msgs = 50, 5
	var wg sync.WaitGroup
	for th := range threads {
		wg.Go(func() {
			for m := range msgs {
				text := fmt.Sprintf("/bubbles t%dm%da | t%dm%db", th, m, th, m)
				status, body := h.postTelegram(telegramUpdate(100000+th*10+m, int64(5000+th), text))
				if status != http.StatusOK {
					t.Errorf("thread %d message %d: %d %s", th, m, status, body)
				}
			}
		})
	}
	wg.Wait()
	// A bound for a loaded two-CPU machine, not a speed target.
	h.waitDelivered(threads*msgs*2, 8*time.Minute)
	h.quiesce(30 * time.Second)

	byChat := map[string][]string{}
	for _, d := range h.fake.Delivered() {
		byChat[d.Chat] = append(byChat[d.Chat], d.Text)
	}
	for th := range threads {
		var want, wantAsked []string
		for m := range msgs {
			want = append(want, fmt.Sprintf("t%dm%da", th, m), fmt.Sprintf("t%dm%db", th, m))
			wantAsked = append(wantAsked, fmt.Sprintf("/bubbles t%dm%da | t%dm%db", th, m, th, m))
		}
		chat := fmt.Sprint(5000 + th)
		if got := byChat[chat]; !slices.Equal(got, want) {
			t.Errorf("thread %d delivered %q, want %q", th, got, want)
		}
		key := message.Thread{Platform: message.Telegram, Account: tgBotID, Chat: chat}.Key()
		if got := h.agent.texts(key); !slices.Equal(got, wantAsked) {
			t.Errorf("thread %d: agent asked %q, want %q in arrival order", th, got, wantAsked)
		}
	}
	if n := len(h.fake.Delivered()); n != threads*msgs*2 {
		t.Fatalf("%d deliveries, want %d", n, threads*msgs*2)
	}
}

// TestRateLimitParksOnlyItsThread: a 429 with retry_after 3 parks the unit for
// about 3 s through the queue's visibility; the thread's later bubbles wait
// for it, and other threads flow meanwhile.
func TestRateLimitParksOnlyItsThread(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	h.fake.Inject(fakeplatform.Fault{Platform: message.Telegram, Chat: "301", Status: http.StatusTooManyRequests, RetryAfter: 3 * time.Second, Times: 1})

	posted := time.Now()
	if status, body := h.postTelegram(telegramUpdate(3001, 301, "/bubbles a1 | a2")); status != http.StatusOK {
		t.Fatalf("%d %s", status, body)
	}
	time.Sleep(300 * time.Millisecond)
	if status, body := h.postTelegram(telegramUpdate(3002, 302, "/bubbles b1 | b2")); status != http.StatusOK {
		t.Fatalf("%d %s", status, body)
	}
	got := h.waitDelivered(4, 30*time.Second)
	at := map[string]time.Time{}
	for _, d := range got {
		at[d.Text] = d.At
	}
	if !slices.Equal(texts(filterChat(got, "301")), []string{"a1", "a2"}) {
		t.Fatalf("thread 301 got %q, want a1, a2 in order", texts(filterChat(got, "301")))
	}
	if wait := at["a1"].Sub(posted); wait < 3*time.Second {
		t.Fatalf("a1 delivered %s after posting, want it parked at least retry_after (3 s)", wait)
	}
	if !at["b2"].Before(at["a1"]) {
		t.Fatalf("the other thread waited for the rate-limited one: b2 at %s, a1 at %s", at["b2"], at["a1"])
	}
	in := h.intentFor("evt#telegram#" + tgBotID + "#3001")
	if u := in.Units[0]; u.Attempt != 2 || u.State != message.UnitSent {
		t.Fatalf("rate-limited unit: attempt %d, state %s; want sent on attempt 2", u.Attempt, u.State)
	}
	if len(h.logs.lines("msg", "unit rate limited: parked", "retry_after_ms", "3000")) != 1 {
		t.Fatal("no log line for the parked unit with retry_after_ms 3000")
	}
}

// TestAuthFailureFailsTheUnitAndMovesOn: a 401 fails the unit as auth, logs
// it, and the thread's next bubbles and turns still go out.
func TestAuthFailureFailsTheUnitAndMovesOn(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	h.fake.Inject(fakeplatform.Fault{Platform: message.Telegram, Chat: "401", Status: http.StatusUnauthorized, Times: 1})

	if status, body := h.postTelegram(telegramUpdate(4001, 401, "/bubbles first | second")); status != http.StatusOK {
		t.Fatalf("%d %s", status, body)
	}
	h.waitDelivered(1, 30*time.Second)
	if status, body := h.postTelegram(telegramUpdate(4002, 401, "/one next turn")); status != http.StatusOK {
		t.Fatalf("%d %s", status, body)
	}
	got := h.waitDelivered(2, 30*time.Second)
	if !slices.Equal(texts(got), []string{"second", "next turn"}) {
		t.Fatalf("delivered %q, want the second bubble and the next turn", texts(got))
	}
	in := h.intentFor("evt#telegram#" + tgBotID + "#4001")
	if u := in.Units[0]; u.State != message.UnitFailed || u.FailureClass != message.FailAuth {
		t.Fatalf("first unit: %s/%s, want failed/auth", u.State, u.FailureClass)
	}
	if len(h.logs.lines("msg", "unit failed", "failure_class", "auth")) != 1 {
		t.Fatal("no log line for the auth failure")
	}
}

func filterChat(ds []fakeplatform.Delivery, chat string) []fakeplatform.Delivery {
	var out []fakeplatform.Delivery
	for _, d := range ds {
		if d.Chat == chat {
			out = append(out, d)
		}
	}
	return out
}
