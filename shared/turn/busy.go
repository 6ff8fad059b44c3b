package turn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/store"
)

// BusyPolicy says what a thread does with messages that arrive while one
// of its turns runs (PARLEY_BUSY_POLICY). Its value is what configuration
// and logs name.
type BusyPolicy string

const (
	// BusyQueue: every message is a turn of its own, in order. The
	// default: nothing is read or written for it.
	BusyQueue BusyPolicy = "queue"
	// BusyCollect: the messages that arrive while a turn runs are answered
	// by the next turn together, one agent call carrying them all in order
	// (TurnRequest.Events).
	BusyCollect BusyPolicy = "collect"
	// BusyInterrupt: a person's newer message supersedes the thread's
	// previous turn: the bubbles of its reply not yet sent are cancelled
	// (a bubble being sent is finished), and the newer turn carries what
	// was cancelled (TurnRequest.Superseded).
	BusyInterrupt BusyPolicy = "interrupt"
)

// BusyConfig is PARLEY_BUSY_POLICY: a default, per platform, and per
// thread pattern (the first rule that matches wins, then the platform's).
type BusyConfig struct {
	// Default applies where nothing else does. Empty: BusyQueue.
	Default   BusyPolicy
	Platforms map[message.Platform]BusyPolicy
	Threads   []BusyRule
}

// BusyRule is a thread pattern's policy.
type BusyRule struct {
	// Pattern is the rule as written, for logs.
	Pattern string
	// Match reports whether a thread is one of the pattern's.
	Match  func(message.Thread) bool
	Policy BusyPolicy
}

// For is the policy of thread t.
func (c BusyConfig) For(t message.Thread) BusyPolicy {
	for _, r := range c.Threads {
		if r.Match != nil && r.Match(t) {
			return r.Policy
		}
	}
	if p, ok := c.Platforms[t.Platform]; ok {
		return p
	}
	if c.Default == "" {
		return BusyQueue
	}
	return c.Default
}

// Any reports whether some thread has a policy other than BusyQueue.
func (c BusyConfig) Any() bool {
	if c.Default != "" && c.Default != BusyQueue {
		return true
	}
	for _, p := range c.Platforms {
		if p != BusyQueue {
			return true
		}
	}
	for _, r := range c.Threads {
		if r.Policy != BusyQueue {
			return true
		}
	}
	return false
}

// ParseBusyPolicy reads one policy word.
func ParseBusyPolicy(s string) (BusyPolicy, error) {
	switch p := BusyPolicy(strings.TrimSpace(s)); p {
	case BusyQueue, BusyCollect, BusyInterrupt:
		return p, nil
	}
	return "", fmt.Errorf("%q: want queue, collect or interrupt", s)
}

// BusyStore is the busy-policy record as the turn uses it, and the intents
// an interrupt supersedes units of.
type BusyStore interface {
	GetBusy(ctx context.Context, threadKey string) (store.Busy, error)
	JoinBusy(ctx context.Context, threadKey, eventKey string, body []byte, receivedAt, now time.Time, ttl time.Duration) (store.Joined, error)
	EndBusy(ctx context.Context, threadKey, open string, now time.Time, ttl time.Duration) error
	MarkTurn(ctx context.Context, threadKey, intentID string, now time.Time, ttl time.Duration) (string, error)
	GetIntent(ctx context.Context, id string) (intent.Intent, error)
	Apply(ctx context.Context, id string, t intent.Transition) (intent.Intent, error)
}

// busyOutcome is what the busy policy did with a turn's event before the
// turn runs it.
type busyOutcome struct {
	// done: the event was collected or sent behind a collection; its
	// record is done.
	done bool
	// superseded is what an interrupt cancelled.
	superseded *agent.Superseded
}

