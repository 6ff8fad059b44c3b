package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/queue/queuetest"
	"github.com/parleyhq/parley/shared/store"
)

// errKilled is what every port answers a function instance that Lambda
// killed: the invocation's remaining work reaches nothing, and its result
// is dropped.
var errKilled = errors.New("sim: the function was killed")

// errThrottled stands for DynamoDB's and SQS's throttling answers, which
// the functions treat as any transient failure.
var errThrottled = errors.New("sim: throttled (ProvisionedThroughputExceededException)")

// errLostAnswer stands for an answer lost on the way back after the write
// was applied (a 5xx or a broken connection the SDK gave up on).
var errLostAnswer = errors.New("sim: request applied, answer lost")

// kill is where an invocation dies: before or after its n-th port call.
type kill struct {
	at    int
	after bool
}

// invocation is one run of a function instance: its port calls are
// counted, and once it is killed every later call fails with errKilled.
type invocation struct {
	mu    sync.Mutex
	kill  kill
	calls int
	// concurrent is ingress's rule: its claim and its enqueue are in flight
	// together, so a kill at one of them leaves the other's first call
	// alone (both requests were on the wire).
	concurrent bool
	perPort    map[string]int
	killedPort string
	killed     bool
	// leased are the units this invocation leased (unit keys).
	leased []string
}

// gate is one port call's fate: dead (errKilled, not applied), killBefore,
// killAfter (applied, then killed).
func (inv *invocation) gate(port string) (dead, killBefore, killAfter bool) {
	if inv == nil {
		return false, false, false
	}
	inv.mu.Lock()
	defer inv.mu.Unlock()
	inv.calls++
	if inv.perPort == nil {
		inv.perPort = map[string]int{}
	}
	inv.perPort[port]++
	if inv.killed {
		if inv.concurrent && port != inv.killedPort && inv.perPort[port] == 1 {
			return false, false, false
		}
		return true, false, false
	}
	if inv.concurrent {
		// Calls are numbered per port: their interleaving is not ours.
		if inv.kill.at != 0 && inv.perPort[port] == 1 && inv.kill.at == portIndex(port) {
			inv.killed, inv.killedPort = true, port
			return false, !inv.kill.after, inv.kill.after
		}
		return false, false, false
	}
	if inv.kill.at == inv.calls {
		inv.killed, inv.killedPort = true, port
		return false, !inv.kill.after, inv.kill.after
	}
	return false, false, false
}

// portIndex numbers ingress's two concurrent ports for a kill.
func portIndex(port string) int {
	if port == "queue" {
		return 2
	}
	return 1
}

func (inv *invocation) dead() bool {
	if inv == nil {
		return false
	}
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return inv.killed
}

// instance is one warm function instance; cur is its running invocation.
type instance struct {
	name string
	cur  *invocation
}

// faulty decides and counts the faults of one model component, from its
// own random source (derived from the run's seed), so concurrent calls on
// different components draw deterministically.
type faulty struct {
	w    *world
	rng  *rand.Rand
	kind string
	aws  bool
	n    int // faults injected so far
}

// chance draws a fault of the given rate while faults are on. The draw is
// made whether or not faults are on, so a run's schedule does not shift
// when one fault is masked.
func (f *faulty) chance(fault string, rate float64) bool {
	x := f.rng.Float64()
	return f.w.inject(f, fault, x < rate*f.w.cfg.FaultRate)
}

// do runs apply as port call op of inst's invocation, with faults: a kill
// before or after, a throttle (not applied), a lost answer (applied).
func (f *faulty) do(inst *instance, port string, apply func() error) error {
	f.w.mu.Lock()
	f.w.portCalls++
	f.w.mu.Unlock()
	dead, before, after := inst.cur.gate(port)
	// AWS's own failures; the platform and the agent model theirs.
	var throttle, lost bool
	if f.aws {
		throttle = f.chance(f.kind+"_throttle", 0.03)
		lost = f.chance(f.kind+"_lost_answer", 0.03)
	}
	if dead {
		return errKilled
	}
	if before {
		f.w.count("kill_before_" + f.kind)
		return errKilled
	}
	if throttle {
		return fmt.Errorf("%s: %w", port, errThrottled)
	}
	err := apply()
	if after {
		f.w.count("kill_after_" + f.kind)
		return errKilled
	}
	if lost && err == nil {
		return fmt.Errorf("%s: %w", port, errLostAnswer)
	}
	return err
}

// storePorts is the store as one function instance reaches it.
type storePorts struct {
	f    *faulty
	inst *instance
	m    *MemStore
}

func (s *storePorts) do(op string, apply func() error) error {
	err := s.f.do(s.inst, "store", apply)
	if s.f.w.cfg.Trace {
		s.f.w.tracef("    %s %s: %v", s.inst.name, op, err)
	}
	return err
}

