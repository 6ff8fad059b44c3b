package ingress

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/metrics"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/statuses"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/triage"
)

// Enqueuer puts one event on inbound.fifo.
type Enqueuer interface {
	Send(ctx context.Context, m queue.Message) error
}

// Triage admits or suppresses proactive events. Human messages never reach it.
type Triage interface {
	// Admit decides ev. counted is what an earlier attempt at this very
	// event consumed and could not give back (Decision.Counted, kept on
	// the event's claim): an event is never counted against itself.
	Admit(ctx context.Context, ev message.Event, now time.Time, counted string) (triage.Decision, error)
}

// Ack header values: Parley-Ack says what a 2xx stands for.
const (
	// HeaderAck is set on every answer to a platform event request.
	HeaderAck = "Parley-Ack"
	// AckDurable: every event in the request is on inbound.fifo, or was
	// recorded as a duplicate, suppressed or deliberately ignored.
	AckDurable = "durable"
	// AckHandshake: a platform handshake was answered; nothing was stored.
	AckHandshake = "handshake"
)

// Result is what became of one event, as logged (field "decision") and
// returned in the response body.
type Result string

const (
	ResultEnqueued Result = "enqueued"
	// ResultDeferred: a proactive event accepted for later (quiet hours in
	// defer mode), held durably on its claim until then.
	ResultDeferred   Result = "deferred"
	ResultDuplicate  Result = "duplicate"
	ResultSuppressed Result = "suppressed"
	ResultIgnored    Result = "ignored"
	// ResultInProgress: another request holds the event's claim right now;
	// the platform is asked to retry (503).
	ResultInProgress Result = "in_progress"
	// ResultConflict: the event's key was used before for another payload
	// (platform.Digester); nothing is enqueued, and the request is refused
	// with 409.
	ResultConflict Result = "conflict"
	// ResultRecorded: a platform's status on a message Parley sent was
	// applied to its unit, or changed nothing (Reason says which:
	// statuses.Outcome); nothing is queued.
	ResultRecorded Result = "recorded"
)

// Reports is the intent store as ingress applies statuses to it
// (statuses.Store): one read of the unit a status names, and one
// conditional write when the status changes it.
type Reports interface {
	GetIntent(ctx context.Context, id string) (intent.Intent, error)
	Apply(ctx context.Context, id string, t intent.Transition) (intent.Intent, error)
}

// Pipeline is the webhook core: an http.Handler for one platform.
type Pipeline struct {
	Receiver platform.Receiver
	Claims   store.Claims
	Queue    Enqueuer
	// Triage decides proactive events. nil admits every proactive event.
	Triage Triage
	// AllowBots admits messages other bots wrote (PARLEY_ALLOW_BOTS). Off,
	// they are dropped. Echoes of Parley's own output are dropped either
	// way, by their origin tag, in the receiver.
	AllowBots bool
	// MaxBody is the largest body accepted (PARLEY_MAX_BODY_BYTES). Zero:
	// the receiver's own (platform.BodyLimiter), else
	// platform.DefaultMaxBody.
	MaxBody int64
	// MaxMessage is the largest inbound.fifo message body: the queue's
	// MaximumMessageSize. An event that would not fit is refused (413)
	// before anything is written. Defaults to resources.MaxMessageBytes.
	MaxMessage int
	// DedupeTTL is how long an event key is remembered: longer than every
	// platform's retry window. Defaults to store.DedupeTTL (8 days).
	DedupeTTL time.Duration
	// ClaimLease bounds how long an unfinished request blocks a retry of
	// the same event. Defaults to 30 seconds (above the function timeout).
	ClaimLease time.Duration
	// Optional is which of a person's reactions, edits and deletions are
	// taken; the zero value ignores them all, before any write.
	Optional Optional
	// Window lists each person's message on the store's window index, on
	// the dedupe key written anyway: the platform limits free-form sends
	// to a window after the person's last message (WhatsApp;
	// message.Capabilities.Window).
	Window bool
	// Reports, when set, applies platforms' statuses (message.KindStatus)
	// here, with no dedupe key, queue message or turn (docs/adr/0025); only
	// a failure reported before its unit's receipt is queued, in a group of
	// its own (StatusGroup). Nil queues statuses in their thread's group,
	// as every other event.
	Reports Reports
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// Log defaults to slog.Default().
	Log *slog.Logger
}

