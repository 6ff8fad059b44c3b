package sim

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/triage"
)

// MemStore is an in-memory model of Parley's DynamoDB table behind the store
// ports: one item per key, whatever it holds (a claim that becomes an
// intent stays one item), every write a compare-and-set with the condition
// dynamostore writes, times kept at the precision DynamoDB keeps them
// (milliseconds, epoch seconds for expiries), items over 400 KB refused. It
// passes storetest, the suite dynamostore passes against DynamoDB Local.
//
// Retried, when set, is asked before each conditional write: true applies
// the write twice with the same write token, as the SDK's retry does after
// an answer lost on the way back (the write happened; its retry meets it).
// Safe for concurrent use.
type MemStore struct {
	mu      sync.Mutex
	items   map[string]*item
	Retried func(op string) bool
}

// NewMemStore returns an empty table.
func NewMemStore() *MemStore { return &MemStore{items: map[string]*item{}} }

// maxItemBytes is DynamoDB's item size limit.
const maxItemBytes = 400 << 10

// item is one table item. Only the attributes a kind uses are set.
type item struct {
	kind string // "", "intent", "await", "question", "triage"

	// claim attributes
	st, owner, reason, note, fp, origin string
	leaseUntil, claimedAt, due          time.Time // ms
	expires                             time.Time // s
	attempts                            int
	body                                []byte
	thread                              *message.Thread
	wt                                  string // write token

	// indexes
	sw         bool
	swAt       time.Time
	swt        string
	win        string
	winAt      time.Time
	attn       bool
	attnAt     string
	in         *intent.Intent
	unitTokens []string
	aw         *store.Await
	q          *store.Question
	tri        *counterItem
}

type counterItem struct {
	last       time.Time
	acc        string
	pl         time.Time
	pt, gb     string
	days       map[string]int
	expiresSec time.Time
}

func ms(t time.Time) time.Time {
	if t.IsZero() || t.UnixMilli() == 0 {
		return time.Time{}
	}
	return time.UnixMilli(t.UnixMilli()).UTC()
}

func sec(t time.Time) time.Time { return time.Unix(t.Unix(), 0).UTC() }

func token() string { return store.NewOwner() }

// exec runs a write under the table's lock, twice when Retried says the
// SDK retried it.
func exec[T any](s *MemStore, op string, f func() T) T {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := f()
	if s.Retried != nil && s.Retried(op) {
		r = f()
	}
	return r
}

func (s *MemStore) get(key string) *item { return s.items[key] }

// Claim implements store.Claims.
func (s *MemStore) Claim(ctx context.Context, key string, spec store.ClaimSpec) (store.Claim, error) {
	type res struct {
		c   store.Claim
		err error
	}
	r := exec(s, "claim", func() res {
		now := spec.Now
		it := s.get(key)
		claimable := it == nil || !it.expires.IsZero() && it.expires.Unix() <= now.Unix() ||
			it.st == string(store.ClaimPending) && it.leaseUntil.UnixMilli() <= now.UnixMilli()
		if !claimable {
			if it.owner == spec.Owner {
				return res{c: claimFrom(key, it)}
			}
			return res{err: &store.ClaimHeldError{Current: claimFrom(key, it)}}
		}
		if spec.State != "" {
			n := &item{st: string(spec.State), owner: spec.Owner, expires: sec(now.Add(spec.TTL)), attempts: 1, fp: spec.Digest}
			if spec.Window != "" {
				n.win, n.winAt = spec.Window, ms(spec.WindowAt)
			}
			s.items[key] = n
			return res{c: claimFrom(key, n)}
		}
		if it == nil {
			it = &item{}
			s.items[key] = it
		}
		it.st, it.owner = string(store.ClaimPending), spec.Owner
		it.leaseUntil, it.expires, it.claimedAt = ms(now.Add(spec.Lease)), sec(now.Add(spec.TTL)), ms(now)
		it.attempts++
		it.reason = ""
		if spec.Digest != "" {
			it.fp = spec.Digest
		}
		if spec.Thread.Platform != "" {
			th := spec.Thread
			it.thread, it.origin = &th, spec.Origin
		}
		if spec.Sweep {
			it.sw, it.swAt = true, ms(now.Add(spec.Lease+store.SweepGrace))
		}
		return res{c: claimFrom(key, it)}
	})
	return r.c, r.err
}

