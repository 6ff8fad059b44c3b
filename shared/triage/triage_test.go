package triage_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
	"github.com/parleyhq/parley/shared/triage"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

var conv = message.Thread{Platform: message.Telegram, Account: "7000000001", Chat: "42"}

func event(id string) message.Event {
	return message.Event{Platform: message.Events, Account: "alerts", EventID: id, Kind: message.KindProactive, Thread: conv, Text: "disk full"}
}

func setup(t *testing.T, cfg triage.Config) (*triage.Triage, *dynamostore.Store) {
	t.Helper()
	env := emulatortest.New(t)
	st := dynamostore.New(env.DynamoDB, env.Resources.Table)
	tr, err := triage.New(cfg, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tr, st
}

func berlin(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func local(t *testing.T, s string) time.Time {
	t.Helper()
	tt, err := time.ParseInLocation("2006-01-02 15:04", s, berlin(t))
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

func admit(t *testing.T, tr *triage.Triage, id string, now time.Time) triage.Decision {
	t.Helper()
	d, err := tr.Admit(context.Background(), event(id), now, "")
	if err != nil {
		t.Fatalf("Admit(%s at %s): %v", id, now, err)
	}
	return d
}

func want(t *testing.T, d triage.Decision, accepted bool, reason string) {
	t.Helper()
	if d.Accepted != accepted || d.Reason != reason {
		t.Fatalf("decision = accepted %v reason %q; want accepted %v reason %q", d.Accepted, d.Reason, accepted, reason)
	}
}

func counter(t *testing.T, st *dynamostore.Store) triage.Counter {
	t.Helper()
	c, err := st.GetCounter(context.Background(), triage.CounterKey(conv))
	if err != nil {
		t.Fatalf("GetCounter: %v", err)
	}
	return c
}

func TestQuietHoursSuppressWithoutWriting(t *testing.T) {
	t.Parallel()
	tr, st := setup(t, triage.Config{Default: triage.Policy{TimeZone: "Europe/Berlin", QuietHours: "22:00-07:00", DailyCap: 5}})
	want(t, admit(t, tr, "a", local(t, "2026-11-29 23:30")), false, triage.ReasonQuietHours)
	if _, err := st.GetCounter(context.Background(), triage.CounterKey(conv)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("quiet hours wrote a counter: %v", err)
	}
	d := admit(t, tr, "b", local(t, "2026-11-30 07:00"))
	want(t, d, true, "")
	if !d.NotBefore.IsZero() || d.Revert == nil {
		t.Fatalf("accepted decision = %+v, want no NotBefore and a Revert", d)
	}
	if c := counter(t, st); c.Days["2026-11-30"] != 1 {
		t.Fatalf("counter = %+v", c)
	}
}

func TestDeferCountsAsOfQuietHoursEnd(t *testing.T) {
	t.Parallel()
	tr, st := setup(t, triage.Config{Default: triage.Policy{
		TimeZone: "Europe/Berlin", QuietHours: "22:00-07:00", QuietMode: triage.QuietDefer, Cooldown: time.Minute, DailyCap: 3,
	}})
	d := admit(t, tr, "a", local(t, "2026-10-24 23:30"))
	want(t, d, true, "")
	end := local(t, "2026-10-25 07:00") // 06:00 UTC: the day DST ends
	if !d.NotBefore.Equal(end) || !end.Equal(time.Date(2026, 10, 25, 6, 0, 0, 0, time.UTC)) {
		t.Fatalf("NotBefore = %s, want %s", d.NotBefore, end)
	}
	c := counter(t, st)
	if !c.Last.Equal(end) || c.Days["2026-10-25"] != 1 || len(c.Days) != 1 {
		t.Fatalf("counter = %+v, want one event on 2026-10-25 at its 07:00", c)
	}
	// The rest of the night's events fall within the cooldown of that one
	// morning delivery, and change nothing.
	want(t, admit(t, tr, "b", local(t, "2026-10-25 03:00")), false, triage.ReasonCooldown)
	want(t, admit(t, tr, "c", local(t, "2026-10-25 06:59")), false, triage.ReasonCooldown)
	if after := counter(t, st); !reflect.DeepEqual(after, c) {
		t.Fatalf("suppressed events changed the counter:\nbefore %+v\nafter  %+v", c, after)
	}
	d = admit(t, tr, "d", local(t, "2026-10-25 07:01"))
	want(t, d, true, "")
	if !d.NotBefore.IsZero() {
		t.Fatalf("an event after quiet hours is not deferred: %+v", d)
	}
}

func TestDailyCapRollsOverAtLocalMidnight(t *testing.T) {
	t.Parallel()
	tr, _ := setup(t, triage.Config{Default: triage.Policy{TimeZone: "Europe/Berlin", DailyCap: 1}})
	// Fall back: 2026-10-25 has 25 hours. Local midnight is 23:00 UTC, when
	// the UTC day has an hour to go.
	want(t, admit(t, tr, "a", local(t, "2026-10-25 23:30").Add(-time.Hour)), true, "")
	want(t, admit(t, tr, "b", local(t, "2026-10-25 23:59")), false, triage.ReasonDailyCap)
	want(t, admit(t, tr, "c", time.Date(2026, 10, 25, 23, 0, 0, 0, time.UTC)), true, "") // 00:00 local, 10-26
	want(t, admit(t, tr, "d", time.Date(2026, 10, 25, 23, 30, 0, 0, time.UTC)), false, triage.ReasonDailyCap)

	// Spring forward: 2026-03-29 00:30 local is still 03-28 in UTC.
	want(t, admit(t, tr, "e", local(t, "2026-03-28 12:00")), true, "")
	want(t, admit(t, tr, "f", local(t, "2026-03-28 23:59")), false, triage.ReasonDailyCap)
	want(t, admit(t, tr, "g", local(t, "2026-03-29 00:30")), true, "")
	want(t, admit(t, tr, "h", local(t, "2026-03-29 23:30")), false, triage.ReasonDailyCap)
}

func TestRevertGivesBackCapAndCooldown(t *testing.T) {
	t.Parallel()
	tr, st := setup(t, triage.Config{Default: triage.Policy{Cooldown: time.Hour, DailyCap: 2}})
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	want(t, admit(t, tr, "a", now), true, "")
	before := counter(t, st)
	d := admit(t, tr, "b", now.Add(2*time.Hour))
	want(t, d, true, "")
	if err := d.Revert(context.Background()); err != nil {
		t.Fatal(err)
	}
	if after := counter(t, st); after.Days["2026-11-29"] != 1 || !after.Last.Equal(before.Last) || after.Token != before.Token {
		t.Fatalf("after revert = %+v, want %+v", after, before)
	}
	// Reverting twice is harmless: the second finds nothing of its own.
	if err := d.Revert(context.Background()); err != nil {
		t.Fatal(err)
	}
	want(t, admit(t, tr, "c", now.Add(2*time.Hour)), true, "")
}

func TestNoRulesNoWrites(t *testing.T) {
	t.Parallel()
	tr, st := setup(t, triage.Config{})
	for i := range 5 {
		d := admit(t, tr, string(rune('a'+i)), time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC))
		want(t, d, true, "")
		if d.Revert != nil {
			t.Fatal("nothing was counted, so nothing to revert")
		}
	}
	if _, err := st.GetCounter(context.Background(), triage.CounterKey(conv)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("no rules, yet a counter: %v", err)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	env := emulatortest.New(t)
	st := dynamostore.New(env.DynamoDB, env.Resources.Table)
	if _, err := triage.New(triage.Config{Default: triage.Policy{QuietHours: "late"}}, st, nil); err == nil {
		t.Fatal("New accepted bad quiet hours")
	}
	if _, err := triage.New(triage.Config{}, nil, nil); err == nil {
		t.Fatal("New accepted no counter store")
	}
}
