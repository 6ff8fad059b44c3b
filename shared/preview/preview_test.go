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

// Stop returns within one interval even while the platform hangs: the
// update in flight is cut at the interval.
func TestPumpStopWaitsAtMostOneInterval(t *testing.T) {
	var s shown
	const interval = 300 * time.Millisecond
	p := preview.Start(context.Background(), preview.Config{Interval: interval}, 0, s.show(time.Hour, nil), nil)
	p.Add(delta("a"))
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	p.Stop()
	if d := time.Since(start); d > interval {
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
