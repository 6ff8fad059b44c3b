package delivery_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/delivery"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
)

// countingIntents counts the reads delivery makes of the real store.
type countingIntents struct {
	delivery.Intents
	reads atomic.Int32
}

func (c *countingIntents) GetIntent(ctx context.Context, id string) (intent.Intent, error) {
	c.reads.Add(1)
	return c.Intents.GetIntent(ctx, id)
}

func (s *setup) handleFirst(in intent.Intent) error {
	return s.p.Handle(s.t.Context(), consumer.Record{SQSMessage: events.SQSMessage{MessageId: "m1", Body: string(intent.EncodeFirstRef(in.ID, in.Units[0].ID))}})
}

// TestFirstUnitIsLeasedWithoutARead: the first unit of a fresh intent is
// leased straight away, the lease's answer standing in for a read; a
// redelivery, or a first unit already retried, loses the compare-and-set
// and goes the usual way, with the answer as its read: never a second send,
// never an early one.
func TestFirstUnitIsLeasedWithoutARead(t *testing.T) {
	t.Parallel()
	s := newSetup(t, delivery.Config{BubbleDelay: time.Second})
	counting := &countingIntents{Intents: s.store}
	s.p.Intents = counting
	th := message.Thread{Platform: message.Telegram, Account: "1", Chat: "2"}

	in := s.create(th, pending("a#1"), pending("b#1"))
	if err := s.handleFirst(in); err != nil {
		t.Fatal(err)
	}
	if n := counting.reads.Load(); n != 0 {
		t.Fatalf("%d reads for a fresh first unit, want none", n)
	}
	if got := states(s.get(in)); got != "a#1:sent@1 b#1:pending@0" {
		t.Fatalf("states %s", got)
	}
	// Redelivered: nothing is sent again.
	if err := s.handleFirst(in); err != nil {
		t.Fatal(err)
	}
	if got := s.sender.texts(); len(got) != 1 {
		t.Fatalf("sent %q, want the first unit once", got)
	}
	if n := counting.reads.Load(); n != 0 {
		t.Fatalf("the redelivery read the intent %d times: the lost compare-and-set answers with it", n)
	}

	// A first unit that failed retryably waits for its time, as always.
	s.sender.respond = func(n int, m message.Outgoing) error {
		if m.Content.Text == "text c#1" && n == 2 {
			return &message.SendError{Class: message.FailRateLimit, RetryAfter: time.Minute}
		}
		return nil
	}
	retried := s.create(th, pending("c#1"))
	if _, ok := retryAfter(s.handleFirst(retried)); !ok {
		t.Fatal("a rate-limited first unit was not parked")
	}
	if _, ok := retryAfter(s.handleFirst(retried)); !ok {
		t.Fatalf("a parked first unit was sent before its time: %s", states(s.get(retried)))
	}
	s.clock.Sleep(t.Context(), 2*time.Minute)
	if err := s.handleFirst(retried); err != nil {
		t.Fatal(err)
	}
	if got := states(s.get(retried)); got != "c#1:sent@2" {
		t.Fatalf("states %s", got)
	}
}
