package delivery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/wait"
)

// Intents is the intent store as delivery uses it.
type Intents interface {
	GetIntent(ctx context.Context, id string) (intent.Intent, error)
	Apply(ctx context.Context, id string, t intent.Transition) (intent.Intent, error)
}

// Sender is the send half of a platform adapter (platform.Sender). Failures
// are *message.SendError values (errors.As).
type Sender interface {
	Send(ctx context.Context, m message.Outgoing) (message.Receipt, error)
}

// Channel is a platform delivery sends on: its sender and what the platform
// accepts.
type Channel struct {
	Sender       Sender
	Capabilities message.Capabilities
	// Files finds media units' files; nil sends an agent's URL as a link
	// and fails an upload (no media bucket).
	Files Files
}

// Reconciler is a sender that can look an unknown send up on the platform
// before it is resent (platform.Reconciler).
type Reconciler interface {
	Reconcile(ctx context.Context, m message.Outgoing) (message.Receipt, bool, error)
}

// Asker is a sender that renders a question message with native controls
// (platform.Asker).
type Asker interface {
	Ask(ctx context.Context, m message.Outgoing) (message.Receipt, error)
}

// Replier is a sender that sends a reply's first bubbles in one call
// (platform.Replier: LINE's free Reply API).
type Replier interface {
	Replies(m message.Outgoing) int
	Reply(ctx context.Context, ms []message.Outgoing) ([]message.Receipt, bool, error)
}

// Reactor is a sender that reacts to a message (platform.Reactor).
type Reactor interface {
	React(ctx context.Context, t message.Thread, messageID string, r message.React) error
}

// send sends m: a question message with native controls where the sender
// has them, as its numbered text form elsewhere; a reaction on the message
// m replies to, which leaves no message of its own (an empty receipt).
func (c Channel) send(ctx context.Context, m message.Outgoing) (message.Receipt, error) {
	if r := m.Content.React; r != nil {
		rx, ok := c.Sender.(Reactor)
		if !ok {
			return message.Receipt{}, &message.SendError{Class: message.FailInvalidPayload, Reason: "the platform has no reactions"}
		}
		return message.Receipt{}, rx.React(ctx, m.Thread, m.ReplyTo, *r)
	}
	if md := m.Content.Media; md != nil {
		return c.sendMedia(ctx, m, *md)
	}
	if pr := m.Content.Prompt; pr != nil {
		if a, ok := c.Sender.(Asker); ok {
			return a.Ask(ctx, m)
		}
		m.Content = message.Text(pr.FallbackText())
	}
	return c.Sender.Send(ctx, m)
}

// UnknownPolicy says what happens to a unit whose send may have happened.
type UnknownPolicy string

const (
	// UnknownHold keeps the unit in unknown_after_send for an operator; the
	// thread moves on. The default for platforms without idempotency: a
	// possible duplicate is never sent silently.
	UnknownHold UnknownPolicy = "hold"
	// UnknownResend sends it again: at-least-once, logged as a resend.
	UnknownResend UnknownPolicy = "resend"
)

// Config tunes the processor.
type Config struct {
	// BubbleDelay is the pause between consecutive units of an intent, so
	// replies arrive as deliberate bubbles. Defaults to 1 second.
	BubbleDelay time.Duration
	// MaxInlineWait is the longest pause taken in place; longer waits park
	// the message. Defaults to 5 seconds.
	MaxInlineWait time.Duration
	// SendTimeout bounds one platform call. Defaults to 10 seconds.
	SendTimeout time.Duration
	// Lease is how long a unit stays leased to one attempt; after it, the
	// unit counts as abandoned mid-send. Defaults to 2 × SendTimeout.
	Lease time.Duration
	// MaxAge is a unit's retry budget, in time, from its intent's creation:
	// a unit that fails retryably (transient, rate limited) once it is this
	// old fails for good. A platform outage shorter than it loses nothing.
	// Defaults to 6 hours; at most MaxMaxAge.
	MaxAge time.Duration
	// MaxResends bounds the resends of a unit whose outcome was unknown,
	// under the resend policy, on a platform without idempotency: each one
	// may show the person a copy. Idempotent platforms resend within MaxAge.
	// Defaults to 3.
	MaxResends int
	// Unknown is the policy for unknown outcomes. Defaults to UnknownHold.
	Unknown UnknownPolicy
	// UnknownByPlatform overrides Unknown per platform.
	UnknownByPlatform map[message.Platform]UnknownPolicy
	// ReplyBubbles is how many of a reply's first bubbles go together in
	// one reply call, where the platform has one (a Replier: LINE's, free
	// while the event's reply token is fresh, up to 5), instead of one
	// paced call each. 1 sends the first alone, by reply, and paces the rest
	// (LINE: pushes, which spend the monthly quota). Defaults to
	// MaxReplyBubbles.
	ReplyBubbles int
}

