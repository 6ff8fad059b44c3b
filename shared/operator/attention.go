package operator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/store"
)

// What needs a person, by kind.
const (
	KindHeldUnit   = "held_unit"
	KindFailedUnit = "failed_unit"
	KindStuckClaim = "stuck_claim"
	KindDLQMessage = "dlq_message"
)

// Item is one thing on the attention list.
type Item struct {
	Kind string `json:"kind"`
	// Since is when it started needing a person.
	Since time.Time `json:"since"`
	// Key names it for the commands that act on it: a unit key (resend,
	// abandon), a turn claim's key, a dead-letter queue message's id.
	Key           string `json:"key"`
	CorrelationID string `json:"correlation_id,omitempty"`
	Thread        string `json:"thread,omitempty"`
	// Queue is a dead-lettered message's queue.
	Queue  string `json:"queue,omitempty"`
	Detail string `json:"detail"`
	// Actions are what parley and the console can do about it.
	Actions []string `json:"actions,omitempty"`
}

// Attention lists what needs a person, oldest first: units held in
// unknown_after_send and failed units (the attention index), turn claims
// left pending past their lease (the sweeper's list, and the sweeper's
// stuck_claim findings in the logs, each looked up again), and the
// messages of every dead-letter queue.
func (o *Operator) Attention(ctx context.Context) ([]Item, []string, error) {
	var items []Item
	var notes []string
	entries, err := o.Store.Attention(ctx, 1000)
	if err != nil {
		return nil, nil, fmt.Errorf("read the attention index: %w", err)
	}
	for _, e := range entries {
		in, err := o.Store.GetIntent(ctx, e.IntentID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read intent %s: %w", e.IntentID, err)
		}
		for _, u := range in.Units {
			if !u.NeedsOperator() {
				continue
			}
			it := Item{Since: u.UpdatedAt, Key: intent.UnitKey(in.ID, u.ID), CorrelationID: intent.EventKeyOf(in.Origin),
				Thread: in.Thread.Key(), Actions: []string{"resend", "abandon"}}
			if u.State == message.UnitUnknown {
				it.Kind, it.Detail = KindHeldUnit, "held in unknown_after_send: "+u.FailureReason
			} else {
				it.Kind, it.Detail = KindFailedUnit, fmt.Sprintf("failed (%s): %s", u.FailureClass, u.FailureReason)
			}
			items = append(items, it)
		}
	}
	stuck, err := o.stuckClaims(ctx)
	if err != nil {
		return nil, nil, err
	}
	items = append(items, stuck...)
	for _, q := range o.Target.Queues {
		msgs, peek, err := o.peek(ctx, q, false)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s's dead-letter queue could not be read: %v", q.Name, err))
			continue
		}
		for _, m := range msgs {
			items = append(items, Item{Kind: KindDLQMessage, Since: m.DeadLetteredAt, Key: m.MessageID, Queue: q.Name,
				CorrelationID: m.CorrelationID, Thread: m.Thread, Detail: m.Detail(),
				Actions: []string{"redrive " + q.Name}})
		}
		if peek.Hidden > 0 {
			notes = append(notes, fmt.Sprintf("%s's dead-letter queue holds %d more message(s) behind others of their conversations", q.Name, peek.Hidden))
		}
	}
	slices.SortStableFunc(items, func(a, b Item) int { return a.Since.Compare(b.Since) })
	return items, notes, nil
}

// stuckClaims are turn claims pending past their lease: those still on the
// sweeper's list, and those the sweeper reported (and took off its list)
// that are still pending.
func (o *Operator) stuckClaims(ctx context.Context) ([]Item, error) {
	now := o.now()
	keys := map[string]bool{}
	due, err := o.Store.DueForSweep(ctx, now, 1000)
	if err != nil {
		return nil, fmt.Errorf("read the sweeper's list: %w", err)
	}
	for _, e := range due {
		keys[e.Key] = true
	}
	if o.Logs != nil {
		lines, err := o.Logs.Search(ctx, Query{Field: "finding", Value: "stuck_claim", Since: o.since()})
		if err == nil {
			for _, l := range lines {
				if k := l.Field("claim_key"); k != "" {
					keys[k] = true
				}
			}
		}
	}
	var out []Item
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	}) {
		if !strings.HasPrefix(k, "int#") {
			continue
		}
		c, err := o.Store.GetClaim(ctx, k, now)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read claim %s: %w", k, err)
		}
		if c.State != store.ClaimPending || c.LeaseUntil.After(now) {
			continue
		}
		out = append(out, Item{Kind: KindStuckClaim, Since: c.LeaseUntil, Key: k, CorrelationID: c.Origin, Thread: c.Thread.Key(),
			Detail: fmt.Sprintf("turn pending past its lease after %d attempt(s): cut off and not taken over; its message comes back by its visibility timeout, or is in the dead-letter queue", c.Attempts)})
	}
	return out, nil
}

