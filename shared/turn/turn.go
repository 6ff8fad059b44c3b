package turn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/envelope"
	"github.com/parleyhq/parley/shared/history"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/media"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/preview"
	"github.com/parleyhq/parley/shared/questions"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/store"
)

// Intents is the intent store as the turn uses it.
type Intents interface {
	// CommitIntent writes a turn's intent onto its claim and settles the
	// claim, in one conditional write (dynamostore.Store.CommitIntent).
	CommitIntent(ctx context.Context, in intent.Intent, owner, outcome string, now time.Time) (intent.Intent, bool, error)
	GetIntent(ctx context.Context, id string) (intent.Intent, error)
}

// Outbox enqueues units on outbound.fifo, in order.
type Outbox interface {
	SendBatch(ctx context.Context, msgs []queue.Message) error
}

// Agent answers a turn.
type Agent interface {
	Call(ctx context.Context, req agent.TurnRequest) (agent.Reply, error)
}

// Channel is a platform as the turn sees it: what a message may hold, and
// its typing indicator, if it has one.
type Channel struct {
	Capabilities message.Capabilities
	// Typer shows "typing…" while the agent thinks; nil when the platform
	// has none, or sends nothing here.
	Typer Typer
	// MessageTyper shows it for the person's message (WhatsApp's); the
	// turn prefers it to Typer when its event names that message.
	MessageTyper MessageTyper
	// Editor changes a question message as it is answered; nil when the
	// platform cannot edit (the next field goes as a new message).
	Editor Editor
	// Acknowledger answers presses of controls; nil when none is needed.
	Acknowledger Acknowledger
	// Reactor reacts to a person's message (an envelope's "react", the
	// status lifecycle); nil when the platform cannot.
	Reactor Reactor
	// Downloader fetches the files people attach on this platform, for
	// Media to store; nil when its adapter cannot.
	Downloader platform.Downloader
	// Previewer shows a streamed reply while the agent writes it; nil
	// when the platform has no preview (the reply arrives whole).
	Previewer Previewer
	// Private tells a one-to-one chat from a group by its thread, and
	// names the person in it (registry.Private), for an event that does
	// not say (a proactive event, an agent's send). Nil: a group.
	Private func(message.Thread) (person string, private bool)
}

// Media stages an event's attachments (media.Stager): each gets a URL or a
// reason; an error is the store's, and the turn is retried.
type Media interface {
	Stage(ctx context.Context, ev message.Event, d platform.Downloader) ([]message.Attachment, error)
}

// Editor changes a message Parley sent (platform.Editor).
type Editor interface {
	Edit(ctx context.Context, t message.Thread, messageID string, c message.Content) error
}

// PressEditor is an Editor that can also change the message a press came
// from through the press itself (platform.PressEditor), found on the
// Editor by type assertion.
type PressEditor interface {
	EditPressed(ctx context.Context, press message.Event, c message.Content) error
}

// Acknowledger answers a press, with a notice for the person who pressed
// (platform.Acknowledger).
type Acknowledger interface {
	Acknowledge(ctx context.Context, ev message.Event, notice string) error
}

// Typer is a channel with a typing indicator.
type Typer interface {
	Typing(ctx context.Context, t message.Thread) error
}

