package triage

import (
	"errors"
	"fmt"
	"time"
)

// ErrBadWindow is returned by ParseWindow.
var ErrBadWindow = errors.New("triage: quiet hours must be HH:MM-HH:MM")

// Window is a daily span of wall-clock time, such as quiet hours from 22:00
// to 07:00. It may wrap midnight. A Window whose start equals its end (and the
// zero Window) is empty: never quiet.
type Window struct {
	start, end int // minutes after local midnight, 0..1439
}

// ParseWindow reads "HH:MM-HH:MM" (24-hour clock, 00:00 to 23:59, both
// ends). The empty string is the empty Window.
func ParseWindow(s string) (Window, error) {
	if s == "" {
		return Window{}, nil
	}
	a, b, ok := cutDash(s)
	if !ok {
		return Window{}, fmt.Errorf("%w, got %q", ErrBadWindow, s)
	}
	start, err1 := clock(a)
	end, err2 := clock(b)
	if err1 != nil || err2 != nil {
		return Window{}, fmt.Errorf("%w, got %q", ErrBadWindow, s)
	}
	if start == end {
		return Window{}, nil // never quiet: one form of the empty window
	}
	return Window{start: start, end: end}, nil
}

func cutDash(s string) (string, string, bool) {
	if len(s) != len("HH:MM-HH:MM") || s[5] != '-' {
		return "", "", false
	}
	return s[:5], s[6:], true
}

// clock reads "HH:MM" into minutes after midnight.
func clock(s string) (int, error) {
	if len(s) != 5 || s[2] != ':' {
		return 0, ErrBadWindow
	}
	h, ok1 := twoDigits(s[0:2])
	m, ok2 := twoDigits(s[3:5])
	if !ok1 || !ok2 || h > 23 || m > 59 {
		return 0, ErrBadWindow
	}
	return h*60 + m, nil
}

func twoDigits(s string) (int, bool) {
	if s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return 0, false
	}
	return int(s[0]-'0')*10 + int(s[1]-'0'), true
}

// Empty reports whether the window never contains anything.
func (w Window) Empty() bool { return w.start == w.end }

// String renders the window as ParseWindow reads it; "" when empty.
func (w Window) String() string {
	if w.Empty() {
		return ""
	}
	return fmt.Sprintf("%02d:%02d-%02d:%02d", w.start/60, w.start%60, w.end/60, w.end%60)
}

// Contains reports whether t's wall clock in loc falls inside the window:
// from its start (included) to its end (excluded). Reading the wall clock in
// loc keeps the boundaries at local time across DST changes.
func (w Window) Contains(t time.Time, loc *time.Location) bool {
	if w.Empty() {
		return false
	}
	lt := t.In(loc)
	m := lt.Hour()*60 + lt.Minute()
	if w.start < w.end {
		return w.start <= m && m < w.end
	}
	return m >= w.start || m < w.end // wraps midnight
}

// End returns the first instant after t at which the window no longer
// contains the time: when quiet hours are over. It returns t when t is not
// inside the window.
func (w Window) End(t time.Time, loc *time.Location) time.Time {
	if !w.Contains(t, loc) {
		return t
	}
	lt := t.In(loc)
	day := lt.Day()
	if w.start > w.end && lt.Hour()*60+lt.Minute() >= w.start {
		day++ // the evening half of a window that wraps midnight
	}
	// Within one zone offset the wall clock runs evenly, so the end is its
	// wall-clock time at t's offset, if no DST change comes first.
	_, offset := lt.Zone()
	end := time.Date(lt.Year(), lt.Month(), day, w.end/60, w.end%60, 0, 0, time.FixedZone("", offset))
	if _, change := lt.ZoneBounds(); change.IsZero() || end.Before(change) {
		return end.In(loc)
	}
	// A DST change comes first: the end's wall-clock time may not exist
	// that day, or exist twice. Find the first free minute by walking,
	// which is right by construction (zone offsets are whole minutes).
	u := t.Truncate(time.Minute)
	for range 26 * 60 {
		u = u.Add(time.Minute)
		if !w.Contains(u, loc) {
			return u
		}
	}
	return t // unreachable: a window is shorter than a day
}