// MaxReplyBubbles is the most bubbles one reply call carries on any
// platform (LINE's 5).
const MaxReplyBubbles = 5

// MaxMaxAge bounds Config.MaxAge. Within it, a waiting message stays well
// under the queues' maxReceiveCount (see resources.Outbound).
const MaxMaxAge = 24 * time.Hour

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	c.BubbleDelay = cmp.Or(c.BubbleDelay, time.Second)
	c.MaxInlineWait = cmp.Or(c.MaxInlineWait, 5*time.Second)
	c.SendTimeout = cmp.Or(c.SendTimeout, 10*time.Second)
	c.Lease = cmp.Or(c.Lease, 2*c.SendTimeout)
	c.MaxAge = cmp.Or(c.MaxAge, 6*time.Hour)
	c.MaxResends = cmp.Or(c.MaxResends, 3)
	c.Unknown = cmp.Or(c.Unknown, UnknownHold)
	c.ReplyBubbles = cmp.Or(c.ReplyBubbles, MaxReplyBubbles)
	return c
}

// Validate reports every problem with the configuration.
func (c Config) Validate() error {
	var errs []error
	if c.BubbleDelay < 0 {
		errs = append(errs, errors.New("bubble delay must not be negative"))
	}
	if c.ReplyBubbles < 1 || c.ReplyBubbles > MaxReplyBubbles {
		errs = append(errs, fmt.Errorf("reply bubbles must be 1 to %d, got %d", MaxReplyBubbles, c.ReplyBubbles))
	}
	if c.Lease <= c.SendTimeout {
		errs = append(errs, fmt.Errorf("lease (%s) must exceed the send timeout (%s)", c.Lease, c.SendTimeout))
	}
	if c.MaxAge <= 0 || c.MaxAge > MaxMaxAge {
		errs = append(errs, fmt.Errorf("max age %s: want more than 0 and at most %s", c.MaxAge, MaxMaxAge))
	}
	if c.MaxResends < 1 {
		errs = append(errs, errors.New("max resends must be at least 1"))
	}
	for _, p := range append([]UnknownPolicy{c.Unknown}, mapValues(c.UnknownByPlatform)...) {
		if p != UnknownHold && p != UnknownResend {
			errs = append(errs, fmt.Errorf("unknown-send policy %q: want hold or resend", p))
		}
	}
	return errors.Join(errs...)
}

