package turn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/history"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
)

// deliver settles the units of ev's intent as a platform would: the ones
// receipts names are sent with those message ids, the others failed.
func (s *setup) deliver(ev message.Event, receipts map[string]string) {
	s.t.Helper()
	in, err := s.intent(ev)
	if err != nil {
		s.t.Fatal(err)
	}
	for i, u := range in.Units {
		now := s.clock.Now()
		leased, err := s.store.Apply(s.t.Context(), in.ID, intent.Lease(u, i, now, now.Add(time.Minute)))
		if err != nil {
			s.t.Fatal(err)
		}
		t := intent.MarkFailed(leased.Units[i], i, now, message.FailInvalidPayload, "refused")
		if id, ok := receipts[u.ID]; ok {
			t = intent.MarkSent(leased.Units[i], i, now, message.Receipt{MessageIDs: []string{id}})
		}
		if in, err = s.store.Apply(s.t.Context(), in.ID, leased.Closing(t)); err != nil {
			s.t.Fatal(err)
		}
		s.clock.Advance(time.Second)
	}
}

func entryTexts(es []history.Entry) string {
	var out []string
	for _, e := range es {
		out = append(out, string(e.Role)+":"+e.Text)
	}
	return strings.Join(out, " | ")
}

// TestHistoryCarriesWhatWasDelivered: with history on, the third turn
// carries the first two exchanges exactly as delivered (a bubble whose
// send failed is absent), a reply to one of Parley's bubbles carries its
// text and turn, a retried turn writes nothing twice, and an erased
// thread starts again from nothing.
func TestHistoryCarriesWhatWasDelivered(t *testing.T) {
	t.Parallel()
	failOnce := true
	s := newSetup(t, func(req agent.TurnRequest) (agent.Reply, error) {
		if req.Event.Text == "three" && failOnce {
			failOnce = false
			return agent.Reply{}, &agent.Error{Kind: agent.KindTransient, Status: http.StatusBadGateway, Err: agent.ErrStatus}
		}
		return envelopeReply(bubbles(2))(req)
	})
	s.p.History = s.store
	s.p.Config.History = history.Config{Entries: 20}
	ctx := t.Context()
	turnOf := func(id, text, replyTo string) message.Event {
		ev := event(id)
		ev.Text, ev.ReplyTo = text, replyTo
		if err := s.handle(intent.Inbound{Event: ev, ReceivedAt: s.clock.Now()}); err != nil {
			t.Fatalf("turn %s: %v", id, err)
		}
		s.clock.Advance(time.Second)
		return ev
	}
	one := turnOf("1", "one", "")
	s.deliver(one, map[string]string{"b1#1": "101"}) // b2 refused by the platform
	two := turnOf("2", "two", "")
	s.deliver(two, map[string]string{"b1#1": "201", "b2#1": "202"})

	three := event("3")
	three.Text, three.ReplyTo = "three", "101"
	if err := s.handle(intent.Inbound{Event: three, ReceivedAt: s.clock.Now()}); err == nil {
		t.Fatal("the agent failed: want a retry")
	}
	s.clock.Advance(time.Hour)
	if _, err := s.store.GetClaim(ctx, store.IntentKey(intent.IDFor(three.Key())), s.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.handle(intent.Inbound{Event: three, ReceivedAt: s.clock.Now()}); err != nil {
		t.Fatalf("turn 3 again: %v", err)
	}
	calls := s.agent.calls
	want := "person:one | agent:bubble 1 | person:two | agent:bubble 1 | agent:bubble 2"
	for _, req := range calls[2:] {
		if got := entryTexts(req.History); got != want {
			t.Errorf("turn 3's history:\n got %s\nwant %s", got, want)
		}
		q := req.Event.Quote
		if q == nil || q.Text != "bubble 1" || !q.Parley || q.TurnID != intent.IDFor(one.Key()) || q.MessageID != "101" {
			t.Errorf("turn 3 replies to turn 1's first bubble; its quote is %+v", q)
		}
	}
	if got := entryTexts(calls[1].History); got != "person:one | agent:bubble 1" {
		t.Errorf("turn 2's history: %s", got)
	}
	h, err := s.store.GetHistory(ctx, one.Thread.Key(), s.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(entryTexts(h.Entries), "person:three"); n != 1 {
		t.Fatalf("turn 3, tried twice, is %d times in the record: %s", n, entryTexts(h.Entries))
	}

	if err := s.store.EraseHistory(ctx, one.Thread.Key()); err != nil {
		t.Fatal(err)
	}
	s.deliver(three, map[string]string{"b1#1": "301"})
	turnOf("4", "four", "")
	if got := entryTexts(s.agent.calls[len(s.agent.calls)-1].History); got != "" {
		t.Fatalf("after the erase the next turn still carries %s", got)
	}
}

// TestHistoryOffCostsNothing: with history off the turn neither reads nor
// writes a transcript, and the request carries none.
func TestHistoryOffCostsNothing(t *testing.T) {
	t.Parallel()
	s := newSetup(t, envelopeReply(bubbles(1)))
	s.p.History = s.store // wired, but the configuration is off
	ev := event("1")
	if err := s.handle(intent.Inbound{Event: ev, ReceivedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if h := s.agent.calls[0].History; h != nil {
		t.Fatalf("history sent while off: %+v", h)
	}
	h, err := s.store.GetHistory(t.Context(), ev.Thread.Key(), t0)
	if err != nil || h.Version != 0 {
		t.Fatalf("a record was written while off: %+v %v", h, err)
	}
}

// TestHistoryNeverOverTheRequestBound: a transcript at its largest bound
// beside an event at the queue's largest leaves the request within
// MaxRequestBytes, oldest entries dropped first.
func TestHistoryNeverOverTheRequestBound(t *testing.T) {
	t.Parallel()
	s := newSetup(t, envelopeReply(bubbles(1)))
	s.p.History = s.store
	s.p.Config.History = history.Config{Entries: history.MaxEntries, Bytes: history.MaxBytes}
	for i := range 8 {
		ev := event(string(rune('a' + i)))
		ev.Text = strings.Repeat("x", 200_000)
		if err := s.handle(intent.Inbound{Event: ev, ReceivedAt: s.clock.Now()}); err != nil {
			t.Fatal(err)
		}
		s.clock.Advance(time.Second)
	}
	for i, req := range s.agent.calls {
		body, err := jsonSize(req)
		if err != nil {
			t.Fatal(err)
		}
		if body > 1<<20 {
			t.Fatalf("request %d is %d bytes", i, body)
		}
		if i > 1 && len(req.History) == 0 {
			t.Fatalf("request %d carries no history at all", i)
		}
	}
}

func jsonSize(req agent.TurnRequest) (int, error) {
	b, err := json.Marshal(req)
	return len(b), err
}

// refusingHistory is a history store whose writes DynamoDB refuses for
// what they hold (an item over 400 KB).
type refusingHistory struct {
	*dynamostore.Store
	writes int
}

func (r *refusingHistory) PutHistory(context.Context, store.History, time.Time, time.Duration) error {
	r.writes++
	return fmt.Errorf("dynamodb put history: %w", store.ErrInvalid)
}

// TestInvalidHistoryNeverHoldsTheTurn: a history write the store refuses
// for what it holds is not retried: the turn goes on, and the agent is
// asked once.
func TestInvalidHistoryNeverHoldsTheTurn(t *testing.T) {
	t.Parallel()
	s := newSetup(t, envelopeReply(bubbles(1)))
	h := &refusingHistory{Store: s.store}
	s.p.History = h
	s.p.Config.History = history.Config{Entries: 20}
	if err := s.handle(intent.Inbound{Event: event("1"), ReceivedAt: t0}); err != nil {
		t.Fatalf("Handle = %v, want the turn done", err)
	}
	if s.agent.count() != 1 || h.writes != 1 {
		t.Fatalf("agent asked %d times, %d writes; want 1 and 1", s.agent.count(), h.writes)
	}
	if _, err := s.intent(event("1")); err != nil {
		t.Fatalf("no reply committed: %v", err)
	}
}