func claimFrom(key string, it *item) store.Claim {
	c := store.Claim{Key: key}
	if it == nil {
		return c
	}
	c.State, c.Owner, c.LeaseUntil, c.ClaimedAt = store.ClaimState(it.st), it.owner, it.leaseUntil, it.claimedAt
	if !it.expires.IsZero() && it.expires.Unix() != 0 {
		c.ExpiresAt = it.expires
	}
	c.Attempts, c.Reason, c.Note, c.Body, c.DueAt, c.Digest = it.attempts, it.reason, it.note, bytes.Clone(it.body), it.due, it.fp
	if it.thread != nil {
		c.Thread, c.Origin = *it.thread, it.origin
	}
	return c
}

// ownClaim answers a failed condition on a claim: nil when the item holds
// tok (the write's own earlier success), else the claim as it is.
func ownClaim(key string, it *item, tok string) error {
	if it != nil && tok != "" && it.wt == tok {
		return nil
	}
	return &store.ClaimHeldError{Current: claimFrom(key, it)}
}

// Forget implements store.Claims.
func (s *MemStore) Forget(ctx context.Context, key, owner string) error {
	return exec(s, "forget", func() error {
		it := s.get(key)
		if it == nil {
			return nil
		}
		if it.owner != owner {
			return &store.ClaimHeldError{Current: claimFrom(key, it)}
		}
		delete(s.items, key)
		return nil
	})
}

func (s *MemStore) settle(op, key, owner string, f func(it *item)) error {
	tok := token()
	return exec(s, op, func() error {
		it := s.get(key)
		if it == nil || it.owner != owner || it.st != string(store.ClaimPending) {
			return ownClaim(key, it, tok)
		}
		f(it)
		it.wt = tok
		return nil
	})
}

// Settle implements store.Claims.
func (s *MemStore) Settle(ctx context.Context, key, owner string, state store.ClaimState, reason string, now time.Time, ttl time.Duration) error {
	return s.settle("settle", key, owner, func(it *item) {
		it.st, it.reason, it.expires = string(state), reason, sec(now.Add(ttl))
		it.sw, it.swAt = false, time.Time{}
	})
}

// Defer implements store.Claims.
func (s *MemStore) Defer(ctx context.Context, key, owner string, body []byte, due, now time.Time, ttl time.Duration) error {
	return s.settle("defer", key, owner, func(it *item) {
		it.st, it.reason, it.expires = string(store.ClaimDeferred), "quiet_hours", sec(now.Add(ttl))
		it.body, it.due = bytes.Clone(body), ms(due)
		it.sw, it.swAt = true, ms(due)
	})
}

// Undefer moves a deferred claim due at due to enqueued.
func (s *MemStore) Undefer(ctx context.Context, key string, due time.Time) error {
	tok := token()
	return exec(s, "undefer", func() error {
		it := s.get(key)
		if it == nil || it.st != string(store.ClaimDeferred) || !it.due.Equal(ms(due)) {
			return ownClaim(key, it, tok)
		}
		it.st, it.wt, it.body = string(store.ClaimEnqueued), tok, nil
		it.sw, it.swAt = false, time.Time{}
		return nil
	})
}

// Release implements store.Claims.
func (s *MemStore) Release(ctx context.Context, key, owner string, r store.ReleaseSpec) error {
	return s.settle("release", key, owner, func(it *item) {
		it.leaseUntil = ms(r.Until)
		if r.Note != "" {
			it.note = r.Note
		}
		if r.Until.IsZero() {
			it.sw, it.swAt = false, time.Time{}
		} else {
			it.swAt = ms(r.Until.Add(store.SweepGrace))
		}
	})
}

// GetClaim implements store.Claims.
func (s *MemStore) GetClaim(ctx context.Context, key string, now time.Time) (store.Claim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.get(key)
	if it == nil {
		return store.Claim{}, store.ErrNotFound
	}
	c := claimFrom(key, it)
	if !c.ExpiresAt.After(now) {
		return store.Claim{}, store.ErrNotFound
	}
	return c, nil
}

