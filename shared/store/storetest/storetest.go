package storetest

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

// Store is everything the functions need of a state store.
type Store interface {
	Claim(ctx context.Context, key string, spec store.ClaimSpec) (store.Claim, error)
	Settle(ctx context.Context, key, owner string, state store.ClaimState, reason string, now time.Time, ttl time.Duration) error
	Release(ctx context.Context, key, owner string, r store.ReleaseSpec) error
	Forget(ctx context.Context, key, owner string) error
	GetClaim(ctx context.Context, key string, now time.Time) (store.Claim, error)
	CreateIntent(ctx context.Context, in intent.Intent) (intent.Intent, bool, error)
	CommitIntent(ctx context.Context, in intent.Intent, owner, outcome string, now time.Time) (intent.Intent, bool, error)
	GetIntent(ctx context.Context, id string) (intent.Intent, error)
	Apply(ctx context.Context, id string, t intent.Transition) (intent.Intent, error)
	Defer(ctx context.Context, key, owner string, body []byte, due, now time.Time, ttl time.Duration) error
	Undefer(ctx context.Context, key string, due time.Time) error
	DueForSweep(ctx context.Context, now time.Time, limit int) ([]store.SweepEntry, error)
	Reschedule(ctx context.Context, key string, from, to time.Time) error
	Unsweep(ctx context.Context, key string, from time.Time) error
	GetQuestion(ctx context.Context, key string) (store.Question, error)
	AskQuestion(ctx context.Context, q store.Question) (store.Question, bool, error)
	UpdateQuestion(ctx context.Context, q store.Question) (store.Question, error)
	OpenAwait(ctx context.Context, a store.Await) (store.Await, bool, error)
	GetAwait(ctx context.Context, turnID string) (store.Await, error)
	SetAwaitHandle(ctx context.Context, turnID, handle string) error
	AdoptAwait(ctx context.Context, turnID, owner, handle string, preview message.Preview) (store.Await, error)
	TakeAwaitPreview(ctx context.Context, turnID string, t store.PreviewTake) (store.Await, error)
	ReleaseAwaitPreview(ctx context.Context, turnID, lease string) error
	SettleAwaitPreview(ctx context.Context, turnID, by string, now, busy time.Time) (store.Await, error)
	RecordAwaitPreview(ctx context.Context, turnID, lease string, p message.Preview, now time.Time, ttl time.Duration) error
	FinishAwait(ctx context.Context, turnID string, post store.AwaitPost, now time.Time) (store.Await, error)
	ExpireAwait(ctx context.Context, turnID string) (store.Await, error)
	AddAwaitPost(ctx context.Context, turnID, postID string, bubbles, prevBubbles int, now time.Time) (store.Await, error)
	Attention(ctx context.Context, limit int) ([]store.AttentionEntry, error)
	store.Previews
}

// Exercise runs the suite. newStore returns an empty store for one test.
func Exercise(t *testing.T, newStore func(t *testing.T) Store) {
	t.Run("Claims", func(t *testing.T) { t.Parallel(); claims(t, newStore(t)) })
	t.Run("ClaimRace", func(t *testing.T) { t.Parallel(); claimRace(t, newStore(t)) })
	t.Run("ClaimSettledAtOnce", func(t *testing.T) { t.Parallel(); claimSettled(t, newStore(t)) })
	t.Run("ClaimKeepsItsDigest", func(t *testing.T) { t.Parallel(); claimDigest(t, newStore(t)) })
	t.Run("TurnClaimSaysWhoseTurn", func(t *testing.T) { t.Parallel(); turnClaim(t, newStore(t)) })
	t.Run("Intents", func(t *testing.T) { t.Parallel(); intents(t, newStore(t)) })
	t.Run("LeaseRace", func(t *testing.T) { t.Parallel(); leaseRace(t, newStore(t)) })
	t.Run("TransitionsMatchModel", func(t *testing.T) { t.Parallel(); model(t, newStore(t)) })
	t.Run("ClaimBecomesTheIntent", func(t *testing.T) { t.Parallel(); claimBecomesIntent(t, newStore(t)) })
	t.Run("OversizedIntentIsInvalid", func(t *testing.T) { t.Parallel(); oversized(t, newStore(t)) })
	t.Run("ContentKinds", func(t *testing.T) { t.Parallel(); contentKinds(t, newStore(t)) })
	t.Run("SweepList", func(t *testing.T) { t.Parallel(); sweepList(t, newStore(t)) })
	t.Run("Deferred", func(t *testing.T) { t.Parallel(); deferred(t, newStore(t)) })
	t.Run("Triage", func(t *testing.T) { t.Parallel(); triageSuite(t, newStore) })
	t.Run("Questions", func(t *testing.T) { t.Parallel(); questions(t, newStore(t)) })
	t.Run("Awaits", func(t *testing.T) { t.Parallel(); awaits(t, newStore(t)) })
	t.Run("AwaitPreviews", func(t *testing.T) { t.Parallel(); awaitPreviews(t, newStore(t)) })
	t.Run("AwaitPreviewLease", func(t *testing.T) { t.Parallel(); awaitPreviewLease(t, newStore(t)) })
	t.Run("OperatorDecisions", func(t *testing.T) { t.Parallel(); operatorDecisions(t, newStore(t)) })
	t.Run("Previews", func(t *testing.T) { t.Parallel(); previews(t, newStore(t)) })
}

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func spec(owner string, now time.Time) store.ClaimSpec {
	return store.ClaimSpec{Owner: owner, Now: now, Lease: 30 * time.Second, TTL: 7 * 24 * time.Hour}
}

