package statuses_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/statuses"
	"github.com/parleyhq/parley/shared/store/dynamostore"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

var thread = message.Thread{Platform: message.WhatsApp, Account: "106540352242922", Chat: "15551230001"}

// counted is the real store with its writes counted, and a hook run before
// each write (another writer's move, between the read and the write).
type counted struct {
	*dynamostore.Store
	writes atomic.Int32
	before func()
}

func (c *counted) Apply(ctx context.Context, id string, t intent.Transition) (intent.Intent, error) {
	if c.before != nil {
		f := c.before
		c.before = nil
		f()
	}
	c.writes.Add(1)
	return c.Store.Apply(ctx, id, t)
}

type rig struct {
	t     *testing.T
	store *dynamostore.Store
	c     *counted
	in    intent.Intent
}

// newRig stores an intent of two units on thread: the first sent as
// "wamid.A", the second leased (sending).
func newRig(t *testing.T) *rig {
	t.Helper()
	env := emulatortest.New(t)
	st := dynamostore.New(env.DynamoDB, env.Resources.Table)
	r := &rig{t: t, store: st, c: &counted{Store: st}}
	in := intent.Intent{ID: intent.IDFor("evt#" + t.Name()), Origin: "evt#" + t.Name(), Thread: thread, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	for _, id := range []string{"b1#1", "b2#1"} {
		in.Units = append(in.Units, intent.Unit{ID: id, Content: message.Text("x"), State: message.UnitPending})
	}
	if _, _, err := st.CreateIntent(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	r.in = in
	r.apply(intent.Lease(r.unit(0), 0, t0, t0.Add(time.Minute)))
	r.apply(intent.MarkSent(r.unit(0), 0, t0, message.Receipt{MessageIDs: []string{"wamid.A"}}))
	r.apply(intent.Lease(r.unit(1), 1, t0, t0.Add(time.Minute)))
	return r
}

func (r *rig) apply(t intent.Transition) {
	r.t.Helper()
	var err error
	if r.in, err = r.store.Apply(r.t.Context(), r.in.ID, t); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) unit(i int) intent.Unit {
	r.t.Helper()
	in, err := r.store.GetIntent(r.t.Context(), r.in.ID)
	if err != nil {
		r.t.Fatal(err)
	}
	return in.Units[i]
}

func (r *rig) record(unit, wamid, state string) statuses.Outcome {
	r.t.Helper()
	st := message.Status{MessageID: wamid, State: state, Tag: intent.UnitKey(r.in.ID, unit)}
	if state == message.StatusFailed {
		st.Code, st.Reason = "131026", "Message undeliverable"
	}
	ev := message.Event{Platform: thread.Platform, Account: thread.Account, EventID: wamid + ":" + state, Kind: message.KindStatus, Thread: thread, Status: &st}
	out, err := statuses.Record(r.t.Context(), r.c, slog.New(slog.NewTextHandler(io.Discard, nil)), ev, t0)
	if err != nil {
		r.t.Fatal(err)
	}
	return out
}

// A status that changes its unit costs one write; the same status again, or
// an earlier one after a later, costs none.
func TestRecordWritesOnlyWhatChanges(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	steps := []struct {
		state  string
		want   statuses.Outcome
		writes int32
	}{
		{message.StatusSent, statuses.Recorded, 1},
		{message.StatusSent, statuses.Duplicate, 1},
		{message.StatusRead, statuses.Recorded, 2},
		{message.StatusDelivered, statuses.Duplicate, 2},
		{message.StatusRead, statuses.Duplicate, 2},
	}
	for _, s := range steps {
		if got := r.record("b1#1", "wamid.A", s.state); got != s.want || r.c.writes.Load() != s.writes {
			t.Fatalf("%s: %s after %d writes, want %s after %d", s.state, got, r.c.writes.Load(), s.want, s.writes)
		}
	}
	if u := r.unit(0); u.Reported != message.StatusRead || u.State != message.UnitSent {
		t.Fatalf("unit %s reported %q, want sent and read", u.State, u.Reported)
	}
}

// A failure reported before its unit's receipt waits, writing nothing; once
// the receipt is recorded the same status fails the unit, once.
func TestFailedStatusRacingTheReceipt(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	if got := r.record("b2#1", "wamid.B", message.StatusFailed); got != statuses.Wait || r.c.writes.Load() != 0 {
		t.Fatalf("failure before the receipt: %s after %d writes, want %s and none", got, r.c.writes.Load(), statuses.Wait)
	}
	if got := r.record("b2#1", "wamid.B", message.StatusDelivered); got != statuses.Early || r.c.writes.Load() != 0 {
		t.Fatalf("delivered before the receipt: %s, want %s", got, statuses.Early)
	}
	r.apply(intent.MarkSent(r.unit(1), 1, t0, message.Receipt{MessageIDs: []string{"wamid.B"}}))
	if got := r.record("b2#1", "wamid.B", message.StatusFailed); got != statuses.Failed {
		t.Fatalf("failure after the receipt: %s, want %s", got, statuses.Failed)
	}
	u := r.unit(1)
	if u.State != message.UnitFailed || u.FailureClass != message.FailPermission || u.FailureReason != "status 131026 Message undeliverable" {
		t.Fatalf("unit %+v: want failed with the platform's code", u)
	}
	if got := r.record("b2#1", "wamid.B", message.StatusFailed); got != statuses.Stale || r.c.writes.Load() != 1 {
		t.Fatalf("the failure again: %s after %d writes, want %s and no second write", got, r.c.writes.Load(), statuses.Stale)
	}
}

// The unit moves between the status's read and its write: the conflict
// returns the unit as it is, and the status is decided again on it.
func TestRecordDecidesAgainAfterAConflict(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.apply(intent.MarkUnknown(r.unit(1), 1, t0, "timeout", false))
	// A report of the unknown unit would mark it sent; the resend's own
	// receipt lands first.
	r.c.before = func() {
		r.apply(intent.Resend(r.unit(1), 1, t0, t0.Add(time.Minute)))
		r.apply(intent.MarkSent(r.unit(1), 1, t0, message.Receipt{MessageIDs: []string{"wamid.B"}}))
	}
	if got := r.record("b2#1", "wamid.B", message.StatusDelivered); got != statuses.Recorded || r.c.writes.Load() != 2 {
		t.Fatalf("after a conflict: %s after %d writes, want %s after 2", got, r.c.writes.Load(), statuses.Recorded)
	}
	if u := r.unit(1); u.State != message.UnitSent || u.Reported != message.StatusDelivered {
		t.Fatalf("unit %s reported %q, want sent and delivered", u.State, u.Reported)
	}
}

// A status naming no unit of its thread writes nothing.
func TestStatusForAnUnknownUnit(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	if got := r.record("b9#1", "wamid.A", message.StatusFailed); got != statuses.Unmatched {
		t.Fatalf("unknown unit: %s", got)
	}
	id := r.in.ID
	r.in.ID = intent.IDFor("evt#nobody")
	if got := r.record("b1#1", "wamid.A", message.StatusFailed); got != statuses.Unmatched {
		t.Fatalf("unknown intent: %s", got)
	}
	r.in.ID = id
	if n := r.c.writes.Load(); n != 0 {
		t.Fatalf("%d writes for statuses of no unit", n)
	}
	if u := r.unit(0); u.State != message.UnitSent {
		t.Fatalf("unit moved to %s", u.State)
	}
}
