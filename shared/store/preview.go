package store

import (
	"context"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// Previews records the previews of live replies (a streamed reply's message
// edited in place), so that whatever becomes of the turn (a crash, a retry,
// a failure) the preview is finalized by the reply's first bubble or
// cleared, never left beside the reply. A preview is recorded as soon as its
// platform message exists, under its key (the turn's intent id), and is on
// the sweeper's list from then (SweepGrace later), which drops the record
// once the preview was finalized and clears a preview its turn left behind.
type Previews interface {
	// RecordPreview writes p, kept for ttl; a later record of the same key
	// replaces it.
	RecordPreview(ctx context.Context, p message.Preview, now time.Time, ttl time.Duration) error
	// GetPreview reads the preview recorded under key (a strongly
	// consistent read): ErrNotFound when there is none, or it expired.
	GetPreview(ctx context.Context, key string, now time.Time) (message.Preview, error)
	// DropPreview forgets the preview under key, once it was cleared.
	// Dropping one that is gone succeeds.
	DropPreview(ctx context.Context, key string) error
}

// PreviewKey is the record key of a turn's preview.
func PreviewKey(key string) string { return "pv#" + key }
