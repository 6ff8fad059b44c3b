package turn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/preview"
	"github.com/parleyhq/parley/shared/store"
)

// Awaits is the await store as the turn uses it: a turn whose agent
// answered 202 records that it waits, and later finds the agent's post
// there (written by /reply) or gives up at the deadline.
type Awaits interface {
	OpenAwait(ctx context.Context, a store.Await) (store.Await, bool, error)
	GetAwait(ctx context.Context, turnID string) (store.Await, error)
	SetAwaitHandle(ctx context.Context, turnID, handle string) error
	AdoptAwait(ctx context.Context, turnID, owner, handle string, preview message.Preview) (store.Await, error)
	ExpireAwait(ctx context.Context, turnID string) (store.Await, error)
	SettleAwaitPreview(ctx context.Context, turnID, by string, now, busy time.Time) (store.Await, error)
}

// awaitNote marks a turn claim held while its agent's reply is awaited.
const awaitNote = "await"

// errAwaiting hands a waiting turn's message back to its queue: the
// thread's later turns stay behind it.
var errAwaiting = errors.New("waiting for the agent's posted reply")

// await records that the turn waits for its agent's post until the
// deadline, and holds the turn's claim (and so its message, and its
// thread's later turns) until then. Nothing waits in memory: the message is
// parked until the deadline (AwaitPoll at most), and a post wakes it.
//
// The agent may have posted before this turn read its 202: the post then
// opened the record itself (package agentapi), and this turn takes it over,
// or plans the post at once when it was final.
func (p *Processor) await(ctx context.Context, log *slog.Logger, cfg Config, rec consumer.Record, ev message.Event, ch Channel, key, owner, intentID string) error {
	now := p.now()
	// The agent's previews (POST /reply/preview) go where a streamed
	// reply's would.
	var base message.Preview
	if _, on := p.previews(ctx, ch); on {
		base = previewBase(ev, intentID)
	}
	a, created, err := p.Awaits.OpenAwait(ctx, store.Await{
		TurnID: intentID, Thread: ev.Thread, EventKey: ev.Key(), ClaimKey: key, ClaimOwner: owner,
		Deadline: now.Add(cfg.AsyncTimeout), Handle: rec.ReceiptHandle, CreatedAt: now,
		ExpiresAt: now.Add(cfg.AsyncTimeout + cfg.ClaimTTL), Preview: base,
	})
	if err == nil && !created && a.State == store.AwaitOpen {
		// Opened by an early post, or by an earlier run of this turn:
		// this run's claim and message wait on it now.
		if a.Preview.Thread.Platform == "" && a.Bubbles > 0 {
			// Early posts went before the turn's reply context was on
			// the record, as plain messages: the record keeps none, so
			// previews stay refused (409 posted) and the final, not a
			// later post, answers the event first (afterPosts).
			base = message.Preview{}
		}
		a, err = p.Awaits.AdoptAwait(ctx, intentID, owner, rec.ReceiptHandle, base)
		var conflict *store.AwaitConflictError
		if errors.As(err, &conflict) {
			a, err = conflict.Current, nil // a post finished it meanwhile
		}
	}
	if err != nil {
		p.release(ctx, log, key, owner, time.Time{})
		return fmt.Errorf("record the wait: %w", err)
	}
	if a.State != store.AwaitOpen {
		log.Info("the agent posted before its 202 was read; the post is taken now", "outcome", "async_early")
		a.ClaimKey, a.ClaimOwner = key, owner
		return p.closedWait(ctx, log, cfg, ev, ch, a)
	}
	if err := p.Claims.Release(context.WithoutCancel(ctx), key, owner, store.ReleaseSpec{Until: a.Deadline, Note: awaitNote}); err != nil {
		// The claim's lease still holds the thread; the next receive
		// finds the claim pending and the record open.
		log.Warn("hold turn claim for the wait failed", "error", err)
	}
	log.Info("turn waits for the agent's posted reply", "outcome", "awaiting", "deadline", a.Deadline.UTC().Format(time.RFC3339))
	return p.park(ctx, log, cfg, rec, ev, ch, a)
}

