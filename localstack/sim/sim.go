package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
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
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeline"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/agentapi"
	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/delivery"
	"github.com/parleyhq/parley/shared/ingress"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/line"
	"github.com/parleyhq/parley/shared/platform/telegram"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/queue/queuetest"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/standardwebhooks"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/sweeper"
	"github.com/parleyhq/parley/shared/turn"
)

// Config is one run's shape.
type Config struct {
	// Seed chooses everything: the people's messages, the schedule, every
	// fault. The same seed replays the same run.
	Seed uint64
	// Chats is how many people write on Telegram, LINEChats on LINE;
	// Messages how many messages they send in all.
	Chats, LINEChats, Messages int
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
	return Config{Seed: seed, Chats: 3, LINEChats: 2, Messages: 10, FaultRate: 1, Steps: 400}
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

	lineSecret = "sim-line-channel-secret"
	lineBot    = "Ub0770000000000000000000000000001"
	// lineRetryKeyTTL is how long LINE remembers an X-Line-Retry-Key: a
	// request sent again with the same key within it is answered 409 and
	// shows nothing.
	lineRetryKeyTTL = 24 * time.Hour
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

	ingress, turn, delivery, sweep, reply *instance
	pipeline, linePipeline                *ingress.Pipeline
	replyH                                *agentapi.Handler
	turnC, deliveryC                      *consumer.Consumer
	sweeper                               *sweeper.Processor

	// the people and the platform
	chats    []*chat
	updates  []*update
	nextUpd  int64
	sent     int
	hooks    []*hook // webhook deliveries the platform still owes
	shownSeq int
	// rank is each event's place in its thread's arrival order (its
	// first enqueue on inbound.fifo).
	rank       map[string]int
	nextRank   int
	agentCalls map[string]int
	// retryKeys: LINE's accepted X-Line-Retry-Keys, by when.
	retryKeys map[string]time.Time
	// portCalls counts every call a function made to a model (store,
	// queues, platform, agent): a refused webhook must make none.
	portCalls int
	// refused: turns whose reply (its intent or its question) the store
	// refused as invalid, by the write refused.
	refused map[string]string
	// posts are the agent's replies to its 202s, owed to POST /reply.
	posts []*post
	// posted: turns a post of whose reply /reply accepted.
	posted map[string]bool
	// answers: the turn that first heard an answer to each question.
	answers map[string]string
	// maxReceives is the most receives of one queue message seen.
	maxReceives int
	// left: units (by unit key) whose send reached the platform;
	// orphaned: units leased by an attempt that died or lost the lease's
	// answer, which the next attempt must take for a send that may have
	// happened.
	left, orphaned map[string]bool
}

// post is one agent post of a turn's reply, retried until answered.
type post struct {
	id, turnID string
	body       []byte
	due        time.Time
	attempts   int
}

type chat struct {
	platform message.Platform
	id       int64
	shown    []shown
}

// name is the chat's id as its platform's events name it.
func (c *chat) name() string {
	if c.platform == message.LINE {
		return fmt.Sprintf("Usim%029d", c.id)
	}
	return strconv.FormatInt(c.id, 10)
}

type shown struct {
	id   string
	text string
}

type update struct {
	id   int64
	chat *chat
	key  string
	body []byte
	// again is the body of a redelivery, where the platform marks one
	// (LINE's deliveryContext.isRedelivery); posted is set once the body
	// went out.
	again  []byte
	posted bool
	acked  bool
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
		res: &Result{Seed: cfg.Seed, Faults: map[string]int{}}, rank: map[string]int{}, agentCalls: map[string]int{}, retryKeys: map[string]time.Time{}, refused: map[string]string{}, answers: map[string]string{}, posted: map[string]bool{}, left: map[string]bool{}, orphaned: map[string]bool{}, faultsOn: true}
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
		w.chats = append(w.chats, &chat{platform: message.Telegram, id: int64(1000 + i)})
	}
	for i := range cfg.LINEChats {
		w.chats = append(w.chats, &chat{platform: message.LINE, id: int64(2000 + i)})
	}
	w.nextUpd = 900000000
	w.assemble("ingress")
	w.assemble("turn")
	w.assemble("delivery")
	w.assemble("sweeper")
	w.assemble("reply")
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

