package turn_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/delivery"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/queue/queuetest"
	"github.com/parleyhq/parley/shared/store/dynamostore"
	"github.com/parleyhq/parley/shared/turn"
)

// recordingSender is a platform that takes every send and keeps its text.
type recordingSender struct {
	mu   sync.Mutex
	sent []string
}

func (s *recordingSender) Send(_ context.Context, m message.Outgoing) (message.Receipt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, m.Content.Text)
	return message.Receipt{MessageIDs: []string{"s" + string(rune('0'+len(s.sent)))}}, nil
}

func (s *recordingSender) texts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sent)
}

// busyRig is a thread's turns and deliveries on the FIFO model: inbound
// and outbound with the stack's settings and the model's real batching,
// over DynamoDB Local.
type busyRig struct {
	t                 *testing.T
	clock             *queuetest.Clock
	inbound, outbound *queuetest.FIFO
	turns, deliveries *consumer.Consumer
	sender            *recordingSender
	agent             *fakeAgent
}

func newBusyRig(t *testing.T, policy turn.BusyPolicy, answer func(req agent.TurnRequest) (agent.Reply, error)) *busyRig {
	env := emulatortest.New(t)
	clock, inbound, dlq, outbound := modelQueues()
	st := dynamostore.New(env.DynamoDB, env.Resources.Table)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	r := &busyRig{t: t, clock: clock, inbound: inbound, outbound: outbound, sender: &recordingSender{}, agent: &fakeAgent{answer: answer}}
	p := &turn.Processor{Claims: st, Intents: st, Outbox: outbound, Inbox: inbound, Agent: r.agent, Busy: st,
		Channels: map[message.Platform]turn.Channel{message.Telegram: channel},
		Config:   turn.Config{Busy: turn.BusyConfig{Default: policy}}, Now: clock.Now, Log: quiet}
	r.turns = &consumer.Consumer{Handle: p.Handle, Visibility: inbound, DeadLetters: dlq, Now: clock.Now, Log: quiet}
	d := &delivery.Processor{Intents: st, Now: clock.Now, Sleep: clock.Sleep, Log: quiet,
		Channels: map[message.Platform]delivery.Channel{message.Telegram: {Sender: r.sender, Capabilities: channel.Capabilities}},
		Config:   delivery.Config{BubbleDelay: time.Millisecond}}
	r.deliveries = &consumer.Consumer{Handle: d.Handle, Visibility: outbound, Now: clock.Now, Log: quiet}
	return r
}

// send puts a person's message on inbound, received now.
func (r *busyRig) send(ev message.Event) {
	r.t.Helper()
	body, err := intent.EncodeInbound(intent.Inbound{Event: ev, ReceivedAt: r.clock.Now()})
	if err != nil {
		r.t.Fatal(err)
	}
	if err := r.inbound.Send(context.Background(), queue.Message{Group: ev.Thread.Key(), Dedup: ev.Key(), Body: body}); err != nil {
		r.t.Fatal(err)
	}
}

func (r *busyRig) drain(q *queuetest.FIFO, c *consumer.Consumer) {
	r.t.Helper()
	if err := q.Drain(context.Background(), r.clock, c.HandleSQS, 10, time.Minute); err != nil {
		r.t.Fatal(err)
	}
}

func textOf(ev message.Event, text string) message.Event {
	ev.Text = text
	return ev
}

func eventTexts(evs []message.Event) string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Text)
	}
	return strings.Join(out, ",")
}