// refusal records a turn whose write the store refused as invalid: one
// that fails on every try, after which the agent must not be asked again.
func (s *storePorts) refusal(op, turnID string, err error) {
	if errors.Is(err, store.ErrInvalid) {
		s.f.w.mu.Lock()
		defer s.f.w.mu.Unlock()
		s.f.w.refused[turnID] = op
	}
}

func (s *storePorts) Claim(ctx context.Context, key string, spec store.ClaimSpec) (store.Claim, error) {
	var c store.Claim
	err := s.do("claim", func() (err error) { c, err = s.m.Claim(ctx, key, spec); return })
	if err != nil {
		return store.Claim{}, err
	}
	return c, nil
}

func (s *storePorts) Settle(ctx context.Context, key, owner string, state store.ClaimState, reason string, now time.Time, ttl time.Duration) error {
	return s.do("settle", func() error { return s.m.Settle(ctx, key, owner, state, reason, now, ttl) })
}

func (s *storePorts) Release(ctx context.Context, key, owner string, r store.ReleaseSpec) error {
	return s.do("release", func() error { return s.m.Release(ctx, key, owner, r) })
}

func (s *storePorts) Forget(ctx context.Context, key, owner string) error {
	return s.do("forget", func() error { return s.m.Forget(ctx, key, owner) })
}

func (s *storePorts) Defer(ctx context.Context, key, owner string, body []byte, due, now time.Time, ttl time.Duration) error {
	return s.do("defer", func() error { return s.m.Defer(ctx, key, owner, body, due, now, ttl) })
}

func (s *storePorts) Undefer(ctx context.Context, key string, due time.Time) error {
	return s.do("undefer", func() error { return s.m.Undefer(ctx, key, due) })
}

func (s *storePorts) GetClaim(ctx context.Context, key string, now time.Time) (store.Claim, error) {
	var c store.Claim
	err := s.do("get_claim", func() (err error) { c, err = s.m.GetClaim(ctx, key, now); return })
	if err != nil {
		return store.Claim{}, err
	}
	return c, nil
}

func (s *storePorts) CreateIntent(ctx context.Context, in intent.Intent) (intent.Intent, bool, error) {
	var out intent.Intent
	var created bool
	err := s.do("create_intent", func() (err error) { out, created, err = s.m.CreateIntent(ctx, in); return })
	if err != nil {
		return intent.Intent{}, false, err
	}
	return out, created, nil
}

func (s *storePorts) CommitIntent(ctx context.Context, in intent.Intent, owner, outcome string, now time.Time) (intent.Intent, bool, error) {
	var out intent.Intent
	var created bool
	err := s.do("commit_intent", func() (err error) { out, created, err = s.m.CommitIntent(ctx, in, owner, outcome, now); return })
	s.refusal("commit_intent", in.ID, err)
	if err != nil {
		return intent.Intent{}, false, err
	}
	return out, created, nil
}

func (s *storePorts) GetIntent(ctx context.Context, id string) (intent.Intent, error) {
	var out intent.Intent
	err := s.do("get_intent", func() (err error) { out, err = s.m.GetIntent(ctx, id); return })
	if err != nil {
		return intent.Intent{}, err
	}
	return out, nil
}

func (s *storePorts) Apply(ctx context.Context, id string, t intent.Transition) (intent.Intent, error) {
	var out intent.Intent
	unit := ""
	err := s.do("apply", func() (err error) {
		out, err = s.m.Apply(ctx, id, t)
		if err == nil && t.To == message.UnitSending {
			unit = intent.UnitKey(id, out.Units[t.Unit].ID)
		}
		return
	})
	if unit != "" {
		if err != nil {
			// Leased, and its answer lost: the unit waits out a lease
			// nobody holds.
			s.f.w.orphaned[unit] = true
		} else if inv := s.inst.cur; inv != nil {
			inv.leased = append(inv.leased, unit)
		}
	}
	if err != nil {
		return intent.Intent{}, err
	}
	return out, nil
}

func (s *storePorts) DueForSweep(ctx context.Context, now time.Time, limit int) ([]store.SweepEntry, error) {
	var out []store.SweepEntry
	err := s.do("due_for_sweep", func() (err error) { out, err = s.m.DueForSweep(ctx, now, limit); return })
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *storePorts) Reschedule(ctx context.Context, key string, from, to time.Time) error {
	return s.do("reschedule", func() error { return s.m.Reschedule(ctx, key, from, to) })
}

func (s *storePorts) Unsweep(ctx context.Context, key string, from time.Time) error {
	return s.do("unsweep", func() error { return s.m.Unsweep(ctx, key, from) })
}

func (s *storePorts) GetQuestion(ctx context.Context, key string) (store.Question, error) {
	var q store.Question
	err := s.do("get_question", func() (err error) { q, err = s.m.GetQuestion(ctx, key); return })
	if err != nil {
		return store.Question{}, err
	}
	return q, nil
}

