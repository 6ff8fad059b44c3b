package triage

import (
	"errors"
	"testing"
	"time"
)

func berlin(t testing.TB) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestParseWindow(t *testing.T) {
	for in, want := range map[string]string{
		"":            "",
		"22:00-07:00": "22:00-07:00",
		"00:00-23:59": "00:00-23:59",
		"09:30-09:30": "", // equal ends: never quiet
		"12:00-13:00": "12:00-13:00",
	} {
		w, err := ParseWindow(in)
		if err != nil || w.String() != want {
			t.Errorf("ParseWindow(%q) = %q, %v; want %q", in, w, err, want)
		}
	}
	for _, in := range []string{"22-07", "22:00–07:00", "24:00-07:00", "22:60-07:00", "2:00-07:00", "22:00 07:00",
		"22:00-7:00", "+2:00-07:00", "22:00-07:00 ", "aa:bb-cc:dd", "22:00-07:00-08:00"} {
		if _, err := ParseWindow(in); !errors.Is(err, ErrBadWindow) {
			t.Errorf("ParseWindow(%q) = %v, want ErrBadWindow", in, err)
		}
	}
}

func TestWindowContainsLocalTimeAcrossDST(t *testing.T) {
	loc := berlin(t)
	w, _ := ParseWindow("22:00-07:00")
	at := func(s string) time.Time {
		tt, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
		if err != nil {
			t.Fatal(err)
		}
		return tt
	}
	for _, c := range []struct {
		local string
		quiet bool
	}{
		{"2026-11-29 23:30", true},
		{"2026-11-29 21:59", false},
		{"2026-11-29 22:00", true},
		{"2026-11-30 00:00", true},
		{"2026-11-30 06:59", true},
		{"2026-11-30 07:00", false},
		{"2026-11-30 12:00", false},
		// Spring forward (2026-03-29 02:00 CET → 03:00 CEST): the end stays
		// at 07:00 local, 05:00 UTC instead of 06:00.
		{"2026-03-29 01:30", true},
		{"2026-03-29 03:30", true},
		{"2026-03-29 06:59", true},
		{"2026-03-29 07:00", false},
		// Fall back (2026-10-25 03:00 CEST → 02:00 CET): 07:00 local is
		// 06:00 UTC, an hour later than the day before.
		{"2026-10-25 06:59", true},
		{"2026-10-25 07:00", false},
		{"2026-10-25 22:00", true},
	} {
		if got := w.Contains(at(c.local), loc); got != c.quiet {
			t.Errorf("Contains(%s Berlin) = %v, want %v", c.local, got, c.quiet)
		}
	}
	// The same UTC instants, judged by a fixed offset, would be wrong: pin
	// that the local reading is what decides.
	springUTC := time.Date(2026, 3, 29, 5, 30, 0, 0, time.UTC) // 07:30 CEST, 06:30 CET
	if w.Contains(springUTC, loc) {
		t.Errorf("05:30 UTC on 2026-03-29 is 07:30 in Berlin: not quiet")
	}
	fallUTC := time.Date(2026, 10, 25, 5, 30, 0, 0, time.UTC) // 06:30 CET, 07:30 CEST
	if !w.Contains(fallUTC, loc) {
		t.Errorf("05:30 UTC on 2026-10-25 is 06:30 in Berlin: quiet")
	}
	var never Window
	if never.Contains(springUTC, loc) {
		t.Error("the empty window contains nothing")
	}
	day, _ := ParseWindow("09:00-17:00")
	if !day.Contains(at("2026-11-30 09:00"), loc) || day.Contains(at("2026-11-30 17:00"), loc) || day.Contains(at("2026-11-30 08:59"), loc) {
		t.Error("09:00-17:00 includes its start and excludes its end")
	}
}

func TestWindowEnd(t *testing.T) {
	loc := berlin(t)
	at := func(s string) time.Time {
		tt, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
		if err != nil {
			t.Fatal(err)
		}
		return tt
	}
	night, _ := ParseWindow("22:00-07:00")
	gap, _ := ParseWindow("01:00-02:30")  // ends inside the spring-forward gap
	fold, _ := ParseWindow("01:00-02:30") // ends inside the repeated fall-back hour
	for _, c := range []struct {
		w        Window
		from     time.Time
		want     time.Time
		describe string
	}{
		{night, at("2026-11-29 23:30"), at("2026-11-30 07:00"), "evening: ends tomorrow"},
		{night, at("2026-11-30 03:00"), at("2026-11-30 07:00"), "after midnight: ends today"},
		{night, at("2026-11-30 12:00"), at("2026-11-30 12:00"), "not quiet: now"},
		{night, at("2026-03-28 23:30"), time.Date(2026, 3, 29, 5, 0, 0, 0, time.UTC), "spring forward: 07:00 CEST"},
		{night, at("2026-10-24 23:30"), time.Date(2026, 10, 25, 6, 0, 0, 0, time.UTC), "fall back: 07:00 CET"},
		{gap, time.Date(2026, 3, 29, 0, 30, 0, 0, time.UTC), time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC), "end in the gap: the jump to 03:00 CEST"},
		{fold, time.Date(2026, 10, 25, 0, 10, 0, 0, time.UTC), time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC), "first 02:30 (CEST)"},
		{fold, time.Date(2026, 10, 25, 1, 10, 0, 0, time.UTC), time.Date(2026, 10, 25, 1, 30, 0, 0, time.UTC), "repeated hour: second 02:30 (CET)"},
	} {
		got := c.w.End(c.from, loc)
		if !got.Equal(c.want) {
			t.Errorf("%s: End(%s) = %s, want %s", c.describe, c.from.In(loc), got.In(loc), c.want.In(loc))
		}
		if c.w.Contains(got, loc) {
			t.Errorf("%s: End is still inside the window", c.describe)
		}
	}
}

func FuzzParseWindow(f *testing.F) {
	for _, s := range []string{"22:00-07:00", "", "00:00-00:00", "23:59-00:00", "9:00-17:00", "22:00-07:0\x00"} {
		f.Add(s, int64(1764432000))
	}
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string, unix int64) {
		w, err := ParseWindow(s)
		if err != nil {
			if !errors.Is(err, ErrBadWindow) {
				t.Fatalf("error %v does not wrap ErrBadWindow", err)
			}
			return
		}
		if back, err := ParseWindow(w.String()); err != nil || back != w {
			t.Fatalf("round trip of %q: %q, %v", s, w.String(), err)
		}
		now := time.Unix(unix%(1<<40), 0)
		end := w.End(now, loc)
		if w.Contains(now, loc) {
			if !end.After(now) || w.Contains(end, loc) || end.Sub(now) > 25*time.Hour {
				t.Fatalf("%s at %s: End = %s", s, now, end)
			}
		} else if !end.Equal(now) {
			t.Fatalf("%s at %s: not quiet, End = %s", s, now, end)
		}
	})
}