// busy applies the thread's busy policy to a turn's event, once its claim
// is held.
func (p *Processor) busy(ctx context.Context, log *slog.Logger, cfg Config, rec consumer.Record, in intent.Inbound, ch Channel, key, owner, intentID string) (busyOutcome, error) {
	ev := in.Event
	if p.Busy == nil {
		return busyOutcome{}, nil
	}
	switch cfg.Busy.For(ev.Thread) {
	case BusyCollect:
		return p.collect(ctx, log, cfg, rec, in, ch, key, owner)
	case BusyInterrupt:
		sup, err := p.interrupt(ctx, log, cfg, ev, intentID)
		return busyOutcome{superseded: sup}, err
	}
	return busyOutcome{}, nil
}

// collect gives a person's message to its thread's collection when a turn
// ran as it arrived (or a collection is open), queueing the collection's
// flush behind the messages already waiting when it opens one; sends any
// other event that comes while a collection is open behind its flush, so
// that nothing overtakes the collected messages; and lets every other event
// run its own turn, whose end it records.
func (p *Processor) collect(ctx context.Context, log *slog.Logger, cfg Config, rec consumer.Record, in intent.Inbound, ch Channel, key, owner string) (busyOutcome, error) {
	ev, now := in.Event, p.now()
	thread := ev.Thread.Key()
	if ev.Kind != message.KindMessage || ev.Platform == message.Parley {
		b, err := p.Busy.GetBusy(ctx, thread)
		if err != nil {
			return busyOutcome{}, fmt.Errorf("read the thread's collection: %w", err)
		}
		if b.Open != "" {
			return busyOutcome{done: true}, p.behind(ctx, log, rec, in, key, owner, b.Open)
		}
		return busyOutcome{}, nil
	}
	joined, err := p.Busy.JoinBusy(ctx, thread, ev.Key(), []byte(rec.Body), receivedAt(rec, in, now), now, cfg.ClaimTTL)
	if errors.Is(err, store.ErrInvalid) {
		// The same write fails on every try: the message runs alone.
		log.Error("the message cannot join the thread's collection; it runs its own turn", "outcome", "collect_invalid", "error", err)
		return busyOutcome{}, nil
	}
	if err != nil {
		return busyOutcome{}, fmt.Errorf("join the thread's collection: %w", err)
	}
	switch joined {
	case store.JoinedNot:
		return busyOutcome{}, nil
	case store.JoinedFull:
		b, err := p.Busy.GetBusy(ctx, thread)
		if err != nil {
			return busyOutcome{}, fmt.Errorf("read the thread's collection: %w", err)
		}
		return busyOutcome{done: true}, p.behind(ctx, log, rec, in, key, owner, b.Open)
	case store.JoinedOpened:
		// Queued now, behind every message already waiting in the
		// thread's group: they join before it is due.
		flush := message.Event{
			Platform: message.Parley, Account: "collect", EventID: "collect:" + intent.IDFor(ev.Key()), Kind: message.KindCollected,
			Thread: ev.Thread, ChatType: ev.ChatType, Time: now, Data: map[string]any{collectedBy: ev.Key()},
		}
		body, err := intent.EncodeInbound(intent.Inbound{Event: flush, ReceivedAt: now})
		if err == nil {
			err = p.Inbox.Send(ctx, queue.Message{Group: thread, Dedup: flush.Key(), Body: body})
		}
		if err != nil {
			return busyOutcome{}, fmt.Errorf("queue the collection's turn: %w", err)
		}
	}
	p.received(ctx, log, cfg, ch, ev)
	log.Info("message collected for the thread's next turn", "outcome", "collected")
	p.settle(ctx, log, key, owner, store.ClaimDone, "collected", cfg)
	return busyOutcome{done: true}, nil
}

// collectedBy is the key, in a collection's flush event's Data, of the
// event that opened it.
const collectedBy = "opened_by"

