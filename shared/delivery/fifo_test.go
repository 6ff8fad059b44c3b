package delivery_test

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/delivery"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/queue/queuetest"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/store/dynamostore"
)

// fifoSetup is the delivery function as AWS runs it, as far as the queue is
// concerned: the real consumer and processor on DynamoDB Local, fed by a model
// of SQS FIFO that batches several messages of one group and counts every
// receive, with the outbound queue's real maxReceiveCount and a DLQ.
type fifoSetup struct {
	t      *testing.T
	clock  *queuetest.Clock
	queue  *queuetest.FIFO
	dlq    *queuetest.FIFO
	store  *dynamostore.Store
	sender *sender
	c      *consumer.Consumer
}

func newFIFOSetup(t *testing.T, cfg delivery.Config) *fifoSetup {
	t.Helper()
	env := emulatortest.New(t)
	s := &fifoSetup{t: t, clock: queuetest.NewClock(t0), store: dynamostore.New(env.DynamoDB, env.Resources.Table),
		sender: &sender{caps: message.Capabilities{TextLimit: 4096}}}
	s.dlq = queuetest.New(queuetest.Options{Now: s.clock.Now})
	s.queue = queuetest.New(queuetest.Options{
		Now: s.clock.Now, VisibilityTimeout: resources.Outbound.VisibilityTimeout,
		MaxReceiveCount: resources.Outbound.MaxReceiveCount, DLQ: s.dlq, MaxMessageBytes: resources.Outbound.MaxMessageBytes,
	})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	p := &delivery.Processor{
		Intents: s.store, Channels: map[message.Platform]delivery.Channel{message.Telegram: {Sender: s.sender, Capabilities: s.sender.caps}},
		Config: cfg, Now: s.clock.Now, Sleep: s.clock.Sleep, Log: quiet,
	}
	s.c = &consumer.Consumer{Handle: p.Handle, Visibility: s.queue, DeadLetters: s.dlq, Now: s.clock.Now, Log: quiet}
	return s
}

// reply persists an intent of n units and enqueues them as the turn does.
func (s *fifoSetup) reply(id string, n int) intent.Intent {
	s.t.Helper()
	in := intent.Intent{ID: id, Origin: "evt#" + id, Thread: thread, CreatedAt: s.clock.Now(), ExpiresAt: s.clock.Now().Add(24 * time.Hour)}
	for i := range n {
		in.Units = append(in.Units, intent.Unit{ID: fmt.Sprintf("%s-b%d#1", id, i+1), Content: message.Text(fmt.Sprintf("%s bubble %d", id, i+1)), State: message.UnitPending})
	}
	if _, _, err := s.store.CreateIntent(s.t.Context(), in); err != nil {
		s.t.Fatal(err)
	}
	var msgs []queue.Message
	for _, u := range in.Units {
		msgs = append(msgs, queue.Message{Group: thread.Key(), Dedup: intent.UnitKey(in.ID, u.ID), Body: intent.EncodeRef(in.ID, u.ID)})
	}
	if err := s.queue.SendBatch(s.t.Context(), msgs); err != nil {
		s.t.Fatal(err)
	}
	return in
}

func (s *fifoSetup) drain() {
	s.t.Helper()
	if err := s.queue.Drain(s.t.Context(), s.clock, s.c.HandleSQS, 10, 30*time.Second); err != nil {
		s.t.Fatalf("drain: %v", err)
	}
}

