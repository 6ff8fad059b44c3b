package delivery_test

import (
	"context"
	"slices"
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

// handleUnit delivers the record naming unit i of in, as the turn enqueues
// it (intent.EncodeUnitRef).
func (s *setup) handleUnit(in intent.Intent, i int) error {
	return s.p.Handle(s.t.Context(), consumer.Record{SQSMessage: events.SQSMessage{MessageId: "m1", Body: string(intent.EncodeUnitRef(in.ID, in.Units[i].ID, i))}})
}

func (s *setup) handleFirst(in intent.Intent) error { return s.handleUnit(in, 0) }

// fresh gives the setup a processor that has moved no intent yet, as a new
// instance (or one that last moved another intent) is.
func (s *setup) fresh() {
	p := &delivery.Processor{Intents: s.p.Intents, Channels: s.p.Channels, Config: s.p.Config, Now: s.p.Now, Sleep: s.p.Sleep, Log: s.p.Log}
	s.p = p
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

// TestLaterUnitIsLeasedWithoutARead: a later unit is leased straight away
// too, after a whole bubble delay (the unit before was sent before its
// message was deleted, so that is never too early); an instance that moved
// the intent last paces from what it saw, exactly. A unit whose predecessor
// is still open, or held in unknown_after_send, goes the usual way, and is
// never sent before it.
func TestLaterUnitIsLeasedWithoutARead(t *testing.T) {
	t.Parallel()
	s := newSetup(t, delivery.Config{BubbleDelay: time.Second})
	counting := &countingIntents{Intents: s.store}
	s.p.Intents = counting
	th := message.Thread{Platform: message.Telegram, Account: "1", Chat: "2"}

	in := s.create(th, pending("a#1"), pending("b#1"), pending("c#1"))
	if err := s.handleUnit(in, 0); err != nil {
		t.Fatal(err)
	}
	s.fresh() // another instance takes the second unit
	if err := s.handleUnit(in, 1); err != nil {
		t.Fatal(err)
	}
	if got := s.clock.sleeps; !slices.Equal(got, []time.Duration{time.Second}) {
		t.Fatalf("sleeps %v, want one whole bubble delay before the unread lease", got)
	}
	// The same instance takes the third: it paces from the second's
	// receipt, which it wrote, and has waited out nothing yet.
	s.clock.Sleep(t.Context(), 300*time.Millisecond)
	if err := s.handleUnit(in, 2); err != nil {
		t.Fatal(err)
	}
	if got := s.clock.sleeps; !slices.Equal(got, []time.Duration{time.Second, 300 * time.Millisecond, 700 * time.Millisecond}) {
		t.Fatalf("sleeps %v, want the rest of the delay after the second unit", got)
	}
	if got := states(s.get(in)); got != "a#1:sent@1 b#1:sent@1 c#1:sent@1" {
		t.Fatalf("states %s", got)
	}
	if n := counting.reads.Load(); n != 0 {
		t.Fatalf("%d reads for three fresh units, want none", n)
	}

	// The unit before is still pending (its message was lost): the unread
	// lease loses, and the usual way sends both, in order.
	open := s.create(th, pending("d#1"), pending("e#1"))
	s.fresh()
	if err := s.handleUnit(open, 1); err != nil {
		t.Fatal(err)
	}
	if got := s.sender.texts(); !slices.Equal(got[len(got)-2:], []string{"text d#1", "text e#1"}) {
		t.Fatalf("sent %q, want d then e", got)
	}

	// The unit before is held in unknown_after_send under the resend
	// policy: it is resent before the next one goes.
	s.p.Config.Unknown = delivery.UnknownResend
	held := s.create(th, pending("f#1"), pending("g#1"))
	if _, err := s.store.Apply(t.Context(), held.ID, intent.Lease(held.Units[0], 0, t0, t0.Add(time.Second))); err != nil {
		t.Fatal(err)
	}
	cur := s.get(held)
	if _, err := s.store.Apply(t.Context(), held.ID, intent.MarkUnknown(cur.Units[0], 0, t0, "lost answer", false)); err != nil {
		t.Fatal(err)
	}
	s.fresh()
	if err := s.handleUnit(held, 1); err != nil {
		t.Fatal(err)
	}
	if got := s.sender.texts(); !slices.Equal(got[len(got)-2:], []string{"text f#1", "text g#1"}) {
		t.Fatalf("sent %q, want f resent before g", got)
	}

	// A body whose index names another unit leases nothing it should not.
	wrong := s.create(th, pending("h#1"), pending("i#1"))
	s.fresh()
	body := intent.EncodeUnitRef(wrong.ID, "i#1", 0)
	if err := s.p.Handle(t.Context(), consumer.Record{SQSMessage: events.SQSMessage{MessageId: "m2", Body: string(body)}}); err != nil {
		t.Fatal(err)
	}
	if got := s.sender.texts(); !slices.Equal(got[len(got)-2:], []string{"text h#1", "text i#1"}) {
		t.Fatalf("sent %q, want h then i, each once", got)
	}
}
