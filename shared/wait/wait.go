// Package wait pauses a goroutine for a while, as long as its context
// lets it: what a retry's backoff and a bubble's pacing both need, and
// time.Sleep cannot give, since it outlives a Lambda's deadline.
package wait

import (
	"context"
	"time"
)

// For waits d, or until ctx is done, whichever comes first. It returns
// ctx's error when ctx ended the wait, nil when d did. A d of zero or less
// returns at once (with ctx's error, if it is done already).
func For(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