var agentSecret = func() standardwebhooks.Secret {
	s, err := standardwebhooks.ParseSecret("parley-sim-agent-secret")
	if err != nil {
		panic(err)
	}
	return s
}()

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
		// LINE's ingress is a function of its own in AWS; one instance
		// here, so a kill chosen for a webhook reaches whichever it is.
		w.linePipeline = &ingress.Pipeline{Receiver: &line.Receiver{ChannelSecret: lineSecret, BotUserID: lineBot}, Claims: st, Queue: inq, DedupeTTL: store.DedupeTTL, Now: w.clock.Now, Log: quiet}
	case "turn":
		ch := turn.Channel{Capabilities: telegram.Adapter.Capabilities()}
		p := &turn.Processor{
			Claims: st, Intents: st, Outbox: outq, Agent: &agentModel{w: w, inst: inst},
			Channels: map[message.Platform]turn.Channel{message.Telegram: ch, message.LINE: {Capabilities: line.Adapter.Capabilities()}}, Questions: st, Inbox: inq,
			Reports: st, Awaits: st, Park: inq, Windows: st,
			// MaxAge at its bound: a message that waits behind a thread's
			// 6-hour async wait starts its turn past the default 6 hours, and
			// one agent failure then dead-letters it (docs/architecture.md,
			// "The simulator": a finding, not modelled away silently).
			Config: turn.Config{ClaimLease: 90 * time.Second, ClaimTTL: store.DedupeTTL, AsyncTimeout: turn.MaxAsyncTimeout, MaxAge: turn.MaxMaxAge},
			Now:    w.clock.Now, Backoff: w.backoff, Log: quiet,
		}
		w.turn = inst
		w.turnC = &consumer.Consumer{Handle: p.Handle, Visibility: inq, DeadLetters: &queuePorts{f: w.fIn, inst: inst, q: w.inDLQ},
			Groups: 1, Backoff: w.backoff, Now: w.clock.Now, Log: quiet}
	case "delivery":
		p := &delivery.Processor{Intents: st,
			Channels: map[message.Platform]delivery.Channel{
				message.Telegram: {Sender: &platformModel{w: w, inst: inst}, Capabilities: telegram.Adapter.Capabilities()},
				message.LINE:     {Sender: &platformModel{w: w, inst: inst}, Capabilities: line.Adapter.Capabilities()},
			},
			Now: w.clock.Now, Sleep: w.clock.Sleep, Backoff: w.backoff, Log: quiet}
		w.delivery = inst
		w.deliveryC = &consumer.Consumer{Handle: p.Handle, Visibility: outq, DeadLetters: &queuePorts{f: w.fOut, inst: inst, q: w.outDLQ},
			Groups: 1, Backoff: w.backoff, Now: w.clock.Now, Log: quiet}
	case "sweeper":
		w.sweep = inst
		w.sweeper = &sweeper.Processor{Store: st, Inbound: inq, Outbound: outq, Now: w.clock.Now, Log: quiet}
	case "reply":
		w.reply = inst
		w.replyH = &agentapi.Handler{
			Verifier: standardwebhooks.Verifier{Secrets: []standardwebhooks.Secret{agentSecret}},
			Awaits:   st, Intents: st, Outbox: outq, Waker: inq, Claims: st, AsyncTimeout: turn.MaxAsyncTimeout,
			Capabilities: func(p message.Platform) (message.Capabilities, bool) {
				switch p {
				case message.Telegram:
					return telegram.Adapter.Capabilities(), true
				case message.LINE:
					return line.Adapter.Capabilities(), true
				}
				return message.Capabilities{}, false
			},
			Now: w.clock.Now, Log: quiet,
		}
	}
}

// backoff is the consumers' retry delay with its jitter from the seed.
func (w *world) backoff(receiveCount int) time.Duration {
	return consumer.BackoffFrom(receiveCount, func(n time.Duration) time.Duration { return time.Duration(w.rng.Int64N(int64(n))) })
}