// TestFloodLimitedChatLosesNoBubble (finding 8.2): real SQS hands a
// consumer all three messages of a reply in one batch, and every 429 park
// returns the later ones too, each return a receive. A chat answering 7 × 429
// per unit pushed the third message past maxReceiveCount (20) into the DLQ
// while its unit was still pending. Receive counts are no budget now: all
// three arrive, in order, nothing in the DLQ.
func TestFloodLimitedChatLosesNoBubble(t *testing.T) {
	t.Parallel()
	s := newFIFOSetup(t, delivery.Config{BubbleDelay: time.Second})
	failures := map[string]int{}
	var sent []string // what the platform accepted, in order
	s.sender.respond = func(_ int, m message.Outgoing) error {
		if failures[m.Content.Text]++; failures[m.Content.Text] <= 7 {
			return &message.SendError{Class: message.FailRateLimit, RetryAfter: time.Second, Status: 429, Reason: "Too Many Requests: retry after 1"}
		}
		sent = append(sent, m.Content.Text)
		return nil
	}
	s.reply("r1", 3)
	s.drain()
	if want := []string{"r1 bubble 1", "r1 bubble 2", "r1 bubble 3"}; !slices.Equal(sent, want) {
		t.Fatalf("delivered %q, want all three in order", sent)
	}
	if n := len(s.dlq.Messages()); n != 0 || len(s.queue.DeadLettered()) != 0 {
		t.Fatalf("%d messages in the DLQ, want none", n)
	}
	got, err := s.store.GetIntent(t.Context(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range got.Units {
		if u.State != message.UnitSent || u.Attempt != 8 {
			t.Fatalf("unit %s = %s@%d, want sent on its 8th attempt", u.ID, u.State, u.Attempt)
		}
	}
}

// TestPoisonReachesTheDLQAlone (finding 8.2): a message that can never be
// delivered was returned until its receive count ran out, dragging the later
// messages of its group (returned with it each time) into the DLQ too. It
// goes alone, at once, and its group-mates are delivered.
func TestPoisonReachesTheDLQAlone(t *testing.T) {
	t.Parallel()
	s := newFIFOSetup(t, delivery.Config{BubbleDelay: time.Millisecond})
	if err := s.queue.Send(t.Context(), queue.Message{Group: thread.Key(), Dedup: "poison", Body: []byte(`{"version":"nope"}`)}); err != nil {
		t.Fatal(err)
	}
	s.reply("r2", 2)
	s.drain()
	if texts := s.sender.texts(); !slices.Equal(texts, []string{"r2 bubble 1", "r2 bubble 2"}) {
		t.Fatalf("delivered %q, want the poison's group-mates", texts)
	}
	dead := s.dlq.Messages()
	if len(dead) != 1 || string(dead[0].Body) != `{"version":"nope"}` {
		t.Fatalf("DLQ holds %+v, want the poison alone", dead)
	}
}

// TestRetryAfterPastTwelveHoursIsWaitedOut (finding 8.4): a platform's
// retry_after of 14 hours asked SQS for a park it always refuses. The model
// refuses it too; the unit is parked as long as SQS allows, then for the
// rest, and sent at its time.
func TestRetryAfterPastTwelveHoursIsWaitedOut(t *testing.T) {
	t.Parallel()
	s := newFIFOSetup(t, delivery.Config{MaxAge: 24 * time.Hour})
	first := true
	s.sender.respond = func(int, message.Outgoing) error {
		if first {
			first = false
			return &message.SendError{Class: message.FailRateLimit, RetryAfter: 14 * time.Hour, Status: 429, Reason: "Too Many Requests: retry after 50400"}
		}
		return nil
	}
	s.reply("r3", 1)
	start := s.clock.Now()
	s.drain()
	got, err := s.store.GetIntent(t.Context(), "r3")
	if err != nil {
		t.Fatal(err)
	}
	u := got.Units[0]
	if u.State != message.UnitSent || u.SentAt.Sub(start) < 14*time.Hour || u.SentAt.Sub(start) > 14*time.Hour+time.Minute {
		t.Fatalf("unit = %s sent %v after the 429, want sent 14h after", u.State, u.SentAt.Sub(start))
	}
	if len(s.dlq.Messages()) != 0 {
		t.Fatal("the waiting message reached the DLQ")
	}
}

// TestPlatformOutageOnTheFIFOModel: a 30-minute outage of errors that prove
// nothing was posted (connection refused, 429 up to retry_after 300 s), with
// two replies queued in the thread, loses nothing: everything after the
// recovery, in order, once, nothing in the DLQ.
func TestPlatformOutageOnTheFIFOModel(t *testing.T) {
	t.Parallel()
	s := newFIFOSetup(t, delivery.Config{BubbleDelay: time.Second})
	recovery := t0.Add(30 * time.Minute)
	n := 0
	s.sender.respond = func(int, message.Outgoing) error {
		if s.clock.Now().Before(recovery) {
			n++
			if n%3 == 0 {
				return &message.SendError{Class: message.FailRateLimit, RetryAfter: 300 * time.Second, Status: 429, Reason: "Too Many Requests"}
			}
			return &message.SendError{Class: message.FailTransient, Reason: "request not sent"}
		}
		return nil
	}
	s.reply("o1", 2)
	s.clock.Advance(time.Minute)
	s.reply("o2", 2)
	s.drain()
	var ok []string
	for _, m := range s.sender.sent[len(s.sender.sent)-4:] {
		ok = append(ok, m.Content.Text)
	}
	if want := []string{"o1 bubble 1", "o1 bubble 2", "o2 bubble 1", "o2 bubble 2"}; !slices.Equal(ok, want) {
		t.Fatalf("last four sends %q, want both replies after the recovery, in order", ok)
	}
	if len(s.dlq.Messages()) != 0 {
		t.Fatal("messages reached the DLQ during the outage")
	}
	for _, id := range []string{"o1", "o2"} {
		in, err := s.store.GetIntent(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range in.Units {
			if u.State != message.UnitSent || u.SentAt.Before(recovery) {
				t.Fatalf("%s: unit %s = %s at %v", id, u.ID, u.State, u.SentAt)
			}
		}
	}
}
