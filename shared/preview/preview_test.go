package preview_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/preview"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type shown struct {
	mu    sync.Mutex
	texts []string
	at    []time.Time
}

func (s *shown) show(delay time.Duration, err error) preview.ShowFunc {
	return func(ctx context.Context, text string) error {
		s.mu.Lock()
		s.texts = append(s.texts, text)
		s.at = append(s.at, time.Now())
		s.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return err
	}
}

func (s *shown) get() ([]string, []time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.texts...), append([]time.Time(nil), s.at...)
}

func delta(s string) agent.StreamEvent  { return agent.StreamEvent{Type: agent.EventDelta, Text: &s} }
func status(s string) agent.StreamEvent { return agent.StreamEvent{Type: agent.EventStatus, Text: &s} }

// A 200-delta stream read at once is shown a few times, at most once per
// interval, the last showing the newest text; the stream is never held up.
func TestPumpThrottlesAndShowsTheNewest(t *testing.T) {
	var s shown
	const interval = 300 * time.Millisecond
	p := preview.Start(context.Background(), preview.Config{Interval: interval, MaxUpdates: 100}, 0, s.show(0, nil), nil)
	start := time.Now()
	for i := range 200 {
		p.Add(delta("w "))
		if i%50 == 0 {
			time.Sleep(interval / 2)
		}
	}
	if d := time.Since(start); d > 4*interval {
		t.Fatalf("adding 200 deltas took %s", d)
	}
	time.Sleep(2 * interval)
	p.Stop()
	texts, at := s.get()
	if len(texts) < 2 || len(texts) > 8 {
		t.Fatalf("%d updates for 200 deltas over ~%s: %q", len(texts), 4*interval, texts)
	}
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < interval-20*time.Millisecond {
			t.Fatalf("updates %d and %d %s apart, interval %s", i-1, i, gap, interval)
		}
	}
	if last := texts[len(texts)-1]; last != strings.TrimSpace(strings.Repeat("w ", 200)) {
		t.Fatalf("the last update shows %d characters, not the whole text", len(last))
	}
}

// MaxUpdates bounds the calls; a status line shows under the text.
func TestPumpMaxUpdatesAndStatus(t *testing.T) {
	var s shown
	p := preview.Start(context.Background(), preview.Config{Interval: preview.MinInterval, MaxUpdates: 2}, 0, s.show(0, nil), nil)
	p.Add(status("searching…"))
	time.Sleep(preview.MinInterval + 50*time.Millisecond)
	p.Add(delta("found it"))
	time.Sleep(preview.MinInterval + 50*time.Millisecond)
	p.Add(delta(", twice"))
	time.Sleep(preview.MinInterval + 50*time.Millisecond)
	p.Stop()
	texts, _ := s.get()
	want := []string{"… searching…", "found it\n\n… searching…"}
	if strings.Join(texts, "|") != strings.Join(want, "|") || p.Updates() != 2 {
		t.Fatalf("shown %q, want %q", texts, want)
	}
}

// A platform's minimum interval wins over a shorter configured one, and a
// flood-limited update holds the next back for its retry_after.
func TestPumpPlatformMinimumAndRetryAfter(t *testing.T) {
	var s shown
	limited := &message.SendError{Class: message.FailRateLimit, RetryAfter: 700 * time.Millisecond}
	var errs []error
	var mu sync.Mutex
	p := preview.Start(context.Background(), preview.Config{Interval: preview.MinInterval}, 400*time.Millisecond, s.show(0, limited), func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	})
	p.Add(delta("a"))
	time.Sleep(50 * time.Millisecond)
	p.Add(delta("b"))
	time.Sleep(time.Second)
	p.Stop()
	_, at := s.get()
	if len(at) != 2 || at[1].Sub(at[0]) < 650*time.Millisecond {
		t.Fatalf("updates at %v: want 2, the second after the retry_after", at)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(errs) != 2 {
		t.Fatalf("errors heard: %v", errs)
	}
}

// Stop returns within about one interval even while the platform hangs
// for an hour: the update in flight is cut at the interval.
func TestPumpStopWaitsAtMostOneInterval(t *testing.T) {
	var s shown
	const interval = 300 * time.Millisecond
	p := preview.Start(context.Background(), preview.Config{Interval: interval}, 0, s.show(time.Hour, nil), nil)
	p.Add(delta("a"))
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	p.Stop()
	// The update in flight is cut one interval after it started; the
	// margin is the machine's scheduling, far from the hour it would hang.
	if d := time.Since(start); d > interval+time.Second {
		t.Fatalf("Stop took %s, more than the interval %s", d, interval)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (preview.Config{}).WithDefaults().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, c := range []preview.Config{{Interval: time.Millisecond, MaxUpdates: 1}, {Interval: time.Hour, MaxUpdates: 1}, {Interval: time.Second, MaxUpdates: -1}, {Interval: time.Second, MaxUpdates: 5000}} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// A platform with a status line of its own gets the status apart, the
// text without it; clearing the status reaches it too.
func TestPumpStatusApart(t *testing.T) {
	var text, stat shown
	p := preview.StartWithStatus(context.Background(), preview.Config{Interval: preview.MinInterval, MaxUpdates: 100}, 0, text.show(0, nil), stat.show(0, nil), nil)
	p.Add(status("searching flights…"))
	p.Add(delta("Your flight"))
	waitFor(t, func() bool { a, _ := text.get(); b, _ := stat.get(); return len(a) > 0 && len(b) > 0 })
	p.Add(status(""))
	waitFor(t, func() bool { b, _ := stat.get(); return len(b) > 1 })
	p.Stop()
	texts, _ := text.get()
	stats, _ := stat.get()
	for _, s := range texts {
		if strings.Contains(s, "searching") {
			t.Fatalf("the text %q holds the status line", s)
		}
	}
	if stats[0] != "searching flights…" || stats[len(stats)-1] != "" {
		t.Fatalf("statuses %q", stats)
	}
}

// waitFor polls cond for up to 10 seconds: generous on a loaded machine.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("not reached in 10 s")
}