func held(t *testing.T, err error) store.Claim {
	t.Helper()
	var h *store.ClaimHeldError
	if !errors.As(err, &h) || !errors.Is(err, store.ErrConflict) {
		t.Fatalf("want ClaimHeldError wrapping ErrConflict, got %v", err)
	}
	return h.Current
}

// claimSettled: a claim written in a final state at once (ingress's
// enqueued) is live for everyone, and its owner can forget it, after which
// the key is claimable anew.
func claimSettled(t *testing.T, s Store) {
	ctx := context.Background()
	key := "evt#test#acct#settled"
	sp := spec("a", t0)
	sp.State = store.ClaimEnqueued
	c, err := s.Claim(ctx, key, sp)
	if err != nil || c.State != store.ClaimEnqueued || c.Owner != "a" || !c.ExpiresAt.Equal(t0.Add(7*24*time.Hour)) {
		t.Fatalf("claim enqueued at once: %+v, %v", c, err)
	}
	later := spec("b", t0.Add(time.Minute)) // well past any lease
	if cur := held(t, func() error { _, err := s.Claim(ctx, key, later); return err }()); cur.State != store.ClaimEnqueued {
		t.Fatalf("held = %+v, want enqueued", cur)
	}
	if err := s.Forget(ctx, key, "b"); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("forget by a non-owner: want conflict, got %v", err)
	}
	if err := s.Forget(ctx, key, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetClaim(ctx, key, t0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after forget: %v, want ErrNotFound", err)
	}
	if c, err := s.Claim(ctx, key, later); err != nil || c.Owner != "b" || c.State != store.ClaimPending {
		t.Fatalf("claim after forget: %+v, %v", c, err)
	}
}

// claimDigest: a claim keeps the digest it was written with, in either
// form, and a refused claim answers with it, so the caller can tell a retry
// from another payload under the same key.
func claimDigest(t *testing.T, s Store) {
	ctx := context.Background()
	for _, state := range []store.ClaimState{store.ClaimEnqueued, ""} {
		key := "evt#test#acct#digest-" + string(state)
		sp := spec("a", t0)
		sp.State, sp.Digest = state, "d1"
		if _, err := s.Claim(ctx, key, sp); err != nil {
			t.Fatal(err)
		}
		again := spec("b", t0)
		again.State, again.Digest = state, "d2"
		if cur := held(t, func() error { _, err := s.Claim(ctx, key, again); return err }()); cur.Digest != "d1" {
			t.Errorf("state %q: held claim's digest %q, want d1", state, cur.Digest)
		}
		if c, err := s.GetClaim(ctx, key, t0); err != nil || c.Digest != "d1" {
			t.Errorf("state %q: read %+v, %v; want digest d1", state, c, err)
		}
	}
}

// turnClaim: a turn's claim keeps its thread and origin, so its id alone
// says where the turn goes; its intent, committed onto it, keeps them.
func turnClaim(t *testing.T, s Store) {
	ctx := context.Background()
	th := message.Thread{Platform: message.Telegram, Account: "1", Chat: "42", Thread: "7"}
	in := newIntent("turn-claim", 1)
	in.Thread, in.Origin = th, "evt#telegram#1#9"
	sp := spec("a", t0)
	sp.Thread, sp.Origin = th, in.Origin
	if _, err := s.Claim(ctx, store.IntentKey(in.ID), sp); err != nil {
		t.Fatal(err)
	}
	c, err := s.GetClaim(ctx, store.IntentKey(in.ID), t0)
	if err != nil || c.Thread != th || c.Origin != in.Origin || c.State != store.ClaimPending {
		t.Fatalf("claim %+v, %v; want pending with its thread and origin", c, err)
	}
	if cur := held(t, func() error { _, err := s.Claim(ctx, store.IntentKey(in.ID), spec("b", t0)); return err }()); cur.Thread != th {
		t.Fatalf("held claim %+v, want its thread", cur)
	}
	if _, _, err := s.CommitIntent(ctx, in, "a", "enqueued", t0); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetIntent(ctx, in.ID); err != nil || got.Thread != th || got.Origin != in.Origin {
		t.Fatalf("intent %+v, %v", got, err)
	}
	plain := "evt#test#acct#plain"
	if _, err := s.Claim(ctx, plain, spec("a", t0)); err != nil {
		t.Fatal(err)
	}
	if c, err := s.GetClaim(ctx, plain, t0); err != nil || c.Thread != (message.Thread{}) || c.Origin != "" {
		t.Fatalf("a claim that names no turn: %+v, %v", c, err)
	}
}

