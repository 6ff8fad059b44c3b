package turn

import (
	"context"
	"errors"
	"log/slog"

	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/statuses"
)

// Reports is the intent store as status reports use it (statuses.Store).
type Reports = statuses.Store

// status applies a platform's report on a unit Parley sent (a KindStatus
// event). Ingress applies statuses as they arrive (docs/adr/0025); a
// status reaches the turn when ingress had to keep it (a failure reported
// before its unit's receipt, in a queue group of its own, so it holds up no
// conversation), or from a release that enqueued every status.
func (p *Processor) status(ctx context.Context, log *slog.Logger, ev message.Event) error {
	if ev.Status == nil || p.Reports == nil {
		log.Info("status dropped: statuses are not tracked", "outcome", "status_ignored")
		return nil
	}
	out, err := statuses.Record(ctx, p.Reports, log, ev, p.now())
	if err != nil {
		return err
	}
	if out == statuses.Wait {
		return consumer.Retry(errors.New("failure reported before the send was recorded"), statuses.Retry)
	}
	return nil
}
