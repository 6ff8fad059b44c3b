package queuetest

import (
	"context"
	"sync"
	"time"
)

// Clock is a settable test clock, safe for concurrent use. Tests move it
// instead of sleeping, so visibility timeouts and backoffs play out at once.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock reading t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now reads the clock. Pass the method value as Options.Now.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d. It panics if d is negative: the
// model's visibility and deduplication times assume time never runs back.
func (c *Clock) Advance(d time.Duration) {
	if d < 0 {
		panic("queuetest: Clock.Advance with a negative duration")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Sleep advances the clock by d and returns nil, or returns ctx.Err() without
// advancing if ctx is done: a drop-in for processors' Sleep hooks (such as
// delivery's pacing), so a paced test takes no wall-clock time. Like
// time.Sleep, a d of zero or less returns at once.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d > 0 {
		c.Advance(d)
	}
	return nil
}