func (s *storePorts) AskQuestion(ctx context.Context, q store.Question) (store.Question, bool, error) {
	var out store.Question
	var created bool
	err := s.do("ask_question", func() (err error) { out, created, err = s.m.AskQuestion(ctx, q); return })
	s.refusal("ask_question", q.ID, err)
	if err != nil {
		return store.Question{}, false, err
	}
	return out, created, nil
}

func (s *storePorts) UpdateQuestion(ctx context.Context, q store.Question) (store.Question, error) {
	var out store.Question
	err := s.do("update_question", func() (err error) { out, err = s.m.UpdateQuestion(ctx, q); return })
	if err != nil {
		return store.Question{}, err
	}
	return out, nil
}

func (s *storePorts) OpenAwait(ctx context.Context, a store.Await) (store.Await, bool, error) {
	var out store.Await
	var created bool
	err := s.do("open_await", func() (err error) { out, created, err = s.m.OpenAwait(ctx, a); return })
	if err != nil {
		return store.Await{}, false, err
	}
	return out, created, nil
}

func (s *storePorts) await(op string, f func() (store.Await, error)) (store.Await, error) {
	var out store.Await
	err := s.do(op, func() (err error) { out, err = f(); return })
	if err != nil {
		return store.Await{}, err
	}
	return out, nil
}

func (s *storePorts) GetAwait(ctx context.Context, turnID string) (store.Await, error) {
	return s.await("get_await", func() (store.Await, error) { return s.m.GetAwait(ctx, turnID) })
}

func (s *storePorts) SetAwaitHandle(ctx context.Context, turnID, handle string) error {
	return s.do("set_await_handle", func() error { return s.m.SetAwaitHandle(ctx, turnID, handle) })
}

func (s *storePorts) AdoptAwait(ctx context.Context, turnID, owner, handle string, preview message.Preview) (store.Await, error) {
	return s.await("adopt_await", func() (store.Await, error) { return s.m.AdoptAwait(ctx, turnID, owner, handle, preview) })
}

func (s *storePorts) FinishAwait(ctx context.Context, turnID string, post store.AwaitPost, now time.Time) (store.Await, error) {
	return s.await("finish_await", func() (store.Await, error) { return s.m.FinishAwait(ctx, turnID, post, now) })
}

func (s *storePorts) ExpireAwait(ctx context.Context, turnID string) (store.Await, error) {
	return s.await("expire_await", func() (store.Await, error) { return s.m.ExpireAwait(ctx, turnID) })
}

func (s *storePorts) SettleAwaitPreview(ctx context.Context, turnID, by string, now, busy time.Time) (store.Await, error) {
	return s.await("settle_await_preview", func() (store.Await, error) { return s.m.SettleAwaitPreview(ctx, turnID, by, now, busy) })
}

func (s *storePorts) AddAwaitPost(ctx context.Context, turnID, postID string, bubbles, prevBubbles int, now time.Time) (store.Await, error) {
	return s.await("add_await_post", func() (store.Await, error) {
		return s.m.AddAwaitPost(ctx, turnID, postID, bubbles, prevBubbles, now)
	})
}

func (s *storePorts) LastInbound(ctx context.Context, threadKey string, now time.Time) (time.Time, error) {
	var at time.Time
	err := s.do("last_inbound", func() (err error) { at, err = s.m.LastInbound(ctx, threadKey, now); return })
	return at, err
}

// queuePorts is a queue as one function instance reaches it.
type queuePorts struct {
	f    *faulty
	inst *instance
	q    *queuetest.FIFO
	// sent observes every message the queue accepted.
	sent func(m queue.Message)
}

func (q *queuePorts) Send(ctx context.Context, m queue.Message) error {
	return q.f.do(q.inst, "queue", func() error {
		err := q.q.Send(ctx, m)
		if err == nil && q.sent != nil {
			q.sent(m)
		}
		return err
	})
}

func (q *queuePorts) SendBatch(ctx context.Context, msgs []queue.Message) error {
	return q.f.do(q.inst, "queue", func() error {
		err := q.q.SendBatch(ctx, msgs)
		if err == nil && q.sent != nil {
			for _, m := range msgs {
				q.sent(m)
			}
		}
		return err
	})
}

func (q *queuePorts) ChangeVisibility(ctx context.Context, handle string, d time.Duration) error {
	return q.f.do(q.inst, "queue", func() error { return q.q.ChangeVisibility(ctx, handle, d) })
}

// GetPreview and DropPreview are the sweeper's view of live previews; the
// simulation's turns show none, so it finds none on its list.
func (s *storePorts) GetPreview(ctx context.Context, key string, now time.Time) (message.Preview, error) {
	var p message.Preview
	err := s.do("get_preview", func() (err error) { p, err = s.m.GetPreview(ctx, key, now); return })
	if err != nil {
		return message.Preview{}, err
	}
	return p, nil
}

func (s *storePorts) DropPreview(ctx context.Context, key string) error {
	return s.do("drop_preview", func() error { return s.m.DropPreview(ctx, key) })
}