type eventResult struct {
	EventID string `json:"event_id"`
	Result  Result `json:"result"`
	Reason  string `json:"reason,omitempty"`
	// IntentID is the intent an admitted event is delivered as, when the
	// receiver asks (Parsed.Intents).
	IntentID string `json:"intent_id,omitempty"`
}

type ackBody struct {
	OK     bool          `json:"ok"`
	Events []eventResult `json:"events"`
}

// ServeHTTP answers one webhook request.
func (p *Pipeline) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	log := p.log().With("platform", string(p.Receiver.Platform()))
	now := p.now()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, p.maxBody()))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			p.refuse(w, log, fmt.Errorf("%w: limit is %d bytes", platform.ErrTooLarge, tooLarge.Limit))
			return
		}
		p.refuse(w, log, fmt.Errorf("%w: reading body: %v", platform.ErrMalformed, err))
		return
	}
	req := &platform.Request{Method: r.Method, Header: r.Header, Query: r.URL.Query(), Body: body, Now: now, Oldest: p.oldest(now)}

	if hs, ok := p.Receiver.(platform.Handshaker); ok {
		if reply, ok := hs.Handshake(req); ok {
			log.Info("handshake answered", "status", reply.Status)
			writeReply(w, reply, AckHandshake)
			return
		}
	}
	// Every platform delivers events by POST; a GET is only ever a
	// handshake, answered above. Refused here once, for every receiver.
	if r.Method != http.MethodPost {
		p.refuse(w, log, fmt.Errorf("%w: webhooks are POST, got %s", platform.ErrMethod, r.Method))
		return
	}
	if err := p.verify(r.Context(), req); err != nil {
		p.refuse(w, log, err)
		return
	}
	parsed, err := p.Receiver.Parse(req)
	if err != nil {
		p.refuse(w, log, err)
		return
	}
	if parsed.Reply != nil {
		log.Info("handshake answered", "status", parsed.Reply.Status)
		writeReply(w, parsed.Reply, AckHandshake)
		return
	}

	// Refuse what the queue cannot carry before the first write: a request
	// answered 413 changes nothing, and its other events are not half done.
	bodies := make([][]byte, len(parsed.Events))
	for i, ev := range parsed.Events {
		if bodies[i], err = p.encode(ev, now); err != nil {
			p.refuse(w, log, err)
			return
		}
	}

	ctx := r.Context()
	if parsed.Within > 0 {
		// The platform waits this long for the answer and no longer: give
		// up on durable writes in time to say so.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, max(parsed.Within-answerMargin, parsed.Within/2))
		defer cancel()
	}
	ack := ackBody{OK: true, Events: []eventResult{}}
	for _, ig := range parsed.Ignored {
		log.Info("event ignored", "decision", ResultIgnored, "reason", ig.Reason, "event_id", ig.ID)
		ack.Events = append(ack.Events, eventResult{EventID: ig.ID, Result: ResultIgnored, Reason: ig.Reason})
	}
	retry := false
	var conflict error
	for i, a := range p.admitAll(ctx, log, parsed.Events, bodies, now) {
		if a.err != nil {
			// What was admitted is durable and will be a duplicate on the
			// platform's retry; the rest is not.
			if parsed.Unavailable != nil {
				writeReply(w, parsed.Unavailable, "")
				return
			}
			platform.WriteProblem(w, http.StatusServiceUnavailable, "unavailable", "temporarily unable to accept the event; retry")
			return
		}
		ev := parsed.Events[i]
		retry = retry || a.result == ResultInProgress
		if a.result == ResultConflict {
			conflict = fmt.Errorf("%w: idempotency key %q was used before, for another payload; use a new key for a new message", platform.ErrConflict, ev.EventID)
		}
		er := eventResult{EventID: ev.EventID, Result: a.result, Reason: a.reason}
		if parsed.Intents && a.result != ResultSuppressed {
			er.IntentID = intent.IDFor(ev.Key())
		}
		ack.Events = append(ack.Events, er)
	}
	if conflict != nil {
		p.refuse(w, log, conflict)
		return
	}
	if retry {
		if parsed.Unavailable != nil {
			writeReply(w, parsed.Unavailable, "")
			return
		}
		w.Header().Set("Retry-After", "30")
		platform.WriteProblem(w, http.StatusServiceUnavailable, string(ResultInProgress), "event is being processed by another request; retry")
		return
	}
	if parsed.Ack != nil {
		writeReply(w, parsed.Ack, AckDurable)
		return
	}
	w.Header().Set(HeaderAck, AckDurable)
	w.Header().Set("Content-Type", "application/json")
	if parsed.Intents {
		w.WriteHeader(http.StatusAccepted)
	}
	_ = json.NewEncoder(w).Encode(ack)
}