func claims(t *testing.T, s Store) {
	ctx := context.Background()
	key := "evt#test#acct#1"

	c, err := s.Claim(ctx, key, spec("a", t0))
	if err != nil {
		t.Fatalf("first claim: %v", err)
	}
	if c.State != store.ClaimPending || c.Owner != "a" || c.Attempts != 1 || !c.LeaseUntil.Equal(t0.Add(30*time.Second)) {
		t.Fatalf("first claim = %+v", c)
	}
	cur := held(t, func() error { _, err := s.Claim(ctx, key, spec("b", t0.Add(10*time.Second))); return err }())
	if cur.State != store.ClaimPending || cur.Owner != "a" {
		t.Fatalf("held claim = %+v, want pending by a", cur)
	}
	if err := s.Settle(ctx, key, "b", store.ClaimEnqueued, "", t0, time.Hour); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("settle by a non-owner: want conflict, got %v", err)
	}
	if err := s.Release(ctx, key, "b", store.ReleaseSpec{}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("release by a non-owner: want conflict, got %v", err)
	}

	// The lease ends: another owner takes over, and the first can no longer settle.
	c, err = s.Claim(ctx, key, spec("b", t0.Add(31*time.Second)))
	if err != nil {
		t.Fatalf("claim after lease end: %v", err)
	}
	if c.Owner != "b" || c.Attempts != 2 {
		t.Fatalf("takeover = %+v, want owner b, attempts 2", c)
	}
	if err := s.Settle(ctx, key, "a", store.ClaimEnqueued, "", t0, time.Hour); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("settle by the ousted owner: want conflict, got %v", err)
	}
	if err := s.Settle(ctx, key, "b", store.ClaimSuppressed, "cooldown", t0.Add(32*time.Second), 24*time.Hour); err != nil {
		t.Fatalf("settle: %v", err)
	}
	cur = held(t, func() error { _, err := s.Claim(ctx, key, spec("c", t0.Add(23*time.Hour))); return err }())
	if cur.State != store.ClaimSuppressed || cur.Reason != "cooldown" {
		t.Fatalf("settled claim = %+v", cur)
	}
	got, err := s.GetClaim(ctx, key, t0.Add(time.Hour))
	if err != nil || got.State != store.ClaimSuppressed {
		t.Fatalf("GetClaim = %+v, %v", got, err)
	}
	// Expired (TTL deletes lag): readers and claimers treat it as absent.
	if _, err := s.GetClaim(ctx, key, t0.Add(25*time.Hour)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetClaim after expiry: want ErrNotFound, got %v", err)
	}
	if _, err := s.Claim(ctx, key, spec("c", t0.Add(25*time.Hour))); err != nil {
		t.Fatalf("claim after expiry: %v", err)
	}

	// Release makes the key claimable at once, and the next claim knows an
	// earlier attempt ran.
	key2 := "turn#x"
	if _, err := s.Claim(ctx, key2, spec("a", t0)); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, key2, "a", store.ReleaseSpec{}); err != nil {
		t.Fatalf("release: %v", err)
	}
	if c, err := s.GetClaim(ctx, key2, t0); err != nil || c.Live(t0) {
		t.Fatalf("GetClaim after release = %+v, %v; want a claim that is no longer live", c, err)
	}
	c, err = s.Claim(ctx, key2, spec("b", t0))
	if err != nil {
		t.Fatalf("claim after release: %v", err)
	}
	if c.Attempts != 2 || c.Owner != "b" {
		t.Fatalf("claim after release = %+v, want attempts 2 by b", c)
	}
	if err := s.Release(ctx, key2, "a", store.ReleaseSpec{}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("release by the previous owner: want conflict, got %v", err)
	}

	// Released until a retry time: held until then, claimable from then.
	key3 := "turn#y"
	if _, err := s.Claim(ctx, key3, spec("a", t0)); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, key3, "a", store.ReleaseSpec{Until: t0.Add(14 * time.Hour), Note: "triage:2026-11-29"}); err != nil {
		t.Fatalf("release until: %v", err)
	}
	cur = held(t, func() error { _, err := s.Claim(ctx, key3, spec("b", t0.Add(12*time.Hour))); return err }())
	if cur.State != store.ClaimPending || !cur.LeaseUntil.Equal(t0.Add(14*time.Hour)) {
		t.Fatalf("claim before the retry time = %+v, want held until it", cur)
	}
	if c, err := s.Claim(ctx, key3, spec("b", t0.Add(14*time.Hour+time.Millisecond))); err != nil || c.Attempts != 2 || c.Note != "triage:2026-11-29" {
		t.Fatalf("claim at the retry time = %+v, %v; want taken, attempts 2, the note kept for it", c, err)
	}
}

