package statuses

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

// Store is the intent store as statuses use it: read the unit a status
// names and move it by compare-and-set.
type Store interface {
	GetIntent(ctx context.Context, id string) (intent.Intent, error)
	Apply(ctx context.Context, id string, t intent.Transition) (intent.Intent, error)
}

// Outcome is what became of a status, logged as the stable field "outcome".
type Outcome string

const (
	// Recorded: the status moved its unit (one conditional write).
	Recorded Outcome = "status_recorded"
	// Failed: a failed status failed its sent unit (one conditional write).
	Failed Outcome = "status_failed"
	// Unmatched: the status names no unit of its thread; nothing is written.
	Unmatched Outcome = "status_unmatched"
	// Early: a sent, delivered or read status of a unit whose receipt is
	// not recorded yet; dropped, since the receipt is proof enough that the
	// send happened.
	Early Outcome = "status_early"
	// Wait: a failed status of a unit whose receipt is not recorded yet.
	// Nothing is written; the caller keeps the status and looks again
	// later (Retry), because the failure must reach its unit.
	Wait Outcome = "status_wait"
	// Stale: the unit is settled, or went out as another message.
	Stale Outcome = "status_stale"
	// Duplicate: the unit already holds this report or a later one.
	Duplicate Outcome = "status_duplicate"
)

// Retry is how long a status that must Wait is kept before it is looked at
// again: the sender records the receipt within seconds of the send.
const Retry = 10 * time.Second

// conflicts bounds how often one status decides again after the unit moved
// under it: each conflict returns the unit as it is now, so a second
// decision usually settles it.
const conflicts = 3

// rank orders delivery reports, so a late "delivered" never overwrites
// "read".
func rank(state string) int {
	return slices.Index([]string{"", message.StatusSent, message.StatusDelivered, message.StatusRead}, state)
}

// Record applies a platform's report on a unit Parley sent (a
// message.KindStatus event): at most one read and one conditional write, and
// no write at all when the status changes nothing. The report names its unit
// by the tag the sender attached (the unit's idempotency key), and must come
// from the thread the unit went to. A failure fails a sent unit with the
// platform's code; a report of a unit held in unknown_after_send proves it
// left and settles the doubt; delivered and read are kept on the unit, the
// furthest one winning. Applying a status twice changes nothing the second
// time, so no dedupe key is needed.
//
// The error is the store's: the status is not applied, and its caller keeps
// it for a retry. Wait asks the same of a failed status that came before
// its unit's receipt.
func Record(ctx context.Context, s Store, log *slog.Logger, ev message.Event, now time.Time) (Outcome, error) {
	st := ev.Status
	if st == nil {
		return Unmatched, nil
	}
	id, unitID, ok := intent.ParseUnitKey(st.Tag)
	if !ok {
		log.Info("status dropped: it names no unit", "outcome", Unmatched, "state", st.State)
		return Unmatched, nil
	}
	log = log.With("intent_id", id, "unit_id", unitID, "state", st.State)
	// Strongly consistent (the store's only read): a status follows its
	// send within a second, and a stale copy would see the unit before its
	// receipt, dropping a report that belongs to it.
	in, err := s.GetIntent(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		log.Info("status dropped: no such intent", "outcome", Unmatched)
		return Unmatched, nil
	}
	if err != nil {
		return "", fmt.Errorf("read intent for status: %w", err)
	}
	for range conflicts {
		out, t := decide(in, unitID, ev, now)
		if t == nil {
			logOutcome(log, out, in, unitID)
			return out, nil
		}
		_, err = s.Apply(ctx, id, in.Closing(*t))
		var conflict *store.IntentConflictError
		if errors.As(err, &conflict) {
			// The unit moved between the read and the write (its sender
			// recorded it): decide again on the unit as it is now.
			in = conflict.Current
			continue
		}
		if err != nil {
			return "", fmt.Errorf("status %s: %w", t.Name, err)
		}
		if out == Failed {
			log.Error("unit failed after it was sent: the platform reported it undelivered", "outcome", out,
				"failure_class", string(t.FailureClass), "code", st.Code)
			return out, nil
		}
		log.Info("status recorded", "outcome", out, "transition", t.Name)
		return out, nil
	}
	return "", fmt.Errorf("status on intent %s: %w", id, store.ErrConflict)
}

// decide is what st does to unit unitID of in: an outcome, and the
// transition to apply when there is one.
func decide(in intent.Intent, unitID string, ev message.Event, now time.Time) (Outcome, *intent.Transition) {
	st := ev.Status
	i := in.Index(unitID)
	// A tag is only a claim: the report must come from the thread the unit
	// went to, on the account that sent it.
	if i < 0 || in.Thread.Key() != ev.Thread.Key() {
		return Unmatched, nil
	}
	u := in.Units[i]
	var t intent.Transition
	out := Recorded
	switch {
	case u.State == message.UnitUnknown && st.State != message.StatusFailed:
		// The platform reports on the message: the send happened.
		t = intent.MarkSent(u, i, now, message.Receipt{MessageIDs: []string{st.MessageID}})
	case u.State == message.UnitUnknown:
		// Failed, but it did leave: the doubt ends as a failure.
		t = intent.GiveUp(u, i, now, "reported failed after an unknown outcome: "+failure(st))
	case u.State == message.UnitPending || u.State == message.UnitSending:
		if st.State != message.StatusFailed {
			return Early, nil
		}
		return Wait, nil
	case u.State != message.UnitSent || !slices.Contains(u.Receipt, st.MessageID):
		return Stale, nil
	case st.State == message.StatusFailed:
		class := st.Class
		if class == "" {
			class = message.FailPermission
		}
		t, out = intent.MarkUndelivered(u, i, now, class, failure(st)), Failed
	case rank(st.State) > rank(u.Reported):
		t = intent.Report(u, i, now, st.State)
	default:
		return Duplicate, nil
	}
	return out, &t
}

// logOutcome logs a status that wrote nothing.
func logOutcome(log *slog.Logger, out Outcome, in intent.Intent, unitID string) {
	switch out {
	case Unmatched:
		log.Warn("status dropped: the tag names no unit of this thread", "outcome", out)
	case Early:
		log.Info("status dropped: its unit is still being sent", "outcome", out)
	case Wait:
		log.Info("status kept: failure reported before the send was recorded", "outcome", out)
	case Stale:
		state := ""
		if i := in.Index(unitID); i >= 0 {
			state = string(in.Units[i].State)
		}
		log.Info("status dropped: the unit is settled or was sent as another message", "outcome", out, "unit_state", state)
	default:
		log.Info("status kept: nothing new", "outcome", out)
	}
}

// failure is a failed status's reason as the unit keeps it: the platform's
// code and title, never message text.
func failure(st *message.Status) string {
	return strings.TrimSpace("status " + st.Code + " " + st.Reason)
}