// encode is ev's inbound.fifo message, received at now, once it is known
// to fit the queue with room for what triage may change (a deferral time
// in place of now). The message is encoded once, here, and sent as it is
// unless triage defers the event.
func (p *Pipeline) encode(ev message.Event, now time.Time) ([]byte, error) {
	const triageRoom = 64
	b, err := intent.EncodeInbound(intent.Inbound{Event: ev, ReceivedAt: now})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", platform.ErrMalformed, err)
	}
	limit := cmp.Or(p.MaxMessage, resources.MaxMessageBytes)
	// Measured as the queue takes it: characters SQS refuses are escaped
	// (queue.Body), up to three times their size.
	if n := len(queue.Body(b)); n+triageRoom > limit {
		return nil, fmt.Errorf("%w: event %s encodes to %d bytes; the queue carries at most %d", platform.ErrTooLarge, ev.EventID, n, limit-triageRoom)
	}
	return b, nil
}

// admission is what became of one event of a request.
type admission struct {
	result Result
	reason string
	// err: the event is not durable, and the platform must retry.
	err error
}

// maxAdmitting bounds how many threads of one request are admitted at
// once: as many as the AWS clients keep connections for.
const maxAdmitting = 16

// admitAll admits events, answering for each in the order given. The
// events of one thread are admitted one after another, in order, and a
// thread stops at its first failure: a later event enqueued ahead of an
// earlier one would break the thread's order. Threads do not wait for each
// other, so a batch (WhatsApp's hold thousands of events) is answered in
// the time of its longest thread, not of all its events.
func (p *Pipeline) admitAll(ctx context.Context, log *slog.Logger, events []message.Event, bodies [][]byte, now time.Time) []admission {
	out := make([]admission, len(events))
	admitThread := func(idx []int) {
		for n, i := range idx {
			a := &out[i]
			a.err = recovered(func() (err error) {
				a.result, a.reason, err = p.admit(ctx, log, events[i], bodies[i], now)
				return err
			})
			if a.err != nil {
				log.Error("event not acknowledged", "event_key", events[i].Key(), "error", a.err)
				for _, rest := range idx[n+1:] {
					out[rest].err = fmt.Errorf("not admitted: an earlier event of its thread was not: %w", a.err)
				}
				return
			}
		}
	}
	if len(events) == 1 { // most requests: nothing to group
		admitThread([]int{0})
		return out
	}
	var threads [][]int
	at := map[string]int{}
	for i, ev := range events {
		k := ev.Thread.Key()
		j, ok := at[k]
		if !ok {
			j = len(threads)
			at[k] = j
			threads = append(threads, nil)
		}
		threads[j] = append(threads[j], i)
	}
	if len(threads) == 1 {
		admitThread(threads[0])
		return out
	}
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxAdmitting)
	for _, idx := range threads {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			admitThread(idx)
		})
	}
	wg.Wait()
	return out
}