// normIntent is in as the table keeps it: times at their precision,
// content through its stored form. An intent over 400 KB, or a unit with
// no content, is store.ErrInvalid.
func normIntent(in intent.Intent) (intent.Intent, error) {
	out := in
	out.SweepAt = time.Time{}
	out.CreatedAt, out.ExpiresAt = ms(in.CreatedAt), sec(in.ExpiresAt)
	if rc := in.ReplyContext; rc != nil {
		out.ReplyContext = &message.ReplyContext{Token: rc.Token, Until: ms(rc.Until)}
	}
	size := 200 + len(in.ID) + len(in.Origin)
	out.Units = make([]intent.Unit, len(in.Units))
	for i, u := range in.Units {
		switch u.Content.Kind() {
		case message.ContentText:
			u.Content = message.Text(u.Content.Text)
		case message.ContentPrompt:
			b, err := json.Marshal(u.Content.Prompt)
			if err != nil {
				return intent.Intent{}, err
			}
			var p message.Prompt
			_ = json.Unmarshal(b, &p)
			u.Content, size = message.Content{Prompt: &p}, size+len(b)
		case message.ContentReaction:
			b, err := json.Marshal(u.Content.React)
			if err != nil {
				return intent.Intent{}, err
			}
			var r message.React
			_ = json.Unmarshal(b, &r)
			u.Content, size = message.Content{React: &r}, size+len(b)
		default:
			return intent.Intent{}, fmt.Errorf("encode unit %s: %w: no content", u.ID, store.ErrInvalid)
		}
		size += 120 + len(u.ID) + len(u.Content.Text) + len(u.ReplyTo) + len(u.FailureReason)
		for _, r := range u.Receipt {
			size += len(r) + 3
		}
		u.Receipt = slices.Clone(u.Receipt)
		u.LeaseUntil, u.SentAt, u.NextAt, u.UpdatedAt = ms(u.LeaseUntil), ms(u.SentAt), ms(u.NextAt), ms(u.UpdatedAt)
		out.Units[i] = u
	}
	if size > maxItemBytes {
		return intent.Intent{}, fmt.Errorf("memstore: %w: intent of %d bytes (ValidationException)", store.ErrInvalid, size)
	}
	return out, nil
}

// readIntent is the intent an item holds, with its place on the sweeper's
// list.
func readIntent(it *item) intent.Intent {
	in := *it.in
	in.Units = slices.Clone(in.Units)
	for i := range in.Units {
		in.Units[i].Receipt = slices.Clone(in.Units[i].Receipt)
	}
	if it.sw {
		in.SweepAt = it.swAt
	}
	return in
}

// CreateIntent writes in unless its key holds an item.
func (s *MemStore) CreateIntent(ctx context.Context, in intent.Intent) (intent.Intent, bool, error) {
	n, err := normIntent(in)
	if err != nil {
		return intent.Intent{}, false, err
	}
	tok := token()
	key := store.IntentKey(in.ID)
	type res struct {
		in      intent.Intent
		created bool
		err     error
	}
	r := exec(s, "create_intent", func() res {
		if it := s.get(key); it != nil {
			return written(key, it, tok)
		}
		it := &item{kind: "intent", in: &n, unitTokens: make([]string, len(n.Units)), wt: tok, expires: n.ExpiresAt}
		th := n.Thread
		it.thread, it.origin = &th, n.Origin
		if !in.SweepAt.IsZero() {
			it.sw, it.swAt = true, ms(in.SweepAt)
		}
		s.items[key] = it
		return res{in: readIntent(it), created: true}
	})
	return r.in, r.created, r.err
}

func written(key string, it *item, tok string) struct {
	in      intent.Intent
	created bool
	err     error
} {
	type res = struct {
		in      intent.Intent
		created bool
		err     error
	}
	if it.wt == tok && it.kind == "intent" {
		return res{in: readIntent(it), created: true}
	}
	if it.kind != "intent" {
		return res{err: &store.ClaimHeldError{Current: claimFrom(key, it)}}
	}
	return res{in: readIntent(it)}
}

// CommitIntent writes in onto owner's pending claim at its key and settles
// the claim as done, in one write.
func (s *MemStore) CommitIntent(ctx context.Context, in intent.Intent, owner, outcome string, now time.Time) (intent.Intent, bool, error) {
	n, err := normIntent(in)
	if err != nil {
		return intent.Intent{}, false, err
	}
	tok := token()
	key := store.IntentKey(in.ID)
	r := exec(s, "commit_intent", func() struct {
		in      intent.Intent
		created bool
		err     error
	} {
		it := s.get(key)
		if it == nil || it.owner != owner || it.st != string(store.ClaimPending) {
			if it == nil {
				it = &item{}
			}
			return written(key, it, tok)
		}
		nn := n
		it.kind, it.in, it.unitTokens, it.wt = "intent", &nn, make([]string, len(n.Units)), tok
		it.st, it.reason, it.expires = string(store.ClaimDone), outcome, n.ExpiresAt
		th := n.Thread
		it.thread, it.origin = &th, n.Origin
		if in.SweepAt.IsZero() {
			it.sw, it.swAt = false, time.Time{}
		} else if !it.sw {
			it.sw, it.swAt = true, ms(in.SweepAt)
		}
		return struct {
			in      intent.Intent
			created bool
			err     error
		}{in: readIntent(it), created: true}
	})
	return r.in, r.created, r.err
}