func mapValues[K comparable, V any](m map[K]V) []V {
	var out []V
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// Processor delivers outbound.fifo records.
type Processor struct {
	Intents Intents
	// Channels are the platforms with a sender; a unit for any other fails
	// visibly ("no sender configured").
	Channels map[message.Platform]Channel
	// Previews reads the live previews a reply's first bubble finalizes
	// (Unit.Replaces naming intent.PreviewUnit); nil sends such a bubble
	// fresh.
	Previews Previews
	Config   Config
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// Sleep waits in place (pacing). Defaults to wait.For.
	Sleep func(ctx context.Context, d time.Duration) error
	// Backoff is the retry delay of a unit after a failure, by its
	// attempts. Defaults to consumer.Backoff; a simulation draws its jitter
	// from its seed (consumer.BackoffFrom).
	Backoff func(attempt int) time.Duration
	Log     *slog.Logger

	mu   sync.Mutex
	last intent.Intent // the intent this instance moved last (recent)
	// replied are the units behind the first that this instance's last
	// reply call sent (sendReply), by unit key: their own records, which
	// follow in the thread's group, are done without a call.
	replied map[string]bool
}

// Handle delivers the unit a record names, and every open unit before it.
// It is a consumer.HandlerFunc.
func (p *Processor) Handle(ctx context.Context, rec consumer.Record) error {
	ref, err := intent.DecodeRef([]byte(rec.Body))
	if err != nil {
		// Never deliverable: to the DLQ, alone, which alarms.
		p.log().Error("bad outbound message", "message_id", rec.MessageId, "error", err)
		return consumer.DeadLetter(err)
	}
	if p.sentInReply(ref) {
		p.log().Debug("unit sent in its reply's call", "intent_id", ref.Intent, "unit_id", ref.Unit)
		return nil
	}
	if in, ok := p.recent(ref); ok {
		// This instance moved the intent last: what it saw stands in for
		// a read, and a stale view only loses a compare-and-set, whose
		// answer is the intent as it is.
		return p.through(ctx, in, ref)
	}
	if ref.Direct {
		in, done, err := p.direct(ctx, ref)
		if done || err != nil {
			return err
		}
		if in.ID != "" {
			return p.through(ctx, in, ref)
		}
	}
	in, err := p.Intents.GetIntent(ctx, ref.Intent)
	if errors.Is(err, store.ErrNotFound) {
		p.log().Error("outbound message names no intent; dropped", "event_key", ref.Event, "intent_id", ref.Intent, "unit_id", ref.Unit)
		return nil
	}
	if err != nil {
		return fmt.Errorf("read intent: %w", err)
	}
	return p.through(ctx, in, ref)
}

// through delivers every open unit of in up to the one ref names, in order.
func (p *Processor) through(ctx context.Context, in intent.Intent, ref intent.Ref) error {
	target := in.Index(ref.Unit)
	if target < 0 {
		p.log().Error("outbound message names no unit of its intent; dropped", "event_key", ref.Event, "intent_id", ref.Intent, "unit_id", ref.Unit)
		return nil
	}
	// From the first unit, not the first open one: a unit held in
	// unknown_after_send is settled for ordering, but a resend policy still
	// has work to do on it before anything after it goes.
	var err error
	for i := 0; i <= target; i++ {
		if in, err = p.deliver(ctx, in, i); err != nil {
			return err
		}
	}
	return nil
}

// direct leases the unit ref names without reading its intent before: a
// fresh unit is pending at attempt 0, and the lease's condition requires
// every earlier unit sent or failed, so the lease's answer is the intent.
// Pacing is kept without knowing when the unit before was sent: its message
// was deleted after its receipt was written, so waiting a whole BubbleDelay
// from now is never too little. It then sends the unit, and done is true.
// Anything else (a unit retried, sent, leased elsewhere, one before it
// open or held) loses the compare-and-set, whose answer is the intent as it
// is: returned for the usual way, with no read spent.
func (p *Processor) direct(ctx context.Context, ref intent.Ref) (in intent.Intent, done bool, err error) {
	cfg := p.Config.WithDefaults()
	i := ref.Index
	wait := time.Duration(0)
	if i > 0 {
		wait = cfg.BubbleDelay
	}
	if wait > cfg.MaxInlineWait || !p.fits(ctx, wait, cfg) {
		return intent.Intent{}, false, nil // the usual way waits it out
	}
	if wait > 0 {
		if err := p.sleep(ctx, wait); err != nil {
			return intent.Intent{}, false, err
		}
	}
	now := p.now()
	leased, err := p.Intents.Apply(ctx, ref.Intent, intent.LeaseUnread(ref.Unit, i, now, now.Add(cfg.Lease)))
	var conflict *store.IntentConflictError
	switch {
	case errors.As(err, &conflict):
		return conflict.Current, false, nil
	case errors.Is(err, store.ErrNotFound):
		p.log().Error("outbound message names no intent; dropped", "event_key", ref.Event, "intent_id", ref.Intent, "unit_id", ref.Unit)
		return intent.Intent{}, true, nil
	case err != nil:
		return intent.Intent{}, false, fmt.Errorf("lease unit: %w", err)
	}
	log := p.log().With("event_key", intent.EventKeyOf(leased.Origin), "intent_id", leased.ID, "unit_id", ref.Unit, "platform", string(leased.Thread.Platform),
		"thread_key", leased.Thread.Key())
	ch, policy, ok := p.channel(leased.Thread.Platform, cfg)
	if !ok {
		_, err := p.apply(ctx, log, leased, intent.MarkFailed(leased.Units[i], i, p.now(), message.FailInvalidPayload, "no sender configured for platform"))
		return intent.Intent{}, true, err
	}
	_, err = p.send(ctx, log, ch, leased, i, policy, cfg)
	return intent.Intent{}, true, err
}

// recent is the intent ref names as this instance last moved it, if it did
// (a FIFO batch holds a thread's units one after another), and the named
// unit was still open then: a message that names a unit this instance saw
// settled (held, failed, sent) was sent because someone else moved it since
// (an operator's resend, a redrive), and only the store says how.
func (p *Processor) recent(ref intent.Ref) (intent.Intent, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	in := p.last
	i := in.Index(ref.Unit)
	return in, in.ID == ref.Intent && i >= 0 && !in.Units[i].State.Terminal()
}

// sentInReply reports whether ref names a unit this instance sent in its
// last reply call, and forgets it: the first record naming it is its own,
// which the turn enqueued before any was delivered; a later one (an
// operator's resend) finds it forgotten and goes the usual way.
func (p *Processor) sentInReply(ref intent.Ref) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := intent.UnitKey(ref.Intent, ref.Unit)
	if !p.replied[key] {
		return false
	}
	delete(p.replied, key)
	return true
}

// remember keeps in as the intent this instance moved last.
func (p *Processor) remember(in intent.Intent) {
	p.mu.Lock()
	p.last = in
	p.mu.Unlock()
}

