package turn_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/turn"
)

// watchedTyper is a typing indicator that lapses on its own (a
// TypingRenewer) and can be stopped (a TypingStopper); it counts what the
// turn did with it.
type watchedTyper struct {
	mu              sync.Mutex
	shown, stops    int
	afterStop       int
	shownTwice      chan struct{}
	shownTwiceClose sync.Once
}

func newWatchedTyper() *watchedTyper { return &watchedTyper{shownTwice: make(chan struct{})} }

func (w *watchedTyper) Typing(context.Context, message.Thread) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.shown++
	if w.stops > 0 {
		w.afterStop++
	}
	if w.shown >= 2 {
		w.shownTwiceClose.Do(func() { close(w.shownTwice) })
	}
	return nil
}

func (w *watchedTyper) TypingLife(message.Thread) time.Duration { return 100 * time.Millisecond }

func (w *watchedTyper) StopTyping(context.Context, message.Thread) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stops++
	return nil
}

func (w *watchedTyper) counts() (shown, stops, afterStop int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.shown, w.stops, w.afterStop
}

// TestTypingEndsWithTheTurn: the indicator is renewed while the agent
// works (it answers only once it was shown twice), and whatever the
// outcome (a reply, the agent failing, a silent reply, the attempt
// abandoned) it is stopped once when the attempt ends and never shown
// again after.
func TestTypingEndsWithTheTurn(t *testing.T) {
	t.Parallel()
	silent := `{"schema":"openab.turn.v1","messages":[{"id":"a","text":"never"}],"next":{"type":"silent"}}`
	for _, tc := range []struct {
		name   string
		answer func(agent.TurnRequest) (agent.Reply, error)
		cancel bool
	}{
		{name: "Success", answer: envelopeReply(bubbles(2))},
		{name: "Failure", answer: func(agent.TurnRequest) (agent.Reply, error) {
			return agent.Reply{}, &agent.Error{Kind: agent.KindPermanent, Status: http.StatusBadRequest, Err: agent.ErrStatus}
		}},
		{name: "Silent", answer: envelopeReply(silent)},
		{name: "Abandoned", cancel: true, answer: func(agent.TurnRequest) (agent.Reply, error) {
			return agent.Reply{}, &agent.Error{Kind: agent.KindTransient, Err: context.Canceled}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ty := newWatchedTyper()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			s := newSetup(t, func(req agent.TurnRequest) (agent.Reply, error) {
				select {
				case <-ty.shownTwice:
				case <-time.After(30 * time.Second):
					t.Error("the indicator was not renewed while the agent worked")
				}
				if tc.cancel {
					// The invocation is cut off: its context ends.
					cancel()
				}
				return tc.answer(req)
			})
			s.p.Channels[message.Telegram] = turn.Channel{Capabilities: channel.Capabilities, Typer: ty}
			body, err := intent.EncodeInbound(intent.Inbound{Event: event("typing-" + tc.name)})
			if err != nil {
				t.Fatal(err)
			}
			_ = s.p.Handle(ctx, consumer.Record{SQSMessage: events.SQSMessage{MessageId: "m1", Body: string(body)}})
			shown, stops, after := ty.counts()
			if shown < 2 || stops != 1 || after != 0 {
				t.Fatalf("shown %d, stopped %d, shown after the stop %d: want renewed, stopped once, then left alone", shown, stops, after)
			}
			// Nothing renews it later either: four lives on, no call more.
			time.Sleep(400 * time.Millisecond)
			if again, _, after := ty.counts(); again != shown || after != 0 {
				t.Fatalf("shown %d times after the turn ended", again-shown)
			}
		})
	}
}