// GetIntent reads an intent.
func (s *MemStore) GetIntent(ctx context.Context, id string) (intent.Intent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.get(store.IntentKey(id))
	if it == nil || it.kind != "intent" {
		return intent.Intent{}, fmt.Errorf("intent %s: %w", id, store.ErrNotFound)
	}
	return readIntent(it), nil
}

// GetIntents reads several intents; absent ones are left out.
func (s *MemStore) GetIntents(ctx context.Context, ids []string) (map[string]intent.Intent, error) {
	out := map[string]intent.Intent{}
	for _, id := range ids {
		in, err := s.GetIntent(ctx, id)
		if err == nil {
			out[id] = in
		}
	}
	return out, nil
}

// allowed is dynamostore's transition condition.
func allowed(in *intent.Intent, t intent.Transition) bool {
	if t.Unit >= len(in.Units) {
		return false
	}
	u := in.Units[t.Unit]
	if !slices.Contains(t.From, u.State) || u.Attempt != t.Attempt {
		return false
	}
	if !t.LeaseExpiredBy.IsZero() && u.LeaseUntil.UnixMilli() >= t.LeaseExpiredBy.UnixMilli() {
		return false
	}
	if t.UnitID != "" && u.ID != t.UnitID {
		return false
	}
	if (t.RequirePrevTerminal || t.RequirePrevDone) && t.Unit > 0 {
		for _, p := range in.Units[:t.Unit] {
			ok := p.State == message.UnitSent || p.State == message.UnitFailed || !t.RequirePrevDone && p.State == message.UnitUnknown
			if !ok {
				return false
			}
		}
	}
	return true
}

// Apply performs t on the intent as one compare-and-set.
func (s *MemStore) Apply(ctx context.Context, id string, t intent.Transition) (intent.Intent, error) {
	if t.Unit < 0 || len(t.From) == 0 {
		return intent.Intent{}, fmt.Errorf("transition %s: invalid unit %d or no source state", t.Name, t.Unit)
	}
	tok := token()
	type res struct {
		in  intent.Intent
		err error
	}
	r := exec(s, "apply_"+t.Name, func() res {
		it := s.get(store.IntentKey(id))
		if it == nil || it.kind != "intent" {
			return res{err: fmt.Errorf("intent %s: %w", id, store.ErrNotFound)}
		}
		if !allowed(it.in, t) {
			if t.Unit < len(it.unitTokens) && it.unitTokens[t.Unit] == tok {
				return res{in: readIntent(it)}
			}
			return res{err: &store.IntentConflictError{Transition: t.Name, Current: readIntent(it)}}
		}
		in := *it.in
		in.Units = slices.Clone(in.Units)
		u := in.Units[t.Unit]
		u.State, u.Attempt, u.LeaseUntil = t.To, t.NextAttempt, ms(t.LeaseUntil)
		u.Receipt = slices.Clone(t.Receipt)
		if u.Receipt == nil {
			u.Receipt = []string{}
		}
		u.SentAt, u.FailureClass, u.FailureReason, u.NextAt = ms(t.SentAt), t.FailureClass, t.FailureReason, ms(t.NextAt)
		u.Resent, u.Resends, u.Reported, u.UpdatedAt = t.Resent, t.Resends, t.Reported, ms(t.At)
		in.Units[t.Unit] = u
		it.in = &in
		it.unitTokens = slices.Clone(it.unitTokens)
		it.unitTokens[t.Unit] = tok
		if t.Attention {
			it.attn, it.attnAt = true, t.At.UTC().Format(time.RFC3339Nano)
		}
		switch {
		case t.Close:
			it.sw, it.swAt = false, time.Time{}
		case t.Reopen:
			it.sw, it.swAt = true, ms(t.SweepAt)
		case !t.SweepAt.IsZero():
			it.swAt = ms(t.SweepAt)
		}
		return res{in: readIntent(it)}
	})
	return r.in, r.err
}