// recovered is f's error, or its panic as an error: on a goroutine of
// its own, a bug in one event's admission fails that event, as net/http
// fails the request of a handler that panics, not the process.
func recovered(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

// admit takes one event through dedupe, triage and the queue. It returns an
// error only when the event is not durable and the platform must retry.
func (p *Pipeline) admit(ctx context.Context, log *slog.Logger, ev message.Event, body []byte, now time.Time) (Result, string, error) {
	log = log.With("event_key", ev.Key(), "thread_key", ev.Thread.Key(), "kind", string(ev.Kind))
	if ev.Sender.IsBot && !ev.Proactive() && !p.AllowBots {
		log.Info("event ignored", "decision", ResultIgnored, "reason", platform.IgnoredBot)
		return ResultIgnored, platform.IgnoredBot, nil
	}
	if ok, reason := p.Optional.admits(ev); !ok {
		log.Info("event ignored", "decision", ResultIgnored, "reason", reason)
		return ResultIgnored, reason, nil
	}
	if ev.Kind == message.KindStatus && p.Reports != nil {
		return p.admitStatus(ctx, log, ev, body, now)
	}
	triaged := p.Optional.triaged(ev)
	ttl := cmp.Or(p.DedupeTTL, store.DedupeTTL)
	owner := store.NewOwner()
	digest := ""
	if d, ok := p.Receiver.(platform.Digester); ok {
		digest = d.Digest(ev)
	}
	if !triaged {
		if digest != "" {
			return p.admitKeyed(ctx, log, ev, body, owner, digest, now, ttl)
		}
		return p.admitDirect(ctx, log, ev, body, owner, now, ttl)
	}
	claim, err := p.Claims.Claim(ctx, ev.Key(), store.ClaimSpec{
		Owner: owner, Now: now, Lease: cmp.Or(p.ClaimLease, 30*time.Second), TTL: ttl, Digest: digest,
	})
	var held *store.ClaimHeldError
	if errors.As(err, &held) {
		if held.Current.Digest != digest {
			log.Warn("event refused: its key was used before for another payload", "decision", ResultConflict)
			return ResultConflict, "", nil
		}
		if held.Current.State == store.ClaimPending {
			log.Info("event in progress elsewhere", "decision", ResultInProgress)
			return ResultInProgress, "", nil
		}
		logDecision(ctx, log, ev, now, "event suppressed", "suppressed", "duplicate", slog.String("previous", string(held.Current.State)))
		return ResultDuplicate, "duplicate", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("claim event: %w", err)
	}
	if claim.Attempts > 1 {
		log.Warn("event claim taken over after an abandoned attempt", "attempts", claim.Attempts)
	}

	var decision triage.Decision
	if triaged && p.Triage != nil {
		decision, err = p.Triage.Admit(ctx, ev, now, claim.Note)
		if err != nil {
			p.release(ctx, log, ev, owner, claim.Note)
			return "", "", fmt.Errorf("triage: %w", err)
		}
		if !decision.Accepted {
			if err := p.Claims.Settle(ctx, ev.Key(), owner, store.ClaimSuppressed, decision.Reason, now, ttl); err != nil {
				p.release(ctx, log, ev, owner, claim.Note)
				return "", "", fmt.Errorf("record suppression: %w", err)
			}
			logDecision(ctx, log, ev, now, "event suppressed", "suppressed", decision.Reason)
			return ResultSuppressed, decision.Reason, nil
		}
	}

	if !decision.NotBefore.IsZero() {
		// Held on the claim, not on the queue: a deferred event waiting in
		// its thread's group would hold up the thread's people until then,
		// and in a group of its own it would run beside them. The sweeper
		// enqueues it on the thread's group when it is due, received (as
		// the turn sees it) then.
		deferred, err := intent.EncodeInbound(intent.Inbound{Event: ev, ReceivedAt: decision.NotBefore})
		if err != nil {
			p.undo(ctx, log, ev, owner, decision)
			return "", "", err
		}
		if err := p.Claims.Defer(ctx, ev.Key(), owner, deferred, decision.NotBefore, now, ttl); err != nil {
			p.undo(ctx, log, ev, owner, decision)
			return "", "", fmt.Errorf("defer event: %w", err)
		}
		logDecision(ctx, log, ev, now, "event accepted", "accepted", "",
			slog.String("result", string(ResultDeferred)), slog.Time("not_before", decision.NotBefore))
		return ResultDeferred, "", nil
	}
	if err := p.Queue.Send(ctx, queue.Message{Group: ev.Thread.Key(), Dedup: ev.Key(), Body: body}); err != nil {
		p.undo(ctx, log, ev, owner, decision)
		return "", "", fmt.Errorf("enqueue event: %w", err)
	}
	// The event is durable now. Failing to record it only means a retry
	// enqueues it again, which SQS and the turn's own claim absorb.
	if err := p.Claims.Settle(ctx, ev.Key(), owner, store.ClaimEnqueued, "", now, ttl); err != nil {
		log.Warn("settle event claim failed; a retry will re-enqueue harmlessly", "error", err)
	}
	logDecision(ctx, log, ev, now, "event accepted", "accepted", "", slog.String("result", string(ResultEnqueued)))
	return ResultEnqueued, "", nil
}

// admitDirect takes an event no triage decides (a person's message, a
// press, a status, an agent's send) with the two writes the ack cannot do
// without, at once: the dedupe key, written as enqueued, and the enqueue.
// Neither waits for the other, because the send is right whatever the key
// finds. An event whose key exists is sent again before it is answered as
// a duplicate anyway: SQS drops the copy within its five-minute
// deduplication window and the turn's own claim after it, and an attempt
// that died between its key and its enqueue loses nothing. An enqueue that
// fails forgets the key, so the platform's retry is a new event; a key that
// fails beside a send that succeeded leaves the event durable and answered.
func (p *Pipeline) admitDirect(ctx context.Context, log *slog.Logger, ev message.Event, body []byte, owner string, now time.Time, ttl time.Duration) (Result, string, error) {
	sent := make(chan error, 1)
	go func() {
		sent <- recovered(func() error {
			return p.Queue.Send(ctx, queue.Message{Group: ev.Thread.Key(), Dedup: ev.Key(), Body: body})
		})
	}()
	spec := store.ClaimSpec{Owner: owner, Now: now, TTL: ttl, State: store.ClaimEnqueued}
	if p.Window && (ev.Kind == message.KindMessage || ev.Kind == message.KindAnswer) && !ev.Sender.IsBot {
		spec.Window, spec.WindowAt = ev.Thread.Key(), cmp.Or(ev.Time, now)
	}
	_, err := p.Claims.Claim(ctx, ev.Key(), spec)
	sendErr := <-sent
	var held *store.ClaimHeldError
	switch {
	case errors.As(err, &held):
		if sendErr != nil {
			return "", "", fmt.Errorf("enqueue a duplicate again: %w", sendErr)
		}
		logDecision(ctx, log, ev, now, "event suppressed", "suppressed", "duplicate", slog.String("previous", string(held.Current.State)))
		return ResultDuplicate, "duplicate", nil
	case sendErr != nil:
		if err == nil {
			if ferr := p.Claims.Forget(context.WithoutCancel(ctx), ev.Key(), owner); ferr != nil {
				// The key stays: the retry finds it and enqueues then.
				log.Warn("forget event claim failed; the retry enqueues it as a duplicate", "error", ferr)
			}
		}
		return "", "", fmt.Errorf("enqueue event: %w", sendErr)
	case err != nil:
		// Durable without its key: a redelivery is enqueued again, and SQS
		// and the turn's own claim absorb it, as they absorb any duplicate.
		log.Warn("event key not written; the event is queued, and a redelivery is absorbed downstream", "error", err)
	}
	logDecision(ctx, log, ev, now, "event accepted", "accepted", "", slog.String("result", string(ResultEnqueued)))
	return ResultEnqueued, "", nil
}

// admitKeyed takes an event whose key its sender chose (platform.Digester)
// and no triage decides: the key is written first, with the event's digest,
// and the event is enqueued only when the key is new, or holds this very
// payload, enqueued before (sent again, as admitDirect sends a duplicate,
// for an attempt that died between its key and its send). A key that holds
// another payload, or this one suppressed or deferred by triage, enqueues
// nothing: a duplicate never delivers content its key did not stand for.
func (p *Pipeline) admitKeyed(ctx context.Context, log *slog.Logger, ev message.Event, body []byte, owner, digest string, now time.Time, ttl time.Duration) (Result, string, error) {
	_, err := p.Claims.Claim(ctx, ev.Key(), store.ClaimSpec{Owner: owner, Now: now, TTL: ttl, State: store.ClaimEnqueued, Digest: digest})
	var held *store.ClaimHeldError
	switch {
	case errors.As(err, &held) && held.Current.Digest != digest:
		log.Warn("event refused: its key was used before for another payload", "decision", ResultConflict)
		return ResultConflict, "", nil
	case errors.As(err, &held) && held.Current.State == store.ClaimPending:
		log.Info("event in progress elsewhere", "decision", ResultInProgress)
		return ResultInProgress, "", nil
	case errors.As(err, &held) && held.Current.State != store.ClaimEnqueued:
		logDecision(ctx, log, ev, now, "event suppressed", "suppressed", "duplicate", slog.String("previous", string(held.Current.State)))
		return ResultDuplicate, "duplicate", nil
	case err != nil && held == nil:
		return "", "", fmt.Errorf("claim event: %w", err)
	}
	if err := p.Queue.Send(ctx, queue.Message{Group: ev.Thread.Key(), Dedup: ev.Key(), Body: body}); err != nil {
		if held == nil {
			if ferr := p.Claims.Forget(context.WithoutCancel(ctx), ev.Key(), owner); ferr != nil {
				log.Warn("forget event claim failed; the retry enqueues it as a duplicate", "error", ferr)
			}
		}
		return "", "", fmt.Errorf("enqueue event: %w", err)
	}
	if held != nil {
		logDecision(ctx, log, ev, now, "event suppressed", "suppressed", "duplicate", slog.String("previous", string(held.Current.State)))
		return ResultDuplicate, "duplicate", nil
	}
	logDecision(ctx, log, ev, now, "event accepted", "accepted", "", slog.String("result", string(ResultEnqueued)))
	return ResultEnqueued, "", nil
}

// StatusGroup is the inbound.fifo group of the statuses of intent id that
// must wait for their unit's receipt: never their thread's, whose turns
// they would hold up.
func StatusGroup(intentID string) string { return "status#" + intentID }

// admitStatus applies a platform's status to its unit at once
// (statuses.Record). A status is its own idempotency key: applying it again
// changes nothing, so it needs no dedupe write. A failure reported before
// its unit's receipt must still reach the unit: it is queued for the turn,
// in its intent's group (StatusGroup), and the turn tries it again until
// the receipt is there. The queue's deduplication id is the event's key, as
// for every event, so a redelivery within five minutes is dropped, and a
// later one changes nothing.
func (p *Pipeline) admitStatus(ctx context.Context, log *slog.Logger, ev message.Event, body []byte, now time.Time) (Result, string, error) {
	out, err := statuses.Record(ctx, p.Reports, log, ev, now)
	if err != nil {
		return "", "", fmt.Errorf("apply status: %w", err)
	}
	if out != statuses.Wait {
		return ResultRecorded, string(out), nil
	}
	id, _, _ := intent.ParseUnitKey(ev.Status.Tag)
	if err := p.Queue.Send(ctx, queue.Message{Group: StatusGroup(id), Dedup: ev.Key(), Body: body}); err != nil {
		return "", "", fmt.Errorf("enqueue status: %w", err)
	}
	log.Info("status queued until its unit's receipt", "outcome", out, "result", string(ResultEnqueued))
	return ResultEnqueued, string(out), nil
}

// undo gives back what triage consumed for an event that did not become
// durable, and releases its claim for the platform's retry. When the give-back
// fails, the claim keeps what was counted, so the retry is not counted (nor
// refused) against itself.
func (p *Pipeline) undo(ctx context.Context, log *slog.Logger, ev message.Event, owner string, d triage.Decision) {
	note := ""
	if d.Revert != nil {
		if err := d.Revert(ctx); err != nil {
			log.Error("triage revert failed; the event's retry keeps its count", "error", err)
			note = d.Counted
		}
	}
	p.release(ctx, log, ev, owner, note)
}

// logDecision writes the one line of a decision on ev, with the stable fields
// decision (accepted|suppressed) and reason. For a proactive event the line
// is also an EMF record counting one TriageDecision with those two fields as
// dimensions, so CloudWatch gets the metric without an API call.
func logDecision(ctx context.Context, log *slog.Logger, ev message.Event, now time.Time, msg, decision, reason string, attrs ...slog.Attr) {
	if ev.Proactive() {
		dims := []metrics.Dim{{Name: metrics.DimDecision, Value: decision}}
		if reason != "" {
			dims = append(dims, metrics.Dim{Name: metrics.DimReason, Value: reason})
		}
		attrs = append(attrs, metrics.Count(now, metrics.TriageDecision, dims...)...)
	} else {
		attrs = append(attrs, slog.String("decision", decision))
		if reason != "" {
			attrs = append(attrs, slog.String("reason", reason))
		}
	}
	log.LogAttrs(ctx, slog.LevelInfo, msg, attrs...)
}

func (p *Pipeline) release(ctx context.Context, log *slog.Logger, ev message.Event, owner, note string) {
	// Best effort: if it fails, the claim's lease still ends on its own.
	if err := p.Claims.Release(context.WithoutCancel(ctx), ev.Key(), owner, store.ReleaseSpec{Note: note}); err != nil {
		log.Warn("release event claim failed; its lease will expire", "error", err)
	}
}

// verify runs the receiver's verification: VerifyContext, bounded by the
// request's deadline and platform.MaxVerifyWait, for a receiver whose keys
// come over the network; Verify for the others.
func (p *Pipeline) verify(ctx context.Context, req *platform.Request) error {
	cv, ok := p.Receiver.(platform.ContextVerifier)
	if !ok {
		return p.Receiver.Verify(req)
	}
	ctx, cancel := context.WithTimeout(ctx, platform.MaxVerifyWait)
	defer cancel()
	return cv.VerifyContext(ctx, req)
}

// refuse answers a request that fails verification or parsing: the status
// for its sentinel, a platform.Problem, and no writes.
func (p *Pipeline) refuse(w http.ResponseWriter, log *slog.Logger, err error) {
	status := platform.StatusOf(err)
	if status == 0 {
		status = http.StatusBadRequest
	}
	log.Warn("request refused", "status", status, "reason", err.Error())
	switch status {
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", http.MethodPost)
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "5")
	}
	platform.WriteProblem(w, status, platform.CodeOf(err), err.Error())
}