// channel is a platform's sender and its unknown-outcome policy.
func (p *Processor) channel(pl message.Platform, cfg Config) (Channel, UnknownPolicy, bool) {
	ch, ok := p.Channels[pl]
	if !ok {
		return Channel{}, "", false
	}
	policy := cfg.Unknown
	if pol, ok := cfg.UnknownByPlatform[pl]; ok {
		policy = pol
	}
	if ch.Capabilities.Idempotent {
		policy = UnknownResend
	}
	return ch, policy, true
}

// Errors that hand a record back to wait; none of them spends a retry.
var (
	errPacing   = errors.New("pacing: the previous bubble was sent too recently")
	errWaiting  = errors.New("unit waits for its retry time")
	errDeadline = errors.New("not enough time left in this invocation to send")
)

// deliver takes unit i as far as it can go now. It returns the intent as it
// is afterwards, or an error asking for the record to be retried.
func (p *Processor) deliver(ctx context.Context, in intent.Intent, i int) (intent.Intent, error) {
	cfg := p.Config.WithDefaults()
	log := p.log().With("event_key", intent.EventKeyOf(in.Origin), "intent_id", in.ID, "unit_id", in.Units[i].ID, "platform", string(in.Thread.Platform),
		"thread_key", in.Thread.Key())
	ch, policy, ok := p.channel(in.Thread.Platform, cfg)
	if !ok {
		return p.apply(ctx, log, in, intent.MarkFailed(in.Units[i], i, p.now(), message.FailInvalidPayload, "no sender configured for platform"))
	}
	idempotent := ch.Capabilities.Idempotent

	for range 3 { // a lost compare-and-set re-reads and decides again
		u := in.Units[i]
		if u.Content.React != nil {
			policy = UnknownResend // setting a reaction again changes nothing
		}
		now := p.now()
		age := now.Sub(in.CreatedAt)
		var lease intent.Transition
		switch u.State {
		case message.UnitSent, message.UnitFailed:
			return in, nil
		case message.UnitUnknown:
			resend := policy == UnknownResend
			if r, ok := ch.Sender.(Reconciler); ok && ch.Capabilities.Reconcile {
				// Ask the platform first: found, the unit was sent;
				// not found, it was not, and a resend is safe.
				receipt, found, err := r.Reconcile(ctx, outgoing(in, i))
				switch {
				case errors.Is(err, platform.ErrNotReconcilable):
					log.Info("unit cannot be looked up on the platform; the policy decides", "outcome", "not_reconcilable", "policy", string(policy))
				case err != nil:
					log.Warn("reconcile an unknown send failed; the policy decides", "error", err)
				case found:
					log.Info("unit found on the platform after an unknown outcome", "outcome", "reconciled_sent", "message_ids", receipt.MessageIDs)
					return p.apply(ctx, log, in, intent.MarkSent(u, i, now, receipt))
				default:
					log.Warn("unit not found on the platform after an unknown outcome: resending", "outcome", "reconciled_missing")
					resend = true
				}
			}
			if !resend {
				return in, nil // held for an operator; the thread moves on
			}
			switch {
			case !idempotent && u.Resends >= cfg.MaxResends:
				log.Error("unit failed", "outcome", "failed", "note", "unknown outcome, out of resends", "resends", u.Resends)
				return p.apply(ctx, log, in, intent.GiveUp(u, i, now, fmt.Sprintf("unknown outcome; not resent after %d resends", u.Resends)))
			case age > cfg.MaxAge:
				log.Error("unit failed", "outcome", "failed", "note", "unknown outcome, past its age", "age_ms", age.Milliseconds())
				return p.apply(ctx, log, in, intent.GiveUp(u, i, now, "unknown outcome; not resent past its age of "+cfg.MaxAge.String()))
			}
			if !p.fits(ctx, 0, cfg) {
				return in, consumer.Retry(errDeadline, 0)
			}
			lease = intent.Resend(u, i, now, now.Add(cfg.Lease))
		case message.UnitSending:
			if u.LeaseUntil.After(now) {
				// Another attempt is sending right now.
				return in, consumer.Retry(errors.New("unit leased by another attempt"), u.LeaseUntil.Sub(now))
			}
			log.Warn("unit abandoned mid-send: outcome unknown", "attempt", u.Attempt)
			next, err := p.apply(ctx, log, in, intent.MarkUnknown(u, i, now, "abandoned mid-send", true))
			if err != nil {
				return in, err
			}
			in = next
			continue
		case message.UnitPending:
			if u.FailureClass != "" && age > cfg.MaxAge {
				log.Error("unit failed", "outcome", "failed", "failure_class", string(u.FailureClass), "note", "past its age")
				return p.apply(ctx, log, in, intent.MarkFailed(u, i, now, u.FailureClass, gaveUp(cfg, u.FailureReason)))
			}
			if u.NextAt.After(now) {
				// Back early (SQS parks a message at most 12 hours, or
				// another unit's record brought it): park for the rest.
				return in, consumer.Retry(errWaiting, u.NextAt.Sub(now))
			}
			wait := p.paceWait(in, i, now, cfg)
			if wait > cfg.MaxInlineWait {
				return in, consumer.Retry(errPacing, wait)
			}
			if !p.fits(ctx, max(wait, 0), cfg) {
				// Never start a send the invocation cannot finish: an
				// interrupted send is an unknown outcome.
				return in, consumer.Retry(errDeadline, max(wait, 0))
			}
			if wait > 0 {
				if err := p.sleep(ctx, wait); err != nil {
					return in, err
				}
				now = p.now()
			}
			lease = intent.Lease(u, i, now, now.Add(cfg.Lease))
		default:
			return in, fmt.Errorf("unit in unknown state %q", u.State)
		}

		leased, err := p.Intents.Apply(ctx, in.ID, lease)
		var conflict *store.IntentConflictError
		if errors.As(err, &conflict) {
			in = conflict.Current
			continue
		}
		if err != nil {
			return in, fmt.Errorf("lease unit: %w", err)
		}
		return p.send(ctx, log, ch, leased, i, policy, cfg)
	}
	return in, consumer.Retry(errors.New("unit kept changing under us"), time.Second)
}

