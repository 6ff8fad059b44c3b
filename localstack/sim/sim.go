package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/delivery"
	"github.com/parleyhq/parley/shared/ingress"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/telegram"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/queue/queuetest"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/sweeper"
	"github.com/parleyhq/parley/shared/turn"
)

// Config is one run's shape.
type Config struct {
	// Seed chooses everything: the people's messages, the schedule, every
	// fault. The same seed replays the same run.
	Seed uint64
	// Chats is how many people write; Messages how many messages they send
	// in all.
	Chats, Messages int
	// FaultRate scales every fault's probability (1: the defaults).
	FaultRate float64
	// Steps bounds the faulty phase; the recovery phase after it runs with
	// no faults until everything settled.
	Steps int
	// Mask turns off the faults with these ordinals (shrinking).
	Mask map[string]bool
	// Trace keeps a readable line per step.
	Trace bool
}

// DefaultConfig is the shape make test and make sim run.
func DefaultConfig(seed uint64) Config {
	return Config{Seed: seed, Chats: 3, Messages: 8, FaultRate: 1, Steps: 400}
}

// Result is what one run did and found.
type Result struct {
	Seed       uint64
	Steps      int
	Faults     map[string]int
	Checks     int
	Violations []string
	// Fired names the faults injected, for shrinking.
	Fired []string
	// Screens is what each person saw, in order: one line per chat.
	Screens []string
	Trace   []string
}

// Failed reports whether an invariant broke.
func (r Result) Failed() bool { return len(r.Violations) > 0 }

