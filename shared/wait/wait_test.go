package wait_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/wait"
)

func TestFor(t *testing.T) {
	t.Parallel()
	if err := wait.For(t.Context(), time.Millisecond); err != nil {
		t.Fatalf("a wait that ran its course: %v", err)
	}
	if err := wait.For(t.Context(), 0); err != nil {
		t.Fatalf("no wait: %v", err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := wait.For(ctx, -time.Second); !errors.Is(err, context.Canceled) {
		t.Fatalf("no wait on a done context: %v, want its error", err)
	}
	done := make(chan error, 1)
	go func() { done <- wait.For(ctx, time.Hour) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("a wait its context ended: %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("an hour's wait outlived its context")
	}

	short, stop := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer stop()
	if err := wait.For(short, time.Hour); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a wait past the deadline: %v, want context.DeadlineExceeded", err)
	}
}