// Config tunes the processor.
type Config struct {
	// Envelope is how agent replies are parsed and limited.
	Envelope envelope.Config
	// ClaimTTL is how long a turn claim is remembered: as long as the
	// ingress dedupe keys, at least. Defaults to store.DedupeTTL.
	ClaimTTL time.Duration
	// ClaimLease bounds a running turn; above the function timeout.
	// Defaults to 90 seconds.
	ClaimLease time.Duration
	// IntentTTL is how long send intents and their receipts are kept.
	// Defaults to 30 days.
	IntentTTL time.Duration
	// TypingTimeout bounds the best-effort typing indicator. Defaults to 2
	// seconds.
	TypingTimeout time.Duration
	// MaxAge is a turn's retry budget, in time, from when ingress accepted
	// its event: an agent that is down, slow or misconfigured is asked
	// again, with backoff, until then; past it the event goes to the
	// dead-letter queue (which alarms, and from which an operator redrives
	// it). An agent outage shorter than it loses nothing. Defaults to 6
	// hours; at most MaxMaxAge.
	MaxAge time.Duration
	// Questions tunes the agent's questions (next type "ask").
	Questions questions.Config
	// AsyncTimeout is how long a turn whose agent answered 202 waits for
	// its posted reply (PARLEY_ASYNC_TIMEOUT); the thread's later turns
	// wait behind it. Defaults to 15 minutes; at most MaxAsyncTimeout.
	AsyncTimeout time.Duration
	// Status is the status lifecycle's reactions (PARLEY_STATUS_REACTIONS):
	// off unless On.
	Status StatusReactions
	// Busy is each thread's busy policy (PARLEY_BUSY_POLICY): queue unless
	// set.
	Busy BusyConfig
	// History is the thread transcripts' bounds and TTL (PARLEY_HISTORY,
	// PARLEY_HISTORY_TTL): off unless Entries is set.
	History history.Config
	// Preview throttles the previews of streamed replies
	// (PARLEY_PREVIEW_INTERVAL, PARLEY_PREVIEW_MAX_UPDATES).
	Preview preview.Config
	// AwaitPoll is how often a waiting turn looks at its record when no
	// post woke it: a safety net, since a post wakes it. Each look returns
	// the thread's queued messages with it, a receive each, so it is rare.
	// Defaults to 1 hour.
	AwaitPoll time.Duration
}

// MaxAsyncTimeout bounds Config.AsyncTimeout. A waiting turn's message is
// parked at most until its deadline, well within SQS's 12 hours from a
// receive, and received about once per AwaitPoll (ADR 0014).
const MaxAsyncTimeout = 6 * time.Hour

// MaxMaxAge bounds Config.MaxAge. Within it, a waiting message stays well
// under the queues' maxReceiveCount (see resources.Inbound).
const MaxMaxAge = 24 * time.Hour

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	c.Envelope = c.Envelope.WithDefaults()
	c.ClaimTTL = cmp.Or(c.ClaimTTL, store.DedupeTTL)
	c.ClaimLease = cmp.Or(c.ClaimLease, 90*time.Second)
	c.IntentTTL = cmp.Or(c.IntentTTL, 30*24*time.Hour)
	c.TypingTimeout = cmp.Or(c.TypingTimeout, 2*time.Second)
	c.MaxAge = cmp.Or(c.MaxAge, 6*time.Hour)
	c.Questions = c.Questions.WithDefaults()
	c.AsyncTimeout = cmp.Or(c.AsyncTimeout, 15*time.Minute)
	c.AwaitPoll = cmp.Or(c.AwaitPoll, time.Hour)
	c.Preview = c.Preview.WithDefaults()
	if c.History.On() {
		c.History = c.History.WithDefaults()
	}
	return c
}

