package sweeper

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/metrics"
	"github.com/parleyhq/parley/shared/questions"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/store"
)

// Store is the state store as the sweeper uses it.
type Store interface {
	DueForSweep(ctx context.Context, now time.Time, limit int) ([]store.SweepEntry, error)
	Reschedule(ctx context.Context, key string, from, to time.Time) error
	Unsweep(ctx context.Context, key string, from time.Time) error
	GetIntent(ctx context.Context, id string) (intent.Intent, error)
	GetClaim(ctx context.Context, key string, now time.Time) (store.Claim, error)
	Undefer(ctx context.Context, key string, due time.Time) error
	GetQuestion(ctx context.Context, key string) (store.Question, error)
	UpdateQuestion(ctx context.Context, q store.Question) (store.Question, error)
	GetPreview(ctx context.Context, key string, now time.Time) (message.Preview, error)
	DropPreview(ctx context.Context, key string) error
}

// Previewer clears a live preview its turn left behind (platform.Previewer).
type Previewer interface {
	ClearPreview(ctx context.Context, p message.Preview) error
}

// Queue takes one message.
type Queue interface {
	Send(ctx context.Context, m queue.Message) error
}

// Findings: the stable values of the "finding" field and the Sweep metric's
// dimension.
const (
	FindingRedriven    = "redriven"
	FindingStuckClaim  = "stuck_claim"
	FindingHeldUnknown = "held_unknown"
	FindingUndeferred  = "undeferred"
	FindingExpired     = "question_expired"
	FindingPreview     = "preview_cleared"
)

// Processor runs sweeps. Configure it once; Run is safe for concurrent use.
type Processor struct {
	Store Store
	// Inbound takes deferred events when they are due; Outbound takes the
	// messages that re-drive stuck units.
	Inbound, Outbound Queue
	// Previewers clear the live previews turns left behind, by platform;
	// a platform without one keeps its records until they expire.
	Previewers map[message.Platform]Previewer
	// Limit bounds the items one run looks at. Defaults to 100.
	Limit int
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	Log *slog.Logger
}

// Report counts what one run did.
type Report struct {
	// Due is how many items were due.
	Due int
	// Redriven, StuckClaims, HeldUnknown, Undeferred, Expired and
	// PreviewsCleared count findings.
	Redriven, StuckClaims, HeldUnknown, Undeferred, Expired, PreviewsCleared int
	// Rescheduled counts items found waiting for a later time; Closed
	// items taken off the list.
	Rescheduled, Closed int
}

// Run sweeps once. An error mending one item is logged and the run goes on;
// Run returns an error only when it cannot list what is due, or when mending
// failed for some item (the next run tries again).
func (p *Processor) Run(ctx context.Context) (Report, error) {
	now := p.now()
	entries, err := p.Store.DueForSweep(ctx, now, cmp.Or(p.Limit, 100))
	if err != nil {
		return Report{}, fmt.Errorf("list due items: %w", err)
	}
	r := Report{Due: len(entries)}
	var errs []error
	for _, e := range entries {
		var err error
		switch {
		case strings.HasPrefix(e.Key, "int#"):
			err = p.intent(ctx, &r, e, now)
		case strings.HasPrefix(e.Key, "turn#"):
			err = p.turnClaim(ctx, &r, e, now)
		case strings.HasPrefix(e.Key, "evt#"):
			err = p.deferred(ctx, &r, e, now)
		case strings.HasPrefix(e.Key, "q#"):
			err = p.question(ctx, &r, e, now)
		case strings.HasPrefix(e.Key, "pv#"):
			err = p.preview(ctx, &r, e, now)
		default:
			p.log().Warn("sweep entry of an unknown kind; taken off the list", "key", e.Key)
			err = p.close(ctx, &r, e)
		}
		if err != nil {
			errs = append(errs, p.setBack(ctx, &r, e, now, err))
		}
	}
	return r, errors.Join(errs...)
}

// setBackBy is how far past the run's time a run moves an item it could not
// mend. The query takes the oldest items first, so an item that keeps
// failing (a body the queue refuses for good, a record that no longer
// reads) would otherwise come first on every run and, once Limit of them
// piled up, keep everything behind them from ever being looked at. Behind
// everything due now, it is tried again at the next run, after them: a
// failure that passes (a crash, an outage) costs no more than a run.
const setBackBy = time.Second

