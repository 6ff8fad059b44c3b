package turn

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

// send plans an agent's own message (POST /send) like a reply, in its
// thread's order, without calling the agent.
func (p *Processor) send(ctx context.Context, log *slog.Logger, cfg Config, ev message.Event, ch Channel, key, owner, intentID string) error {
	if ev.Send == nil {
		log.Error("send dropped: it carries nothing", "outcome", "send_invalid")
		p.settle(ctx, log, key, owner, store.ClaimFailed, "send_invalid", cfg)
		return nil
	}
	log = log.With("relation", ev.Send.Relation)
	// Recorded in the thread's history as a turn of its own: what it
	// delivers is the thread's too.
	if _, _, err := p.converse(ctx, log, cfg, []heardAt{{ev, p.now()}}, intentID, nil); err != nil {
		p.release(ctx, log, key, owner, time.Time{})
		return err
	}
	reply := agent.Reply{Status: 200, ContentType: ev.Send.ContentType, Body: []byte(ev.Send.Body)}
	units, outcome, err := p.planReply(ctx, log, cfg, ev, ch, intentID, reply)
	if ev.Send.Relation == "system" {
		// Operational output the agent sends in Parley's name: tagged as
		// Parley's own, so no other bot answers its echo.
		for i := range units {
			units[i].Parley = true
		}
	}
	if err != nil {
		var ae *agent.Error
		if errors.As(err, &ae) && ae.Kind == agent.KindPermanent {
			log.Error("send failed: it cannot be planned", "outcome", "send_invalid", "error", err)
			p.settle(ctx, log, key, owner, store.ClaimFailed, "send_invalid", cfg)
			return nil
		}
		p.release(ctx, log, key, owner, time.Time{})
		return err
	}
	return p.commit(ctx, log, cfg, ev, key, owner, intentID, units, outcome)
}