// awaiting is a waiting turn's message received again before the deadline.
func (p *Processor) awaiting(ctx context.Context, log *slog.Logger, cfg Config, rec consumer.Record, ev message.Event, ch Channel, intentID string) error {
	a, err := p.Awaits.GetAwait(ctx, intentID)
	if err != nil {
		return fmt.Errorf("read the wait: %w", err)
	}
	if a.State != store.AwaitOpen {
		return p.closedWait(ctx, log, cfg, ev, ch, a)
	}
	if err := p.Awaits.SetAwaitHandle(ctx, intentID, rec.ReceiptHandle); err != nil {
		var conflict *store.AwaitConflictError
		if errors.As(err, &conflict) {
			// The post arrived in between: take it now.
			return p.closedWait(ctx, log, cfg, ev, ch, conflict.Current)
		}
		// A post's wake would use the handle of an earlier receive and
		// miss: look again soon rather than at the next poll.
		log.Warn("record the waiting message's handle failed; looking again soon", "error", err)
		return consumer.Retry(errAwaiting, min(shortLook, p.pollWait(cfg, a.Deadline, p.now())))
	}
	return p.park(ctx, log, cfg, rec, ev, ch, a)
}

// shortLook is how soon a waiting turn looks again when a post might not
// wake it (its message's handle is not on the record).
const shortLook = 30 * time.Second

// park parks the waiting turn's message itself until its next look: the
// deadline, or AwaitPoll when that is sooner. A post wakes it
// (ChangeMessageVisibility to zero with the record's handle), and so must
// come after the park to stand: the record is read once more after the
// park, and a post that was recorded before it (its wake undone) is taken
// now. The consumer leaves a parked message's visibility alone.
func (p *Processor) park(ctx context.Context, log *slog.Logger, cfg Config, rec consumer.Record, ev message.Event, ch Channel, a store.Await) error {
	wait := p.pollWait(cfg, a.Deadline, p.now())
	if p.Park == nil {
		return consumer.Retry(errAwaiting, wait)
	}
	if err := p.Park.ChangeVisibility(ctx, rec.ReceiptHandle, wait); err != nil {
		log.Warn("park the waiting message failed; looking again soon", "error", err)
		return consumer.Retry(errAwaiting, min(shortLook, wait))
	}
	now, err := p.Awaits.GetAwait(ctx, a.TurnID)
	if err != nil {
		log.Warn("read the wait after parking failed; the next look finds a post", "error", err)
		return consumer.Parked(errAwaiting)
	}
	if now.State != store.AwaitOpen {
		return p.closedWait(ctx, log, cfg, ev, ch, now)
	}
	return consumer.Parked(errAwaiting)
}

// closedWait ends a wait the record ended before the deadline: a final post
// is planned; an expired record (only a bubble that failed for good expires
// it early) settles the turn.
func (p *Processor) closedWait(ctx context.Context, log *slog.Logger, cfg Config, ev message.Event, ch Channel, a store.Await) error {
	ctx, err := p.previewed(ctx, log, cfg, ch, a)
	if err != nil {
		return err
	}
	if a.State == store.AwaitFinal {
		return p.awaited(ctx, log, cfg, ev, ch, a, a.ClaimKey, a.ClaimOwner)
	}
	log.Warn("turn done: a bubble of its posted reply failed for good; the rest was abandoned", "outcome", "async_abandoned")
	return p.fail(ctx, log, cfg, ev, a.ClaimKey, a.ClaimOwner, a.TurnID, "async_abandoned")
}

// awaitDue is a waiting turn's message received once the deadline passed
// (the claim's hold ended, and this invocation claimed it as owner): the
// post that arrived is planned, else the wait expires.
func (p *Processor) awaitDue(ctx context.Context, log *slog.Logger, cfg Config, rec consumer.Record, ev message.Event, ch Channel, key, owner, intentID string) error {
	a, err := p.Awaits.GetAwait(ctx, intentID)
	if err == nil && a.State == store.AwaitOpen {
		a, err = p.Awaits.ExpireAwait(ctx, intentID)
		var conflict *store.AwaitConflictError
		if errors.As(err, &conflict) {
			a, err = conflict.Current, nil // the post won the race
		}
	}
	if err != nil {
		p.release(ctx, log, key, owner, time.Time{})
		return fmt.Errorf("end the wait: %w", err)
	}
	ctx, err = p.previewed(ctx, log, cfg, ch, a)
	if err != nil {
		p.release(ctx, log, key, owner, time.Time{})
		return err
	}
	if a.State == store.AwaitFinal {
		return p.awaited(ctx, log, cfg, ev, ch, a, key, owner)
	}
	log.Warn("turn done: the agent's reply did not arrive in time", "outcome", "async_timeout")
	return p.fail(ctx, log, cfg, ev, key, owner, intentID, "async_timeout")
}

