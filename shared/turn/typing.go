package turn

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// TypingRenewer is a Typer whose indicator shows for a while on its own
// (platform.TypingRenewer).
type TypingRenewer interface {
	TypingLife(t message.Thread) time.Duration
}

// TypingStopper is a Typer whose indicator stays until it is stopped
// (platform.TypingStopper).
type TypingStopper interface {
	StopTyping(ctx context.Context, t message.Thread) error
}

// MessageTyper is a typing indicator shown for one of the person's
// messages, which a thread does not name (platform.MessageTyper).
type MessageTyper interface {
	TypingFor(ctx context.Context, t message.Thread, messageID string) error
}

// minTypingLife bounds how often an indicator is renewed, whatever a
// platform says.
const minTypingLife = 250 * time.Millisecond

// typing is one attempt's typing indicator, tied to the attempt's outcome:
// shown when the agent is asked, renewed before it lapses while the
// attempt works (a TypingRenewer), and over when stop is called, whatever
// the outcome (the reply planned, the agent failing, a silent reply, the
// attempt abandoned with its context): nothing renews it after, and a
// TypingStopper is stopped. An indicator therefore never outlives its turn
// by more than its own life.
type typing struct {
	stopOnce sync.Once
	quit     chan struct{}
	done     chan struct{}
	end      func()
}

// startTyping shows ch's typing indicator in ev's thread until the
// returned typing is stopped: for ev's message where the platform's
// indicator is a message's (MessageTyper) and ev names one, else the
// thread's (Typer). Every call is best effort, bounded by cfg.TypingTimeout.
func (p *Processor) startTyping(ctx context.Context, log *slog.Logger, cfg Config, ch Channel, ev message.Event) *typing {
	ty := &typing{quit: make(chan struct{}), done: make(chan struct{}), end: func() {}}
	t := ev.Thread
	var tp any
	var typeOnce func(context.Context) error
	switch {
	case ch.MessageTyper != nil && ev.MessageID != "":
		tp = ch.MessageTyper
		typeOnce = func(c context.Context) error { return ch.MessageTyper.TypingFor(c, t, ev.MessageID) }
	case ch.Typer != nil:
		tp = ch.Typer
		typeOnce = func(c context.Context) error { return ch.Typer.Typing(c, t) }
	default:
		close(ty.done)
		return ty
	}
	show := func() {
		tctx, cancel := context.WithTimeout(ctx, cfg.TypingTimeout)
		defer cancel()
		if err := typeOnce(tctx); err != nil {
			log.Debug("typing indicator failed", "error", err)
		}
	}
	var every time.Duration
	if r, ok := tp.(TypingRenewer); ok {
		if life := r.TypingLife(t); life > 0 {
			// Renewed a fifth of its life before it lapses.
			every = max(life-life/5, minTypingLife)
		}
	}
	if s, ok := tp.(TypingStopper); ok {
		ty.end = func() {
			// The turn is over even when its context is: the indicator
			// must not outlive it.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.TypingTimeout)
			defer cancel()
			if err := s.StopTyping(sctx, t); err != nil {
				log.Debug("typing indicator not stopped", "error", err)
			}
		}
	}
	go func() {
		defer close(ty.done)
		show()
		if every == 0 {
			return
		}
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ty.quit:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			select {
			case <-ty.quit:
				return
			default:
			}
			show()
		}
	}()
	return ty
}

// stop ends the indicator: it returns once no renewal is in flight, after
// stopping a TypingStopper's. Stopping twice is stopping once.
func (ty *typing) stop() {
	ty.stopOnce.Do(func() {
		close(ty.quit)
		<-ty.done
		ty.end()
	})
}