// behind sends the event's inbound message again at the back of its group,
// behind the open collection's flush, and frees its claim for the copy: an
// event that came after the collected messages is answered after them.
func (p *Processor) behind(ctx context.Context, log *slog.Logger, rec consumer.Record, in intent.Inbound, key, owner, open string) error {
	ev := in.Event
	if err := p.Inbox.Send(ctx, queue.Message{Group: ev.Thread.Key(), Dedup: ev.Key() + "#behind#" + open, Body: []byte(rec.Body)}); err != nil {
		return fmt.Errorf("send the event behind the thread's collection: %w", err)
	}
	if err := p.Claims.Release(context.WithoutCancel(ctx), key, owner, store.ReleaseSpec{}); err != nil {
		// Its lease ends on its own; the copy waits for it.
		log.Warn("release the claim of an event sent behind a collection failed", "error", err)
	}
	log.Info("event sent behind the thread's collection", "outcome", "behind_collection")
	return nil
}

// flush is a collection's turn: one agent call answering every collected
// message, in order, then the collection cleared. A flush of a collection
// cleared before does nothing.
func (p *Processor) flush(ctx context.Context, log *slog.Logger, cfg Config, rec consumer.Record, in intent.Inbound, ch Channel, key, owner, intentID string, claim store.Claim) error {
	ev := in.Event
	opener, _ := ev.Data[collectedBy].(string)
	b, err := p.Busy.GetBusy(ctx, ev.Thread.Key())
	if err != nil {
		p.release(ctx, log, key, owner, time.Time{})
		return fmt.Errorf("read the thread's collection: %w", err)
	}
	if opener == "" || b.Open != opener || len(b.Collected) == 0 {
		log.Info("collection's turn skipped: nothing is collected under it", "outcome", "collect_stale")
		p.settle(ctx, log, key, owner, store.ClaimDone, "collect_stale", cfg)
		return nil
	}
	heard := make([]heardAt, 0, len(b.Collected))
	evs := make([]message.Event, 0, len(b.Collected))
	for _, body := range b.Collected {
		c, err := intent.DecodeInbound(body)
		if err != nil {
			log.Error("a collected message does not decode; left out", "error", err)
			continue
		}
		heard = append(heard, heardAt{c.Event, c.ReceivedAt})
		evs = append(evs, c.Event)
	}
	if len(evs) == 0 {
		p.settle(ctx, log, key, owner, store.ClaimDone, "collect_stale", cfg)
		return p.Busy.EndBusy(ctx, ev.Thread.Key(), opener, p.now(), cfg.ClaimTTL)
	}
	log = log.With("collected", len(evs))
	last := evs[len(evs)-1]
	ev.ReplyContext = last.ReplyContext
	units, outcome, err := p.plan(ctx, log, cfg, heard, ch, intentID, nil, nil)
	var ae *agent.Error
	switch {
	case errors.As(err, &ae) && ae.Kind == agent.KindPermanent && !misconfigured(ae.Status):
		log.Error("turn failed: agent refused", "outcome", "agent_failed", "status", ae.Status, "error", err)
		units, outcome = statusUnits(cfg, ch, evs, true), fmt.Sprintf("agent_status_%d", ae.Status)
		if len(units) == 0 {
			p.settle(ctx, log, key, owner, store.ClaimFailed, outcome, cfg)
			return p.Busy.EndBusy(ctx, ev.Thread.Key(), opener, p.now(), cfg.ClaimTTL)
		}
	case err != nil:
		return p.retryLater(ctx, log, cfg, rec, in, key, owner, claim, err)
	default:
		// Each collected message shows its turn is over.
		units = append(units, statusUnits(cfg, ch, evs, failedOutcome(outcome))...)
	}
	if err := p.commit(ctx, log, cfg, ev, key, owner, intentID, units, outcome); err != nil {
		return err
	}
	return p.Busy.EndBusy(ctx, ev.Thread.Key(), opener, p.now(), cfg.ClaimTTL)
}

