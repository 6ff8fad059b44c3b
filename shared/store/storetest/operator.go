package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

// attentionIDs lists the intent ids on the attention index, oldest first.
func attentionIDs(t *testing.T, s Store) []string {
	t.Helper()
	es, err := s.Attention(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range es {
		ids = append(ids, e.IntentID)
	}
	return ids
}

// operatorDecisions: a unit held in unknown_after_send or failed is listed
// on the attention index, oldest first; an operator's resend puts it back
// to pending and the intent back on the sweeper's list, an abandon fails it
// for good as abandoned; each is a compare-and-set on the unit's state and
// attempt as the operator read it, so a second decision on the same view
// changes nothing.
func operatorDecisions(t *testing.T, s Store) {
	ctx := context.Background()
	send := func(id string, i int, at time.Time, last func(intent.Unit, int, time.Time) intent.Transition) intent.Intent {
		t.Helper()
		in, err := s.GetIntent(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		in, err = s.Apply(ctx, id, in.Closing(intent.Lease(in.Units[i], i, at, at.Add(time.Minute))))
		if err != nil {
			t.Fatal(err)
		}
		if in, err = s.Apply(ctx, id, in.Closing(last(in.Units[i], i, at))); err != nil {
			t.Fatal(err)
		}
		return in
	}
	for _, id := range []string{"held", "failed"} {
		if _, _, err := s.CreateIntent(ctx, newIntent(id, 1)); err != nil {
			t.Fatal(err)
		}
	}
	held := send("held", 0, t0.Add(time.Minute), func(u intent.Unit, i int, at time.Time) intent.Transition {
		return intent.MarkUnknown(u, i, at, "timeout", false)
	})
	failed := send("failed", 0, t0.Add(2*time.Minute), func(u intent.Unit, i int, at time.Time) intent.Transition {
		return intent.MarkFailed(u, i, at, message.FailPermission, "Forbidden")
	})
	if got := attentionIDs(t, s); !slices.Equal(got, []string{"held", "failed"}) {
		t.Fatalf("attention = %v, want held then failed, oldest first", got)
	}
	if !held.Units[0].NeedsOperator() || !failed.Units[0].NeedsOperator() || !held.SweepAt.IsZero() {
		t.Fatalf("held %+v, failed %+v: want both needing an operator, off the sweeper's list", held.Units[0], failed.Units[0])
	}

	now := t0.Add(time.Hour)
	resend := intent.OperatorResend(held.Units[0], 0, now)
	got, err := s.Apply(ctx, "held", resend)
	if err != nil {
		t.Fatal(err)
	}
	if u := got.Units[0]; u.State != message.UnitPending || u.FailureClass != "" || !u.Resent || u.Resends != 1 || u.Attempt != held.Units[0].Attempt {
		t.Fatalf("resent unit %+v: want pending, no failure, resent once, same attempt", u)
	}
	if !got.SweepAt.Equal(now.Add(intent.SweepGrace)) || !slices.Contains(due(t, s, now.Add(intent.SweepGrace)), "int#held@"+now.Add(intent.SweepGrace).Sub(t0).String()) {
		t.Fatalf("resent intent sweep at %v, due %v: want back on the list", got.SweepAt, due(t, s, now.Add(intent.SweepGrace)))
	}
	var conflict *store.IntentConflictError
	if _, err := s.Apply(ctx, "held", resend); !errors.As(err, &conflict) || conflict.Current.Units[0].State != message.UnitPending {
		t.Fatalf("the same resend again: %v, want a conflict showing the unit pending", err)
	}
	if _, err := s.Apply(ctx, "held", intent.Abandon(held.Units[0], 0, now, "gave up")); !errors.As(err, &conflict) {
		t.Fatalf("abandon on the stale held view: %v, want a conflict", err)
	}

	abandoned, err := s.Apply(ctx, "failed", failed.Closing(intent.Abandon(failed.Units[0], 0, now, "gave up: permission: Forbidden")))
	if err != nil {
		t.Fatal(err)
	}
	if u := abandoned.Units[0]; u.State != message.UnitFailed || u.FailureClass != message.FailAbandoned || u.NeedsOperator() {
		t.Fatalf("abandoned unit %+v: want failed, abandoned, needing nobody", u)
	}
	again, err := s.Apply(ctx, "failed", failed.Closing(intent.Abandon(failed.Units[0], 0, now, "gave up: permission: Forbidden")))
	if err != nil || again.Units[0].FailureClass != message.FailAbandoned {
		t.Fatalf("the same abandon again: %+v, %v; want it to stand, abandoned", again.Units[0], err)
	}
	// A decision on a held view of a unit another operator resent (it is
	// pending now) is refused: not any state a decision starts from, the
	// one the operator saw.
	if _, err := s.Apply(ctx, "held", intent.Abandon(held.Units[0], 0, now, "gave up")); !errors.As(err, &conflict) {
		t.Fatalf("abandon on the stale held view: %v, want a conflict", err)
	}
}
