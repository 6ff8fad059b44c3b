package turn_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/turn"
)

// reactor records the reactions a turn sets itself (the received one).
type reactor struct {
	mu  sync.Mutex
	got []string
}

func (r *reactor) React(_ context.Context, _ message.Thread, id string, x message.React) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, id+":"+x.Emoji)
	return nil
}

func reacting(s *setup) *reactor {
	r := &reactor{}
	ch := channel
	ch.Reactor, ch.Capabilities.Reactions = r, true
	s.p.Channels = map[message.Platform]turn.Channel{message.Telegram: ch}
	s.p.Config.Status = turn.StatusReactions{On: true}
	return r
}

// TestStatusLifecycle: a person's message is reacted to as received while
// its turn runs, and its intent ends with its final status reaction after
// the reply's bubbles (after the agent's own reaction, which comes first);
// a turn with nothing to say ends answered; one the agent refused ends
// with the failure mark; a proactive turn has none.
func TestStatusLifecycle(t *testing.T) {
	t.Parallel()
	s := newSetup(t, func(req agent.TurnRequest) (agent.Reply, error) {
		switch req.Event.EventID {
		case "quiet":
			return agent.Reply{Status: http.StatusNoContent}, nil
		case "refused":
			return agent.Reply{}, &agent.Error{Kind: agent.KindPermanent, Status: http.StatusBadRequest, Err: agent.ErrStatus}
		}
		return envelopeReply(`{"schema":"openab.turn.v1","react":"👍","messages":[{"id":"b1","text":"hi"}]}`)(req)
	})
	r := reacting(s)
	units := func(ev message.Event) []intent.Unit {
		t.Helper()
		if err := s.handle(intent.Inbound{Event: ev, ReceivedAt: t0}); err != nil {
			t.Fatalf("%s: %v", ev.EventID, err)
		}
		in, err := s.intent(ev)
		if err != nil {
			t.Fatalf("%s: %v", ev.EventID, err)
		}
		return in.Units
	}
	got := units(event("1"))
	if len(got) != 3 || got[0].ID != "react#1" || got[0].Content.React.Emoji != "👍" || got[1].ID != "b1#1" || got[2].ID != "status#1" {
		t.Fatalf("units %+v: want the agent's reaction, the bubble, the status", got)
	}
	st := got[2].Content.React
	if !st.Status || st.Emoji != "👌" || st.Failed != "💔" || st.Received != "👀" || got[2].ReplyTo != "m1" || !got[2].Parley {
		t.Fatalf("status unit %+v %+v", got[2], st)
	}
	if len(r.got) != 1 || r.got[0] != "m1:👀" {
		t.Fatalf("reactions set by the turn: %v, want 👀 on the message", r.got)
	}
	if got := units(event("quiet")); len(got) != 1 || got[0].Content.React.Emoji != "👌" {
		t.Fatalf("nothing to say: %+v, want the answered status alone", got)
	}
	if got := units(event("refused")); len(got) != 1 || got[0].Content.React.Emoji != "💔" {
		t.Fatalf("refused: %+v, want the failure mark alone", got)
	}
	pro := event("pro")
	pro.Kind, pro.Platform, pro.Account = message.KindProactive, message.Events, "cron"
	if got := units(pro); len(got) != 2 || got[1].Content.React != nil && got[1].Content.React.Status {
		t.Fatalf("a proactive turn: %+v, want no status", got)
	}
}

// TestDeadLetteredTurnIsMarkedFailed: a turn dead-lettered past its age
// leaves its message marked failed, through an intent of its own, and its
// claim free, so that a redrive runs it again.
func TestDeadLetteredTurnIsMarkedFailed(t *testing.T) {
	t.Parallel()
	s := newSetup(t, func(agent.TurnRequest) (agent.Reply, error) {
		return agent.Reply{}, &agent.Error{Kind: agent.KindTransient, Status: http.StatusBadGateway, Err: agent.ErrStatus}
	})
	reacting(s)
	s.p.Config.MaxAge = time.Hour
	ev := event("g1")
	s.clock.Advance(61 * time.Minute)
	var dead *consumer.DeadLetterError
	if err := s.handle(intent.Inbound{Event: ev, ReceivedAt: t0}); !errors.As(err, &dead) {
		t.Fatalf("Handle = %v, want DeadLetter", err)
	}
	mark, err := s.store.GetIntent(t.Context(), intent.IDFor(ev.Key()+"#dead-letter"))
	if err != nil || len(mark.Units) != 1 || mark.Units[0].Content.React.Emoji != "💔" {
		t.Fatalf("failure mark %+v, %v", mark, err)
	}
	if refs := s.outbound(); len(refs) != 1 || refs[0].Intent != mark.ID {
		t.Fatalf("enqueued %+v, want the mark's unit", refs)
	}
	if c, err := s.claim(ev); err != nil || c.Live(s.clock.Now()) {
		t.Fatalf("claim = %+v, %v; want it free for a redrive", c, err)
	}
}

func TestParseStatusReactions(t *testing.T) {
	for in, want := range map[string]turn.StatusReactions{
		"": {}, "off": {}, "on": {On: true}, "👀, ✅ ,❌": {On: true, Received: "👀", Answered: "✅", Failed: "❌"},
	} {
		if got, err := turn.ParseStatusReactions(in); err != nil || got != want {
			t.Errorf("ParseStatusReactions(%q) = %+v, %v", in, got, err)
		}
	}
	for _, in := range []string{"yes", "👀,✅", "👀,,❌", "a b,c,d"} {
		if _, err := turn.ParseStatusReactions(in); err == nil {
			t.Errorf("ParseStatusReactions(%q) accepted", in)
		}
	}
}