// interrupt records the turn as its thread's newest and, for a person's
// message, supersedes the turn before it: the bubbles of its reply that
// no delivery has started are cancelled, from the last one back (so none
// is left between a sent one and a cancelled one), and what was cancelled
// (by this run or an earlier run of this turn) is returned for the agent.
func (p *Processor) interrupt(ctx context.Context, log *slog.Logger, cfg Config, ev message.Event, intentID string) (*agent.Superseded, error) {
	switch ev.Kind {
	case message.KindSend, message.KindStatus, message.KindCollected:
		return nil, nil // no turn of the agent's: never superseded, never superseding
	}
	prev, err := p.Busy.MarkTurn(ctx, ev.Thread.Key(), intentID, p.now(), cfg.ClaimTTL)
	if err != nil {
		return nil, fmt.Errorf("record the thread's newest turn: %w", err)
	}
	if ev.Kind != message.KindMessage || ev.Platform == message.Parley || prev == "" {
		return nil, nil
	}
	in, err := p.Busy.GetIntent(ctx, prev)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil // the turn before sent nothing
	}
	for range 3 {
		if err != nil {
			return nil, fmt.Errorf("read the superseded turn: %w", err)
		}
		var conflict *store.IntentConflictError
		in, err = p.cancelPending(ctx, in)
		if errors.As(err, &conflict) {
			in, err = conflict.Current, nil // delivery moved a unit: look again
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("supersede the turn before: %w", err)
		}
		sup := superseded(in)
		if sup != nil {
			log.Info("turn supersedes the thread's previous turn", "outcome", "superseded", "superseded_turn", in.ID, "bubbles", len(sup.Bubbles))
		}
		return sup, nil
	}
	return nil, errors.New("the superseded turn kept changing under us")
}

// cancelPending supersedes in's bubbles no delivery has started, from the
// last: a bubble is cancelled only when every unit of it is pending, and
// the walk stops at the first one that is not (it is being sent, or was).
// Units that are no bubble (a reaction, a question, the status) are left
// to go.
func (p *Processor) cancelPending(ctx context.Context, in intent.Intent) (intent.Intent, error) {
	now := p.now()
	for end := len(in.Units); end > 0; {
		u := in.Units[end-1]
		if u.Content.Text == "" {
			end--
			continue
		}
		bubble, _, _ := strings.Cut(u.ID, "#")
		start := end - 1
		for start > 0 && in.Units[start-1].Content.Text != "" && strings.HasPrefix(in.Units[start-1].ID, bubble+"#") {
			start--
		}
		for i := start; i < end; i++ {
			if st := in.Units[i].State; st != message.UnitPending && in.Units[i].FailureClass != message.FailSuperseded {
				return in, nil
			}
		}
		for i := end - 1; i >= start; i-- {
			if in.Units[i].State != message.UnitPending {
				continue // superseded by an earlier run of this turn
			}
			out, err := p.Busy.Apply(ctx, in.ID, in.Closing(intent.Supersede(in.Units[i], i, now)))
			if err != nil {
				return in, err
			}
			in = out
		}
		end = start
	}
	return in, nil
}

// superseded is what a superseded intent's cancelled bubbles said: nil
// when none was.
func superseded(in intent.Intent) *agent.Superseded {
	var sup *agent.Superseded
	for _, u := range in.Units {
		if u.State != message.UnitFailed || u.FailureClass != message.FailSuperseded {
			continue
		}
		if sup == nil {
			sup = &agent.Superseded{TurnID: in.ID}
		}
		bubble, _, _ := strings.Cut(u.ID, "#")
		if n := len(sup.Bubbles); n > 0 && sup.Bubbles[n-1].ID == bubble {
			sup.Bubbles[n-1].Text += u.Content.Text // a later part of a split bubble
			continue
		}
		sup.Bubbles = append(sup.Bubbles, agent.SupersededBubble{ID: bubble, Text: u.Content.Text})
	}
	return sup
}

// endTurn records that a turn of a collecting thread ended: best effort,
// since a message that arrived during it is only answered alone instead.
func (p *Processor) endTurn(ctx context.Context, log *slog.Logger, cfg Config, ev message.Event) {
	if err := p.Busy.EndBusy(context.WithoutCancel(ctx), ev.Thread.Key(), "", p.now(), cfg.ClaimTTL); err != nil {
		log.Warn("record the turn's end failed; a message that came meanwhile is answered alone", "error", err)
	}
}