func claimRace(t *testing.T, s Store) {
	ctx := context.Background()
	const n = 20
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, err := s.Claim(ctx, "evt#race", spec(fmt.Sprint(i), t0))
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, store.ErrConflict):
			default:
				t.Errorf("claim %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d of %d concurrent claims won, want exactly 1", wins.Load(), n)
	}
}

func newIntent(id string, units int) intent.Intent {
	in := intent.Intent{
		ID: id, Origin: "evt#test#a#" + id, CreatedAt: t0, ExpiresAt: t0.Add(30 * 24 * time.Hour),
		Thread: message.Thread{Platform: message.Telegram, Account: "1", Chat: "-100", Thread: "7"},
	}
	for i := range units {
		in.Units = append(in.Units, intent.Unit{ID: fmt.Sprintf("b%d#1", i+1), Content: message.Text(fmt.Sprintf("bubble %d\nline two", i+1)), State: message.UnitPending})
	}
	return in
}

// due lists the keys due at now.
func due(t *testing.T, s Store, now time.Time) []string {
	t.Helper()
	es, err := s.DueForSweep(context.Background(), now, 100)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range es {
		keys = append(keys, e.Key+"@"+e.At.Sub(t0).String())
	}
	return keys
}

// sweepList: the sweeper's list holds exactly the items that may need
// mending, each due when it should have made progress: a sweeping claim from
// its claim to its settle, an intent from its creation to its last unit's
// end; never an ordinary claim.
func sweepList(t *testing.T, s Store) {
	ctx := context.Background()
	if _, err := s.Claim(ctx, "evt#plain", spec("a", t0)); err != nil {
		t.Fatal(err)
	}
	sw := spec("a", t0)
	sw.Sweep = true
	if _, err := s.Claim(ctx, "turn#a", sw); err != nil {
		t.Fatal(err)
	}
	// Lease 30s + grace.
	if got := due(t, s, t0.Add(30*time.Second+store.SweepGrace)); !slices.Equal(got, []string{"turn#a@2m30s"}) {
		t.Fatalf("due = %v, want only the sweeping claim, at its lease end + grace", got)
	}
	if got := due(t, s, t0.Add(time.Minute)); len(got) != 0 {
		t.Fatalf("due before its time = %v", got)
	}
	if err := s.Release(ctx, "turn#a", "a", store.ReleaseSpec{Until: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if got := due(t, s, t0.Add(2*time.Hour)); !slices.Equal(got, []string{"turn#a@1h2m0s"}) {
		t.Fatalf("due after a release until a retry time = %v, want that time + grace", got)
	}
	c, err := s.Claim(ctx, "turn#a", spec("b", t0.Add(time.Hour+time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(ctx, "turn#a", c.Owner, store.ClaimDone, "", t0.Add(time.Hour+2*time.Second), time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := due(t, s, t0.Add(48*time.Hour)); len(got) != 0 {
		t.Fatalf("due after settling = %v, want none", got)
	}

	in := newIntent("sw1", 2)
	in.SweepAt = t0.Add(intent.SweepGrace)
	if _, _, err := s.CreateIntent(ctx, in); err != nil {
		t.Fatal(err)
	}
	if got := due(t, s, t0.Add(time.Hour)); !slices.Equal(got, []string{"int#sw1@2m0s"}) {
		t.Fatalf("due = %v, want the open intent", got)
	}
	// A unit parked until a retry time moves the intent to that time + grace.
	cur, err := s.Apply(ctx, "sw1", intent.Lease(in.Units[0], 0, t0, t0.Add(time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	cur, err = s.Apply(ctx, "sw1", intent.MarkRetryable(cur.Units[0], 0, t0, t0.Add(10*time.Minute), message.FailRateLimit, "429"))
	if err != nil || !cur.SweepAt.Equal(t0.Add(12*time.Minute)) {
		t.Fatalf("after a park: sweep at %v, %v; want the retry time + grace", cur.SweepAt, err)
	}
	if got := due(t, s, t0.Add(time.Hour)); !slices.Equal(got, []string{"int#sw1@12m0s"}) {
		t.Fatalf("due = %v", got)
	}
	// The scheduler's compare-and-set: a stale from is refused.
	if err := s.Reschedule(ctx, "int#sw1", t0, t0.Add(time.Hour)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("reschedule from a stale time = %v, want ErrConflict", err)
	}
	if err := s.Reschedule(ctx, "int#sw1", t0.Add(12*time.Minute), t0.Add(20*time.Minute)); err != nil {
		t.Fatal(err)
	}
	// Each unit's end; the last one's takes it off the list.
	for i := range 2 {
		cur, err = s.Apply(ctx, "sw1", intent.Lease(cur.Units[i], i, t0, t0.Add(time.Minute)))
		if err != nil {
			t.Fatal(err)
		}
		cur, err = s.Apply(ctx, "sw1", cur.Closing(intent.MarkSent(cur.Units[i], i, t0, message.Receipt{MessageIDs: []string{"m"}})))
		if err != nil {
			t.Fatal(err)
		}
		if open := len(due(t, s, t0.Add(time.Hour))) == 1; open != (i == 0) {
			t.Fatalf("after unit %d: on the list %v", i, open)
		}
	}
	if got, err := s.GetIntent(ctx, "sw1"); err != nil || !got.SweepAt.IsZero() {
		t.Fatalf("closed intent sweep at %v, %v", got.SweepAt, err)
	}
	if err := s.Unsweep(ctx, "int#sw1", t0.Add(20*time.Minute)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("unsweep of an item off the list = %v, want ErrConflict", err)
	}
}

// deferred: a deferred claim holds its event until it is due, is on the
// sweeper's list for then, answers redeliveries as settled, and undefers once.
func deferred(t *testing.T, s Store) {
	ctx := context.Background()
	key := "evt#events#cron#d1"
	if _, err := s.Claim(ctx, key, spec("a", t0)); err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"version":"parley.inbound.v1"}`)
	if err := s.Defer(ctx, key, "b", body, t0.Add(14*time.Hour), t0, 7*24*time.Hour); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("defer by a non-owner = %v, want ErrConflict", err)
	}
	if err := s.Defer(ctx, key, "a", body, t0.Add(14*time.Hour), t0, 7*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	cur := held(t, func() error { _, err := s.Claim(ctx, key, spec("c", t0.Add(time.Hour))); return err }())
	if cur.State != store.ClaimDeferred || string(cur.Body) != string(body) || !cur.DueAt.Equal(t0.Add(14*time.Hour)) {
		t.Fatalf("deferred claim = %+v", cur)
	}
	if got := due(t, s, t0.Add(14*time.Hour)); !slices.Equal(got, []string{key + "@14h0m0s"}) {
		t.Fatalf("due = %v, want the deferred claim at its time", got)
	}
	if err := s.Undefer(ctx, key, t0.Add(13*time.Hour)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("undefer with another due time = %v, want ErrConflict", err)
	}
	if err := s.Undefer(ctx, key, t0.Add(14*time.Hour)); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetClaim(ctx, key, t0.Add(15*time.Hour))
	if err != nil || got.State != store.ClaimEnqueued || got.Body != nil {
		t.Fatalf("undeferred claim = %+v, %v; want enqueued, its body dropped", got, err)
	}
	if got := due(t, s, t0.Add(48*time.Hour)); len(got) != 0 {
		t.Fatalf("due after undefer = %v", got)
	}
	if err := s.Undefer(ctx, key, t0.Add(14*time.Hour)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second undefer = %v, want ErrConflict", err)
	}
}

// oversized: an intent or a question over the store's item limit (DynamoDB:
// 400 KB) is refused as store.ErrInvalid, which callers never retry, and writes nothing.
func oversized(t *testing.T, s Store) {
	ctx := context.Background()
	in := newIntent("big", 1)
	// Text that does not compress: a store may keep text compressed, and
	// then only what is left counts.
	noise := make([]byte, 450<<10)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(noise)
	in.Units[0].Content = message.Text(base64.StdEncoding.EncodeToString(noise))
	if _, _, err := s.CreateIntent(ctx, in); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("CreateIntent of an intent of 600 KiB of text = %v, want store.ErrInvalid", err)
	}
	if _, err := s.GetIntent(ctx, "big"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetIntent after the refusal = %v, want ErrNotFound", err)
	}
	// A question too: its form is stored as JSON, each '<' six bytes.
	th := message.Thread{Platform: message.Telegram, Account: "1", Chat: "big"}
	q := store.Question{Thread: th, ID: "big", Short: "big", State: store.QuestionOpen, CreatedAt: t0, DueAt: t0.Add(time.Hour), ExpiresAt: t0.Add(48 * time.Hour),
		Form: message.Question{Message: "?", Fields: []message.Field{{ID: "q0", Key: "k", Kind: message.FieldText, Description: strings.Repeat("<", 70_000)}}}}
	if _, _, err := s.AskQuestion(ctx, q); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("AskQuestion of a 420 KB question = %v, want store.ErrInvalid", err)
	}
	if _, err := s.GetQuestion(ctx, store.QuestionKey(th)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetQuestion after the refusal = %v, want ErrNotFound", err)
	}
}

// claimBecomesIntent: a turn claims its intent's key, and its commit writes
// the intent onto the claim and settles it in one write, only while the
// claim is its own; before the commit the item is no intent to anyone.
func claimBecomesIntent(t *testing.T, s Store) {
	ctx := context.Background()
	in := newIntent("merged", 2)
	in.SweepAt = t0.Add(2 * time.Minute)
	key := store.IntentKey(in.ID)
	sp := spec("a", t0)
	sp.Sweep = true
	if _, err := s.Claim(ctx, key, sp); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetIntent(ctx, in.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetIntent of a claim not committed = %v, want ErrNotFound", err)
	}
	if _, err := s.Apply(ctx, in.ID, intent.Lease(in.Units[0], 0, t0, t0.Add(time.Minute))); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Apply on a claim not committed = %v, want ErrNotFound", err)
	}
	if _, _, err := s.CreateIntent(ctx, in); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("CreateIntent over a live claim = %v, want a conflict", err)
	}
	if _, _, err := s.CommitIntent(ctx, in, "b", "envelope", t0); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("CommitIntent by another owner = %v, want a conflict", err)
	}
	if got, created, err := s.CommitIntent(ctx, in, "a", "envelope", t0.Add(time.Second)); err != nil || !created || len(got.Units) != 2 {
		t.Fatalf("CommitIntent = %v, created %v, %d units", err, created, len(got.Units))
	}
	c, err := s.GetClaim(ctx, key, t0.Add(2*time.Second))
	if err != nil || c.State != store.ClaimDone || c.Reason != "envelope" || c.Attempts != 1 || !c.ExpiresAt.Equal(in.ExpiresAt.Truncate(time.Second)) {
		t.Fatalf("claim after the commit = %+v, %v; want done with the intent's expiry", c, err)
	}
	if _, err := s.Claim(ctx, key, spec("c", t0.Add(time.Hour))); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("Claim of a committed turn = %v, want it held", err)
	}
	got, err := s.GetIntent(ctx, in.ID)
	if err != nil || !reflect.DeepEqual(got.Units, in.Units) || got.Thread != in.Thread {
		t.Fatalf("GetIntent = %+v, %v; want the committed plan", got, err)
	}
	// The claim's place on the sweeper's list (its lease's end plus the
	// grace) carries over to the intent: the index is not written again.
	if keys := due(t, s, t0.Add(time.Hour)); !slices.Equal(keys, []string{key + "@2m30s"}) {
		t.Fatalf("due after the commit = %v, want the intent at the claim's sweep time", keys)
	}
	if again, created, err := s.CommitIntent(ctx, newIntent("merged", 1), "a", "envelope", t0); err != nil || created || len(again.Units) != 2 {
		t.Fatalf("second CommitIntent = %d units, created %v, %v; want the first plan back", len(again.Units), created, err)
	}
	if _, err := s.Apply(ctx, in.ID, intent.Lease(got.Units[0], 0, t0, t0.Add(time.Minute))); err != nil {
		t.Fatalf("Apply on the committed intent: %v", err)
	}
}

// contentKinds: a unit's content comes back as it went in, whatever its
// kind, with the intent's reply context; a unit with no content is refused
// (store.ErrInvalid) and nothing is written.
func contentKinds(t *testing.T, s Store) {
	ctx := context.Background()
	in := newIntent("kinds", 2)
	in.Units[1].Content = message.Content{Prompt: &message.Prompt{Text: "Which seat?", Options: []message.Choice{{Label: "Window", Data: "q:1:0:0"}, {Label: "Aisle", Data: "q:1:0:1", Selected: true}}, Actions: []message.Choice{{Label: "Skip", Data: "q:1:skip"}}}}
	in.ReplyContext = &message.ReplyContext{Token: "reply-token", Until: t0.Add(time.Minute)}
	in.Units[1].Parley = true
	in.Units[0].Replaces = "other#b1#1"
	if _, _, err := s.CreateIntent(ctx, in); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetIntent(ctx, "kinds")
	if err != nil {
		t.Fatal(err)
	}
	if got.Units[0].Content != in.Units[0].Content || got.Units[0].Content.Kind() != message.ContentText {
		t.Errorf("text unit read back as %+v", got.Units[0].Content)
	}
	if got.Units[0].Replaces != "other#b1#1" || got.Units[1].Replaces != "" {
		t.Errorf("replacements read back as %q, %q", got.Units[0].Replaces, got.Units[1].Replaces)
	}
	if got.Units[0].Parley || !got.Units[1].Parley {
		t.Errorf("origins read back as %v, %v; want agent, Parley", got.Units[0].Parley, got.Units[1].Parley)
	}
	if q := got.Units[1].Content.Prompt; q == nil || !reflect.DeepEqual(*q, *in.Units[1].Content.Prompt) {
		t.Errorf("question unit read back as %+v", got.Units[1].Content)
	}
	if rc := got.ReplyContext; rc == nil || rc.Token != "reply-token" || !rc.Until.Equal(t0.Add(time.Minute)) {
		t.Errorf("reply context read back as %+v", got.ReplyContext)
	}
	empty := newIntent("empty", 1)
	empty.Units[0].Content = message.Content{}
	if _, _, err := s.CreateIntent(ctx, empty); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("a unit without content: %v, want store.ErrInvalid", err)
	}
	if _, err := s.GetIntent(ctx, "empty"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after the refusal: %v, want ErrNotFound", err)
	}
}

func intents(t *testing.T, s Store) {
	ctx := context.Background()
	in := newIntent("i1", 3)
	in.Units[0].ReplyTo = "55"

	if _, err := s.GetIntent(ctx, "i1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetIntent before create: want ErrNotFound, got %v", err)
	}
	got, created, err := s.CreateIntent(ctx, in)
	if err != nil || !created {
		t.Fatalf("create: created=%v err=%v", created, err)
	}
	other := newIntent("i1", 1)
	got, created, err = s.CreateIntent(ctx, other)
	if err != nil || created {
		t.Fatalf("second create: created=%v err=%v", created, err)
	}
	if len(got.Units) != 3 || got.Units[0].ReplyTo != "55" || got.Units[1].Content.Text != "bubble 2\nline two" {
		t.Fatalf("second create returned %+v, want the first intent", got)
	}
	read, err := s.GetIntent(ctx, "i1")
	if err != nil {
		t.Fatal(err)
	}
	if read.Thread != in.Thread || read.Origin != in.Origin || !read.CreatedAt.Equal(t0) || len(read.Units) != 3 {
		t.Fatalf("read back %+v", read)
	}

	now := t0.Add(time.Minute)
	// Unit 1 may not overtake unit 0.
	if _, err := s.Apply(ctx, "i1", intent.Lease(read.Units[1], 1, now, now.Add(time.Minute))); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("lease of unit 1 before unit 0 is done: want conflict, got %v", err)
	}
	after, err := s.Apply(ctx, "i1", intent.Lease(read.Units[0], 0, now, now.Add(time.Minute)))
	if err != nil {
		t.Fatalf("lease: %v", err)
	}
	u := after.Units[0]
	if u.State != message.UnitSending || u.Attempt != 1 || !u.LeaseUntil.Equal(now.Add(time.Minute)) {
		t.Fatalf("leased unit = %+v", u)
	}
	// A stale attempt cannot commit.
	var ce *store.IntentConflictError
	_, err = s.Apply(ctx, "i1", intent.MarkSent(read.Units[0], 0, now, message.Receipt{MessageIDs: []string{"x"}}))
	if !errors.As(err, &ce) || ce.Current.Units[0].Attempt != 1 {
		t.Fatalf("stale MarkSent: want IntentConflictError with the current intent, got %v", err)
	}
	after, err = s.Apply(ctx, "i1", intent.MarkSent(u, 0, now, message.Receipt{MessageIDs: []string{"101", "102"}}))
	if err != nil {
		t.Fatal(err)
	}
	if u := after.Units[0]; u.State != message.UnitSent || len(u.Receipt) != 2 || u.Receipt[1] != "102" || !u.SentAt.Equal(now) {
		t.Fatalf("sent unit = %+v", u)
	}

	// Unit 1: lease, then abandoned: unknown only once its lease has ended.
	after, err = s.Apply(ctx, "i1", intent.Lease(after.Units[1], 1, now, now.Add(time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, "i1", intent.MarkUnknown(after.Units[1], 1, now.Add(30*time.Second), "abandoned", true)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("MarkUnknown while the lease runs: want conflict, got %v", err)
	}
	later := now.Add(2 * time.Minute)
	after, err = s.Apply(ctx, "i1", intent.MarkUnknown(after.Units[1], 1, later, "abandoned", true))
	if err != nil {
		t.Fatal(err)
	}
	if u := after.Units[1]; u.State != message.UnitUnknown || u.FailureClass != message.FailUnknown {
		t.Fatalf("unknown unit = %+v", u)
	}
	after, err = s.Apply(ctx, "i1", intent.Resend(after.Units[1], 1, later, later.Add(time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	if u := after.Units[1]; u.State != message.UnitSending || u.Attempt != 2 || !u.Resent {
		t.Fatalf("resent unit = %+v", u)
	}
	after, err = s.Apply(ctx, "i1", intent.MarkRetryable(after.Units[1], 1, later, later.Add(3*time.Second), message.FailRateLimit, "Too Many Requests"))
	if err != nil {
		t.Fatal(err)
	}
	if u := after.Units[1]; u.State != message.UnitPending || u.FailureClass != message.FailRateLimit || u.Attempt != 2 ||
		!u.NextAt.Equal(later.Add(3*time.Second)) {
		t.Fatalf("retryable unit = %+v", u)
	}
	after, err = s.Apply(ctx, "i1", intent.MarkFailed(after.Units[1], 1, later, message.FailAuth, "Unauthorized"))
	if err != nil {
		t.Fatal(err)
	}
	if u := after.Units[1]; u.State != message.UnitFailed || u.FailureReason != "Unauthorized" {
		t.Fatalf("failed unit = %+v", u)
	}
	// Unit 2 goes once unit 1 is terminal, even failed.
	if _, err := s.Apply(ctx, "i1", intent.Lease(after.Units[2], 2, later, later.Add(time.Minute))); err != nil {
		t.Fatalf("lease after a failed predecessor: %v", err)
	}
	if _, err := s.Apply(ctx, "nope", intent.Lease(after.Units[0], 0, later, later)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("transition on a missing intent: want ErrNotFound, got %v", err)
	}
}

func leaseRace(t *testing.T, s Store) {
	ctx := context.Background()
	in := newIntent("race", 1)
	if _, _, err := s.CreateIntent(ctx, in); err != nil {
		t.Fatal(err)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			_, err := s.Apply(ctx, "race", intent.Lease(in.Units[0], 0, t0, t0.Add(time.Minute)))
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, store.ErrConflict):
			default:
				t.Errorf("lease: %v", err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d concurrent leases won, want exactly 1", wins.Load())
	}
}

// model applies random transitions to the store and to the in-memory model
// (Intent.Allowed, Intent.Apply) and requires the same verdicts and states.
func model(t *testing.T, s Store) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	want := newIntent("model", 3)
	if _, _, err := s.CreateIntent(ctx, want); err != nil {
		t.Fatal(err)
	}
	now := t0
	for step := range 160 {
		now = now.Add(time.Duration(rng.IntN(90)) * time.Second)
		i := rng.IntN(len(want.Units))
		u := want.Units[i]
		if rng.IntN(4) == 0 { // sometimes act on a stale view
			u.Attempt = max(u.Attempt-1, 0)
		}
		var tr intent.Transition
		switch rng.IntN(11) {
		case 0:
			tr = intent.Lease(u, i, now, now.Add(time.Minute))
		case 1:
			tr = intent.MarkSent(u, i, now, message.Receipt{MessageIDs: []string{fmt.Sprint(step)}})
		case 2:
			tr = intent.MarkRetryable(u, i, now, now.Add(time.Second), message.FailTransient, "HTTP 502")
		case 3:
			tr = intent.MarkFailed(u, i, now, message.FailPermission, "Forbidden")
		case 4:
			tr = intent.MarkUnknown(u, i, now, "timeout", rng.IntN(2) == 0)
		case 5:
			tr = intent.Resend(u, i, now, now.Add(time.Minute))
		case 6:
			tr = intent.GiveUp(u, i, now, "out of resends")
		case 7:
			tr = intent.Report(u, i, now, message.StatusRead)
		case 8:
			tr = intent.MarkUndelivered(u, i, now, message.FailPermission, "131047")
		case 9:
			if rng.IntN(2) == 0 {
				tr = intent.OperatorResend(u, i, now)
			} else {
				tr = intent.Abandon(u, i, now, "an operator gave up")
			}
		default:
			tr = intent.Lease(u, i, now, now.Add(time.Minute))
		}
		allowed := want.Allowed(tr)
		got, err := s.Apply(ctx, "model", tr)
		if allowed != (err == nil) {
			t.Fatalf("step %d %s on unit %d (%+v): model allowed=%v, store err=%v", step, tr.Name, i, want.Units[i], allowed, err)
		}
		if err != nil && !errors.Is(err, store.ErrConflict) {
			t.Fatalf("step %d: %v", step, err)
		}
		if allowed {
			want = want.Apply(tr)
			for k := range want.Units {
				w, g := want.Units[k], got.Units[k]
				if w.State != g.State || w.Attempt != g.Attempt || !w.LeaseUntil.Equal(g.LeaseUntil) || w.Resent != g.Resent ||
					w.FailureClass != g.FailureClass || w.FailureReason != g.FailureReason || !w.NextAt.Equal(g.NextAt) ||
					w.Reported != g.Reported || !slices.Equal(w.Receipt, g.Receipt) {
					t.Fatalf("step %d unit %d: model %+v, store %+v", step, k, w, g)
				}
			}
		}
	}
}