// Previews reads a turn's live preview (store.Previews).
type Previews interface {
	GetPreview(ctx context.Context, key string, now time.Time) (message.Preview, error)
}

// PreviewFinalizer is a sender that edits a preview into the reply's first
// bubble its own way (platform.PreviewFinalizer).
type PreviewFinalizer interface {
	FinalizePreview(ctx context.Context, p message.Preview, c message.Content) error
}

// Editor is a sender that can change a message it sent (platform.Editor).
type Editor interface {
	Edit(ctx context.Context, t message.Thread, messageID string, c message.Content) error
}

// replace edits the message of the earlier bubble u replaces to u's
// content, when the platform can edit and that bubble was sent to the same
// thread: edited reports that it did (or tried: err). Otherwise u goes as a
// new message. An edit that may or may not have happened is retried, not
// held: editing again to the same content changes nothing.
func (p *Processor) replace(ctx context.Context, log *slog.Logger, ch Channel, in intent.Intent, u intent.Unit) (message.Receipt, bool, error) {
	ed, ok := ch.Sender.(Editor)
	if !ok || !ch.Capabilities.Edit || u.Content.Prompt != nil {
		return message.Receipt{}, false, nil
	}
	id, unitID, _ := intent.ParseUnitKey(u.Replaces)
	if unitID == intent.PreviewUnit {
		return p.finalize(ctx, log, ed, in, id, u)
	}
	target, err := p.Intents.GetIntent(ctx, id)
	if err != nil {
		log.Warn("the bubble to replace cannot be read; sending a new message", "error", err)
		return message.Receipt{}, false, nil
	}
	j := target.Index(unitID)
	if j < 0 || target.Thread != in.Thread || target.Units[j].State != message.UnitSent || len(target.Units[j].Receipt) == 0 {
		return message.Receipt{}, false, nil
	}
	msgID := target.Units[j].Receipt[0]
	if err := ed.Edit(ctx, in.Thread, msgID, u.Content); err != nil {
		var se *message.SendError
		if errors.As(err, &se) && se.Class == message.FailUnknown {
			again := *se
			again.Class = message.FailTransient
			return message.Receipt{}, true, &again
		}
		return message.Receipt{}, true, err
	}
	log.Info("bubble replaced by an edit", "replaced", u.Replaces)
	return message.Receipt{MessageIDs: []string{msgID}}, true, nil
}

// finalize edits the live preview recorded under key into u, the reply's
// first bubble: the preview becomes the reply, and nothing stays beside it.
// With no preview recorded, or its message gone (deleted by someone), u is
// sent fresh. A failed read sends nothing and is retried; an edit whose
// outcome is unknown is retried too (editing again to the same text
// changes nothing).
func (p *Processor) finalize(ctx context.Context, log *slog.Logger, ed Editor, in intent.Intent, key string, u intent.Unit) (message.Receipt, bool, error) {
	if p.Previews == nil {
		return message.Receipt{}, false, nil
	}
	pv, err := p.Previews.GetPreview(ctx, key, p.now())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return message.Receipt{}, false, nil
	case err != nil:
		return message.Receipt{}, true, &message.SendError{Class: message.FailTransient, Reason: "the preview to finalize cannot be read", Err: err}
	case pv.MessageID == "" || pv.Thread != in.Thread:
		return message.Receipt{}, false, nil
	}
	if f, ok := ed.(PreviewFinalizer); ok {
		err = f.FinalizePreview(ctx, pv, u.Content)
	} else {
		err = ed.Edit(ctx, in.Thread, pv.MessageID, u.Content)
	}
	var se *message.SendError
	switch {
	case errors.As(err, &se) && se.Class == message.FailNotFound:
		log.Warn("the preview to finalize is gone; sending the bubble fresh", "message_id", pv.MessageID)
		return message.Receipt{}, false, nil
	case errors.As(err, &se) && se.Class == message.FailUnknown:
		again := *se
		again.Class = message.FailTransient
		return message.Receipt{}, true, &again
	case err != nil:
		return message.Receipt{}, true, err
	}
	log.Info("preview finalized into the reply's first bubble", "message_id", pv.MessageID)
	return message.Receipt{MessageIDs: []string{pv.MessageID}}, true, nil
}