// Validate reports every problem with the configuration (call it on
// WithDefaults' result).
func (c Config) Validate() error {
	var errs []error
	if err := c.Envelope.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.MaxAge <= 0 || c.MaxAge > MaxMaxAge {
		errs = append(errs, fmt.Errorf("turn max age %s: want more than 0 and at most %s", c.MaxAge, MaxMaxAge))
	}
	if c.History.On() {
		if err := c.History.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := c.Preview.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Questions.TTL <= 0 || c.Questions.TTL > questions.MaxTTL {
		errs = append(errs, fmt.Errorf("question TTL %s: want more than 0 and at most %s", c.Questions.TTL, questions.MaxTTL))
	}
	return errors.Join(errs...)
}

// Processor handles inbound.fifo records.
type Processor struct {
	Claims   store.Claims
	Intents  Intents
	Outbox   Outbox
	Agent    Agent
	Channels map[message.Platform]Channel
	// Questions records the agent's questions; nil turns them off.
	Questions Questions
	// Inbox takes Parley's own events for a thread (a question's cancel).
	Inbox Inbox
	// Reports records platforms' delivery statuses on units; nil drops
	// them.
	Reports Reports
	// Awaits records turns waiting for their agent's posted reply; nil
	// makes a 202 end the turn with nothing sent.
	Awaits Awaits
	// Park parks a waiting turn's message on inbound.fifo
	// (ChangeMessageVisibility), before the turn reads its record once
	// more, so that a post's wake, which comes after, stands (ADR 0014).
	// Nil: the consumer parks it, and a post that arrives while the turn
	// runs may wait until the next poll.
	Park consumer.Visibility
	// Windows finds when a person last wrote, for a send that answers no
	// fresh message on a platform with a customer-service window; nil
	// leaves such sends to the platform.
	Windows store.Windows
	// History keeps the threads' transcripts (Config.History); nil keeps
	// none.
	History History
	// Busy keeps the threads' busy-policy records (Config.Busy); nil
	// makes every thread queue.
	Busy BusyStore
	// Media stores the files people attach and gives the agent their URLs
	// (package media); nil describes them to the agent with reason
	// media_off.
	Media Media
	// Previews records the previews of streamed replies, so that they are
	// finalized or cleared however the turn ends; nil shows none.
	Previews store.Previews
	Config   Config
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// Backoff is the retry delay after a retryable agent failure, by the
	// claim's attempts. Defaults to consumer.Backoff; a simulation draws
	// its jitter from its seed (consumer.BackoffFrom).
	Backoff func(attempts int) time.Duration
	Log     *slog.Logger
}

// Handle runs the turn for one inbound record. It is a consumer.HandlerFunc.
func (p *Processor) Handle(ctx context.Context, rec consumer.Record) (err error) {
	cfg := p.Config.WithDefaults()
	in, err := intent.DecodeInbound([]byte(rec.Body))
	if err != nil {
		p.log().Error("bad inbound message", "message_id", rec.MessageId, "error", err)
		return consumer.DeadLetter(err) // never processable: to the DLQ, alone, which alarms
	}
	ev := in.Event
	now := p.now()
	if in.NotBefore.After(now) {
		return consumer.Retry(errors.New("deferred"), in.NotBefore.Sub(now))
	}
	log := p.log().With("event_key", ev.Key(), "thread_key", ev.Thread.Key())
	if ev.Kind == message.KindStatus {
		return p.status(ctx, log, ev)
	}
	ch, ok := p.Channels[ev.Thread.Platform]
	if !ok {
		log.Error("turn dropped: no channel configured for the thread's platform", "platform", string(ev.Thread.Platform))
		return nil
	}

	intentID := intent.IDFor(ev.Key())
	key := store.IntentKey(intentID)
	owner := store.NewOwner()
	// Under collect, a turn of the agent's records when it ended: what
	// arrives before then arrived while it ran.
	endAfter := p.Busy != nil && cfg.Busy.For(ev.Thread) == BusyCollect && ev.Kind != message.KindSend && ev.Kind != message.KindCollected
	defer func() {
		if endAfter && err == nil {
			p.endTurn(ctx, log, cfg, ev)
		}
	}()
	// On the sweeper's list while it runs: a turn cut off and never taken
	// over is reported. The claim names the turn's thread, so an agent's
	// post that comes before its 202 is read finds where the turn goes.
	claim, err := p.Claims.Claim(ctx, key, store.ClaimSpec{Owner: owner, Now: now, Lease: cfg.ClaimLease, TTL: cfg.ClaimTTL, Sweep: true,
		Thread: ev.Thread, Origin: ev.Key()})
	log = log.With("intent_id", intentID)
	var held *store.ClaimHeldError
	if errors.As(err, &held) {
		if held.Current.State == store.ClaimPending && held.Current.Note == awaitNote && p.Awaits != nil {
			return p.awaiting(ctx, log, cfg, rec, ev, ch, intentID)
		}
		if held.Current.State == store.ClaimPending {
			// Running elsewhere, or released until its retry time (an
			// agent's Retry-After): either way, back then.
			return consumer.Retry(errors.New("turn running elsewhere or waiting for its retry time"), held.Current.LeaseUntil.Sub(now))
		}
		if ev.Kind == message.KindCollected && p.Busy != nil && held.Current.State == store.ClaimDone {
			// The collection's turn committed: its end, which clears the
			// collection, may not have been written.
			opener, _ := ev.Data[collectedBy].(string)
			if err := p.Busy.EndBusy(ctx, ev.Thread.Key(), opener, now, cfg.ClaimTTL); err != nil {
				return fmt.Errorf("end the collection: %w", err)
			}
		}
		return p.redelivered(ctx, log, held.Current, intentID)
	}
	if err != nil {
		return fmt.Errorf("claim turn: %w", err)
	}
	// A turn claimed before may have left a preview: this attempt takes it
	// over.
	ctx = withLive(ctx, claim.Attempts > 1)

	if claim.Note == awaitNote && p.Awaits != nil {
		return p.awaitDue(ctx, log, cfg, rec, ev, ch, key, owner, intentID)
	}
	if ev.Kind == message.KindCollected {
		if ev.Platform != message.Parley || p.Busy == nil {
			p.settle(ctx, log, key, owner, store.ClaimDone, "collect_off", cfg)
			return nil
		}
		return p.flush(ctx, log, cfg, rec, in, ch, key, owner, intentID, claim)
	}
	bo, err := p.busy(ctx, log, cfg, rec, in, ch, key, owner, intentID)
	if err != nil {
		p.release(ctx, log, key, owner, time.Time{})
		return err
	}
	if bo.done {
		endAfter = false
		return nil
	}
	if ev.ReplyContext == nil && ch.Capabilities.Window > 0 && p.Windows != nil {
		// An /send or a proactive turn answers no message of the person's:
		// its units carry the window their last message opened.
		last, err := p.Windows.LastInbound(ctx, ev.Thread.Key(), now)
		if err != nil {
			p.release(ctx, log, key, owner, time.Time{})
			return fmt.Errorf("read the thread's window: %w", err)
		}
		ev.ReplyContext = &message.ReplyContext{Token: message.WindowToken}
		if !last.IsZero() {
			ev.ReplyContext.Until = last.Add(ch.Capabilities.Window)
		}
	}
	if ev.Kind == message.KindSend {
		return p.send(ctx, log, cfg, ev, ch, key, owner, intentID)
	}
	// A press, Parley's cancel or a message answering a free-text field is
	// about the thread's question: it reaches the agent only as an answer,
	// never as a turn of its own.
	h, err := p.hear(ctx, log, cfg, ev, ch)
	if err != nil {
		p.release(ctx, log, key, owner, time.Time{})
		return err
	}
	var units []intent.Unit
	outcome := "question"
	if !h.handled || h.answer != nil {
		units, outcome, err = p.plan(ctx, log, cfg, []heardAt{{ev, receivedAt(rec, in, now)}}, ch, intentID, h.answer, bo.superseded)
	}
	units = append(h.units, units...)
	if err != nil {
		var ae *agent.Error
		if errors.As(err, &ae) && ae.Kind == agent.KindPermanent && !misconfigured(ae.Status) {
			log.Error("turn failed: agent refused", "outcome", "agent_failed", "status", ae.Status, "error", err)
			return p.fail(ctx, log, cfg, ev, key, owner, intentID, fmt.Sprintf("agent_status_%d", ae.Status))
		}
		return p.retryLater(ctx, log, cfg, rec, in, key, owner, claim, err)
	}
	if outcome == outcomeAsync && len(units) == 0 && p.Awaits != nil {
		return p.await(ctx, log, cfg, rec, ev, ch, key, owner, intentID)
	}
	return p.commit(ctx, log, cfg, ev, key, owner, intentID, units, outcome)
}

// redelivered handles an event whose turn was settled before: when the turn
// committed an intent, its open units are enqueued again (the commit comes
// before the enqueue, and only this says the enqueue happened; outbound
// deduplication and the units' states absorb a repeat), else nothing.
func (p *Processor) redelivered(ctx context.Context, log *slog.Logger, c store.Claim, intentID string) error {
	var open []queue.Message
	if c.State == store.ClaimDone || c.State == "" { // "": an intent of the previous release
		stored, err := p.Intents.GetIntent(ctx, intentID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("read intent: %w", err)
		}
		for i, m := range queue.Units(stored) {
			if st := stored.Units[i].State; st != message.UnitSent && st != message.UnitFailed {
				open = append(open, m)
			}
		}
	}
	if len(open) == 0 {
		log.Info("turn skipped: already handled", "outcome", "duplicate", "previous", string(c.State))
		return nil
	}
	if err := p.Outbox.SendBatch(ctx, open); err != nil {
		return fmt.Errorf("enqueue units: %w", err)
	}
	log.Warn("turn re-enqueued the open units of its committed intent", "outcome", "enqueued", "units", len(open))
	return nil
}

// commit persists a turn's planned units as its intent, settling its claim
// in the same write, and enqueues them.
func (p *Processor) commit(ctx context.Context, log *slog.Logger, cfg Config, ev message.Event, key, owner, intentID string, units []intent.Unit, outcome string) error {
	now := p.now()
	units = p.endPreview(ctx, log, p.Channels[ev.Thread.Platform], intentID, units)
	if !slices.ContainsFunc(units, func(u intent.Unit) bool { return u.Content.React != nil && u.Content.React.Status }) {
		// The person's message shows the turn is over: the last unit.
		units = append(units, statusUnits(cfg, p.Channels[ev.Thread.Platform], []message.Event{ev}, failedOutcome(outcome))...)
	}
	if len(units) == 0 {
		if err := p.settleOutcome(ctx, key, owner, store.ClaimDone, outcome, cfg); err != nil {
			return err
		}
		log.Info("turn done: nothing to send", "outcome", outcome)
		return nil
	}
	stored, created, err := p.Intents.CommitIntent(ctx, intent.Intent{
		ID: intentID, Origin: ev.Key(), Thread: ev.Thread, Units: units, ReplyContext: ev.ReplyContext, Sequence: postedBefore(ctx),
		CreatedAt: now, ExpiresAt: now.Add(cfg.IntentTTL), SweepAt: now.Add(intent.SweepGrace),
	}, owner, outcome, now)
	var held *store.ClaimHeldError
	switch {
	case errors.Is(err, store.ErrInvalid):
		// The same write fails on every retry: never ask the agent
		// again for it. The person hears back unless the policy is
		// silent.
		log.Error("turn failed: the plan cannot be stored", "outcome", "persist_failed", "error", err)
		stored, err = p.persistErrorLine(ctx, cfg, ev, owner, intentID, now)
		if err != nil || stored.ID == "" {
			p.settle(ctx, log, key, owner, store.ClaimFailed, "persist_failed", cfg)
			return nil
		}
	case errors.As(err, &held) && held.Current.State == store.ClaimPending:
		// Another attempt holds the turn and has not committed: it may be
		// running, or dead (killed, or its claim's answer lost) with no
		// message left to finish it but this one. Back when its lease
		// ends, to run the turn or find its outcome.
		log.Warn("turn lost its claim before it committed; back when the holder's lease ends", "outcome", "claim_lost", "state", string(held.Current.State))
		return consumer.Retry(fmt.Errorf("persist intent: %w", err), max(held.Current.LeaseUntil.Sub(now), 0))
	case errors.As(err, &held):
		// Another attempt settled the turn: its outcome stands.
		log.Warn("turn lost its claim before it committed; the attempt that settled it decides", "outcome", "claim_lost", "state", string(held.Current.State))
		return nil
	case err != nil:
		p.release(ctx, log, key, owner, time.Time{})
		return fmt.Errorf("persist intent: %w", err)
	case !created:
		log.Warn("intent already persisted by an earlier attempt; its plan stands")
	}
	return p.enqueue(ctx, log.With("plan", outcome), stored)
}

// enqueue puts a committed intent's units on outbound.fifo, in order. A
// failure retries the record, which finds the intent committed and only
// enqueues (redelivered).
func (p *Processor) enqueue(ctx context.Context, log *slog.Logger, stored intent.Intent) error {
	if err := p.Outbox.SendBatch(ctx, queue.Units(stored)); err != nil {
		return fmt.Errorf("enqueue units: %w", err)
	}
	log.Info("turn done", "outcome", "enqueued", "units", len(stored.Units))
	return nil
}

// plan calls the agent (with a typing indicator while it thinks; with the
// answer to its question, when the turn carries one) and plans its reply
// into units, a question it asks last. Returns the units and a stable
// outcome word.
//
// The turn answers heard, in order: one event, or the messages a busy
// thread collected, the last of which is its event.
func (p *Processor) plan(ctx context.Context, log *slog.Logger, cfg Config, heard []heardAt, ch Channel, intentID string, answer *agent.Answer, sup *agent.Superseded) ([]intent.Unit, string, error) {
	seen, evs, err := p.converse(ctx, log, cfg, heard, intentID, answer)
	if err != nil {
		return nil, "", err
	}
	if err := p.stage(ctx, evs, ch); err != nil {
		return nil, "", err
	}
	ev := evs[len(evs)-1]
	req := agent.TurnRequest{
		Version: agent.Version, TurnID: intentID, ThreadKey: ev.Thread.Key(), SessionKey: ev.Thread.Key(), Event: ev,
		Answer: answer,
	}
	if len(evs) > 1 {
		req.Events = evs
	}
	req.Superseded = sup
	req.History = fitHistory(req, seen)
	var wg sync.WaitGroup
	wg.Go(func() { p.received(ctx, log, cfg, ch, ev) })
	// Typing lasts while the attempt works on the reply, and ends with it
	// whatever its outcome.
	ty := p.startTyping(ctx, log, cfg, ch, ev)
	defer ty.stop()
	start := p.now()
	reply, err := p.call(ctx, log, cfg, ch, ev, req)
	wg.Wait()
	if err != nil {
		// Each failed call is a line of its own, with its latency and
		// status: the turn's record keeps only how many attempts it took.
		status, kind := 0, ""
		var ae *agent.Error
		if errors.As(err, &ae) {
			status, kind = ae.Status, string(ae.Kind)
		}
		log.Warn("agent call failed", "status", status, "kind", kind, "agent_ms", p.now().Sub(start).Milliseconds())
		return nil, "", fmt.Errorf("call agent: %w", err)
	}
	log.Info("agent answered", "status", reply.Status, "agent_ms", p.now().Sub(start).Milliseconds())
	if reply.Accepted {
		return nil, outcomeAsync, nil
	}
	return p.planReply(ctx, log, cfg, ev, ch, intentID, reply)
}

// stage gives each event's attachments their URLs or reasons, before the
// agent sees them. It runs on every attempt of a turn: the objects are
// found again by their keys, and URLs are presigned afresh.
func (p *Processor) stage(ctx context.Context, evs []message.Event, ch Channel) error {
	m := p.Media
	if m == nil {
		m = (*media.Stager)(nil) // describes them, media_off
	}
	for i := range evs {
		if len(evs[i].Attachments) == 0 {
			continue
		}
		atts, err := m.Stage(ctx, evs[i], ch.Downloader)
		if err != nil {
			return fmt.Errorf("stage attachments: %w", err)
		}
		evs[i].Attachments = atts
	}
	return nil
}

// outcomeAsync is a turn whose agent answered 202: its reply comes later.
const outcomeAsync = "accepted_async"

// planReply plans an agent's reply (answered in the turn, or posted later
// to /reply) into units, a question it asks last.
func (p *Processor) planReply(ctx context.Context, log *slog.Logger, cfg Config, ev message.Event, ch Channel, intentID string, reply agent.Reply) ([]intent.Unit, string, error) {
	plan, err := envelope.Build(envelope.Reply{Body: reply.Body, ContentType: reply.ContentType}, cfg.Envelope, ch.Capabilities)
	var limit *envelope.LimitError
	if errors.As(err, &limit) {
		// Over a limit: the plan is rejected whole, never truncated.
		log.Error("agent reply rejected", "outcome", "rejected", "limit", limit.Limit, "max", limit.Max, "got", limit.Got)
		return rejected(cfg)
	}
	if err != nil {
		return nil, "", fmt.Errorf("plan reply: %w", permanent(err))
	}
	if plan.Problem != nil {
		log.Warn("agent reply was not a valid envelope", "policy", string(plan.Outcome), "problem", plan.Problem.Error())
	}
	switch n := plan.Next; n.Type {
	case envelope.NextTool:
		// A proposal only: Parley never executes tools.
		name := ""
		if n.Tool != nil {
			name = n.Tool.Name
		}
		log.Info("agent proposed a tool call; recorded, not executed", "next", string(n.Type), "tool", name)
	case envelope.NextWait:
		log.Info("agent next step recorded", "next", string(n.Type))
	}
	units := reactUnit(log, ch, ev, plan.React)
	for _, u := range plan.Units {
		units = append(units, intent.Unit{ID: u.ID, Content: u.Content(), State: message.UnitPending})
	}
	if n := plan.Next; n.Type == envelope.NextAsk && n.Ask != nil {
		// Recorded before anything of it is sent; the question message
		// goes last, after the reply's bubbles.
		ask, err := p.ask(ctx, log, cfg, ev, ch, intentID, n.Ask.Question)
		if errors.Is(err, store.ErrInvalid) {
			// The store refuses the question on every try: rejected
			// like a reply over a limit, never asked of the agent again.
			log.Error("agent reply rejected: its question cannot be stored", "outcome", "rejected", "error", err)
			return rejected(cfg)
		}
		if err != nil {
			return nil, "", err
		}
		units = append(units, ask...)
	}
	if i := slices.IndexFunc(units, func(u intent.Unit) bool { return u.Content.React == nil }); i >= 0 && ev.ChatType == message.ChatGroup && ev.Kind != message.KindAnswer {
		units[i].ReplyTo = cmp.Or(ev.QuoteToken, ev.MessageID)
	}
	return units, string(plan.Outcome), nil
}

// rejected is what a turn sends for a reply it rejected whole: the person
// still hears back (the configured error line) unless the policy is silent.
func rejected(cfg Config) ([]intent.Unit, string, error) {
	if cfg.Envelope.OnParseError == envelope.PolicySilent {
		return nil, "rejected", nil
	}
	return []intent.Unit{{ID: "error#1", Content: message.Text(cfg.Envelope.ErrorMessage), State: message.UnitPending, Parley: true}}, "rejected_error_message", nil
}

// retryLater hands a turn whose agent call failed retryably back to the
// queue: released until its retry time (the agent's Retry-After, or a backoff
// on the claim's attempts), so a redelivery before then waits the rest
// without asking the agent. Past the turn's age it is dead-lettered instead.
func (p *Processor) retryLater(ctx context.Context, log *slog.Logger, cfg Config, rec consumer.Record, in intent.Inbound, key, owner string, claim store.Claim, err error) error {
	now := p.now()
	if age := now.Sub(receivedAt(rec, in, now)); age > cfg.MaxAge {
		p.markFailed(ctx, log, cfg, in.Event)
		p.endPreview(ctx, log, p.Channels[in.Event.Thread.Platform], intent.IDFor(in.Event.Key()), nil)
		p.release(ctx, log, key, owner, time.Time{})
		log.Error("turn gave up: the agent failed past the turn's age; dead-lettered for an operator",
			"outcome", "dead_letter", "age_ms", age.Milliseconds(), "error", err)
		return consumer.DeadLetter(fmt.Errorf("turn past its age of %s: %w", cfg.MaxAge, err))
	}
	wait := p.backoff(claim.Attempts)
	var ae *agent.Error
	if errors.As(err, &ae) {
		wait = max(wait, ae.RetryAfter)
	}
	wait = (wait + time.Second - 1).Truncate(time.Second)
	p.release(ctx, log, key, owner, now.Add(wait))
	return consumer.Retry(err, wait)
}

// receivedAt is when ingress accepted the event: the inbound message's own
// stamp, else the queue's SentTimestamp, else now (no budget spent yet).
func receivedAt(rec consumer.Record, in intent.Inbound, now time.Time) time.Time {
	if !in.ReceivedAt.IsZero() {
		return in.ReceivedAt
	}
	if ms, err := strconv.ParseInt(rec.Attributes["SentTimestamp"], 10, 64); err == nil && ms > 0 {
		return time.UnixMilli(ms)
	}
	return now
}

// persistErrorLine stores the configured error line as the turn's intent,
// in place of a plan the store refused; none under the silent policy.
func (p *Processor) persistErrorLine(ctx context.Context, cfg Config, ev message.Event, owner, intentID string, now time.Time) (intent.Intent, error) {
	if cfg.Envelope.OnParseError == envelope.PolicySilent {
		return intent.Intent{}, nil
	}
	units := []intent.Unit{{ID: "error#1", Content: message.Text(cfg.Envelope.ErrorMessage), State: message.UnitPending, Parley: true}}
	units = append(units, statusUnits(cfg, p.Channels[ev.Thread.Platform], []message.Event{ev}, true)...)
	stored, _, err := p.Intents.CommitIntent(ctx, intent.Intent{
		ID: intentID, Origin: ev.Key(), Thread: ev.Thread, ReplyContext: ev.ReplyContext, Sequence: postedBefore(ctx),
		Units:     units,
		CreatedAt: now, ExpiresAt: now.Add(cfg.IntentTTL), SweepAt: now.Add(intent.SweepGrace),
	}, owner, "persist_failed", now)
	return stored, err
}

// failedOutcome reports whether a turn of this outcome failed the person,
// though something may be sent (the error line): its status reaction is
// the failure mark.
func failedOutcome(outcome string) bool {
	switch outcome {
	case "rejected", "rejected_error_message", "persist_failed":
		return true
	}
	return false
}

// misconfigured reports agent answers that mean Parley is pointed at the wrong
// place or with the wrong secret. They are retried rather than failed: the
// events then reach the DLQ (which alarms) and can be redriven once the
// configuration is fixed, instead of being lost.
func misconfigured(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusGone:
		return true
	}
	return false
}

