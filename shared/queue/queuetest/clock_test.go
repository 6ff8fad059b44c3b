package queuetest_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/queue/queuetest"
)

func TestClock(t *testing.T) {
	t.Parallel()

	t.Run("AdvanceAndSleep", func(t *testing.T) {
		t.Parallel()
		c := queuetest.NewClock(t0)
		if got := c.Now(); !got.Equal(t0) {
			t.Fatalf("Now = %v, want %v", got, t0)
		}
		c.Advance(90 * time.Second)
		if err := c.Sleep(t.Context(), 10*time.Second); err != nil {
			t.Fatalf("Sleep: %v", err)
		}
		if err := c.Sleep(t.Context(), -time.Hour); err != nil { // like time.Sleep: no-op
			t.Fatalf("Sleep(negative): %v", err)
		}
		if got := c.Now().Sub(t0); got != 100*time.Second {
			t.Errorf("clock moved %v, want 100s", got)
		}
	})

	t.Run("SleepWithDoneContext", func(t *testing.T) {
		t.Parallel()
		c := queuetest.NewClock(t0)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := c.Sleep(ctx, time.Minute); !errors.Is(err, context.Canceled) {
			t.Errorf("Sleep = %v, want context.Canceled", err)
		}
		if got := c.Now(); !got.Equal(t0) {
			t.Errorf("clock moved to %v, want it at %v", got, t0)
		}
	})

	t.Run("NegativeAdvancePanics", func(t *testing.T) {
		t.Parallel()
		c := queuetest.NewClock(t0)
		defer func() {
			if recover() == nil {
				t.Error("Advance(-1s) did not panic")
			}
			if got := c.Now(); !got.Equal(t0) {
				t.Errorf("clock moved to %v", got)
			}
		}()
		c.Advance(-time.Second)
	})

	t.Run("ConcurrentAdvance", func(t *testing.T) {
		t.Parallel()
		c := queuetest.NewClock(t0)
		var wg sync.WaitGroup
		for range 100 {
			wg.Go(func() {
				c.Advance(time.Second)
				_ = c.Now()
			})
		}
		wg.Wait()
		if got := c.Now().Sub(t0); got != 100*time.Second {
			t.Errorf("clock moved %v, want 100s", got)
		}
	})
}