// outgoing is unit i of in as its platform's sender gets it.
func outgoing(in intent.Intent, i int) message.Outgoing {
	u := in.Units[i]
	origin := message.OriginAgent
	if u.Parley {
		origin = message.OriginParley
	}
	return message.Outgoing{
		Thread: in.Thread, Content: u.Content, ReplyTo: u.ReplyTo, IdempotencyKey: intent.UnitKey(in.ID, u.ID),
		Sequence: in.Sequence + i, ReplyContext: in.ReplyContext, Origin: origin,
	}
}

// final is the status reaction unit i of in sets now that every unit before
// it is settled: its answered reaction, or its failure mark when a bubble
// before it failed for good (one a newer message superseded was not
// failed: its turn was answered by the next; a reaction refused is no
// bubble).
func final(in intent.Intent, i int) *message.React {
	r := *in.Units[i].Content.React
	for _, u := range in.Units[:i] {
		if u.State == message.UnitFailed && u.FailureClass != message.FailSuperseded && u.Content.React == nil {
			r.Emoji = r.Failed
		}
	}
	return &r
}

// deadlineSlack is the time a send needs besides the call itself: the lease
// before it and the receipt's commit after it.
const deadlineSlack = time.Second

// fits reports whether a send starting after wait can finish before ctx's
// deadline. Deadlines are wall-clock time, whatever clock the processor uses.
func (p *Processor) fits(ctx context.Context, wait time.Duration, cfg Config) bool {
	dl, ok := ctx.Deadline()
	return !ok || time.Until(dl) >= wait+cfg.SendTimeout+deadlineSlack
}

// gaveUp is the reason of a unit that ran out of its time budget.
func gaveUp(cfg Config, last string) string {
	return "gave up past its age of " + cfg.MaxAge.String() + ": " + last
}

// retryDelay is how long a unit waits after its attempt-th retryable
// failure: at least the platform's retry_after, and never less than a floor
// that doubles from 1 second to 5 minutes, so a platform that keeps
// answering 429 is asked less and less often and the record's receive count
// stays far below the queue's maxReceiveCount within MaxMaxAge. Whole
// seconds: SQS parks a message by the second.
func (p *Processor) retryDelay(class message.FailureClass, retryAfter time.Duration, attempt int) time.Duration {
	d := p.backoff(attempt)
	if class == message.FailRateLimit {
		floor := time.Second
		for i := 1; i < attempt && floor < 5*time.Minute; i++ {
			floor *= 2
		}
		d = max(retryAfter, min(floor, 5*time.Minute))
	}
	return (d + time.Second - 1).Truncate(time.Second)
}

// replyGroup is how many units from the first go in one reply call: the
// fresh ones in a row (pending, never tried, plain bubbles), at most what
// the sender's reply carries now and cfg.ReplyBubbles. The first is leased
// for its first attempt. Below 2, the first goes on its own.
func replyGroup(ch Channel, in intent.Intent, i int, cfg Config) int {
	r, ok := ch.Sender.(Replier)
	u := in.Units[i]
	// A reaction or a file is no plain bubble: it goes on its own.
	if !ok || i != 0 || cfg.ReplyBubbles < 2 || u.Attempt != 1 || u.Resent || u.FailureClass != "" || u.Replaces != "" || u.Content.React != nil || u.Content.Media != nil {
		return 0
	}
	limit := min(r.Replies(outgoing(in, 0)), cfg.ReplyBubbles, len(in.Units))
	n := 1
	for n < limit {
		v := in.Units[n]
		if v.State != message.UnitPending || v.Attempt != 0 || v.FailureClass != "" || !v.NextAt.IsZero() || v.Replaces != "" || v.Content.React != nil || v.Content.Media != nil {
			break
		}
		n++
	}
	return n
}