// permanent marks a planning failure as one no retry can fix.
func permanent(err error) error {
	return &agent.Error{Kind: agent.KindPermanent, Err: err}
}

func (p *Processor) settle(ctx context.Context, log *slog.Logger, key, owner string, st store.ClaimState, reason string, cfg Config) {
	if err := p.settleOutcome(ctx, key, owner, st, reason, cfg); err != nil {
		// The work is done and durable; a redelivery would find the intent.
		log.Warn("settle turn claim failed", "error", err)
	}
}

// settleOutcome settles a turn that wrote no intent: the settled claim is
// its only record, so a settle that failed is returned, and the message
// comes back (after the attempt's lease) rather than being deleted with
// the claim left pending for good.
func (p *Processor) settleOutcome(ctx context.Context, key, owner string, st store.ClaimState, reason string, cfg Config) error {
	if err := p.Claims.Settle(context.WithoutCancel(ctx), key, owner, st, reason, p.now(), cfg.ClaimTTL); err != nil {
		return fmt.Errorf("settle the turn's claim as %s (%s): %w", st, reason, err)
	}
	return nil
}

func (p *Processor) release(ctx context.Context, log *slog.Logger, key, owner string, until time.Time) {
	if err := p.Claims.Release(context.WithoutCancel(ctx), key, owner, store.ReleaseSpec{Until: until}); err != nil {
		log.Warn("release turn claim failed; its lease will expire", "error", err)
	}
}

func (p *Processor) backoff(attempts int) time.Duration {
	if p.Backoff != nil {
		return p.Backoff(attempts)
	}
	return consumer.Backoff(attempts)
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
