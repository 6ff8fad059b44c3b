package turn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/store"
)

// Reactor sets the bot's reaction on a message (platform.Reactor).
type Reactor interface {
	React(ctx context.Context, t message.Thread, messageID string, r message.React) error
}

// StatusReactions is the status lifecycle (PARLEY_STATUS_REACTIONS): a
// person's message shows Received while its turn runs, and, once the turn
// is over, Answered when every bubble of its reply was delivered or Failed
// when one failed for good, or when the turn itself failed. The final one
// is a unit of the turn's intent, delivered after the reply's bubbles, so
// it is as durable as they are: it is always set, after a crash too.
type StatusReactions struct {
	// On turns it on, on platforms with reactions.
	On bool
	// Received, Answered, Failed override every platform's defaults
	// (DefaultStatus) when set.
	Received, Answered, Failed string
}

// DefaultStatus is a platform's status reactions: 👀, then ✅ or ❌; on
// Telegram, whose bots react only with its own list of emoji, 👀, then 👌
// or 💔.
func DefaultStatus(p message.Platform) (received, answered, failed string) {
	if p == message.Telegram {
		return "👀", "👌", "💔"
	}
	return "👀", "✅", "❌"
}

// For is the status reactions on platform p.
func (s StatusReactions) For(p message.Platform) (received, answered, failed string) {
	received, answered, failed = DefaultStatus(p)
	if s.Received != "" {
		received, answered, failed = s.Received, s.Answered, s.Failed
	}
	return received, answered, failed
}

// ParseStatusReactions reads PARLEY_STATUS_REACTIONS: "off" (or empty),
// "on" (each platform's defaults), or three emoji for every platform:
// received, answered, failed ("👀,✅,❌").
func ParseStatusReactions(s string) (StatusReactions, error) {
	switch s = strings.TrimSpace(s); s {
	case "", "off":
		return StatusReactions{}, nil
	case "on":
		return StatusReactions{On: true}, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return StatusReactions{}, fmt.Errorf("want off, on, or three emoji (received, answered, failed), got %q", s)
	}
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
		if parts[i] == "" || strings.ContainsAny(parts[i], " \t") || len(parts[i]) > 64 {
			return StatusReactions{}, fmt.Errorf("%q is not an emoji", parts[i])
		}
	}
	return StatusReactions{On: true, Received: parts[0], Answered: parts[1], Failed: parts[2]}, nil
}

// statused reports whether ev's message gets status reactions: a person's
// message Parley can react to.
func statused(cfg Config, ch Channel, ev message.Event) bool {
	return cfg.Status.On && ch.Reactor != nil && ch.Capabilities.Reactions &&
		ev.Kind == message.KindMessage && ev.Platform != message.Parley && ev.MessageID != ""
}

// received sets ev's received reaction, best effort, within the typing
// indicator's bound: the final reaction replaces it whatever became of it.
func (p *Processor) received(ctx context.Context, log *slog.Logger, cfg Config, ch Channel, ev message.Event) {
	if !statused(cfg, ch, ev) {
		return
	}
	received, _, _ := cfg.Status.For(ev.Thread.Platform)
	rctx, cancel := context.WithTimeout(ctx, cfg.TypingTimeout)
	defer cancel()
	if err := ch.Reactor.React(rctx, ev.Thread, ev.MessageID, message.React{Emoji: received}); err != nil {
		log.Debug("received reaction failed", "error", err)
	}
}

// statusUnits are the final status reactions of the turn's events, the
// turn's last units; failed makes them the failure mark whatever becomes of
// the bubbles before them (the turn itself failed). None when off.
func statusUnits(cfg Config, ch Channel, evs []message.Event, failed bool) []intent.Unit {
	var out []intent.Unit
	for _, ev := range evs {
		if !statused(cfg, ch, ev) {
			continue
		}
		received, answered, fail := cfg.Status.For(ev.Thread.Platform)
		if failed {
			answered = fail
		}
		out = append(out, intent.Unit{
			ID:      "status#" + strconv.Itoa(len(out)+1),
			Content: message.Content{React: &message.React{Emoji: answered, Status: true, Failed: fail, Received: received}},
			ReplyTo: ev.MessageID, State: message.UnitPending, Parley: true,
		})
	}
	return out
}

// reactUnit is the reaction an envelope asked for, on the message the turn
// answers: the reply's first unit. None where the platform has no
// reactions, or the event no message to react to.
func reactUnit(log *slog.Logger, ch Channel, ev message.Event, emoji string) []intent.Unit {
	if emoji == "" {
		return nil
	}
	if ch.Reactor == nil || !ch.Capabilities.Reactions || ev.MessageID == "" {
		log.Info("the agent's reaction is not sent: the platform has no reactions, or the turn answers no message", "outcome", "react_dropped")
		return nil
	}
	return []intent.Unit{{ID: "react#1", Content: message.Content{React: &message.React{Emoji: emoji}}, ReplyTo: ev.MessageID, State: message.UnitPending}}
}

// fail ends a turn that failed for good: with status reactions on, as an
// intent holding only the failure mark (settled done, its reason the
// outcome); otherwise its claim is settled failed, as before.
func (p *Processor) fail(ctx context.Context, log *slog.Logger, cfg Config, ev message.Event, key, owner, intentID, outcome string) error {
	ch := p.Channels[ev.Thread.Platform]
	units := statusUnits(cfg, ch, []message.Event{ev}, true)
	if len(units) == 0 {
		p.endPreview(ctx, log, ch, intentID, nil)
		return p.settleOutcome(ctx, key, owner, store.ClaimFailed, outcome, cfg)
	}
	return p.commit(ctx, log, cfg, ev, key, owner, intentID, units, outcome)
}

// markFailed sets the failure mark of a turn about to be dead-lettered,
// through an intent of its own (the turn's claim is released, so an
// operator's redrive runs the turn again): the mark is as durable as any
// bubble. A failure to record it is logged; the dead letter goes on.
func (p *Processor) markFailed(ctx context.Context, log *slog.Logger, cfg Config, ev message.Event) {
	ch := p.Channels[ev.Thread.Platform]
	units := statusUnits(cfg, ch, []message.Event{ev}, true)
	if len(units) == 0 {
		return
	}
	creator, ok := p.Intents.(interface {
		CreateIntent(ctx context.Context, in intent.Intent) (intent.Intent, bool, error)
	})
	if !ok {
		return
	}
	now := p.now()
	id := intent.IDFor(ev.Key() + "#dead-letter")
	in, _, err := creator.CreateIntent(ctx, intent.Intent{ID: id, Origin: ev.Key(), Thread: ev.Thread, Units: units,
		CreatedAt: now, ExpiresAt: now.Add(cfg.IntentTTL), SweepAt: now.Add(intent.SweepGrace)})
	if err == nil {
		err = p.Outbox.SendBatch(ctx, queue.Units(in))
	}
	var held *store.ClaimHeldError
	if err != nil && !errors.As(err, &held) {
		log.Error("the failure mark of a dead-lettered turn could not be recorded", "error", err)
	}
}
