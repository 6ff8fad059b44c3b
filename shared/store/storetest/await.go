package storetest

import (
	"bytes"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

func awaits(t *testing.T, s Store) {
	ctx := t.Context()
	th := message.Thread{Platform: message.Telegram, Account: "1", Chat: "2"}
	a := store.Await{
		TurnID: "turn1", Thread: th, EventKey: "telegram:1:9", ClaimKey: "turn#telegram:1:9", ClaimOwner: "o1",
		Deadline: t0.Add(15 * time.Minute), Handle: "h1", CreatedAt: t0, ExpiresAt: t0.Add(24 * time.Hour),
	}
	if _, err := s.GetAwait(ctx, "turn1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get before open: %v, want ErrNotFound", err)
	}
	if _, err := s.FinishAwait(ctx, "turn1", store.AwaitPost{ID: "p", Body: []byte("hi")}, t0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("finish before open: %v, want ErrNotFound", err)
	}
	got, created, err := s.OpenAwait(ctx, a)
	if err != nil || !created || got.State != store.AwaitOpen {
		t.Fatalf("open: %+v, %v, %v", got, created, err)
	}
	// A re-run turn finds the record it wrote, unchanged.
	again := a
	again.ClaimOwner, again.Deadline = "o2", t0.Add(time.Hour)
	if got, created, err = s.OpenAwait(ctx, again); err != nil || created || got.ClaimOwner != "o1" || !got.Deadline.Equal(a.Deadline) {
		t.Fatalf("re-open: %+v, %v, %v; want the first record", got, created, err)
	}
	// The turn that holds it now adopts it: its owner, its handle.
	if got, err := s.AdoptAwait(ctx, "turn1", "o3", "h0", message.Preview{}); err != nil || got.ClaimOwner != "o3" || got.Handle != "h0" || got.State != store.AwaitOpen {
		t.Fatalf("adopt: %+v, %v", got, err)
	}
	if err := s.SetAwaitHandle(ctx, "turn1", "h2"); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetAwait(ctx, "turn1")
	if err != nil || got.Handle != "h2" || got.Thread != th || got.EventKey != a.EventKey || got.ClaimKey != a.ClaimKey || !got.CreatedAt.Equal(t0) {
		t.Fatalf("get: %+v, %v", got, err)
	}

	// Sequential posts: each once, each at the bubble count it read.
	if got, err := s.AddAwaitPost(ctx, "turn1", "seq_1", 2, 0, t0); err != nil || got.Bubbles != 2 || got.Posts["seq_1"] != 2 {
		t.Fatalf("first post: %+v, %v", got, err)
	}
	var stale *store.AwaitConflictError
	if _, err := s.AddAwaitPost(ctx, "turn1", "seq_2", 1, 0, t0); !errors.As(err, &stale) || stale.Current.Bubbles != 2 {
		t.Fatalf("a post that read a stale count: %v", err)
	}
	if _, err := s.AddAwaitPost(ctx, "turn1", "seq_1", 1, 2, t0); !errors.As(err, &stale) {
		t.Fatalf("the same post again: %v", err)
	}
	if _, err := s.AddAwaitPost(ctx, "turn1", "seq_3", 1, 2, a.Deadline); !errors.As(err, &stale) {
		t.Fatalf("a post at the deadline: %v", err)
	}
	if got, err := s.AddAwaitPost(ctx, "turn1", "seq_2", 1, 2, t0); err != nil || got.Bubbles != 3 || len(got.Posts) != 2 {
		t.Fatalf("second post: %+v, %v", got, err)
	}

	// Past its deadline a post is refused, and the record stays open.
	post := store.AwaitPost{ID: "msg_1", ContentType: "application/json", Body: []byte(`{"schema":"openab.turn.v1"}`), At: t0}
	var conflict *store.AwaitConflictError
	if _, err := s.FinishAwait(ctx, "turn1", post, a.Deadline); !errors.As(err, &conflict) || conflict.Current.State != store.AwaitOpen {
		t.Fatalf("finish at the deadline: %v, want a conflict with the open record", err)
	}

	// Two racing posts: exactly one wins.
	var wg sync.WaitGroup
	wins := make(chan string, 2)
	for _, id := range []string{"msg_a", "msg_b"} {
		wg.Go(func() {
			p := post
			p.ID = id
			if _, err := s.FinishAwait(ctx, "turn1", p, t0.Add(time.Minute)); err == nil {
				wins <- id
			} else if !errors.As(err, new(*store.AwaitConflictError)) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	close(wins)
	var won []string
	for id := range wins {
		won = append(won, id)
	}
	if len(won) != 1 {
		t.Fatalf("racing posts: %v won, want exactly one", won)
	}
	got, err = s.GetAwait(ctx, "turn1")
	if err != nil || got.State != store.AwaitFinal || got.Post.ID != won[0] || !bytes.Equal(got.Post.Body, post.Body) || got.Post.ContentType != post.ContentType {
		t.Fatalf("after the post: %+v, %v", got, err)
	}
	// Once final, nothing else moves it: not another post, not expiry, not
	// a handle.
	if _, err := s.ExpireAwait(ctx, "turn1"); !errors.As(err, &conflict) || conflict.Current.Post.ID != won[0] {
		t.Fatalf("expire a final record: %v", err)
	}
	if err := s.SetAwaitHandle(ctx, "turn1", "h3"); !errors.As(err, &conflict) {
		t.Fatalf("set the handle of a final record: %v", err)
	}
	if _, err := s.AdoptAwait(ctx, "turn1", "o4", "h3", message.Preview{}); !errors.As(err, &conflict) || conflict.Current.State != store.AwaitFinal {
		t.Fatalf("adopt a final record: %v, want a conflict holding it", err)
	}

	// Expiry wins over a later post.
	b := a
	b.TurnID = "turn2"
	if _, _, err := s.OpenAwait(ctx, b); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ExpireAwait(ctx, "turn2"); err != nil || got.State != store.AwaitExpired {
		t.Fatalf("expire: %+v, %v", got, err)
	}
	if _, err := s.FinishAwait(ctx, "turn2", post, t0); !errors.As(err, &conflict) || conflict.Current.State != store.AwaitExpired {
		t.Fatalf("post after expiry: %v", err)
	}
	if _, err := s.TakeAwaitPreview(ctx, "turn2", store.PreviewTake{Now: t0, Next: t0.Add(time.Second), Busy: t0.Add(time.Second), Max: 5, Lease: "l"}); !errors.As(err, &conflict) {
		t.Fatalf("a preview after expiry: %v, want a conflict", err)
	}
}

// awaitPreviews: the preview throttle on an await record holds across
// callers (each a Lambda invocation): one update per interval, at most Max,
// only while the record is open; the base set by the turn that adopts it.
func awaitPreviews(t *testing.T, s Store) {
	ctx := t.Context()
	th := message.Thread{Platform: message.Telegram, Account: "1", Chat: "-2"}
	base := message.Preview{Thread: th, Key: "turnp", ReplyTo: "9"}
	a := store.Await{
		TurnID: "turnp", Thread: th, EventKey: "telegram:1:9", ClaimKey: "turn#x", ClaimOwner: "o1",
		Deadline: t0.Add(15 * time.Minute), CreatedAt: t0, ExpiresAt: t0.Add(24 * time.Hour),
	}
	if _, _, err := s.OpenAwait(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetAwait(ctx, "turnp")
	if err != nil || got.Preview.Thread.Platform != "" || got.PreviewUpdates != 0 || !got.PreviewNext.IsZero() {
		t.Fatalf("a record opened with no base: %+v, %v", got, err)
	}
	if got, err = s.AdoptAwait(ctx, "turnp", "o2", "h", base); err != nil || got.Preview != base {
		t.Fatalf("adopt with the base: %+v, %v", got, err)
	}
	take := func(at time.Duration) store.PreviewTake {
		now := t0.Add(at)
		return store.PreviewTake{Now: now, Next: now.Add(time.Second), Busy: now.Add(3 * time.Second), Max: 2, Lease: "l" + at.String()}
	}
	release := func(lease string) {
		t.Helper()
		if err := s.ReleaseAwaitPreview(ctx, "turnp", lease); err != nil {
			t.Fatal(err)
		}
	}
	got, err = s.TakeAwaitPreview(ctx, "turnp", take(0))
	if err != nil || got.PreviewUpdates != 1 || !got.PreviewNext.Equal(t0.Add(time.Second)) || !got.PreviewBusy.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("first take: %+v, %v", got, err)
	}
	var conflict *store.AwaitConflictError
	if _, err := s.TakeAwaitPreview(ctx, "turnp", take(500*time.Millisecond)); !errors.As(err, &conflict) || conflict.Current.PreviewUpdates != 1 {
		t.Fatalf("a take inside the interval: %v, want a conflict at one update", err)
	}
	release("l0s")
	// Two racing takes once the interval passed: exactly one wins.
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 2 {
		wg.Go(func() {
			_, err := s.TakeAwaitPreview(ctx, "turnp", take(time.Second))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case !errors.As(err, new(*store.AwaitConflictError)):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("racing takes: %d won, want 1", wins)
	}
	release("l1s")
	if _, err := s.TakeAwaitPreview(ctx, "turnp", take(time.Hour/60)); !errors.As(err, &conflict) || conflict.Current.PreviewUpdates != 2 {
		t.Fatalf("a take past the cap: %v, want a conflict at two updates", err)
	}
	if got, err = s.GetAwait(ctx, "turnp"); err != nil || got.PreviewUpdates != 2 || got.Preview != base {
		t.Fatalf("after the takes: %+v, %v", got, err)
	}
}

// awaitPreviewLease: an update holds the preview's lease while it runs: no
// other update starts meanwhile (interval over or not) until it is released
// or its bound passes; the preview's record is written only under it; a
// settler waits for it, and once settled the record takes no update,
// whoever asks. Settling is idempotent for its settler, refused to another.
func awaitPreviewLease(t *testing.T, s Store) {
	ctx := t.Context()
	th := message.Thread{Platform: message.Telegram, Account: "1", Chat: "-3"}
	base := message.Preview{Thread: th, Key: "turnl"}
	if _, _, err := s.OpenAwait(ctx, store.Await{
		TurnID: "turnl", Thread: th, EventKey: "telegram:1:10", ClaimKey: "turn#l", ClaimOwner: "o1",
		Deadline: t0.Add(15 * time.Minute), CreatedAt: t0, ExpiresAt: t0.Add(24 * time.Hour), Preview: base,
	}); err != nil {
		t.Fatal(err)
	}
	take := func(at time.Duration, lease string, status bool) (store.Await, error) {
		now := t0.Add(at)
		return s.TakeAwaitPreview(ctx, "turnl", store.PreviewTake{Now: now, Next: now.Add(time.Second), Busy: now.Add(5 * time.Second), Max: 10, Lease: lease, Status: status})
	}
	got, err := take(0, "a", true)
	if err != nil || got.PreviewLease != "a" || !got.PreviewBusy.Equal(t0.Add(5*time.Second)) || !got.PreviewStatus {
		t.Fatalf("take: %+v, %v", got, err)
	}
	var conflict *store.AwaitConflictError
	if _, err := take(2*time.Second, "b", false); !errors.As(err, &conflict) || conflict.Current.PreviewLease != "a" {
		t.Fatalf("a take past the interval while a holds the lease: %v, want a conflict naming a", err)
	}
	pv := message.Preview{Thread: th, Key: "turnl", MessageID: "m1"}
	if err := s.RecordAwaitPreview(ctx, "turnl", "b", pv, t0, time.Hour); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a record under a lease not held: %v, want ErrConflict", err)
	}
	if _, err := s.GetPreview(ctx, "turnl", t0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused record was written: %v", err)
	}
	if err := s.RecordAwaitPreview(ctx, "turnl", "a", pv, t0, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetPreview(ctx, "turnl", t0); err != nil || got != pv {
		t.Fatalf("the record under the lease: %+v, %v", got, err)
	}
	if _, err := s.SettleAwaitPreview(ctx, "turnl", store.SettledByTurn, t0.Add(2*time.Second), t0.Add(time.Minute)); !errors.As(err, &conflict) || conflict.Current.PreviewLease != "a" {
		t.Fatalf("a settle while a holds the lease: %v, want a conflict", err)
	}
	if err := s.ReleaseAwaitPreview(ctx, "turnl", "b"); !errors.As(err, &conflict) {
		t.Fatalf("releasing another's lease: %v, want a conflict", err)
	}
	if err := s.ReleaseAwaitPreview(ctx, "turnl", "a"); err != nil {
		t.Fatal(err)
	}
	if got, err = take(2*time.Second, "b", false); err != nil || got.PreviewLease != "b" || got.PreviewUpdates != 2 || !got.PreviewStatus {
		t.Fatalf("a take once a released: %+v, %v", got, err)
	}
	// b's bound passes unreleased (its invocation died): the settler takes
	// over, and b can write nothing after it.
	by := store.SettledByPost("p1")
	got, err = s.SettleAwaitPreview(ctx, "turnl", by, t0.Add(7*time.Second), t0.Add(time.Minute))
	if err != nil || got.PreviewSettled != by || got.PreviewLease != by {
		t.Fatalf("settle past b's bound: %+v, %v", got, err)
	}
	if err := s.RecordAwaitPreview(ctx, "turnl", "b", message.Preview{Thread: th, Key: "turnl", MessageID: "m2"}, t0, time.Hour); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("b's record after the settle: %v, want ErrConflict", err)
	}
	if err := s.ReleaseAwaitPreview(ctx, "turnl", "b"); !errors.As(err, &conflict) {
		t.Fatalf("b's release after the settle: %v, want a conflict", err)
	}
	if _, err := take(time.Hour/2, "c", false); !errors.As(err, &conflict) || conflict.Current.PreviewSettled != by {
		t.Fatalf("a take after the settle: %v, want a conflict", err)
	}
	if got, err = s.SettleAwaitPreview(ctx, "turnl", by, t0.Add(8*time.Second), t0.Add(time.Minute)); err != nil || got.PreviewSettled != by {
		t.Fatalf("the same settler again: %+v, %v", got, err)
	}
	if _, err := s.SettleAwaitPreview(ctx, "turnl", store.SettledByTurn, t0.Add(time.Hour), t0.Add(2*time.Hour)); !errors.As(err, &conflict) || conflict.Current.PreviewSettled != by {
		t.Fatalf("another settler: %v, want a conflict naming the first", err)
	}
	// A closed record settles too: the turn settles after its final post.
	if _, err := s.FinishAwait(ctx, "turnp2", store.AwaitPost{ID: "x", ContentType: "text/plain", Body: []byte("x"), At: t0}, t0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("finish of no record: %v", err)
	}
	if _, err := s.SettleAwaitPreview(ctx, "nope", store.SettledByTurn, t0, t0.Add(time.Minute)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("settle of no record: %v, want ErrNotFound", err)
	}
	if _, _, err := s.OpenAwait(ctx, store.Await{
		TurnID: "turnf", Thread: th, EventKey: "telegram:1:11", ClaimKey: "turn#f", ClaimOwner: "o1",
		Deadline: t0.Add(15 * time.Minute), CreatedAt: t0, ExpiresAt: t0.Add(24 * time.Hour), Preview: base,
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FinishAwait(ctx, "turnf", store.AwaitPost{ID: "x", ContentType: "text/plain", Body: []byte("x"), At: t0}, t0); err != nil {
		t.Fatal(err)
	}
	if got, err = s.SettleAwaitPreview(ctx, "turnf", store.SettledByTurn, t0, t0.Add(time.Minute)); err != nil || got.State != store.AwaitFinal || got.PreviewSettled != store.SettledByTurn {
		t.Fatalf("settle of a final record: %+v, %v", got, err)
	}
}