// sendReply sends units 0 to n-1 of in, the first leased, in one reply call
// (Replier). The units behind the first are leased for the same attempt
// first (LeaseBehind), each by its own compare-and-set; the group ends at
// the first that cannot be. Each unit gets its own receipt. Pacing yields
// to the free call: its bubbles arrive together.
//
// A failure other than an unknown outcome puts every unit back to pending,
// to go one by one, where each is classified alone (a bubble LINE refuses
// fails alone, not its group). A reply whose outcome stays unknown (the
// Replier already tried its single-use token again) leaves every unit of
// the call unknown: the platform's unknown-outcome policy decides, for each.
// handled is false when nothing was sent and unit 0 goes the usual way.
func (p *Processor) sendReply(ctx context.Context, log *slog.Logger, ch Channel, in intent.Intent, n int, policy UnknownPolicy, cfg Config) (_ intent.Intent, handled bool, _ error) {
	now := p.now()
	for j := 1; j < n; j++ {
		leased, err := p.Intents.Apply(ctx, in.ID, intent.LeaseBehind(in.Units[j], j, now, now.Add(cfg.Lease)))
		if err != nil {
			// Moved since it was read (a conflict), or not leased: the
			// group ends before it, which goes the usual way.
			n = j
			break
		}
		in = leased
	}
	if n < 2 {
		return in, false, nil
	}
	ms := make([]message.Outgoing, n)
	for j := range ms {
		ms[j] = outgoing(in, j)
	}
	log = log.With("attempt", in.Units[0].Attempt, "units", n)
	sctx, cancel := context.WithTimeout(ctx, cfg.SendTimeout)
	start := p.now()
	receipts, ok, err := ch.Sender.(Replier).Reply(sctx, ms)
	cancel()
	now = p.now()
	cctx := context.WithoutCancel(ctx)
	var se *message.SendError
	class, reason, retryAfter := message.FailUnknown, "unclassified error", time.Duration(0)
	if errors.As(err, &se) {
		class, reason, retryAfter = se.Class, se.Reason, se.RetryAfter
	}
	var aerr error
	switch {
	case err == nil && ok:
		for j := range n {
			if in, aerr = p.apply(cctx, log, in, intent.MarkSent(in.Units[j], j, now, receipts[j])); aerr != nil {
				return in, true, aerr
			}
		}
		replied := map[string]bool{}
		for _, u := range in.Units[1:n] {
			replied[intent.UnitKey(in.ID, u.ID)] = true
		}
		p.mu.Lock()
		p.replied = replied
		p.mu.Unlock()
		log.Info("units delivered in one reply", "outcome", "sent", "send_ms", now.Sub(start).Milliseconds())
		return in, true, nil
	case err == nil || class != message.FailUnknown:
		// Refused (the token, or a bubble): each goes on its own.
		if err == nil {
			class, reason = message.FailTransient, "the reply was refused: sent on its own"
		}
		next := now
		if class == message.FailRateLimit {
			next = now.Add(p.retryDelay(class, retryAfter, in.Units[0].Attempt))
		}
		for j := n - 1; j >= 0; j-- {
			if in, aerr = p.apply(cctx, log, in, intent.MarkRetryable(in.Units[j], j, now, next, class, reason)); aerr != nil {
				return in, true, aerr
			}
		}
		log.Warn("reply of several units refused: each goes on its own", "outcome", "retry", "failure_class", string(class), "reason", reason)
		return in, true, consumer.Retry(cmp.Or(err, errors.New(reason)), next.Sub(now))
	}
	for j := n - 1; j >= 0; j-- {
		if in, aerr = p.apply(cctx, log, in, intent.MarkUnknown(in.Units[j], j, now, reason, false)); aerr != nil {
			return in, true, aerr
		}
	}
	log.Warn("reply of several units: outcome unknown", "outcome", "unknown_after_send", "policy", string(policy), "reason", reason)
	if policy == UnknownResend {
		return in, true, consumer.Retry(err, p.backoff(in.Units[0].Attempt))
	}
	return in, true, nil
}

