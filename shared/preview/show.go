package preview

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// Previewer is the platform's preview ability (platform.Previewer) as Show
// uses it.
type Previewer interface {
	Preview(ctx context.Context, p message.Preview, text string) (message.Preview, error)
	ClearPreview(ctx context.Context, p message.Preview) error
}

// Recorder records a preview's message (store.Previews).
type Recorder interface {
	RecordPreview(ctx context.Context, p message.Preview, now time.Time, ttl time.Duration) error
}

// UnrecordedError is a new preview message whose record could not be
// written: it was deleted at once (Cleared), or that failed too. No further
// preview is shown for the turn: one could be left beside the reply.
type UnrecordedError struct {
	MessageID string
	Cleared   bool
	Err       error
}

func (e *UnrecordedError) Error() string {
	return fmt.Sprintf("record preview message %s (cleared: %t): %v", e.MessageID, e.Cleared, e.Err)
}

func (e *UnrecordedError) Unwrap() error { return e.Err }

// Show shows text as the preview cur (base when no preview is shown yet),
// and returns the preview as it then is. A preview that becomes a new
// platform message is recorded (rec, kept for ttl) before anything else,
// so that however the turn ends it is finalized or cleared: this is the one
// place both the streamed turn and an async agent's preview posts create a
// preview's message. When the record cannot be written the message is
// deleted, and a *UnrecordedError returned.
func Show(ctx context.Context, pl Previewer, rec Recorder, base, cur message.Preview, text string, now time.Time, ttl time.Duration) (message.Preview, error) {
	if cur.MessageID == "" {
		cur = base
	}
	next, err := pl.Preview(ctx, cur, text)
	if next.MessageID == "" || next.MessageID == cur.MessageID {
		if err != nil || next.MessageID == "" {
			return cur, err
		}
		return next, nil // what a stream shows so far
	}
	// Recorded even when the context is done: the message exists.
	wctx := context.WithoutCancel(ctx)
	if rerr := rec.RecordPreview(wctx, next, now, ttl); rerr != nil {
		cerr := pl.ClearPreview(wctx, next)
		return cur, &UnrecordedError{MessageID: next.MessageID, Cleared: cerr == nil, Err: errors.Join(rerr, cerr)}
	}
	return next, err
}