// TestCollectAnswersWhatCameDuringATurnInOneTurn: three messages sent
// while a slow turn runs make exactly one next turn carrying all three in
// order, on the FIFO model, whose batches hand the three to the turn
// function together; the collection's turn is retried once (the agent
// fails) and asks with the same three; a late redelivery of a collected
// message is answered by nobody again; a message after that runs alone.
func TestCollectAnswersWhatCameDuringATurnInOneTurn(t *testing.T) {
	t.Parallel()
	var r *busyRig
	failedOnce := false
	r = newBusyRig(t, turn.BusyCollect, func(req agent.TurnRequest) (agent.Reply, error) {
		if req.Event.EventID == "m1" {
			// While the agent thinks about m1, three more arrive.
			for _, id := range []string{"m2", "m3", "m4"} {
				r.send(textOf(event(id), "text "+id))
				r.clock.Advance(time.Second)
			}
		}
		if len(req.Events) > 0 && !failedOnce {
			failedOnce = true
			return agent.Reply{}, &agent.Error{Kind: agent.KindTransient, Status: http.StatusBadGateway, Err: agent.ErrStatus}
		}
		return envelopeReply(bubbles(1))(req)
	})
	r.send(textOf(event("m1"), "text m1"))
	r.drain(r.inbound, r.turns)
	calls := r.agent.calls
	if len(calls) != 3 {
		t.Fatalf("the agent was asked %d times, want m1, then the collection twice (once failing)", len(calls))
	}
	if calls[0].Event.Text != "text m1" || calls[0].Events != nil {
		t.Fatalf("first turn: %+v", calls[0].Event)
	}
	for _, c := range calls[1:] {
		if got := eventTexts(c.Events); got != "text m2,text m3,text m4" || c.Event.Text != "text m4" {
			t.Fatalf("the collection's turn carries %q (event %q), want the three in order", got, c.Event.Text)
		}
		if c.TurnID != calls[1].TurnID {
			t.Fatal("the retried collection is another turn")
		}
	}
	r.drain(r.outbound, r.deliveries)
	if got := r.sender.texts(); len(got) != 2 {
		t.Fatalf("sent %v, want one reply to m1 and one to the three", got)
	}

	// m3 redelivered past SQS's deduplication window: its claim answers.
	r.clock.Advance(10 * time.Minute)
	r.send(textOf(event("m3"), "text m3"))
	r.drain(r.inbound, r.turns)
	if n := len(r.agent.calls); n != 3 {
		t.Fatalf("a late redelivery asked the agent again: %d calls", n)
	}
	r.send(textOf(event("m5"), "text m5"))
	r.drain(r.inbound, r.turns)
	if last := r.agent.calls[len(r.agent.calls)-1]; last.Event.EventID != "m5" || last.Events != nil {
		t.Fatalf("a message to an idle thread: %+v", last)
	}
	if n := len(r.inbound.DeadLettered()); n != 0 {
		t.Fatalf("%d messages dead-lettered", n)
	}
}

// TestInterruptSupersedesWhatWasNotSent: a newer message supersedes the
// previous turn's bubbles no delivery started, on the FIFO model: they are
// never sent, the newer turn names the superseded turn and its cancelled
// bubbles (also when the newer turn is asked again), and nothing else is
// lost or sent twice, with every record redelivered once more.
func TestInterruptSupersedesWhatWasNotSent(t *testing.T) {
	t.Parallel()
	failedOnce := false
	r := newBusyRig(t, turn.BusyInterrupt, func(req agent.TurnRequest) (agent.Reply, error) {
		if req.Event.EventID == "m2" && !failedOnce {
			failedOnce = true
			return agent.Reply{}, &agent.Error{Kind: agent.KindTransient, Status: http.StatusBadGateway, Err: agent.ErrStatus}
		}
		if req.Event.EventID == "m1" {
			return envelopeReply(bubbles(3))(req)
		}
		return envelopeReply(`{"schema":"openab.turn.v1","messages":[{"id":"n1","text":"newer"}]}`)(req)
	})
	r.send(textOf(event("m1"), "first"))
	r.drain(r.inbound, r.turns)
	// The first bubble is delivered alone (a batch of one), then the
	// person writes again.
	if _, err := r.outbound.Poll(context.Background(), r.deliveries.HandleSQS, 1, time.Minute); err != nil {
		t.Fatal(err)
	}
	r.send(textOf(event("m2"), "second"))
	r.drain(r.inbound, r.turns)
	r.drain(r.outbound, r.deliveries)

	if got := r.sender.texts(); !slices.Equal(got, []string{"bubble 1", "newer"}) {
		t.Fatalf("sent %v, want the first bubble and the newer reply only", got)
	}
	first := intent.IDFor(event("m1").Key())
	for _, c := range r.agent.calls[1:] {
		sup := c.Superseded
		if sup == nil || sup.TurnID != first || len(sup.Bubbles) != 2 || sup.Bubbles[0].Text != "bubble 2" || sup.Bubbles[1].Text != "bubble 3" {
			t.Fatalf("the newer turn names %+v, want turn %s's bubbles 2 and 3", sup, first)
		}
	}
	if n := len(r.agent.calls); n != 3 {
		t.Fatalf("the agent was asked %d times, want m1 and m2 (twice)", n)
	}

	// Every record again, past SQS's deduplication window.
	r.clock.Advance(10 * time.Minute)
	r.send(textOf(event("m1"), "first"))
	r.send(textOf(event("m2"), "second"))
	for _, id := range []string{"b2#1", "b3#1"} {
		if err := r.outbound.Send(context.Background(), queue.Message{Group: event("m1").Thread.Key(), Dedup: first + "#" + id + "#again", Body: intent.EncodeRef(first, id)}); err != nil {
			t.Fatal(err)
		}
	}
	r.drain(r.inbound, r.turns)
	r.drain(r.outbound, r.deliveries)
	if got := r.sender.texts(); !slices.Equal(got, []string{"bubble 1", "newer"}) {
		t.Fatalf("after redeliveries sent %v: a superseded bubble went, or a bubble went twice", got)
	}
	if n := len(r.agent.calls); n != 3 {
		t.Fatalf("redeliveries asked the agent again: %d calls", n)
	}
}