// send performs the leased attempt on unit i and records its outcome.
func (p *Processor) send(ctx context.Context, log *slog.Logger, ch Channel, in intent.Intent, i int, policy UnknownPolicy, cfg Config) (intent.Intent, error) {
	if n := replyGroup(ch, in, i, cfg); n > 1 {
		out, handled, err := p.sendReply(ctx, log, ch, in, n, policy, cfg)
		if handled {
			return out, err
		}
		in = out
	}
	u := in.Units[i]
	log = log.With("attempt", u.Attempt)
	if u.Content.React != nil {
		// Setting a reaction again changes nothing: a reaction whose
		// outcome is unknown is tried again.
		policy = UnknownResend
	}
	if u.Resent {
		log.Warn("resending a unit whose earlier send may have arrived (at-least-once policy)", "resends", u.Resends)
	}
	sctx, cancel := context.WithTimeout(ctx, cfg.SendTimeout)
	start := p.now()
	var receipt message.Receipt
	var err error
	edited := false
	if u.Replaces != "" {
		receipt, edited, err = p.replace(sctx, log, ch, in, u)
	}
	if !edited {
		m := outgoing(in, i)
		if r := u.Content.React; r != nil && r.Status {
			m.Content = message.Content{React: final(in, i)}
		}
		receipt, err = ch.send(sctx, m)
	}
	cancel()
	now := p.now()
	// Commits must land even if the invocation's context is ending: the
	// platform call already happened.
	cctx := context.WithoutCancel(ctx)
	if err == nil {
		out, aerr := p.apply(cctx, log, in, intent.MarkSent(u, i, now, receipt))
		if aerr == nil {
			log.Info("unit delivered", "outcome", "sent", "message_ids", receipt.MessageIDs, "send_ms", now.Sub(start).Milliseconds())
		}
		return out, aerr
	}

	var se *message.SendError
	class, reason, retryAfter := message.FailUnknown, "unclassified error", time.Duration(0)
	if errors.As(err, &se) {
		class, reason, retryAfter = se.Class, se.Reason, se.RetryAfter
	}
	log = log.With("failure_class", string(class), "reason", reason)
	switch {
	case class == message.FailConflict && ch.Capabilities.Idempotent:
		// The platform already has this unit (an idempotency key replay).
		log.Info("unit delivered", "outcome", "sent", "note", "platform reported an earlier identical send")
		return p.apply(cctx, log, in, intent.MarkSent(u, i, now, message.Receipt{}))
	case class.Permanent() || class == message.FailConflict:
		log.Error("unit failed", "outcome", "failed")
		return p.apply(cctx, log, in, intent.MarkFailed(u, i, now, class, reason))
	case class == message.FailUnknown:
		out, aerr := p.apply(cctx, log, in, intent.MarkUnknown(u, i, now, reason, false))
		if aerr != nil {
			return out, aerr
		}
		if policy == UnknownResend {
			log.Warn("unit outcome unknown: will resend", "outcome", "unknown_after_send", "policy", string(policy))
			return out, consumer.Retry(err, p.backoff(u.Attempt))
		}
		if _, ok := ch.Sender.(Reconciler); ok && ch.Capabilities.Reconcile {
			log.Warn("unit outcome unknown: will look it up on the platform", "outcome", "unknown_after_send", "policy", string(policy))
			return out, consumer.Retry(err, p.backoff(u.Attempt))
		}
		log.Error("unit outcome unknown: held for an operator", "outcome", "unknown_after_send", "policy", string(policy))
		return out, nil
	default: // transient, rate_limit, cancelled: nothing was posted
		if age := now.Sub(in.CreatedAt); age > cfg.MaxAge {
			log.Error("unit failed", "outcome", "failed", "note", "past its age", "age_ms", age.Milliseconds())
			return p.apply(cctx, log, in, intent.MarkFailed(u, i, now, class, gaveUp(cfg, reason)))
		}
		wait := p.retryDelay(class, retryAfter, u.Attempt)
		out, aerr := p.apply(cctx, log, in, intent.MarkRetryable(u, i, now, now.Add(wait), class, reason))
		if aerr != nil {
			return out, aerr
		}
		msg := "unit send failed: will retry"
		if class == message.FailRateLimit {
			msg = "unit rate limited: parked"
		}
		log.Warn(msg, "outcome", "retry", "retry_after_ms", wait.Milliseconds())
		return out, consumer.Retry(err, wait)
	}
}

// paceWait is how long unit i must still wait after the latest send before it.
func (p *Processor) paceWait(in intent.Intent, i int, now time.Time, cfg Config) time.Duration {
	var last time.Time
	for _, u := range in.Units[:i] {
		if u.State == message.UnitSent && u.SentAt.After(last) {
			last = u.SentAt
		}
	}
	if last.IsZero() {
		return 0
	}
	return last.Add(cfg.BubbleDelay).Sub(now)
}

func (p *Processor) apply(ctx context.Context, log *slog.Logger, in intent.Intent, t intent.Transition) (intent.Intent, error) {
	t = in.Closing(t)
	out, err := p.Intents.Apply(ctx, in.ID, t)
	var conflict *store.IntentConflictError
	if errors.As(err, &conflict) {
		// Someone else moved the unit: their state stands.
		log.Warn("transition lost a race", "transition", t.Name, "state", string(conflict.Current.Units[t.Unit].State))
		return conflict.Current, nil
	}
	if err != nil {
		return in, fmt.Errorf("%s unit: %w", t.Name, err)
	}
	p.remember(out)
	return out, nil
}

func (p *Processor) backoff(attempt int) time.Duration {
	if p.Backoff != nil {
		return p.Backoff(attempt)
	}
	return consumer.Backoff(attempt)
}

func (p *Processor) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Processor) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	return wait.For(ctx, d)
}

func (p *Processor) log() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.Default()
}