// previewed readies a closed wait's turn to settle the previews its agent
// posted (POST /reply/preview). It settles the preview on the await record
// (preview.Settle): the update in flight, if any, is let finish first (it
// is bounded: its lease ends a few seconds after it was taken), and none is
// taken after, so that nothing is posted or edited after the final. Then
// the turn reads the preview's record, which the reply function wrote, as a
// retried turn does, and the status line the updates showed is cleared. A
// turn whose agent posted no preview reads and writes nothing; nor does one
// whose first sequential post settled the preview (package agentapi).
func (p *Processor) previewed(ctx context.Context, log *slog.Logger, cfg Config, ch Channel, a store.Await) (context.Context, error) {
	ctx = afterPosts(ctx, a)
	if a.PreviewUpdates == 0 || a.PreviewSettled != "" && a.PreviewSettled != store.SettledByTurn {
		return ctx, nil
	}
	s, err := preview.Settle(ctx, p.Awaits, a.TurnID, store.SettledByTurn, p.now, preview.MaxSettleWait, preview.MaxSettleWait)
	var conflict *store.AwaitConflictError
	switch {
	case errors.As(err, &conflict):
		log.Info("the agent's preview was settled by its first sequential post", "settled_by", conflict.Current.PreviewSettled)
		return ctx, nil
	case err != nil:
		return ctx, fmt.Errorf("settle the agent's preview: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.TypingTimeout)
	defer cancel()
	if err := preview.EndStatus(sctx, ch.Previewer, s); err != nil {
		log.Warn("the thread's status could not be cleared", "error", err)
	}
	return withLive(ctx, true), nil
}

// postedKey carries, in a closed wait's context, how many bubbles of the
// reply to its event the turn's sequential posts sent (agentapi's
// deliverPost): the turn's own intent takes its place after them.
type postedKey struct{}

// afterPosts is ctx for the end of a's turn: its intent follows the posts'
// bubbles where they answered the event (the record held its reply
// context: it has a preview base), so a platform's first answer to the
// event (Discord's @original) is the first post's, never the final's too.
// An early post's record has none: its posts went as plain messages.
func afterPosts(ctx context.Context, a store.Await) context.Context {
	if a.Preview.Thread.Platform == "" || a.Bubbles == 0 {
		return ctx
	}
	return context.WithValue(ctx, postedKey{}, a.Bubbles)
}

// postedBefore is the Sequence of the turn's intent (afterPosts); 0 for a
// turn without sequential posts.
func postedBefore(ctx context.Context) int {
	n, _ := ctx.Value(postedKey{}).(int)
	return n
}

// awaited plans the agent's post exactly like a reply given in the turn,
// and persists and enqueues it under the turn's claim.
func (p *Processor) awaited(ctx context.Context, log *slog.Logger, cfg Config, ev message.Event, ch Channel, a store.Await, key, owner string) error {
	log = log.With("post_id", a.Post.ID)
	reply := agent.Reply{Status: 200, ContentType: a.Post.ContentType, Body: a.Post.Body}
	units, outcome, err := p.planReply(ctx, log, cfg, ev, ch, a.TurnID, reply)
	if err != nil {
		var ae *agent.Error
		if errors.As(err, &ae) && ae.Kind == agent.KindPermanent {
			log.Error("turn failed: the posted reply cannot be planned", "outcome", "async_reply_invalid", "error", err)
			return p.fail(ctx, log, cfg, ev, key, owner, a.TurnID, "async_reply_invalid")
		}
		return err
	}
	// The turn's bubble cap counts the sequential posts delivered before.
	units = capBubbles(units, cfg.Envelope.WithDefaults().MaxBubbles-a.Bubbles)
	if a.Post.Replaces != "" && len(units) > 0 && units[0].ID != askUnitID {
		units[0].Replaces = a.Post.Replaces
	}
	log.Info("agent's posted reply arrived", "outcome", "async_reply", "wait_ms", a.Post.At.Sub(a.CreatedAt).Milliseconds(), "posts", len(a.Posts))
	return p.commit(ctx, log, cfg, ev, key, owner, a.TurnID, units, outcome)
}

// capBubbles keeps the units of the first n bubbles (a unit's bubble is its
// id before "#"), and the question, which is no bubble.
func capBubbles(units []intent.Unit, n int) []intent.Unit {
	var out []intent.Unit
	var seen []string
	for _, u := range units {
		b, _, _ := strings.Cut(u.ID, "#")
		if u.ID == askUnitID {
			out = append(out, u)
			continue
		}
		if !slices.Contains(seen, b) {
			if len(seen) == n {
				continue
			}
			seen = append(seen, b)
		}
		out = append(out, u)
	}
	return out
}

// pollWait is how long a waiting turn's message stays away: a poll, or
// less when the deadline is nearer.
func (p *Processor) pollWait(cfg Config, deadline, now time.Time) time.Duration {
	return max(time.Second, min(cfg.AwaitPoll, deadline.Sub(now)+time.Second))
}