const (
	botToken = "7000000001:sim-token"
	botID    = "7000000001"
	secret   = "sim-webhook-secret"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// world is one run: the models, the functions, the observers.
type world struct {
	cfg   Config
	rng   *rand.Rand // the schedule
	clock *queuetest.Clock
	st    *MemStore

	in, inDLQ, out, outDLQ *queuetest.FIFO
	fStore, fIn, fOut      *faulty
	fPlat, fAgent, fHook   *faulty
	faultsOn               bool
	fSchedule              *faulty
	mu                     sync.Mutex // res, written by ingress's concurrent writes too
	res                    *Result

	ingress, turn, delivery, sweep *instance
	pipeline                       *ingress.Pipeline
	turnC, deliveryC               *consumer.Consumer
	sweeper                        *sweeper.Processor

	// the people and the platform
	chats    []*chat
	updates  []*update
	nextUpd  int64
	sent     int
	hooks    []*hook // webhook deliveries the platform still owes
	shownSeq int
	// rank is each event's place in its thread's arrival order (its
	// first enqueue on inbound.fifo).
	rank     map[string]int
	nextRank int
	// answered: turns whose intent the agent's answer was committed to.
	agentCalls map[string]int
}

type chat struct {
	id    int64
	shown []shown
}

type shown struct {
	id   string
	text string
}

type update struct {
	id    int64
	chat  *chat
	key   string
	body  []byte
	acked bool
}

type hook struct {
	u        *update
	due      time.Time
	attempts int
}

// Run runs one seed and checks every invariant.
func Run(cfg Config) Result {
	w := newWorld(cfg)
	w.run()
	return *w.res
}

func newWorld(cfg Config) *world {
	master := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	sub := func() *rand.Rand { return rand.New(rand.NewPCG(master.Uint64(), master.Uint64())) }
	w := &world{cfg: cfg, rng: sub(), clock: queuetest.NewClock(t0), st: NewMemStore(),
		res: &Result{Seed: cfg.Seed, Faults: map[string]int{}}, rank: map[string]int{}, agentCalls: map[string]int{}, faultsOn: true}
	w.fStore = &faulty{w: w, rng: sub(), kind: "store", aws: true}
	w.fIn = &faulty{w: w, rng: sub(), kind: "inbound", aws: true}
	w.fOut = &faulty{w: w, rng: sub(), kind: "outbound", aws: true}
	w.fPlat = &faulty{w: w, rng: sub(), kind: "platform"}
	w.fAgent = &faulty{w: w, rng: sub(), kind: "agent"}
	w.fHook = &faulty{w: w, rng: sub(), kind: "webhook"}
	w.fSchedule = &faulty{w: w, rng: w.rng, kind: "lambda"}
	w.st.Retried = func(op string) bool { return w.fStore.chance("store_sdk_retry", 0.03) }
	w.inDLQ = queuetest.New(queuetest.Options{Now: w.clock.Now})
	w.outDLQ = queuetest.New(queuetest.Options{Now: w.clock.Now})
	w.in = queuetest.New(queuetest.Options{Now: w.clock.Now, VisibilityTimeout: resources.Inbound.VisibilityTimeout,
		MaxReceiveCount: resources.Inbound.MaxReceiveCount, DLQ: w.inDLQ})
	w.out = queuetest.New(queuetest.Options{Now: w.clock.Now, VisibilityTimeout: resources.Outbound.VisibilityTimeout,
		MaxReceiveCount: resources.Outbound.MaxReceiveCount, DLQ: w.outDLQ})
	for i := range cfg.Chats {
		w.chats = append(w.chats, &chat{id: int64(1000 + i)})
	}
	w.nextUpd = 900000000
	w.assemble("ingress")
	w.assemble("turn")
	w.assemble("delivery")
	w.assemble("sweeper")
	return w
}

// inject counts a fault a component's model decided on, unless it is
// masked or faults are off, and returns whether the fault happens. Faults
// are named by component and ordinal ("store#12"): a component draws on one
// goroutine at a time, so the names do not depend on how ingress's
// concurrent writes interleave.
func (w *world) inject(f *faulty, kind string, hit bool) bool {
	if !hit || !w.faultsOn {
		return false
	}
	f.n++
	name := f.kind + "#" + strconv.Itoa(f.n)
	if w.cfg.Mask[name] {
		return false
	}
	w.mu.Lock()
	w.res.Fired = append(w.res.Fired, name)
	w.mu.Unlock()
	w.count(kind)
	w.tracef("fault %s %s", name, kind)
	return true
}

func (w *world) count(kind string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.res.Faults[kind]++
}

func (w *world) tracef(format string, args ...any) {
	if w.cfg.Trace {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.res.Trace = append(w.res.Trace, fmt.Sprintf("%s +%s ", strconv.Itoa(w.res.Steps), w.clock.Now().Sub(t0))+fmt.Sprintf(format, args...))
	}
}

func (w *world) violate(format string, args ...any) {
	v := fmt.Sprintf(format, args...)
	w.res.Violations = append(w.res.Violations, v)
	w.tracef("VIOLATION %s", v)
}

var quiet = slog.New(slog.DiscardHandler)

// assemble builds a function instance anew: a cold start. Warm state (a
// processor's cache) is lost, as Lambda loses it.
func (w *world) assemble(name string) {
	inst := &instance{name: name}
	st := &storePorts{f: w.fStore, inst: inst, m: w.st}
	inq := &queuePorts{f: w.fIn, inst: inst, q: w.in, sent: w.enqueued}
	outq := &queuePorts{f: w.fOut, inst: inst, q: w.out}
	switch name {
	case "ingress":
		r, err := telegram.NewReceiver(secret, botToken)
		if err != nil {
			panic(err)
		}
		w.ingress = inst
		w.pipeline = &ingress.Pipeline{Receiver: r, Claims: st, Queue: inq, DedupeTTL: store.DedupeTTL, Now: w.clock.Now, Log: quiet}
	case "turn":
		caps := telegram.Adapter.Capabilities()
		ch := turn.Channel{Capabilities: caps}
		p := &turn.Processor{
			Claims: st, Intents: st, Outbox: outq, Agent: &agentModel{w: w, inst: inst},
			Channels: map[message.Platform]turn.Channel{message.Telegram: ch}, Questions: st, Inbox: inq,
			Reports: st, Awaits: st, Park: inq, Windows: st,
			Config: turn.Config{ClaimLease: 90 * time.Second, ClaimTTL: store.DedupeTTL},
			Now:    w.clock.Now, Log: quiet,
		}
		w.turn = inst
		w.turnC = &consumer.Consumer{Handle: p.Handle, Visibility: inq, DeadLetters: &queuePorts{f: w.fIn, inst: inst, q: w.inDLQ},
			Groups: 1, Backoff: w.backoff, Now: w.clock.Now, Log: quiet}
	case "delivery":
		caps := telegram.Adapter.Capabilities()
		p := &delivery.Processor{Intents: st,
			Channels: map[message.Platform]delivery.Channel{message.Telegram: {Sender: &platformModel{w: w, inst: inst}, Capabilities: caps}},
			Now:      w.clock.Now, Sleep: w.clock.Sleep, Log: quiet}
		w.delivery = inst
		w.deliveryC = &consumer.Consumer{Handle: p.Handle, Visibility: outq, DeadLetters: &queuePorts{f: w.fOut, inst: inst, q: w.outDLQ},
			Groups: 1, Backoff: w.backoff, Now: w.clock.Now, Log: quiet}
	case "sweeper":
		w.sweep = inst
		w.sweeper = &sweeper.Processor{Store: st, Inbound: inq, Outbound: outq, Now: w.clock.Now, Log: quiet}
	}
}

// backoff is the consumers' retry delay with its jitter from the seed.
func (w *world) backoff(receiveCount int) time.Duration {
	return consumer.BackoffFrom(receiveCount, func(n time.Duration) time.Duration { return time.Duration(w.rng.Int64N(int64(n))) })
}

// enqueued observes inbound.fifo's accepted messages: an event's first
// enqueue is its place in its thread's order.
func (w *world) enqueued(m queue.Message) {
	if _, ok := w.rank[m.Dedup]; !ok && strings.HasPrefix(m.Dedup, "evt#") {
		w.rank[m.Dedup] = w.nextRank
		w.nextRank++
	}
}

// newInvocation starts an invocation of inst, choosing whether and where
// Lambda kills it.
func (w *world) newInvocation(inst *instance, concurrent bool) {
	inv := &invocation{concurrent: concurrent}
	x := w.rng.Float64()
	at := w.rng.IntN(12) + 1
	after := w.rng.IntN(2) == 0
	if concurrent {
		at = w.rng.IntN(2) + 1
	}
	if w.inject(w.fSchedule, "kill_planned", x < 0.06*w.cfg.FaultRate) {
		inv.kill = kill{at: at, after: after}
	}
	inst.cur = inv
}

// run drives the faulty phase, then the recovery, then the final checks.
func (w *world) run() {
	for w.res.Steps < w.cfg.Steps {
		w.res.Steps++
		w.step()
		w.checkOrder()
	}
	w.faultsOn = false
	w.tracef("faults stop")
	w.recover()
	w.final()
}

// step takes one scheduled action.
func (w *world) step() {
	switch x := w.rng.IntN(100); {
	case x < 15:
		w.personWrites()
	case x < 35:
		w.platformDelivers()
	case x < 55:
		w.poll("turn")
	case x < 75:
		w.poll("delivery")
	case x < 80:
		w.runSweeper()
	case x < 83:
		name := []string{"ingress", "turn", "delivery", "sweeper"}[w.rng.IntN(4)]
		if w.inject(w.fSchedule, "cold_start", true) {
			w.assemble(name)
		}
	default:
		w.advance(time.Duration(w.rng.IntN(20000)) * time.Millisecond)
	}
}

func (w *world) advance(d time.Duration) {
	if d > 0 {
		w.clock.Advance(d)
	}
}

// personWrites: a person sends a message; the platform owes its webhook.
func (w *world) personWrites() {
	if w.sent >= w.cfg.Messages {
		return
	}
	w.sent++
	c := w.chats[w.rng.IntN(len(w.chats))]
	w.nextUpd++
	// Display names hold what SQS refuses raw (U+FFFE, U+FFFF) and what
	// fauxqs refuses (above U+FFFF) now and then.
	names := []string{"Ada", "Grace", "Zoë \U0001F600", "bad \uFFFF name", "x\uFFFEy"}
	name := names[w.rng.IntN(len(names))]
	text := fmt.Sprintf("m%d", w.nextUpd)
	body, _ := json.Marshal(map[string]any{
		"update_id": w.nextUpd,
		"message": map[string]any{
			"message_id": w.nextUpd - 899990000,
			"from":       map[string]any{"id": c.id, "is_bot": false, "first_name": name},
			"chat":       map[string]any{"id": c.id, "type": "private", "first_name": name},
			"date":       w.clock.Now().Unix(),
			"text":       text,
		},
	})
	u := &update{id: w.nextUpd, chat: c, key: "evt#telegram#" + botID + "#" + strconv.FormatInt(w.nextUpd, 10), body: body}
	w.updates = append(w.updates, u)
	w.hooks = append(w.hooks, &hook{u: u, due: w.clock.Now()})
	w.tracef("chat %d writes %s (update %d)", c.id, text, u.id)
}

// platformDelivers: the platform posts one owed webhook, any of them
// (reordered), sometimes one already acknowledged again (a duplicate).
func (w *world) platformDelivers() {
	now := w.clock.Now()
	var due []int
	for i, h := range w.hooks {
		if !h.due.After(now) {
			due = append(due, i)
		}
	}
	if w.fHook.chance("webhook_duplicate", 0.15) && len(w.updates) > 0 {
		u := w.updates[w.rng.IntN(len(w.updates))]
		w.tracef("platform redelivers update %d", u.id)
		w.post(u)
		return
	}
	if len(due) == 0 {
		return
	}
	i := due[0]
	if len(due) > 1 && w.fHook.chance("webhook_reorder", 0.3) {
		i = due[w.rng.IntN(len(due))]
	}
	h := w.hooks[i]
	h.attempts++
	ok := w.post(h.u)
	if ok && !w.fHook.chance("webhook_answer_lost", 0.05) {
		w.hooks = slices.Delete(w.hooks, i, i+1)
		return
	}
	// Telegram retries an update it got no 2xx for, later.
	h.due = now.Add(time.Duration(min(h.attempts, 6)) * 10 * time.Second)
}

// post delivers u's webhook to ingress and reports whether it was acked.
func (w *world) post(u *update) bool {
	w.newInvocation(w.ingress, true)
	req := httptest.NewRequest(http.MethodPost, "/telegram", bytes.NewReader(u.body))
	req.Header.Set(telegram.SecretHeader, secret)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	w.pipeline.ServeHTTP(rec, req)
	if w.ingress.cur.dead() {
		w.tracef("ingress killed on update %d: no answer", u.id)
		return false
	}
	ok := rec.Code/100 == 2 && rec.Header().Get(ingress.HeaderAck) == ingress.AckDurable
	w.tracef("ingress update %d: %d", u.id, rec.Code)
	if ok {
		u.acked = true
	}
	return ok
}

// poll is one round of the event source mapping for a consumer: receive,
// invoke, delete what did not fail. A killed invocation deletes nothing:
// its whole batch waits for its visibility timeout.
func (w *world) poll(name string) {
	q, c, inst := w.in, w.turnC, w.turn
	if name == "delivery" {
		q, c, inst = w.out, w.deliveryC, w.delivery
	}
	recs := q.Receive(1 + w.rng.IntN(10))
	if len(recs) == 0 {
		if at, ok := q.NextVisible(); ok && w.rng.IntN(3) == 0 {
			w.advance(at.Sub(w.clock.Now()))
		}
		return
	}
	w.newInvocation(inst, false)
	resp, err := c.HandleSQS(context.Background(), events.SQSEvent{Records: recs})
	if inst.cur.dead() {
		w.tracef("%s killed with a batch of %d", name, len(recs))
		return
	}
	if err != nil {
		w.violate("%s: HandleSQS returned an error: %v", name, err)
		return
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	for _, r := range recs {
		if !failed[r.MessageId] {
			if err := q.Delete(r.ReceiptHandle); err != nil {
				w.tracef("%s: delete %s: %v", name, r.MessageId, err)
			}
		}
	}
	w.tracef("%s batch of %d, %d failed", name, len(recs), len(failed))
}

func (w *world) runSweeper() {
	w.newInvocation(w.sweep, false)
	_, _ = w.sweeper.Run(context.Background())
}

// recover runs with faults off until everything settled: nothing owed,
// nothing queued, nothing due for the sweeper; bounded in virtual time.
func (w *world) recover() {
	for _, inst := range []*instance{w.ingress, w.turn, w.delivery, w.sweep} {
		inst.cur = nil
	}
	for w.sent < w.cfg.Messages {
		w.personWrites()
	}
	deadline := w.clock.Now().Add(36 * time.Hour)
	for w.clock.Now().Before(deadline) {
		w.res.Steps++
		busy := false
		for len(w.hooks) > 0 {
			busy = true
			h := w.hooks[0]
			if h.due.After(w.clock.Now()) {
				w.advance(h.due.Sub(w.clock.Now()))
			}
			w.platformDelivers()
		}
		for _, q := range []string{"turn", "delivery"} {
			fifo := w.in
			if q == "delivery" {
				fifo = w.out
			}
			if fifo.Len() > 0 {
				busy = true
				w.poll(q)
			}
		}
		w.checkOrder()
		if busy {
			w.advance(time.Second)
			continue
		}
		// Idle: let the sweeper see what is due.
		due, _ := w.st.DueForSweep(context.Background(), w.clock.Now().Add(time.Hour), 1)
		if len(due) == 0 && w.in.Len() == 0 && w.out.Len() == 0 {
			return
		}
		w.advance(5 * time.Minute)
		w.runSweeper()
	}
	w.violate("not settled 36 hours after the faults stopped: %d webhooks owed, %d inbound, %d outbound queued", len(w.hooks), w.in.Len(), w.out.Len())
}

// bubble reads an agent bubble's text: its event key and its index.
func bubble(text string) (key string, idx int, ok bool) {
	rest, ok := strings.CutPrefix(text, "r|")
	if !ok {
		return "", 0, false
	}
	key, n, ok := strings.Cut(rest, "|")
	if !ok {
		return "", 0, false
	}
	idx, err := strconv.Atoi(n)
	return key, idx, err == nil
}

// checkOrder: per chat, bubbles shown in the threads' arrival order, each
// turn's in plan order, none twice (Telegram offers no idempotency and
// the default policy holds an unknown send, so exactly once is the rule).
func (w *world) checkOrder() {
	for _, c := range w.chats {
		w.res.Checks++
		seen := map[string]bool{}
		lastR, lastB := -1, -1
		for _, s := range c.shown {
			if seen[s.text] {
				w.violateOnce(fmt.Sprintf("I2 chat %d shows %q twice", c.id, s.text))
			}
			seen[s.text] = true
			key, b, ok := bubble(s.text)
			if !ok {
				continue
			}
			r, ok := w.rank[key]
			if !ok {
				w.violateOnce(fmt.Sprintf("I1 chat %d shows a reply to %s, which was never enqueued", c.id, key))
				continue
			}
			if r < lastR || r == lastR && b <= lastB {
				w.violateOnce(fmt.Sprintf("I3 chat %d shows %q after a bubble of a later turn or plan position", c.id, s.text))
			}
			lastR, lastB = r, b
		}
	}
}

func (w *world) violateOnce(v string) {
	if !slices.Contains(w.res.Violations, v) {
		w.violate("%s", v)
	}
}

// final checks what must hold once everything settled.
func (w *world) final() {
	ctx := context.Background()
	for _, c := range w.chats {
		texts := make([]string, len(c.shown))
		for i, s := range c.shown {
			texts[i] = s.text
		}
		w.res.Screens = append(w.res.Screens, fmt.Sprintf("%d: %s", c.id, strings.Join(texts, ", ")))
	}
	for _, u := range w.updates {
		w.res.Checks++
		if !u.acked {
			w.violate("liveness: update %d was never acknowledged after the faults stopped", u.id)
			continue
		}
		in, err := w.st.GetIntent(ctx, intent.IDFor(u.key))
		if err != nil {
			c, cerr := w.st.GetClaim(ctx, store.IntentKey(intent.IDFor(u.key)), w.clock.Now())
			w.violate("I1 acked update %d has no reply: %v (turn claim %+v, %v)", u.id, err, c.State, cerr)
			continue
		}
		for _, unit := range in.Units {
			if !unit.State.Terminal() {
				w.violate("I4 update %d: unit %s still %s after recovery", u.id, unit.ID, unit.State)
				continue
			}
			if unit.State == message.UnitSent {
				for _, id := range unit.Receipt {
					if !slices.ContainsFunc(u.chat.shown, func(s shown) bool { return s.id == id }) {
						w.violate("I4 update %d: unit %s marked sent as %s, which the person never saw", u.id, unit.ID, id)
					}
				}
			}
		}
	}
	for name, q := range map[string]*queuetest.FIFO{"inbound DLQ": w.inDLQ, "outbound DLQ": w.outDLQ} {
		w.res.Checks++
		if n := q.Len(); n > 0 {
			w.violate("stranded: %d messages on the %s", n, name)
		}
	}
}

// agentModel is the agent at its port: it answers each turn with a few
// bubbles that name the turn's event and their place, after a delay,
// sometimes failing or timing out after it saw the request.
type agentModel struct {
	w    *world
	inst *instance
}

func (a *agentModel) Call(ctx context.Context, req agent.TurnRequest) (agent.Reply, error) {
	w := a.w
	var rep agent.Reply
	err := w.fAgent.do(a.inst, "agent", func() error {
		w.res.Checks++
		if in, err := w.st.GetIntent(ctx, req.TurnID); err == nil {
			w.violate("I2 agent called for turn %s (event %s), whose reply is already committed (%d units)", req.TurnID, req.Event.Key(), len(in.Units))
		}
		w.agentCalls[req.TurnID]++
		if w.fAgent.chance("agent_slow", 0.1) {
			w.advance(time.Duration(1+w.fAgent.rng.IntN(25)) * time.Second)
		}
		if w.fAgent.chance("agent_5xx", 0.05) {
			return &agent.Error{Kind: agent.KindTransient, Status: 503, Err: agent.ErrStatus}
		}
		n := 1 + int(req.Event.Time.UnixNano()%3+3)%3
		msgs := make([]map[string]string, n)
		for i := range msgs {
			msgs[i] = map[string]string{"id": fmt.Sprintf("b%d", i+1), "text": fmt.Sprintf("r|%s|%d", req.Event.Key(), i)}
		}
		body, _ := json.Marshal(map[string]any{"schema": "openab.turn.v1", "messages": msgs})
		rep = agent.Reply{Status: 200, ContentType: "application/json", Body: body}
		if w.fAgent.chance("agent_timeout", 0.05) {
			// It answered; the answer did not come back in time.
			return &agent.Error{Kind: agent.KindTransient, Err: agent.ErrTimeout}
		}
		return nil
	})
	if err != nil {
		return agent.Reply{}, err
	}
	w.tracef("agent answers %s", req.Event.Key())
	return rep, nil
}

// platformModel is Telegram's send API at the adapter port, and the
// person's screen: what it records is what the person sees.
type platformModel struct {
	w    *world
	inst *instance
}

func (p *platformModel) Send(ctx context.Context, m message.Outgoing) (message.Receipt, error) {
	w := p.w
	var rc message.Receipt
	err := w.fPlat.do(p.inst, "platform", func() error {
		if w.fPlat.chance("platform_429", 0.06) {
			return &message.SendError{Class: message.FailRateLimit, Status: 429, RetryAfter: time.Duration(1+w.fPlat.rng.IntN(30)) * time.Second, Reason: "Too Many Requests"}
		}
		if w.fPlat.chance("platform_5xx", 0.04) {
			return &message.SendError{Class: message.FailTransient, Status: 502, Reason: "HTTP 502"}
		}
		unknown := w.fPlat.chance("platform_timeout", 0.05)
		shownToo := w.fPlat.rng.IntN(2) == 0
		if unknown && !shownToo {
			return &message.SendError{Class: message.FailUnknown, Reason: "timeout after the request left"}
		}
		c := w.chatOf(m.Thread)
		if c == nil {
			return &message.SendError{Class: message.FailNotFound, Status: 400, Reason: "chat not found"}
		}
		w.shownSeq++
		id := strconv.Itoa(w.shownSeq)
		c.shown = append(c.shown, shown{id: id, text: m.Content.Text})
		w.tracef("chat %d sees %q", c.id, m.Content.Text)
		if unknown {
			w.count("platform_timeout_shown")
			return &message.SendError{Class: message.FailUnknown, Reason: "timeout after the request left"}
		}
		rc = message.Receipt{MessageIDs: []string{id}}
		return nil
	})
	return rc, err
}

func (w *world) chatOf(t message.Thread) *chat {
	for _, c := range w.chats {
		if strconv.FormatInt(c.id, 10) == t.Chat {
			return c
		}
	}
	return nil
}

// Summary adds runs up.
type Summary struct {
	Runs, Failed, Steps, Checks int
	Faults                      map[string]int
	FailedSeeds                 []uint64
}

// Add counts r in s.
func (s *Summary) Add(r Result) {
	if s.Faults == nil {
		s.Faults = map[string]int{}
	}
	s.Runs++
	s.Steps += r.Steps
	s.Checks += r.Checks
	for k, v := range r.Faults {
		s.Faults[k] += v
	}
	if r.Failed() {
		s.Failed++
		s.FailedSeeds = append(s.FailedSeeds, r.Seed)
	}
}

// Write prints the summary.
func (s Summary) Write(wr io.Writer) {
	fmt.Fprintf(wr, "sim: %d runs, %d steps, %d invariant checks, %d failed\n", s.Runs, s.Steps, s.Checks, s.Failed)
	kinds := make([]string, 0, len(s.Faults))
	for k := range s.Faults {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(wr, "  %-28s %d\n", k, s.Faults[k])
	}
}

// Shrink finds a shorter failing schedule of cfg's run: it turns the
// faults that fired off one at a time, keeping each off while the run
// still breaks an invariant, and returns the config and the traced run.
func Shrink(cfg Config) (Config, Result) {
	cfg.Mask = map[string]bool{}
	r := Run(cfg)
	if !r.Failed() {
		return cfg, r
	}
	for _, ord := range r.Fired {
		cfg.Mask[ord] = true
		if !Run(cfg).Failed() {
			delete(cfg.Mask, ord)
		}
	}
	cfg.Trace = true
	return cfg, Run(cfg)
}