// setBack moves an item that failed behind the items due now, and is the
// run's error for it.
func (p *Processor) setBack(ctx context.Context, r *Report, e store.SweepEntry, now time.Time, err error) error {
	log := p.log().With("key", e.Key, "error", err)
	if rerr := p.reschedule(ctx, r, e, now.Add(setBackBy)); rerr != nil {
		log.Error("sweep item failed, and setting it back failed too; the next run tries again", "reschedule_error", rerr)
		return err
	}
	log.Error("sweep item failed; set back behind the items due now", "retry_at", now.Add(setBackBy))
	return err
}

// intent mends one open send intent.
func (p *Processor) intent(ctx context.Context, r *Report, e store.SweepEntry, now time.Time) error {
	id := strings.TrimPrefix(e.Key, "int#")
	in, err := p.Store.GetIntent(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		// No intent yet: the item is its turn's claim, on the list while
		// the turn runs (package turn).
		return p.turnClaim(ctx, r, e, now)
	}
	if err != nil {
		return err
	}
	log := p.log().With("event_key", intent.EventKeyOf(in.Origin), "intent_id", in.ID, "thread_key", in.Thread.Key())
	open := -1
	for i, u := range in.Units {
		switch u.State {
		case message.UnitUnknown:
			r.HeldUnknown++
			p.finding(ctx, log, now, slog.LevelError, "unit held in unknown_after_send: an operator decides (attention index)",
				FindingHeldUnknown, slog.String("unit_id", u.ID))
		case message.UnitPending, message.UnitSending:
			if open < 0 {
				open = i
			}
		}
	}
	if open < 0 {
		return p.close(ctx, r, e)
	}
	u := in.Units[open]
	switch {
	case u.State == message.UnitPending && u.NextAt.After(now):
		return p.reschedule(ctx, r, e, u.NextAt.Add(store.SweepGrace))
	case u.State == message.UnitSending && u.LeaseUntil.After(now):
		return p.reschedule(ctx, r, e, u.LeaseUntil.Add(store.SweepGrace))
	}
	// Nothing in flight will deliver it: a message naming the last unit
	// makes delivery take every open unit, in order, behind whatever the
	// thread has queued.
	last := in.Units[len(in.Units)-1]
	if err := p.Outbound.Send(ctx, queue.Message{
		Group: in.Thread.Key(),
		Dedup: "redrive#" + intent.UnitKey(in.ID, last.ID) + "#" + strconv.FormatInt(e.At.UnixMilli(), 10),
		Body:  intent.EncodeRefOf(in, last.ID),
	}); err != nil {
		return fmt.Errorf("re-drive intent %s: %w", in.ID, err)
	}
	r.Redriven++
	p.finding(ctx, log, now, slog.LevelWarn, "stuck unit re-driven", FindingRedriven,
		slog.String("unit_id", u.ID), slog.String("state", string(u.State)))
	// Look again later, the later the older the intent: one waiting
	// behind a long-parked reply of its thread is re-driven rarely.
	age := now.Sub(in.CreatedAt)
	return p.reschedule(ctx, r, e, now.Add(max(store.SweepGrace, min(age/2, time.Hour))))
}

// turnClaim reports a turn that was cut off and never taken over.
func (p *Processor) turnClaim(ctx context.Context, r *Report, e store.SweepEntry, now time.Time) error {
	c, err := p.Store.GetClaim(ctx, e.Key, now)
	if errors.Is(err, store.ErrNotFound) {
		return p.close(ctx, r, e)
	}
	if err != nil {
		return err
	}
	if c.State != store.ClaimPending {
		return p.close(ctx, r, e)
	}
	if c.LeaseUntil.After(now) {
		return p.reschedule(ctx, r, e, c.LeaseUntil.Add(store.SweepGrace))
	}
	r.StuckClaims++
	p.finding(ctx, p.log().With("event_key", c.Origin, "claim_key", e.Key), now, slog.LevelError,
		"turn claim pending past its lease: a turn was cut off and not taken over; its message comes back by its visibility timeout, or is in the DLQ",
		FindingStuckClaim, slog.Int("attempts", c.Attempts), slog.Time("lease_until", c.LeaseUntil))
	return p.close(ctx, r, e)
}