// DueForSweep lists items on the sweeper's list due by now, oldest first.
func (s *MemStore) DueForSweep(ctx context.Context, now time.Time, limit int) ([]store.SweepEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []store.SweepEntry
	for k, it := range s.items {
		if it.sw && it.swAt.UnixMilli() <= now.UnixMilli() {
			out = append(out, store.SweepEntry{Key: k, At: it.swAt})
		}
	}
	slices.SortFunc(out, func(a, b store.SweepEntry) int { return cmp.Or(a.At.Compare(b.At), strings.Compare(a.Key, b.Key)) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (s *MemStore) sweepUpdate(op, key string, from time.Time, f func(it *item)) error {
	tok := token()
	return exec(s, op, func() error {
		it := s.get(key)
		if it == nil || !it.sw || !it.swAt.Equal(ms(from)) {
			if it != nil && it.swt == tok {
				return nil
			}
			return store.ErrConflict
		}
		f(it)
		it.swt = tok
		return nil
	})
}

// Reschedule moves an item's sweep time from from to to.
func (s *MemStore) Reschedule(ctx context.Context, key string, from, to time.Time) error {
	return s.sweepUpdate("reschedule", key, from, func(it *item) { it.swAt = ms(to) })
}

// Unsweep takes an item off the sweeper's list.
func (s *MemStore) Unsweep(ctx context.Context, key string, from time.Time) error {
	return s.sweepUpdate("unsweep", key, from, func(it *item) { it.sw, it.swAt = false, time.Time{} })
}

// LastInbound implements store.Windows.
func (s *MemStore) LastInbound(ctx context.Context, threadKey string, now time.Time) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var last time.Time
	for _, it := range s.items {
		if it.win == threadKey && it.winAt.After(last) {
			last = it.winAt
		}
	}
	return last, nil
}

// Attention lists intents with a unit an operator should look at.
func (s *MemStore) Attention(ctx context.Context, limit int) ([]store.AttentionEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	type e struct{ key, at string }
	var es []e
	for k, it := range s.items {
		if it.attn {
			es = append(es, e{k, it.attnAt})
		}
	}
	slices.SortFunc(es, func(a, b e) int { return cmp.Or(strings.Compare(a.at, b.at), strings.Compare(a.key, b.key)) })
	var out []store.AttentionEntry
	for _, x := range es[:min(limit, len(es))] {
		at, _ := time.Parse(time.RFC3339Nano, x.at)
		out = append(out, store.AttentionEntry{IntentID: strings.TrimPrefix(x.key, "int#"), At: at})
	}
	return out, nil
}

// --- awaits

func normAwait(a store.Await) store.Await {
	a.Deadline, a.CreatedAt = ms(a.Deadline), ms(a.CreatedAt)
	a.PreviewNext, a.PreviewBusy = ms(a.PreviewNext), ms(a.PreviewBusy)
	a.ExpiresAt = sec(a.ExpiresAt)
	a.Post.At = ms(a.Post.At)
	a.Post.Body = bytes.Clone(a.Post.Body)
	if len(a.Post.Body) == 0 {
		a.Post.Body = nil
	}
	a.Posts = maps.Clone(a.Posts)
	if a.Posts == nil {
		a.Posts = map[string]int{}
	}
	return a
}

// OpenAwait records that a turn waits for its agent's post.
func (s *MemStore) OpenAwait(ctx context.Context, a store.Await) (store.Await, bool, error) {
	a.State, a.Post, a.Posts, a.Bubbles = store.AwaitOpen, store.AwaitPost{}, nil, 0
	n := normAwait(a)
	tok := token()
	type res struct {
		a       store.Await
		created bool
	}
	r := exec(s, "open_await", func() res {
		key := store.AwaitKey(a.TurnID)
		if it := s.get(key); it != nil {
			return res{a: normAwait(*it.aw), created: it.wt == tok}
		}
		nn := n
		s.items[key] = &item{kind: "await", aw: &nn, wt: tok}
		return res{a: normAwait(nn), created: true}
	})
	return r.a, r.created, nil
}

// GetAwait reads a turn's await record.
func (s *MemStore) GetAwait(ctx context.Context, turnID string) (store.Await, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.get(store.AwaitKey(turnID))
	if it == nil || it.aw == nil {
		return store.Await{}, fmt.Errorf("await %s: %w", turnID, store.ErrNotFound)
	}
	return normAwait(*it.aw), nil
}

func (s *MemStore) awaitUpdate(op, turnID string, cond func(a *store.Await) bool, f func(a *store.Await)) (store.Await, error) {
	return s.awaitWrite(op, turnID, func(a *store.Await) bool { return a.State == store.AwaitOpen && (cond == nil || cond(a)) }, f)
}

// awaitWrite applies f to an existing record for which cond holds.
func (s *MemStore) awaitWrite(op, turnID string, cond func(a *store.Await) bool, f func(a *store.Await)) (store.Await, error) {
	tok := token()
	type res struct {
		a   store.Await
		err error
	}
	r := exec(s, op, func() res {
		it := s.get(store.AwaitKey(turnID))
		if it == nil || it.aw == nil {
			return res{err: fmt.Errorf("await %s: %w", turnID, store.ErrNotFound)}
		}
		if !cond(it.aw) {
			if it.wt == tok {
				return res{a: normAwait(*it.aw)}
			}
			return res{err: &store.AwaitConflictError{Current: normAwait(*it.aw)}}
		}
		a := normAwait(*it.aw)
		f(&a)
		it.aw, it.wt = &a, tok
		return res{a: normAwait(a)}
	})
	return r.a, r.err
}

// SetAwaitHandle records the waiting turn's latest receipt handle.
func (s *MemStore) SetAwaitHandle(ctx context.Context, turnID, handle string) error {
	_, err := s.awaitUpdate("set_await_handle", turnID, nil, func(a *store.Await) { a.Handle = handle })
	return err
}

// AdoptAwait makes an open await record the waiting turn's.
func (s *MemStore) AdoptAwait(ctx context.Context, turnID, owner, handle string, preview message.Preview) (store.Await, error) {
	return s.awaitUpdate("adopt_await", turnID, nil, func(a *store.Await) { a.ClaimOwner, a.Handle, a.Preview = owner, handle, preview })
}

// TakeAwaitPreview takes one preview update of an open record.
func (s *MemStore) TakeAwaitPreview(ctx context.Context, turnID string, t store.PreviewTake) (store.Await, error) {
	return s.awaitUpdate("take_await_preview", turnID,
		func(a *store.Await) bool {
			return a.Deadline.UnixMilli() > t.Now.UnixMilli() && a.PreviewNext.UnixMilli() <= t.Now.UnixMilli() && a.PreviewUpdates < t.Max &&
				a.PreviewSettled == "" && leaseFree(a, t.Now)
		},
		func(a *store.Await) {
			a.PreviewUpdates, a.PreviewNext, a.PreviewBusy, a.PreviewLease = a.PreviewUpdates+1, ms(t.Next), ms(t.Busy), t.Lease
			a.PreviewStatus = a.PreviewStatus || t.Status
		})
}

// leaseFree reports whether no preview work holds a's lease at now.
func leaseFree(a *store.Await, now time.Time) bool {
	return a.PreviewLease == "" || a.PreviewBusy.UnixMilli() <= now.UnixMilli()
}

// ReleaseAwaitPreview ends a preview update's lease, while it holds it.
func (s *MemStore) ReleaseAwaitPreview(ctx context.Context, turnID, lease string) error {
	_, err := s.awaitWrite("release_await_preview", turnID,
		func(a *store.Await) bool { return a.PreviewLease == lease },
		func(a *store.Await) { a.PreviewLease = "" })
	return err
}

// SettleAwaitPreview makes by the settler of a turn's preview.
func (s *MemStore) SettleAwaitPreview(ctx context.Context, turnID, by string, now, busy time.Time) (store.Await, error) {
	return s.awaitWrite("settle_await_preview", turnID,
		func(a *store.Await) bool {
			return (a.PreviewSettled == "" || a.PreviewSettled == by) && (leaseFree(a, now) || a.PreviewLease == by)
		},
		func(a *store.Await) { a.PreviewSettled, a.PreviewLease, a.PreviewBusy = by, by, ms(busy) })
}

// FinishAwait records the agent's final post.
func (s *MemStore) FinishAwait(ctx context.Context, turnID string, post store.AwaitPost, now time.Time) (store.Await, error) {
	if len(post.Body) == 0 {
		return store.Await{}, fmt.Errorf("await %s: %w: a post with no body", turnID, store.ErrInvalid)
	}
	return s.awaitUpdate("finish_await", turnID,
		func(a *store.Await) bool { return a.Deadline.UnixMilli() > now.UnixMilli() },
		func(a *store.Await) { a.State, a.Post = store.AwaitFinal, post })
}

// AddAwaitPost records a sequential post and the bubbles it was allowed.
func (s *MemStore) AddAwaitPost(ctx context.Context, turnID, postID string, bubbles, prevBubbles int, now time.Time) (store.Await, error) {
	return s.awaitUpdate("add_await_post", turnID,
		func(a *store.Await) bool {
			_, had := a.Posts[postID]
			return a.Deadline.UnixMilli() > now.UnixMilli() && a.Bubbles == prevBubbles && !had
		},
		func(a *store.Await) { a.Bubbles, a.Posts[postID] = prevBubbles+bubbles, bubbles })
}

// ExpireAwait ends an open record whose turn stopped waiting.
func (s *MemStore) ExpireAwait(ctx context.Context, turnID string) (store.Await, error) {
	return s.awaitUpdate("expire_await", turnID, nil, func(a *store.Await) { a.State = store.AwaitExpired })
}

// --- questions

// normQuestion is q as the table keeps it, and its size.
func normQuestion(q store.Question) (store.Question, error) {
	form, err := json.Marshal(q.Form)
	if err != nil {
		return store.Question{}, fmt.Errorf("encode question form: %w", err)
	}
	size := 300 + len(form) + len(q.ID) + len(q.Origin) + len(q.Owner) + len(q.ClosedBy)
	out := q
	out.Form = message.Question{}
	if err := json.Unmarshal(form, &out.Form); err != nil {
		return store.Question{}, err
	}
	out.Answers = nil
	if len(q.Answers) > 0 {
		a, err := json.Marshal(q.Answers)
		if err != nil {
			return store.Question{}, fmt.Errorf("encode question answers: %w", err)
		}
		size += len(a)
		dec := json.NewDecoder(bytes.NewReader(a))
		dec.UseNumber()
		if err := dec.Decode(&out.Answers); err != nil {
			return store.Question{}, err
		}
	}
	out.Selected = slices.Clone(q.Selected)
	if len(out.Selected) == 0 {
		out.Selected = nil
	}
	for _, x := range q.Selected {
		size += len(x) + 3
	}
	out.CreatedAt, out.DueAt, out.ExpiresAt = ms(q.CreatedAt), ms(q.DueAt), sec(q.ExpiresAt)
	if size > maxItemBytes {
		return store.Question{}, fmt.Errorf("memstore: %w: question of %d bytes (ValidationException)", store.ErrInvalid, size)
	}
	return out, nil
}

func (s *MemStore) putQuestion(key string, q store.Question, tok string) {
	qq := q
	it := &item{kind: "question", q: &qq, wt: tok}
	if q.Sweep {
		it.sw, it.swAt = true, q.DueAt
	}
	s.items[key] = it
}

func readQuestion(it *item) store.Question {
	q, _ := normQuestion(*it.q)
	return q
}

// GetQuestion reads a thread's current question.
func (s *MemStore) GetQuestion(ctx context.Context, key string) (store.Question, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.get(key)
	if it == nil || it.q == nil {
		return store.Question{}, fmt.Errorf("question %s: %w", key, store.ErrNotFound)
	}
	return readQuestion(it), nil
}

// AskQuestion makes q its thread's current question.
func (s *MemStore) AskQuestion(ctx context.Context, q store.Question) (store.Question, bool, error) {
	q.Version = 1
	n, err := normQuestion(q)
	if err != nil {
		return store.Question{}, false, err
	}
	tok := token()
	key := store.QuestionKey(q.Thread)
	type res struct {
		q       store.Question
		created bool
		err     error
	}
	r := exec(s, "ask_question", func() res {
		if it := s.get(key); it != nil && it.q != nil {
			cur := readQuestion(it)
			if !(cur.ID != q.ID && cur.State != store.QuestionOpen && !it.sw) {
				if it.wt == tok {
					return res{q: cur, created: true}
				}
				if cur.ID == q.ID {
					return res{q: cur}
				}
				return res{err: &store.QuestionConflictError{Current: cur}}
			}
		}
		s.putQuestion(key, n, tok)
		return res{q: n, created: true}
	})
	return r.q, r.created, r.err
}

// UpdateQuestion writes q over the record at version q.Version.
func (s *MemStore) UpdateQuestion(ctx context.Context, q store.Question) (store.Question, error) {
	expected := q.Version
	q.Version++
	n, err := normQuestion(q)
	if err != nil {
		return store.Question{}, err
	}
	tok := token()
	key := store.QuestionKey(q.Thread)
	type res struct {
		q   store.Question
		err error
	}
	r := exec(s, "update_question", func() res {
		it := s.get(key)
		if it == nil || it.q == nil || it.q.ID != q.ID || it.q.Version != expected {
			if it != nil && it.wt == tok {
				return res{q: n}
			}
			var cur store.Question
			if it != nil && it.q != nil {
				cur = readQuestion(it)
			}
			return res{err: &store.QuestionConflictError{Current: cur}}
		}
		s.putQuestion(key, n, tok)
		return res{q: n}
	})
	return r.q, r.err
}

// --- triage

var _ triage.Counters = (*MemStore)(nil)

// Take implements triage.Counters.
func (s *MemStore) Take(ctx context.Context, t triage.Take) (triage.Taken, error) {
	if t.Key == "" || t.Day == "" || t.Token == "" {
		return triage.Taken{}, errors.New("memstore: take needs a key, a day and a token")
	}
	type res struct {
		tk  triage.Taken
		err error
	}
	r := exec(s, "triage_take", func() res {
		it := s.get(t.Key)
		if it == nil {
			it = &item{kind: "triage", tri: &counterItem{days: map[string]int{}}}
			s.items[t.Key] = it
		}
		c := it.tri
		cnt, hasDay := c.days[t.Day]
		okCool := t.Cooldown <= 0 || c.last.IsZero() || c.last.UnixMilli() <= t.At.Add(-t.Cooldown).UnixMilli()
		okCap := t.Cap <= 0 || !hasDay || cnt < t.Cap
		if c.acc == t.Token || !okCool || !okCap {
			if c.acc == t.Token {
				return res{tk: triage.Taken{Key: t.Key, Day: t.Day, At: t.At, Token: t.Token, Count: cnt, PrevLast: c.pl, PrevToken: c.pt}}
			}
			e := &triage.LimitError{Count: cnt, Last: c.last}
			if !okCool {
				e.Reason = triage.ReasonCooldown
			} else {
				e.Reason = triage.ReasonDailyCap
			}
			return res{err: e}
		}
		tk := triage.Taken{Key: t.Key, Day: t.Day, At: t.At, Token: t.Token, Count: cnt + 1, PrevLast: c.last, PrevToken: c.acc}
		c.pl, c.pt = c.last, c.acc
		c.days[t.Day] = cnt + 1
		c.last, c.acc, c.expiresSec = ms(t.At), t.Token, sec(t.At.Add(t.TTL))
		for _, d := range t.Forget {
			if d != t.Day && d != "" {
				delete(c.days, d)
			}
		}
		return res{tk: tk}
	})
	return r.tk, r.err
}

// GiveBack implements triage.Counters.
func (s *MemStore) GiveBack(ctx context.Context, t triage.Taken) error {
	gb := token()
	return exec(s, "triage_give_back", func() error {
		it := s.get(t.Key)
		if it == nil || it.tri == nil || it.tri.acc != t.Token || it.tri.days[t.Day] < 1 {
			if it != nil && it.tri != nil && it.tri.gb == gb {
				return nil
			}
			return triage.ErrMovedOn
		}
		c := it.tri
		c.days[t.Day]--
		c.gb, c.last, c.acc = gb, ms(t.PrevLast), t.PrevToken
		return nil
	})
}

// GetCounter reads a conversation's counters.
func (s *MemStore) GetCounter(ctx context.Context, key string) (triage.Counter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.get(key)
	if it == nil || it.tri == nil {
		return triage.Counter{}, store.ErrNotFound
	}
	c := triage.Counter{Key: key, Days: maps.Clone(it.tri.days), Last: it.tri.last, Token: it.tri.acc}
	if !it.tri.expiresSec.IsZero() {
		c.ExpiresAt = it.tri.expiresSec
	}
	return c, nil
}

// --- previews

// RecordPreview implements store.Previews: one unconditional put.
func (s *MemStore) RecordPreview(ctx context.Context, p message.Preview, now time.Time, ttl time.Duration) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode preview: %w", err)
	}
	return exec(s, "record_preview", func() error {
		s.items[store.PreviewKey(p.Key)] = &item{kind: "preview", body: b, expires: sec(now.Add(ttl))}
		return nil
	})
}

