package dynamostore_test

import (
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
)

// TestBusyRecord: a message received before the thread's last turn ended
// opens a collection, later ones join it in order (a repeat answers as the
// first time), one that would take it over its bound waits, and the
// flush's end clears it (once); a message after the end runs alone. The
// interrupt marks name the turn before, also when repeated.
func TestBusyRecord(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	s := dynamostore.New(env.DynamoDB, env.Resources.Table)
	ctx := t.Context()
	const th = "telegram:1:42"
	t0 := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	join := func(key string, body string, at time.Time) store.Joined {
		t.Helper()
		j, err := s.JoinBusy(ctx, th, key, []byte(body), at, t0, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	if j := join("m1", "one", t0); j != store.JoinedNot {
		t.Fatalf("first message of an idle thread: %v", j)
	}
	if err := s.EndBusy(ctx, th, "", t0.Add(10*time.Second), time.Hour); err != nil {
		t.Fatal(err)
	}
	if j := join("m2", "two", t0.Add(2*time.Second)); j != store.JoinedOpened {
		t.Fatalf("m2: %v, want it to open the collection", j)
	}
	if j := join("m3", "three", t0.Add(3*time.Second)); j != store.JoinedCollection {
		t.Fatalf("m3: %v", j)
	}
	if j := join("m2", "two", t0.Add(2*time.Second)); j != store.JoinedOpened {
		t.Fatalf("m2 again: %v, want its own answer", j)
	}
	if j := join("m3", "three", t0.Add(3*time.Second)); j != store.JoinedCollection {
		t.Fatalf("m3 again: %v", j)
	}
	if j := join("big", strings.Repeat("x", store.MaxCollectedBytes), t0.Add(4*time.Second)); j != store.JoinedFull {
		t.Fatalf("a message over the bound: %v", j)
	}
	b, err := s.GetBusy(ctx, th)
	if err != nil || b.Open != "m2" || len(b.Collected) != 2 || string(b.Collected[0]) != "two" || string(b.Collected[1]) != "three" {
		t.Fatalf("record %+v, %v", b, err)
	}
	for range 2 {
		if err := s.EndBusy(ctx, th, "m2", t0.Add(20*time.Second), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ = s.GetBusy(ctx, th); b.Open != "" || len(b.Collected) != 0 || !b.End.Equal(t0.Add(20*time.Second)) {
		t.Fatalf("after the flush: %+v", b)
	}
	if j := join("m4", "four", t0.Add(25*time.Second)); j != store.JoinedNot {
		t.Fatalf("a message after the end: %v", j)
	}

	for _, c := range []struct{ id, prev string }{{"i1", ""}, {"i2", "i1"}, {"i2", "i1"}, {"i3", "i2"}} {
		prev, err := s.MarkTurn(ctx, th, c.id, t0, time.Hour)
		if err != nil || prev != c.prev {
			t.Fatalf("MarkTurn(%s) = %q, %v; want %q", c.id, prev, err, c.prev)
		}
	}
}