// Decision is what an operator's resend or abandon did.
type Decision struct {
	Unit          string            `json:"unit"`
	CorrelationID string            `json:"correlation_id"`
	Thread        string            `json:"thread"`
	Before, After message.UnitState `json:"-"`
	// Outcome is a stable word: resent, abandoned, already_pending,
	// already_sent (resent before), already_abandoned.
	Outcome string `json:"outcome"`
	Detail  string `json:"detail"`
}

// unitOf reads the unit a unit key names.
func (o *Operator) unitOf(ctx context.Context, key string) (intent.Intent, int, error) {
	id, unitID, ok := intent.ParseUnitKey(key)
	if !ok || !intentID(id) {
		return intent.Intent{}, 0, fmt.Errorf("%w: %q is not a unit key: want <intent id>#<unit id>, as parley attention and parley message show it", ErrAmbiguous, key)
	}
	in, err := o.Store.GetIntent(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return intent.Intent{}, 0, fmt.Errorf("%w: no intent %s", ErrNotFound, id)
	}
	if err != nil {
		return intent.Intent{}, 0, err
	}
	i := in.Index(unitID)
	if i < 0 {
		return intent.Intent{}, 0, fmt.Errorf("%w: intent %s has no unit %q", ErrNotFound, id, unitID)
	}
	return in, i, nil
}

// intentID reports whether s is an intent id (intent.IDFor): 32
// lower-case hex characters.
func intentID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

// ResendRisk is what resending u on its platform risks, when its earlier
// send may have arrived: "" when nothing (the platform drops a copy).
func (o *Operator) ResendRisk(in intent.Intent, u intent.Unit) string {
	if u.State != message.UnitUnknown && u.FailureClass != message.FailUnknown {
		return ""
	}
	p := in.Thread.Platform
	caps, known := o.Platforms[p]
	switch {
	case known && caps.Idempotent:
		return ""
	case known && caps.Reconcile && u.Content.Media == nil:
		// A file message cannot be looked up (platform.ErrNotReconcilable):
		// the default below says what a resend risks.
		return fmt.Sprintf("%s's send of this unit may have arrived. Parley can look a %s message up before resending, but a resend by hand skips that: if it arrived, the person sees this bubble twice.", p, p)
	default:
		return fmt.Sprintf("%s's send of this unit may have arrived, and %s has no idempotency key Parley could resend it under: if it arrived, the person sees this bubble twice (its unknown-outcome policy holds such units for this reason).", p, p)
	}
}

// Resend sends a held or failed unit again: back to pending by a
// compare-and-set on the state and attempt read (intent.OperatorResend),
// then a message to outbound.fifo naming it, in its thread's group. A unit
// whose earlier send may have arrived on a platform that cannot drop a copy
// needs yes: without it, Resend changes nothing and returns a
// *ConfirmError saying what it risks. A unit already pending (resent
// before) is enqueued again and reported already_pending: running it twice
// is safe.
func (o *Operator) Resend(ctx context.Context, key string, yes bool) (Decision, error) {
	in, i, err := o.unitOf(ctx, key)
	if err != nil {
		return Decision{}, err
	}
	u := in.Units[i]
	d := Decision{Unit: key, CorrelationID: intent.EventKeyOf(in.Origin), Thread: in.Thread.Key(), Before: u.State}
	switch {
	case u.State == message.UnitPending:
		// Resent before (or never held): enqueued once more, which
		// delivery's compare-and-sets make harmless.
		d.After, d.Outcome, d.Detail = u.State, "already_pending", "the unit is pending already: its delivery was enqueued again"
		return d, o.enqueue(ctx, in, u)
	case u.State == message.UnitSent && u.Resent:
		d.After, d.Outcome, d.Detail = u.State, "already_sent", "resent before, and sent: receipt "+strings.Join(u.Receipt, ", ")
		return d, nil
	case u.State == message.UnitSent:
		return Decision{}, fmt.Errorf("%w: unit %s was sent (receipt %s): a resend would show the person a copy", ErrAmbiguous, key, strings.Join(u.Receipt, ", "))
	case u.State != message.UnitUnknown && u.State != message.UnitFailed:
		return Decision{}, fmt.Errorf("%w: unit %s is %s: delivery is still working on it", ErrAmbiguous, key, u.State)
	}
	if risk := o.ResendRisk(in, u); risk != "" && !yes {
		return Decision{}, &ConfirmError{Risk: risk}
	}
	out, err := o.Store.Apply(ctx, in.ID, intent.OperatorResend(u, i, o.now()))
	var conflict *store.IntentConflictError
	if errors.As(err, &conflict) {
		return Decision{}, fmt.Errorf("unit %s moved while you decided (it is %s now): read it again", key, conflict.Current.Units[i].State)
	}
	if err != nil {
		return Decision{}, fmt.Errorf("resend unit %s: %w", key, err)
	}
	d.After, d.Outcome = out.Units[i].State, "resent"
	d.Detail = "back to pending with a fresh budget; delivery sends it in its thread's order"
	return d, o.enqueue(ctx, out, out.Units[i])
}

