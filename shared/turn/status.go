package turn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

// Reports is the intent store as status reports use it: read the unit a
// status names and move it by compare-and-set.
type Reports interface {
	GetIntent(ctx context.Context, id string) (intent.Intent, error)
	Apply(ctx context.Context, id string, t intent.Transition) (intent.Intent, error)
}

// statusWait is how long a status for a unit still being sent waits before
// it is looked at again: the sender records the receipt within seconds.
const statusWait = 10 * time.Second

// rank orders delivery reports, so a late "delivered" never overwrites
// "read".
func rank(state string) int {
	return slices.Index([]string{"", message.StatusSent, message.StatusDelivered, message.StatusRead}, state)
}

// status records a platform's report on a unit Parley sent (a KindStatus
// event). The report names its unit by the tag the sender attached: the
// unit's idempotency key. A failure fails a sent unit with the platform's
// code, for an operator; a report of a unit held in unknown_after_send
// proves it was sent and settles the doubt; delivered and read are kept on
// the unit. A status that names no unit of this thread changes nothing.
func (p *Processor) status(ctx context.Context, log *slog.Logger, ev message.Event) error {
	st := ev.Status
	if st == nil || p.Reports == nil {
		log.Info("status dropped: statuses are not tracked", "outcome", "status_ignored")
		return nil
	}
	id, unitID, ok := intent.ParseUnitKey(st.Tag)
	if !ok {
		log.Info("status dropped: it names no unit", "outcome", "status_unmatched", "state", st.State)
		return nil
	}
	log = log.With("intent_id", id, "unit_id", unitID, "state", st.State)
	in, err := p.Reports.GetIntent(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		log.Info("status dropped: no such intent", "outcome", "status_unmatched")
		return nil
	}
	if err != nil {
		return fmt.Errorf("read intent for status: %w", err)
	}
	i := in.Index(unitID)
	// A tag is only a claim: the report must come from the thread the unit
	// went to, on the account that sent it.
	if i < 0 || in.Thread.Key() != ev.Thread.Key() {
		log.Warn("status dropped: the tag names no unit of this thread", "outcome", "status_unmatched")
		return nil
	}
	u := in.Units[i]
	now := p.now()
	var t intent.Transition
	switch {
	case u.State == message.UnitUnknown && st.State != message.StatusFailed:
		// The platform reports on the message: the send happened.
		t = intent.MarkSent(u, i, now, message.Receipt{MessageIDs: []string{st.MessageID}})
	case u.State == message.UnitUnknown:
		// Failed, but it did leave: the doubt ends as a failure.
		t = intent.GiveUp(u, i, now, "reported failed after an unknown outcome: "+failure(st))
	case u.State == message.UnitPending || u.State == message.UnitSending:
		if st.State != message.StatusFailed {
			log.Info("status dropped: its unit is still being sent", "outcome", "status_early")
			return nil
		}
		return consumer.Retry(errors.New("failure reported before the send was recorded"), statusWait)
	case u.State != message.UnitSent || !slices.Contains(u.Receipt, st.MessageID):
		log.Info("status dropped: the unit is settled or was sent as another message", "outcome", "status_stale", "unit_state", string(u.State))
		return nil
	case st.State == message.StatusFailed:
		class := st.Class
		if class == "" {
			class = message.FailPermission
		}
		t = intent.MarkUndelivered(u, i, now, class, failure(st))
	case rank(st.State) > rank(u.Reported):
		t = intent.Report(u, i, now, st.State)
	default:
		log.Info("status kept: nothing new", "outcome", "status_duplicate")
		return nil
	}
	_, err = p.Reports.Apply(ctx, id, in.Closing(t))
	var conflict *store.IntentConflictError
	if errors.As(err, &conflict) {
		// The unit moved between the read and the write (its sender
		// recorded it): look again shortly.
		return consumer.Retry(fmt.Errorf("status %s: %w", t.Name, err), statusWait)
	}
	if err != nil {
		return fmt.Errorf("status %s: %w", t.Name, err)
	}
	if t.To == message.UnitFailed {
		log.Error("unit failed after it was sent: the platform reported it undelivered", "outcome", "status_failed",
			"failure_class", string(t.FailureClass), "code", st.Code)
		return nil
	}
	log.Info("status recorded", "outcome", "status_recorded", "transition", t.Name)
	return nil
}

// failure is a failed status's reason as the unit keeps it: the platform's
// code and title, never message text.
func failure(st *message.Status) string {
	return strings.TrimSpace("status " + st.Code + " " + st.Reason)
}