// answerMargin is what the core keeps of a platform's answer deadline
// (Parsed.Within) to write its answer.
const answerMargin = 300 * time.Millisecond

func writeReply(w http.ResponseWriter, r *platform.Reply, ack string) {
	if ack != "" {
		w.Header().Set(HeaderAck, ack)
	}
	if r.ContentType != "" {
		w.Header().Set("Content-Type", r.ContentType)
	}
	w.WriteHeader(cmp.Or(r.Status, http.StatusOK))
	_, _ = w.Write(r.Body)
}

// replayMargin is what Request.Oldest keeps short of the dedupe window:
// a platform's clock ahead of ours, a key written a little after its
// event's time.
const replayMargin = time.Hour

// oldest is the earliest event time a receiver takes at now: within the
// dedupe window less its margin (at most half of it), so an event it takes
// is new or its key is still there.
func (p *Pipeline) oldest(now time.Time) time.Time {
	ttl := cmp.Or(p.DedupeTTL, store.DedupeTTL)
	return now.Add(-(ttl - min(replayMargin, ttl/2)))
}

func (p *Pipeline) maxBody() int64 {
	if p.MaxBody > 0 {
		return p.MaxBody
	}
	if bl, ok := p.Receiver.(platform.BodyLimiter); ok {
		return bl.MaxBody()
	}
	return platform.DefaultMaxBody
}

func (p *Pipeline) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Pipeline) log() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.Default()
}
