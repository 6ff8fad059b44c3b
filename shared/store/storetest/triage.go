package storetest

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/triage"
)

// TriageStore is what triage and its operators need of a store: the counter
// port and a read of the record.
type TriageStore interface {
	triage.Counters
	GetCounter(ctx context.Context, key string) (triage.Counter, error)
}

// triageSuite proves the triage counters: every change is conditional, a
// refused take changes nothing, and concurrent takes never exceed a limit.
func triageSuite(t *testing.T, newStore func(t *testing.T) Store) {
	get := func(t *testing.T) TriageStore {
		s, ok := newStore(t).(TriageStore)
		if !ok {
			t.Fatalf("%T does not implement storetest.TriageStore", s)
		}
		return s
	}
	t.Run("CapCountsPerDay", func(t *testing.T) { t.Parallel(); triageCap(t, get(t)) })
	t.Run("Cooldown", func(t *testing.T) { t.Parallel(); triageCooldown(t, get(t)) })
	t.Run("NewDayForgetsOldDays", func(t *testing.T) { t.Parallel(); triageDays(t, get(t)) })
	t.Run("CapRace", func(t *testing.T) { t.Parallel(); triageRace(t, get(t), 0, 3, 3, triage.ReasonDailyCap) })
	t.Run("CooldownRace", func(t *testing.T) { t.Parallel(); triageRace(t, get(t), time.Minute, 3, 1, triage.ReasonCooldown) })
	t.Run("GiveBack", func(t *testing.T) { t.Parallel(); triageGiveBack(t, get(t)) })
}

var triageT0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func take(key string, at time.Time, cooldown time.Duration, limit int) triage.Take {
	return triage.Take{
		Key: key, At: at, Day: at.Format(triage.DayLayout), Cooldown: cooldown, Cap: limit,
		TTL: 49 * time.Hour, Token: store.NewOwner(),
		Forget: []string{at.AddDate(0, 0, -2).Format(triage.DayLayout), at.AddDate(0, 0, -3).Format(triage.DayLayout)},
	}
}

func counter(t *testing.T, s TriageStore, key string) triage.Counter {
	t.Helper()
	c, err := s.GetCounter(context.Background(), key)
	if err != nil {
		t.Fatalf("GetCounter(%s): %v", key, err)
	}
	return c
}

func limited(t *testing.T, err error, reason string) *triage.LimitError {
	t.Helper()
	var le *triage.LimitError
	if !errors.As(err, &le) || !errors.Is(err, triage.ErrLimited) || le.Reason != reason {
		t.Fatalf("want LimitError %s wrapping ErrLimited, got %v", reason, err)
	}
	return le
}

func triageCap(t *testing.T, s TriageStore) {
	ctx := context.Background()
	key := "tri#telegram:1:42"
	if _, err := s.GetCounter(ctx, key); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetCounter before any take: want ErrNotFound, got %v", err)
	}
	for i := 1; i <= 3; i++ {
		at := triageT0.Add(time.Duration(i) * time.Second)
		got, err := s.Take(ctx, take(key, at, 0, 3))
		if err != nil {
			t.Fatalf("take %d: %v", i, err)
		}
		if got.Count != i || !got.At.Equal(at) {
			t.Fatalf("take %d = %+v", i, got)
		}
	}
	before := counter(t, s, key)
	if before.Days["2026-11-29"] != 3 || !before.Last.Equal(triageT0.Add(3*time.Second)) ||
		!before.ExpiresAt.Equal(triageT0.Add(3*time.Second+49*time.Hour)) {
		t.Fatalf("counter after 3 takes = %+v", before)
	}
	le := limited(t, func() error { _, err := s.Take(ctx, take(key, triageT0.Add(time.Hour), 0, 3)); return err }(), triage.ReasonDailyCap)
	if le.Count != 3 {
		t.Fatalf("LimitError = %+v, want count 3", le)
	}
	if after := counter(t, s, key); !reflect.DeepEqual(before, after) {
		t.Fatalf("a refused take changed the counter:\nbefore %+v\nafter  %+v", before, after)
	}
	// A larger cap lets it through; no cap at all still counts.
	if got, err := s.Take(ctx, take(key, triageT0.Add(2*time.Hour), 0, 4)); err != nil || got.Count != 4 {
		t.Fatalf("take under cap 4 = %+v, %v", got, err)
	}
	if got, err := s.Take(ctx, take(key, triageT0.Add(3*time.Hour), 0, 0)); err != nil || got.Count != 5 {
		t.Fatalf("take without cap = %+v, %v", got, err)
	}
}

func triageCooldown(t *testing.T, s TriageStore) {
	ctx := context.Background()
	key := "tri#slack:T1:C1:1764432060.000200"
	if _, err := s.Take(ctx, take(key, triageT0, time.Minute, 0)); err != nil {
		t.Fatal(err)
	}
	before := counter(t, s, key)
	le := limited(t, func() error {
		_, err := s.Take(ctx, take(key, triageT0.Add(59*time.Second), time.Minute, 0))
		return err
	}(), triage.ReasonCooldown)
	if !le.Last.Equal(triageT0) {
		t.Fatalf("LimitError = %+v, want last %v", le, triageT0)
	}
	if after := counter(t, s, key); !reflect.DeepEqual(before, after) {
		t.Fatalf("a refused take restarted the cooldown:\nbefore %+v\nafter  %+v", before, after)
	}
	// Exactly one cooldown later is allowed.
	if got, err := s.Take(ctx, take(key, triageT0.Add(time.Minute), time.Minute, 0)); err != nil || got.Count != 2 || !got.PrevLast.Equal(triageT0) {
		t.Fatalf("take after the cooldown = %+v, %v", got, err)
	}
	// Both rules broken: cooldown is reported first.
	limited(t, func() error {
		_, err := s.Take(ctx, take(key, triageT0.Add(61*time.Second), time.Minute, 2))
		return err
	}(), triage.ReasonCooldown)
	limited(t, func() error {
		_, err := s.Take(ctx, take(key, triageT0.Add(3*time.Minute), time.Minute, 2))
		return err
	}(), triage.ReasonDailyCap)
}