// enqueue puts a message naming unit u on outbound.fifo, in its thread's
// group. Its deduplication id is the operator's own (the unit's first
// enqueue's is long used); delivery's compare-and-sets absorb a copy, and
// the sweeper re-drives the intent if this message is lost.
func (o *Operator) enqueue(ctx context.Context, in intent.Intent, u intent.Unit) error {
	q, ok := o.Target.Queue("outbound")
	if !ok {
		return errors.New("no outbound queue in the target")
	}
	body := queue.Body(intent.EncodeRefOf(in, u.ID))
	dedup := message.DedupID(fmt.Sprintf("operator#%s#%d#%d", intent.UnitKey(in.ID, u.ID), u.Attempt, o.now().UnixMilli()))
	_, err := o.SQS.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl: aws.String(q.URL), MessageBody: aws.String(string(body)),
		MessageGroupId: aws.String(message.GroupID(in.Thread.Key())), MessageDeduplicationId: aws.String(dedup),
	})
	if err != nil {
		return fmt.Errorf("enqueue the unit's delivery (the sweeper re-drives it within minutes): %w", err)
	}
	return nil
}

// Abandon gives a held or failed unit up for good (intent.Abandon): it is
// never sent, and leaves the attention list. A unit abandoned before is
// reported already_abandoned: running it twice is safe.
func (o *Operator) Abandon(ctx context.Context, key string) (Decision, error) {
	in, i, err := o.unitOf(ctx, key)
	if err != nil {
		return Decision{}, err
	}
	u := in.Units[i]
	d := Decision{Unit: key, CorrelationID: intent.EventKeyOf(in.Origin), Thread: in.Thread.Key(), Before: u.State}
	switch {
	case u.State == message.UnitFailed && u.FailureClass == message.FailAbandoned:
		d.After, d.Outcome, d.Detail = u.State, "already_abandoned", "abandoned before: "+u.FailureReason
		return d, nil
	case u.State == message.UnitSent:
		return Decision{}, fmt.Errorf("%w: unit %s was sent (receipt %s): there is nothing to abandon", ErrAmbiguous, key, strings.Join(u.Receipt, ", "))
	case u.State != message.UnitUnknown && u.State != message.UnitFailed:
		return Decision{}, fmt.Errorf("%w: unit %s is %s: delivery is still working on it", ErrAmbiguous, key, u.State)
	}
	was := string(u.State)
	if u.FailureClass != "" {
		was += " (" + string(u.FailureClass) + ": " + u.FailureReason + ")"
	}
	out, err := o.Store.Apply(ctx, in.ID, in.Closing(intent.Abandon(u, i, o.now(), "abandoned by an operator; was "+was)))
	var conflict *store.IntentConflictError
	if errors.As(err, &conflict) {
		return Decision{}, fmt.Errorf("unit %s moved while you decided (it is %s now): read it again", key, conflict.Current.Units[i].State)
	}
	if err != nil {
		return Decision{}, fmt.Errorf("abandon unit %s: %w", key, err)
	}
	d.After, d.Outcome, d.Detail = out.Units[i].State, "abandoned", "failed for good, off the attention list; never sent"
	return d, nil
}
