package delivery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

// Intents is the intent store as delivery uses it.
type Intents interface {
	GetIntent(ctx context.Context, id string) (intent.Intent, error)
	Apply(ctx context.Context, id string, t intent.Transition) (intent.Intent, error)
}

// Sender is the send half of a platform adapter. Failures are
// *message.SendError values (errors.As).
type Sender interface {
	Send(ctx context.Context, m message.Outgoing) (message.Receipt, error)
	Capabilities() message.Capabilities
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
	// MaxAttempts is how many sends a unit gets before it fails. Defaults
	// to 8.
	MaxAttempts int
	// Unknown is the policy for unknown outcomes. Defaults to UnknownHold.
	Unknown UnknownPolicy
	// UnknownByPlatform overrides Unknown per platform.
	UnknownByPlatform map[message.Platform]UnknownPolicy
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	c.BubbleDelay = cmp.Or(c.BubbleDelay, time.Second)
	c.MaxInlineWait = cmp.Or(c.MaxInlineWait, 5*time.Second)
	c.SendTimeout = cmp.Or(c.SendTimeout, 10*time.Second)
	c.Lease = cmp.Or(c.Lease, 2*c.SendTimeout)
	c.MaxAttempts = cmp.Or(c.MaxAttempts, 8)
	c.Unknown = cmp.Or(c.Unknown, UnknownHold)
	return c
}

// Validate reports every problem with the configuration.
func (c Config) Validate() error {
	var errs []error
	if c.BubbleDelay < 0 {
		errs = append(errs, errors.New("bubble delay must not be negative"))
	}
	if c.Lease <= c.SendTimeout {
		errs = append(errs, fmt.Errorf("lease (%s) must exceed the send timeout (%s)", c.Lease, c.SendTimeout))
	}
	if c.MaxAttempts < 1 {
		errs = append(errs, errors.New("max attempts must be at least 1"))
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
	Senders map[message.Platform]Sender
	Config  Config
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// Sleep waits in place (pacing). Defaults to a context-aware sleep.
	Sleep func(ctx context.Context, d time.Duration) error
	Log   *slog.Logger
}

// Handle delivers the unit a record names, and every open unit before it.
// It is a consumer.HandlerFunc.
func (p *Processor) Handle(ctx context.Context, rec consumer.Record) error {
	ref, err := intent.DecodeRef([]byte(rec.Body))
	if err != nil {
		// Never deliverable: straight to the DLQ, which alarms.
		p.log().Error("bad outbound message", "message_id", rec.MessageId, "error", err)
		return consumer.Retry(err, 0)
	}
	in, err := p.Intents.GetIntent(ctx, ref.Intent)
	if errors.Is(err, store.ErrNotFound) {
		p.log().Error("outbound message names no intent; dropped", "intent_id", ref.Intent, "unit_id", ref.Unit)
		return nil
	}
	if err != nil {
		return fmt.Errorf("read intent: %w", err)
	}
	target := in.Index(ref.Unit)
	if target < 0 {
		p.log().Error("outbound message names no unit of its intent; dropped", "intent_id", ref.Intent, "unit_id", ref.Unit)
		return nil
	}
	// From the first unit, not the first open one: a unit held in
	// unknown_after_send is settled for ordering, but a resend policy still
	// has work to do on it before anything after it goes.
	for i := 0; i <= target; i++ {
		if in, err = p.deliver(ctx, in, i); err != nil {
			return err
		}
	}
	return nil
}

// deliver takes unit i as far as it can go now. It returns the intent as it
// is afterwards, or an error asking for the record to be retried.
func (p *Processor) deliver(ctx context.Context, in intent.Intent, i int) (intent.Intent, error) {
	cfg := p.Config.WithDefaults()
	log := p.log().With("intent_id", in.ID, "unit_id", in.Units[i].ID, "platform", string(in.Thread.Platform),
		"thread_key", in.Thread.Key())
	sender, ok := p.Senders[in.Thread.Platform]
	if !ok {
		return p.apply(ctx, log, in, intent.MarkFailed(in.Units[i], i, p.now(), message.FailInvalidPayload, "no sender configured for platform"))
	}
	policy := cfg.Unknown
	if pol, ok := cfg.UnknownByPlatform[in.Thread.Platform]; ok {
		policy = pol
	}
	if sender.Capabilities().Idempotent {
		policy = UnknownResend
	}

	for range 3 { // a lost compare-and-set re-reads and decides again
		u := in.Units[i]
		now := p.now()
		var lease intent.Transition
		switch u.State {
		case message.UnitSent, message.UnitFailed:
			return in, nil
		case message.UnitUnknown:
			if policy != UnknownResend {
				return in, nil // held for an operator; the thread moves on
			}
			if u.Attempt >= cfg.MaxAttempts {
				return p.apply(ctx, log, in, intent.MarkFailed(u, i, now, message.FailUnknown, "unknown outcome, out of attempts"))
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
			if u.Attempt >= cfg.MaxAttempts {
				return p.apply(ctx, log, in, intent.MarkFailed(u, i, now, u.FailureClass, "out of attempts: "+u.FailureReason))
			}
			if wait := p.paceWait(in, i, now, cfg); wait > 0 {
				if wait > cfg.MaxInlineWait {
					return in, consumer.Retry(errors.New("pacing"), wait)
				}
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
		return p.send(ctx, log, sender, leased, i, policy, cfg)
	}
	return in, consumer.Retry(errors.New("unit kept changing under us"), time.Second)
}

// send performs the leased attempt on unit i and records its outcome.
func (p *Processor) send(ctx context.Context, log *slog.Logger, sender Sender, in intent.Intent, i int, policy UnknownPolicy, cfg Config) (intent.Intent, error) {
	u := in.Units[i]
	log = log.With("attempt", u.Attempt)
	if u.Resent {
		log.Warn("resending a unit whose earlier send may have arrived (at-least-once policy)")
	}
	sctx, cancel := context.WithTimeout(ctx, cfg.SendTimeout)
	start := p.now()
	receipt, err := sender.Send(sctx, message.Outgoing{
		Thread: in.Thread, Text: u.Text, ReplyTo: u.ReplyTo, IdempotencyKey: intent.UnitKey(in.ID, u.ID),
	})
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
	case class == message.FailConflict && sender.Capabilities().Idempotent:
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
			return out, err
		}
		log.Error("unit outcome unknown: held for an operator", "outcome", "unknown_after_send", "policy", string(policy))
		return out, nil
	default: // transient, rate_limit, cancelled
		if u.Attempt >= cfg.MaxAttempts {
			log.Error("unit failed", "outcome", "failed", "note", "out of attempts")
			return p.apply(cctx, log, in, intent.MarkFailed(u, i, now, class, "out of attempts: "+reason))
		}
		out, aerr := p.apply(cctx, log, in, intent.MarkRetryable(u, i, now, class, reason))
		if aerr != nil {
			return out, aerr
		}
		if class == message.FailRateLimit && retryAfter > 0 {
			log.Warn("unit rate limited: parked", "outcome", "retry", "retry_after_ms", retryAfter.Milliseconds())
			return out, consumer.Retry(err, retryAfter)
		}
		log.Warn("unit send failed: will retry", "outcome", "retry")
		return out, err
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
	return out, nil
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
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *Processor) log() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.Default()
}