// deferred enqueues a deferred event that is due.
func (p *Processor) deferred(ctx context.Context, r *Report, e store.SweepEntry, now time.Time) error {
	c, err := p.Store.GetClaim(ctx, e.Key, now)
	if errors.Is(err, store.ErrNotFound) {
		return p.close(ctx, r, e)
	}
	if err != nil {
		return err
	}
	if c.State != store.ClaimDeferred {
		return p.close(ctx, r, e)
	}
	if c.DueAt.After(now) {
		return p.reschedule(ctx, r, e, c.DueAt)
	}
	in, err := intent.DecodeInbound(c.Body)
	if err != nil {
		// Never enqueueable; leave it on the claim for an operator.
		p.log().Error("deferred event does not decode; taken off the list", "claim_key", e.Key, "error", err)
		return p.close(ctx, r, e)
	}
	// The event key is the deduplication id, as at ingress: a run that
	// crashed after the send and before Undefer sends nothing twice.
	if err := p.Inbound.Send(ctx, queue.Message{Group: in.Event.Thread.Key(), Dedup: in.Event.Key(), Body: c.Body}); err != nil {
		return fmt.Errorf("enqueue deferred event: %w", err)
	}
	if err := p.Store.Undefer(ctx, e.Key, c.DueAt); err != nil && !errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("undefer: %w", err)
	}
	r.Undeferred++
	p.finding(ctx, p.log().With("event_key", e.Key, "thread_key", in.Event.Thread.Key()), now, slog.LevelInfo,
		"deferred event enqueued", FindingUndeferred, slog.Time("due", c.DueAt))
	return nil
}

// question cancels a question left unanswered past its expiry, and makes
// sure the agent hears it: the cancel goes on the thread's inbound group, in
// order with its turns, and the record leaves the list only once it is
// there.
func (p *Processor) question(ctx context.Context, r *Report, e store.SweepEntry, now time.Time) error {
	q, err := p.Store.GetQuestion(ctx, e.Key)
	if errors.Is(err, store.ErrNotFound) {
		return p.close(ctx, r, e)
	}
	if err != nil {
		return err
	}
	if !q.Sweep {
		return p.close(ctx, r, e)
	}
	log := p.log().With("event_key", q.Origin, "thread_key", q.Thread.Key(), "question_id", q.ID)
	if q.State == store.QuestionOpen {
		if q.DueAt.After(now) {
			return p.reschedule(ctx, r, e, q.DueAt)
		}
		next, err := p.Store.UpdateQuestion(ctx, questions.Cancel(q, questions.ReasonExpired, "cancel:"+q.ID).Next)
		if errors.Is(err, store.ErrConflict) {
			return nil // answered meanwhile, or moved on: the next run sees it
		}
		if err != nil {
			return fmt.Errorf("expire question: %w", err)
		}
		q = next
		r.Expired++
		p.finding(ctx, log, now, slog.LevelInfo, "question expired: its agent hears cancel", FindingExpired, slog.Time("due", q.DueAt))
		log.LogAttrs(ctx, slog.LevelInfo, "question expired", metrics.Count(now, metrics.Question, metrics.Dim{Name: metrics.DimOutcome, Value: "expired"})...)
	}
	if q.State == store.QuestionCancelled {
		ev := questions.CancelEvent(q, now)
		body, err := intent.EncodeInbound(intent.Inbound{Event: ev, ReceivedAt: now})
		if err != nil {
			return err
		}
		// The cancel's event key dedupes it, here and in the turn's claim.
		if err := p.Inbound.Send(ctx, queue.Message{Group: ev.Thread.Key(), Dedup: ev.Key(), Body: body}); err != nil {
			return fmt.Errorf("enqueue question cancel: %w", err)
		}
	}
	q.Sweep = false
	if _, err := p.Store.UpdateQuestion(ctx, q); err != nil && !errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("settle question: %w", err)
	}
	r.Closed++
	return nil
}