// RecordAwaitPreview writes a preview's record while the update's lease
// holds on the turn's await record, atomically as DynamoDB's transaction.
func (s *MemStore) RecordAwaitPreview(ctx context.Context, turnID, lease string, p message.Preview, now time.Time, ttl time.Duration) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode preview: %w", err)
	}
	return exec(s, "record_await_preview", func() error {
		if it := s.get(store.AwaitKey(turnID)); it == nil || it.aw == nil || it.aw.PreviewLease != lease {
			return fmt.Errorf("record preview of await %s: the update's lease ended: %w", turnID, store.ErrConflict)
		}
		s.items[store.PreviewKey(p.Key)] = &item{kind: "preview", body: b, expires: sec(now.Add(ttl))}
		return nil
	})
}

// GetPreview implements store.Previews.
func (s *MemStore) GetPreview(ctx context.Context, key string, now time.Time) (message.Preview, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.get(store.PreviewKey(key))
	if it == nil || it.kind != "preview" || it.expires.Unix() < now.Unix() {
		return message.Preview{}, store.ErrNotFound
	}
	var p message.Preview
	if err := json.Unmarshal(it.body, &p); err != nil {
		return message.Preview{}, fmt.Errorf("decode preview %s: %w", key, err)
	}
	return p, nil
}

// DropPreview implements store.Previews.
func (s *MemStore) DropPreview(ctx context.Context, key string) error {
	return exec(s, "drop_preview", func() error {
		delete(s.items, store.PreviewKey(key))
		return nil
	})
}
