package turn_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/turn"
)

// messageTyper is an indicator shown for one of the person's messages
// (WhatsApp's), lapsing on its own; it records the message of each call.
type messageTyper struct {
	mu  sync.Mutex
	ids []string
}

func (m *messageTyper) TypingFor(_ context.Context, _ message.Thread, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ids = append(m.ids, id)
	return nil
}

func (m *messageTyper) TypingLife(message.Thread) time.Duration { return 100 * time.Millisecond }

func (m *messageTyper) calls() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.ids)
}

// TestMessageTypingNamesThePersonsMessage: where the platform's indicator is
// a message's, the turn shows it for the message it answers (preferred to a
// thread's Typer), renews it while the agent works, and stops when the
// attempt is over; an event that names no message of the person's (a send,
// a proactive event) falls back to the thread's indicator.
func TestMessageTypingNamesThePersonsMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		messageID string
	}{
		{name: "ForTheMessage", messageID: "wamid.ADA1"},
		{name: "NoMessageFallsBack"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mt, ty := &messageTyper{}, newWatchedTyper()
			s := newSetup(t, func(req agent.TurnRequest) (agent.Reply, error) {
				time.Sleep(300 * time.Millisecond) // three lives of the indicator
				return envelopeReply(bubbles(1))(req)
			})
			s.p.Channels[message.Telegram] = turn.Channel{Capabilities: channel.Capabilities, Typer: ty, MessageTyper: mt}
			ev := event("mtyping-" + tc.name)
			ev.MessageID = tc.messageID
			if err := s.handle(intent.Inbound{Event: ev}); err != nil {
				t.Fatal(err)
			}
			got := mt.calls()
			shown, _, _ := ty.counts()
			if tc.messageID == "" {
				if len(got) != 0 || shown == 0 {
					t.Fatalf("message typer %q, thread typer shown %d: want the thread's indicator", got, shown)
				}
				return
			}
			if len(got) < 2 || shown != 0 {
				t.Fatalf("message typer %q, thread typer shown %d: want the message's indicator, renewed", got, shown)
			}
			for _, id := range got {
				if id != tc.messageID {
					t.Fatalf("indicator for %q, want the person's message %q", id, tc.messageID)
				}
			}
			time.Sleep(300 * time.Millisecond)
			if again := mt.calls(); len(again) != len(got) {
				t.Fatalf("renewed %d times after the turn ended", len(again)-len(got))
			}
		})
	}
}