func triageDays(t *testing.T, s TriageStore) {
	ctx := context.Background()
	key := "tri#telegram:1:days"
	for d := range 5 {
		at := triageT0.AddDate(0, 0, d)
		for i := range 2 {
			got, err := s.Take(ctx, take(key, at.Add(time.Duration(i)*time.Minute), 0, 2))
			if err != nil || got.Count != i+1 {
				t.Fatalf("day %d take %d = %+v, %v", d, i, got, err)
			}
		}
		limited(t, func() error { _, err := s.Take(ctx, take(key, at.Add(time.Hour), 0, 2)); return err }(), triage.ReasonDailyCap)
	}
	// Each take drops the counts two and three days back: at most today's
	// and yesterday's remain.
	c := counter(t, s, key)
	want := map[string]int{"2026-12-03": 2, "2026-12-02": 2}
	if !reflect.DeepEqual(c.Days, want) {
		t.Fatalf("days = %v, want %v", c.Days, want)
	}
}

func triageRace(t *testing.T, s TriageStore, cooldown time.Duration, limit, wantWins int, wantReason string) {
	ctx := context.Background()
	key := "tri#telegram:1:race"
	const n = 20
	var mu sync.Mutex
	wins, reasons := 0, map[string]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, err := s.Take(ctx, take(key, triageT0, cooldown, limit))
			var le *triage.LimitError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.As(err, &le):
				reasons[le.Reason]++
			default:
				t.Errorf("take %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if wins != wantWins || reasons[wantReason] != n-wantWins {
		t.Fatalf("%d concurrent takes: %d won, refusals %v; want %d won, %d %s", n, wins, reasons, wantWins, n-wantWins, wantReason)
	}
	if c := counter(t, s, key); c.Days[triageT0.Format(triage.DayLayout)] != wantWins {
		t.Fatalf("count after the race = %d, want %d", c.Days[triageT0.Format(triage.DayLayout)], wantWins)
	}
}

func triageGiveBack(t *testing.T, s TriageStore) {
	ctx := context.Background()
	key := "tri#telegram:1:giveback"
	a, err := s.Take(ctx, take(key, triageT0, time.Minute, 5))
	if err != nil {
		t.Fatal(err)
	}
	afterA := counter(t, s, key)
	b, err := s.Take(ctx, take(key, triageT0.Add(2*time.Minute), time.Minute, 5))
	if err != nil {
		t.Fatal(err)
	}
	if !b.PrevLast.Equal(a.At) || b.PrevToken != a.Token || b.Count != 2 {
		t.Fatalf("second take = %+v, want previous last/token of the first", b)
	}
	// The first take cannot be given back: the second came after it.
	afterB := counter(t, s, key)
	if err := s.GiveBack(ctx, a); !errors.Is(err, triage.ErrMovedOn) {
		t.Fatalf("give back an older take: want ErrMovedOn, got %v", err)
	}
	if got := counter(t, s, key); !reflect.DeepEqual(got, afterB) {
		t.Fatalf("a refused give-back changed the counter:\nbefore %+v\nafter  %+v", afterB, got)
	}
	// The latest can, and restores the record as the first left it.
	if err := s.GiveBack(ctx, b); err != nil {
		t.Fatalf("give back: %v", err)
	}
	got := counter(t, s, key)
	if got.Days[b.Day] != 1 || !got.Last.Equal(a.At) || got.Token != a.Token {
		t.Fatalf("after give-back = %+v, want %+v's count and last", got, afterA)
	}
	if err := s.GiveBack(ctx, b); !errors.Is(err, triage.ErrMovedOn) {
		t.Fatalf("second give-back of one take: want ErrMovedOn, got %v", err)
	}
	// Then the first, which leaves no last time and no count.
	if err := s.GiveBack(ctx, a); err != nil {
		t.Fatalf("give back the first: %v", err)
	}
	got = counter(t, s, key)
	if got.Days[a.Day] != 0 || !got.Last.IsZero() || got.Token != "" {
		t.Fatalf("after both give-backs = %+v", got)
	}
	// A take right away is allowed: the cooldown was given back too.
	if _, err := s.Take(ctx, take(key, triageT0.Add(2*time.Minute), time.Minute, 5)); err != nil {
		t.Fatalf("take after give-backs: %v", err)
	}
	if err := s.GiveBack(ctx, triage.Taken{Key: "tri#nobody", Day: "2026-11-29", Token: "x"}); !errors.Is(err, triage.ErrMovedOn) {
		t.Fatalf("give back on a missing record: want ErrMovedOn, got %v", err)
	}
}
