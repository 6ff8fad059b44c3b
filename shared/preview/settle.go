package preview

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/wait"
)

// AwaitSettler is the await store as the settler of an async turn's
// preview uses it (store.Await's preview lease).
type AwaitSettler interface {
	SettleAwaitPreview(ctx context.Context, turnID, by string, now, busy time.Time) (store.Await, error)
	GetAwait(ctx context.Context, turnID string) (store.Await, error)
}

// Bounds of Settle's wait for a preview update in flight: it polls the
// record every settlePoll, and waits at most its maxWait, whatever
// the record says (a clock apart: an update's lease is a few seconds).
// MaxSettleWait is the turn's, whose invocation has minutes; a sequential
// post's request has the reply function's seconds, and waits less.
const (
	settlePoll    = 100 * time.Millisecond
	MaxSettleWait = 10 * time.Second
)

// ErrUpdateInFlight is Settle's answer when an update's lease outlasted
// its wait: the settler tries again later.
var ErrUpdateInFlight = errors.New("a preview update is still in flight")

// Settle makes by the settler of turnID's preview (store.SettleAwaitPreview)
// once the preview update in flight, if any, is over: released by its
// invocation, or past its bound, after which that update can write no
// record (store.RecordAwaitPreview). From then on no update is taken, and
// the preview's record says all there is to finalize or clear: nothing is
// posted or edited after the reply that settles it. hold bounds the
// settler's own lease; maxWait bounds the wait for an update in flight, in
// wall time. A record another settler settled first gives a
// *store.AwaitConflictError holding it: that settler settles the preview.
func Settle(ctx context.Context, s AwaitSettler, turnID, by string, now func() time.Time, hold, maxWait time.Duration) (store.Await, error) {
	deadline := time.Now().Add(maxWait)
	for {
		t := now()
		a, err := s.SettleAwaitPreview(ctx, turnID, by, t, t.Add(hold))
		var conflict *store.AwaitConflictError
		if !errors.As(err, &conflict) {
			return a, err
		}
		if cur := conflict.Current; cur.PreviewSettled != "" && cur.PreviewSettled != by {
			return cur, err
		}
		// An update holds the lease: look again until it is released or
		// its bound passes, reading rather than writing meanwhile.
		for {
			if time.Now().After(deadline) {
				return store.Await{}, fmt.Errorf("settle the preview of %s: %w", turnID, ErrUpdateInFlight)
			}
			if err := wait.For(ctx, settlePoll); err != nil {
				return store.Await{}, err
			}
			cur, err := s.GetAwait(ctx, turnID)
			if err != nil {
				return store.Await{}, err
			}
			if cur.PreviewLease == "" || !now().Before(cur.PreviewBusy) || cur.PreviewSettled != "" {
				break
			}
		}
	}
}

// FinalizeInto settles a preview into a reply's units: the reply's first
// message, when it is text, finalizes the preview in place (its Replaces
// names the preview of key, intent.PreviewUnit), and FinalizeInto reports
// true. Otherwise (no message, a question or a file first) the preview
// must be cleared: finalized into a later message, it would show before
// the ones the reply puts first.
func FinalizeInto(units []intent.Unit, key string) bool {
	for i, u := range units {
		if u.Content.React != nil || u.Replaces != "" {
			continue // no message of its own in the reply's order
		}
		if u.Content.Kind() == message.ContentText {
			units[i].Replaces = intent.UnitKey(key, intent.PreviewUnit)
			return true
		}
		return false
	}
	return false
}

// StatusPreviewer shows a preview's status line natively in some threads
// (platform.StatusPreviewer).
type StatusPreviewer interface {
	NativeStatus(t message.Thread) bool
	PreviewStatus(ctx context.Context, t message.Thread, status string) error
}

// EndStatus clears the status line an async turn's preview updates showed
// natively (a.PreviewStatus), as its settler settles the preview: the
// status ends with the preview, whatever the outcome. pl is the platform's
// preview ability; one that shows no status of its own has none to clear.
func EndStatus(ctx context.Context, pl any, a store.Await) error {
	sp, ok := pl.(StatusPreviewer)
	if !ok || !a.PreviewStatus {
		return nil
	}
	return sp.PreviewStatus(ctx, a.Thread, "")
}