// preview settles the record of a turn's live preview (store.Previews).
// While the turn may still settle it (its claim pending), it waits; once
// the preview was finalized (the unit that replaces it sent), the record
// has served and is dropped; otherwise the turn ended without settling it
// (a clear that failed, a crash past it, the finalizing bubble failed):
// the preview is cleared, then its record dropped. A clear that fails is
// tried again at the next run.
func (p *Processor) preview(ctx context.Context, r *Report, e store.SweepEntry, now time.Time) error {
	key := strings.TrimPrefix(e.Key, "pv#")
	pv, err := p.Store.GetPreview(ctx, key, now)
	if errors.Is(err, store.ErrNotFound) {
		return p.close(ctx, r, e)
	}
	if err != nil {
		return err
	}
	log := p.log().With("intent_id", key, "thread_key", pv.Thread.Key(), "message_id", pv.MessageID)
	// The unit that finalizes it is the turn's, or its first sequential
	// post's (FinalizedBy).
	in, err := p.Store.GetIntent(ctx, cmp.Or(pv.FinalizedBy, key))
	switch {
	case errors.Is(err, store.ErrNotFound):
		c, cerr := p.Store.GetClaim(ctx, store.IntentKey(key), now)
		if cerr != nil && !errors.Is(cerr, store.ErrNotFound) {
			return cerr
		}
		if cerr == nil && c.State == store.ClaimPending {
			// Its turn is to run again: it takes the preview over.
			return p.reschedule(ctx, r, e, later(c.LeaseUntil, now).Add(store.SweepGrace))
		}
	case err != nil:
		return err
	default:
		finalizer := intent.UnitKey(key, intent.PreviewUnit)
		for _, u := range in.Units {
			if u.Replaces != finalizer {
				continue
			}
			switch u.State {
			case message.UnitSent:
				if err := p.Store.DropPreview(ctx, key); err != nil {
					return fmt.Errorf("drop finalized preview: %w", err)
				}
				r.Closed++
				return nil
			case message.UnitPending, message.UnitSending, message.UnitUnknown:
				// Delivery finalizes it; a stuck unit is the intent's
				// own sweep.
				return p.reschedule(ctx, r, e, now.Add(store.SweepGrace))
			}
		}
	}
	pr := p.Previewers[pv.Thread.Platform]
	if pr == nil {
		log.Error("a preview its turn left behind cannot be cleared: no sender for its platform; taken off the list")
		return p.close(ctx, r, e)
	}
	if err := pr.ClearPreview(ctx, pv); err != nil {
		return fmt.Errorf("clear preview: %w", err)
	}
	if err := p.Store.DropPreview(ctx, key); err != nil {
		return fmt.Errorf("drop cleared preview: %w", err)
	}
	r.PreviewsCleared++
	p.finding(ctx, log, now, slog.LevelWarn, "preview its turn left behind cleared", FindingPreview)
	return nil
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (p *Processor) reschedule(ctx context.Context, r *Report, e store.SweepEntry, to time.Time) error {
	err := p.Store.Reschedule(ctx, e.Key, e.At, to)
	if errors.Is(err, store.ErrConflict) {
		return nil // someone moved it: their schedule stands
	}
	if err == nil {
		r.Rescheduled++
	}
	return err
}

func (p *Processor) close(ctx context.Context, r *Report, e store.SweepEntry) error {
	err := p.Store.Unsweep(ctx, e.Key, e.At)
	if errors.Is(err, store.ErrConflict) {
		return nil
	}
	if err == nil {
		r.Closed++
	}
	return err
}

// finding logs one finding: a line with the stable field finding, which is
// also an EMF record counting one Sweep.
func (p *Processor) finding(ctx context.Context, log *slog.Logger, now time.Time, level slog.Level, msg, finding string, attrs ...slog.Attr) {
	attrs = append(attrs, metrics.Count(now, metrics.Sweep, metrics.Dim{Name: metrics.DimFinding, Value: finding})...)
	log.LogAttrs(ctx, level, msg, attrs...)
}

func (p *Processor) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Processor) log() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.Default()
}