// enqueued observes inbound.fifo's accepted messages: an event's first
// enqueue is its place in its thread's order.
func (w *world) enqueued(m queue.Message) {
	if _, ok := w.rank[m.Dedup]; !ok {
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
	case x < 78:
		w.runSweeper()
	case x < 82:
		w.agentPosts()
	case x < 84:
		name := []string{"ingress", "turn", "delivery", "sweeper", "reply"}[w.rng.IntN(5)]
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
	// Now and then what answers an open question: an option's value.
	text := []string{fmt.Sprintf("m%d", w.nextUpd), "v0", "v1"}[w.rng.IntN(3)]
	var u *update
	if c.platform == message.LINE {
		u = w.lineUpdate(c, text)
	} else {
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
		u = &update{id: w.nextUpd, chat: c, key: "evt#telegram#" + botID + "#" + strconv.FormatInt(w.nextUpd, 10), body: body}
	}
	w.updates = append(w.updates, u)
	w.hooks = append(w.hooks, &hook{u: u, due: w.clock.Now()})
	w.tracef("chat %d writes %s (update %d)", c.id, text, u.id)
}

// lineUpdate is a LINE webhook of one text message from c: its event id
// (webhookEventId) is what LINE keeps when it redelivers, with
// deliveryContext.isRedelivery set.
func (w *world) lineUpdate(c *chat, text string) *update {
	eventID := fmt.Sprintf("01SIM%021d", w.nextUpd)
	body := func(again bool) []byte {
		b, _ := json.Marshal(map[string]any{
			"destination": lineBot,
			"events": []any{map[string]any{
				"type":            "message",
				"mode":            "active",
				"webhookEventId":  eventID,
				"deliveryContext": map[string]any{"isRedelivery": again},
				"timestamp":       w.clock.Now().UnixMilli(),
				"source":          map[string]any{"type": "user", "userId": c.name()},
				"replyToken":      fmt.Sprintf("rt%030d", w.nextUpd),
				"message":         map[string]any{"type": "text", "id": strconv.FormatInt(w.nextUpd, 10), "quoteToken": "q" + eventID, "text": text},
			}},
		})
		return b
	}
	return &update{id: w.nextUpd, chat: c, key: "evt#line#" + lineBot + "#" + eventID, body: body(false), again: body(true)}
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
	if w.fHook.chance("webhook_forged", 0.03) && len(w.updates) > 0 {
		w.forge(w.updates[w.rng.IntN(len(w.updates))])
		return
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

// forge posts what is not u's webhook as the platform would send it: a
// wrong secret or signature, or a body cut short under a valid one. I7:
// it is refused with a 4xx and reaches no model (no read, no write, no
// enqueue).
func (w *world) forge(u *update) {
	w.newInvocation(w.ingress, true)
	body := u.body
	badAuth := w.rng.IntN(2) == 0
	if !badAuth {
		body = body[:len(body)/2]
	}
	req, pipeline := w.webhook(u.chat.platform, body, badAuth)
	w.mu.Lock()
	before := w.portCalls
	w.mu.Unlock()
	rec := httptest.NewRecorder()
	pipeline.ServeHTTP(rec, req)
	w.mu.Lock()
	calls := w.portCalls - before
	w.mu.Unlock()
	w.res.Checks++
	w.tracef("forged webhook (bad auth %v) for update %d: %d", badAuth, u.id, rec.Code)
	if rec.Code/100 != 4 || calls != 0 {
		w.violate("I7 a forged webhook for update %d (bad auth %v) was answered %d after %d calls to the store, queues, platform or agent; want a 4xx and none", u.id, badAuth, rec.Code, calls)
	}
}

// webhook is body as the platform posts it, with its secret token or
// signature (a wrong one when forged), and the ingress pipeline it goes to.
func (w *world) webhook(pl message.Platform, body []byte, forged bool) (*http.Request, *ingress.Pipeline) {
	req := httptest.NewRequest(http.MethodPost, "/"+string(pl), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	key := secret
	if pl == message.LINE {
		key = lineSecret
	}
	if forged {
		key = "not-" + key
	}
	if pl == message.LINE {
		req.Header.Set(line.SignatureHeader, fakeline.Sign(key, body))
		return req, w.linePipeline
	}
	req.Header.Set(telegram.SecretHeader, key)
	return req, w.pipeline
}

// post delivers u's webhook to ingress and reports whether it was acked.
func (w *world) post(u *update) bool {
	w.newInvocation(w.ingress, true)
	body := u.body
	if u.posted && u.again != nil {
		body = u.again
	}
	u.posted = true
	req, pipeline := w.webhook(u.chat.platform, body, false)
	rec := httptest.NewRecorder()
	pipeline.ServeHTTP(rec, req)
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
	for _, r := range recs {
		n, _ := strconv.Atoi(r.Attributes["ApproximateReceiveCount"])
		w.maxReceives = max(w.maxReceives, n)
	}
	w.newInvocation(inst, false)
	resp, err := c.HandleSQS(context.Background(), events.SQSEvent{Records: recs})
	if inst.cur.dead() {
		for _, k := range inst.cur.leased {
			w.orphaned[k] = true
		}
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
		if name == "turn" && w.cfg.Trace {
			in, _ := intent.DecodeInbound([]byte(r.Body))
			w.tracef("  %s failed=%v receives=%s", in.Event.Key(), failed[r.MessageId], r.Attributes["ApproximateReceiveCount"])
		}
	}
	w.tracef("%s batch of %d, %d failed", name, len(recs), len(failed))
}

// agentPosts: the agent posts one owed reply to POST /reply, signed,
// retrying what got no 2xx; now and then it posts one again (its own
// retry after a lost answer), which the webhook-id makes the same post.
func (w *world) agentPosts() {
	now := w.clock.Now()
	i := slices.IndexFunc(w.posts, func(p *post) bool { return !p.due.After(now) })
	if i < 0 {
		return
	}
	p := w.posts[i]
	p.attempts++
	w.newInvocation(w.reply, false)
	req := httptest.NewRequest(http.MethodPost, "/reply", bytes.NewReader(p.body))
	req.Header.Set("Content-Type", "application/json")
	standardwebhooks.SetHeaders(req.Header, agentSecret, p.id, now, p.body)
	rec := httptest.NewRecorder()
	w.replyH.ServeHTTP(rec, req)
	if w.reply.cur.dead() {
		w.tracef("reply killed on the post for %s: no answer", p.turnID)
		p.due = now.Add(10 * time.Second)
		return
	}
	w.tracef("agent posts the reply of %s: %d", p.turnID, rec.Code)
	if rec.Code/100 == 2 {
		w.posted[p.turnID] = true
	}
	switch {
	case rec.Code/100 == 2 && w.fAgent.chance("agent_post_again", 0.1):
		p.due = now.Add(time.Duration(1+w.rng.IntN(60)) * time.Second)
	case rec.Code/100 == 2, rec.Code/100 == 4, p.attempts > 50:
		w.posts = slices.Delete(w.posts, i, i+1)
	default:
		p.due = now.Add(time.Duration(min(p.attempts, 6)) * 10 * time.Second)
	}
}

func (w *world) runSweeper() {
	w.newInvocation(w.sweep, false)
	_, _ = w.sweeper.Run(context.Background())
}

// recover runs with faults off until everything settled: nothing owed,
// nothing queued, nothing due for the sweeper; bounded in virtual time.
// When nothing can happen now, time jumps to the next thing due.
func (w *world) recover() {
	for _, inst := range []*instance{w.ingress, w.turn, w.delivery, w.sweep, w.reply} {
		inst.cur = nil
	}
	for w.sent < w.cfg.Messages {
		w.personWrites()
	}
	deadline := w.clock.Now().Add(36 * time.Hour)
	for w.clock.Now().Before(deadline) {
		w.res.Steps++
		before := w.progress()
		for w.hookDue() {
			w.platformDelivers()
		}
		for w.postDue() {
			w.agentPosts()
		}
		for _, q := range []string{"turn", "delivery"} {
			w.poll(q)
		}
		w.checkOrder()
		if w.progress() != before {
			continue
		}
		// Idle: the sweeper runs (every minute in AWS), then time jumps to
		// the next thing due, a sweep entry's time included.
		w.runSweeper()
		if w.progress() != before {
			continue
		}
		now := w.clock.Now()
		var next time.Time
		for _, at := range w.dueTimes() {
			if at.After(now) && (next.IsZero() || at.Before(next)) {
				next = at
			}
		}
		if due, _ := w.st.DueForSweep(context.Background(), now.Add(48*time.Hour), 1); len(due) > 0 && len(w.hooks)+len(w.posts)+w.in.Len()+w.out.Len() > 0 {
			if at := due[0].At.Add(time.Second); at.After(now) && (next.IsZero() || at.Before(next)) {
				next = at
			}
		}
		if w.in.Len() > w.in.InFlight() || w.out.Len() > w.out.InFlight() {
			// A message became visible while the poll waited (it may
			// jump to the next visibility itself): due now, not settled.
			next = now.Add(time.Second)
		}
		if next.IsZero() {
			// Nothing owed, queued or due: settled. What the sweeper has
			// for later (a question's expiry) is scheduled, not stranded.
			if due, _ := w.st.DueForSweep(context.Background(), now, 1); len(due) == 0 {
				return
			}
			next = now.Add(time.Minute)
		}
		w.advance(next.Sub(now))
	}
	due, _ := w.st.DueForSweep(context.Background(), w.clock.Now().Add(24*time.Hour), 3)
	w.violate("not settled 36 hours after the faults stopped: %d webhooks owed, %d posts owed, %d inbound, %d outbound queued, due for the sweeper %v", len(w.hooks), len(w.posts), w.in.Len(), w.out.Len(), due)
}

// progress is a fingerprint of what the run has done so far.
func (w *world) progress() string {
	return fmt.Sprintf("%d/%d/%d/%d/%d/%d", len(w.hooks), len(w.posts), w.in.Len(), w.out.Len(), w.shownSeq, len(w.res.Violations))
}

func (w *world) hookDue() bool {
	return slices.ContainsFunc(w.hooks, func(h *hook) bool { return !h.due.After(w.clock.Now()) })
}

func (w *world) postDue() bool {
	return slices.ContainsFunc(w.posts, func(p *post) bool { return !p.due.After(w.clock.Now()) })
}

// dueTimes are the times something becomes due.
func (w *world) dueTimes() []time.Time {
	var out []time.Time
	for _, h := range w.hooks {
		out = append(out, h.due)
	}
	for _, p := range w.posts {
		out = append(out, p.due)
	}
	for _, q := range []*queuetest.FIFO{w.in, w.out} {
		if at, ok := q.NextVisible(); ok {
			out = append(out, at)
		}
	}
	return out
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
			if strings.Contains(s.text, "openab.turn") || strings.Contains(s.text, `"messages"`) || strings.HasPrefix(strings.TrimSpace(s.text), "{") {
				w.violateOnce(fmt.Sprintf("I5 chat %d shows envelope JSON: %q", c.id, s.text))
			}
			if seen[s.text] {
				w.violateOnce(fmt.Sprintf("I2 chat %d shows %q twice", c.id, s.text))
			}
			// Parley's own lines may repeat; the agent's name their turn.
			seen[s.text] = strings.Contains(s.text, "|evt#")
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

// maxReceives bounds a queue message's receives in a run: faults cost a
// few each, waiting must cost none (a 6-hour wait polled every 30 seconds
// costs 720, and maxReceiveCount is 1000).
const maxReceives = 100

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
			id := intent.IDFor(u.key)
			c, cerr := w.st.GetClaim(ctx, store.IntentKey(id), w.clock.Now())
			if c.State == store.ClaimFailed && c.Reason == "async_timeout" && !w.posted[id] {
				// The agent's 202 was never followed by a post in time:
				// the turn failed, as the protocol says, and its claim says why.
				w.count("turn_async_timeout")
				continue
			}
			if c.State == store.ClaimDone && (c.Reason == "fallback_text" || c.Reason == "silent") {
				// A reply the planner turned into nothing to send (an
				// envelope it could not read, stripped by the fallback
				// policy): the turn is done, and says so.
				w.count("turn_nothing_to_send")
				continue
			}
			if a, aerr := w.st.GetAwait(ctx, id); aerr == nil && a.State == store.AwaitExpired && c.State == store.ClaimPending && !w.posted[id] {
				// The same, with the settle of the failed claim lost: the
				// sweeper reports the claim as stuck (a finding, logged).
				w.count("turn_async_timeout_unsettled")
				continue
			}
			w.violate("I1 acked update %d has no reply: %v (turn claim %s %q, %v)", u.id, err, c.State, c.Reason, cerr)
			continue
		}
		for _, unit := range in.Units {
			if !unit.State.Terminal() {
				w.violate("I4 update %d: unit %s still %s after recovery", u.id, unit.ID, unit.State)
				continue
			}
			if unit.State == message.UnitUnknown && in.Thread.Platform == message.LINE {
				w.violate("I2 update %d: unit %s held as unknown_after_send on LINE, whose retry key makes a resend safe", u.id, unit.ID)
			}
			if k := intent.UnitKey(in.ID, unit.ID); unit.State == message.UnitUnknown && !w.left[k] && !w.orphaned[k] {
				w.violate("I4 update %d: unit %s held as unknown_after_send, but no send of it ever reached the platform", u.id, unit.ID)
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
	w.res.Checks++
	if w.maxReceives > maxReceives {
		w.violate("receive counts are no retry budget: a message was received %d times (a waiting message must not spend them)", w.maxReceives)
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
		w.mu.Lock()
		op, refused := w.refused[req.TurnID]
		w.mu.Unlock()
		if refused {
			// The store refused this turn's reply as invalid (over the
			// item limit): the same answer fails on every try, so asking
			// again only blocks the thread behind it.
			w.violate("I2 agent asked again for turn %s (event %s) after the store refused its %s as invalid: a write that can never succeed was retried", req.TurnID, req.Event.Key(), op)
		}
		w.agentCalls[req.TurnID]++
		if ans := req.Answer; ans != nil && ans.Action != agent.AnswerCancel {
			// I8: the first valid answer wins; none after it reaches the agent.
			if first, ok := w.answers[ans.QuestionID]; ok && first != req.TurnID {
				w.violate("I8 question %s answered to the agent twice (turns %s and %s)", ans.QuestionID, first, req.TurnID)
			} else if !ok {
				w.answers[ans.QuestionID] = req.TurnID
			}
		}
		if w.fAgent.chance("agent_slow", 0.1) {
			w.advance(time.Duration(1+w.fAgent.rng.IntN(25)) * time.Second)
		}
		if w.fAgent.chance("agent_5xx", 0.05) {
			return &agent.Error{Kind: agent.KindTransient, Status: 503, Err: agent.ErrStatus}
		}
		body := w.agentReply(req)
		if w.fAgent.rng.IntN(4) == 0 {
			// 202: the reply comes later, by POST /reply, at any moment:
			// before this call returns, within the wait, or after it.
			delay := time.Duration(w.fAgent.rng.IntN(90)) * time.Second
			switch w.fAgent.rng.IntN(10) {
			case 0:
				delay = time.Duration(w.fAgent.rng.Int64N(int64(7 * time.Hour)))
			case 1, 2:
				delay = time.Duration(w.fAgent.rng.Int64N(int64(40 * time.Minute)))
			}
			pb, _ := json.Marshal(map[string]any{"turn_id": req.TurnID, "envelope": json.RawMessage(body)})
			// One webhook-id per post: the agent's retries of it share it.
			id := fmt.Sprintf("msg_%s_%d", req.TurnID, w.agentCalls[req.TurnID])
			w.posts = append(w.posts, &post{id: id, turnID: req.TurnID, body: pb, due: w.clock.Now().Add(delay)})
			rep = agent.Reply{Status: 202, Accepted: true}
			w.count("agent_async")
		} else {
			if w.fAgent.chance("agent_truncated", 0.03) {
				// A reply cut short: envelope JSON that does not parse,
				// which must never reach the person (I5).
				body = body[:len(body)/2]
			}
			rep = agent.Reply{Status: 200, ContentType: "application/json", Body: body}
		}
		if w.fAgent.chance("agent_timeout", 0.05) {
			// It answered; the answer did not come back in time.
			return &agent.Error{Kind: agent.KindTransient, Err: agent.ErrTimeout}
		}
		return nil
	})
	if err != nil {
		return agent.Reply{}, err
	}
	w.tracef("agent answers %s (%d)", req.Event.Key(), rep.Status)
	return rep, nil
}

// agentReply is the agent's envelope for req: one to three bubbles naming
// req's event and their place, now and then nothing (a silent reply), and
// now and then a question: a small one,
// or one whose form, stored, is over DynamoDB's 400 KB (each '<' is six
// bytes in JSON). Whether a message draws the oversized question depends
// on the message, not on the call: an agent asked again gives the same
// kind of answer, so a reply Parley can never store is retried until the
// message dead-letters unless Parley stops asking.
func (w *world) agentReply(req agent.TurnRequest) []byte {
	n := 1 + w.fAgent.rng.IntN(3)
	msgs := make([]map[string]string, n)
	for i := range msgs {
		msgs[i] = map[string]string{"id": fmt.Sprintf("b%d", i+1), "text": fmt.Sprintf("r|%s|%d", req.Event.Key(), i)}
	}
	env := map[string]any{"schema": "openab.turn.v1", "messages": msgs}
	switch x := w.fAgent.rng.IntN(100); {
	case x >= 96:
		// It chooses to say nothing: the turn has nothing to send, and
		// its settled claim is its only record.
		w.count("agent_silent")
		env = map[string]any{"schema": "openab.turn.v1", "messages": []any{}, "next": map[string]string{"type": "silent"}}
	case w.oversizedFor(req.Event.Key()):
		w.count("agent_oversized_question")
		env["next"] = askOf(req.Event.Key(), 20, 25, 150)
	case x < 8:
		env["next"] = askOf(req.Event.Key(), 1, 2, 4)
	}
	b, _ := json.Marshal(env)
	return b
}

// oversizedFor reports whether the agent answers the message key with an
// oversized question: about one message in thirty, fixed by the seed and
// the key.
func (w *world) oversizedFor(key string) bool {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%s", w.cfg.Seed, key)
	return h.Sum64()%30 == 0
}

// askOf is a question of fields select fields of options options, each
// option's title pad '<' long: each field fits a Telegram message (fields
// are asked one at a time), the form as stored may not.
func askOf(key string, fields, options, pad int) map[string]any {
	props := map[string]any{}
	var required []string
	for f := range fields {
		var one []map[string]string
		for o := range options {
			one = append(one, map[string]string{"const": fmt.Sprintf("v%d", o), "title": fmt.Sprintf("o%d%s", o, strings.Repeat("<", pad))})
		}
		name := fmt.Sprintf("f%d", f)
		props[name] = map[string]any{"type": "string", "oneOf": one}
		required = append(required, name)
	}
	return map[string]any{"type": "ask", "request": map[string]any{
		"message":         "q|" + key,
		"requestedSchema": map[string]any{"type": "object", "properties": props, "required": required},
	}}
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
		w.left[m.IdempotencyKey] = true
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
		if c.platform == message.LINE {
			// LINE keeps a request's X-Line-Retry-Key for a day: the same
			// key again is answered 409 and shows nothing.
			if at, ok := w.retryKeys[m.IdempotencyKey]; ok && w.clock.Now().Sub(at) < lineRetryKeyTTL {
				w.count("platform_retry_key_replayed")
				return &message.SendError{Class: message.FailConflict, Status: 409, Reason: "The retry key is already accepted"}
			}
			w.retryKeys[m.IdempotencyKey] = w.clock.Now()
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
		if c.platform == t.Platform && c.name() == t.Chat {
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
	// The same invariant must still break ("I1", "stranded:", ...).
	kind, _, _ := strings.Cut(r.Violations[0], " ")
	fails := func(r Result) bool {
		return slices.ContainsFunc(r.Violations, func(v string) bool { return strings.HasPrefix(v, kind+" ") })
	}
	for _, name := range r.Fired {
		cfg.Mask[name] = true
		if !fails(Run(cfg)) {
			delete(cfg.Mask, name)
		}
	}
	cfg.Trace = true
	return cfg, Run(cfg)
}
