package turn_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/queue/queuetest"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/store/dynamostore"
	"github.com/parleyhq/parley/shared/turn"
)

// TestAgentOutageOnTheFIFOModel (finding 8.3): three messages of one thread
// arrive during a one-hour agent outage. On real SQS they ride in one batch,
// every retry of the first returns the others too (a receive each), so with
// receive counts as the budget the thread's later messages reached the DLQ
// within the hour. Now every message is answered after the recovery, in
// arrival order, once, and nothing is dead-lettered.
func TestAgentOutageOnTheFIFOModel(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	clock := queuetest.NewClock(t0)
	dlq := queuetest.New(queuetest.Options{Now: clock.Now})
	inbound := queuetest.New(queuetest.Options{Now: clock.Now, VisibilityTimeout: resources.Inbound.VisibilityTimeout,
		MaxReceiveCount: resources.Inbound.MaxReceiveCount, DLQ: dlq})
	outbound := queuetest.New(queuetest.Options{Now: clock.Now})
	recovery := t0.Add(time.Hour)
	var mu sync.Mutex
	var answered []string
	ag := &fakeAgent{answer: func(req agent.TurnRequest) (agent.Reply, error) {
		if clock.Now().Before(recovery) {
			return agent.Reply{}, &agent.Error{Kind: agent.KindTransient, Status: http.StatusBadGateway, Err: agent.ErrStatus}
		}
		mu.Lock()
		answered = append(answered, req.Event.EventID)
		mu.Unlock()
		return envelopeReply(bubbles(1))(req)
	}}
	st := dynamostore.New(env.DynamoDB, env.Resources.Table)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	p := &turn.Processor{Claims: st, Intents: st, Outbox: outbound, Agent: ag,
		Channels: map[message.Platform]turn.Channel{message.Telegram: channel}, Now: clock.Now, Log: quiet}
	c := &consumer.Consumer{Handle: p.Handle, Visibility: inbound, DeadLetters: dlq, Now: clock.Now, Log: quiet}

	for i, id := range []string{"m1", "m2", "m3"} {
		body, err := intent.EncodeInbound(intent.Inbound{Event: event(id), ReceivedAt: clock.Now()})
		if err != nil {
			t.Fatal(err)
		}
		if err := inbound.Send(context.Background(), queue.Message{Group: event(id).Thread.Key(), Dedup: event(id).Key(), Body: body}); err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			clock.Advance(time.Minute)
		}
	}
	if err := inbound.Drain(context.Background(), clock, c.HandleSQS, 10, 60*time.Second); err != nil {
		t.Fatalf("drain: %v", err)
	}
	if !slices.Equal(answered, []string{"m1", "m2", "m3"}) {
		t.Fatalf("answered %v, want every message after the recovery, in arrival order", answered)
	}
	if n := len(dlq.Messages()); n != 0 {
		t.Fatalf("%d messages dead-lettered during a one-hour outage", n)
	}
	if outbound.Len() != 3 {
		t.Fatalf("%d replies enqueued, want 3", outbound.Len())
	}
}
