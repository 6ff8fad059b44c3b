// Package sweeper finds and mends stuck work: the safety net under Parley's
// queues. A scheduled function runs it (every minute in AWS, every few
// seconds under make run).
//
// # What it looks at
//
// The state table's sweep index lists exactly the items nobody else may
// come back for, each due when it should have made progress by (see
// resources.Sweep). One Query takes what is due, oldest first, at most
// Processor.Limit items a run; each item is read again (the index is
// eventually consistent) and mended by what it is:
//
//   - a send intent still open: when its first open unit is pending and due
//     (or sending past its lease), nothing in flight is going to deliver it
//     (its outbound message was deleted, or dead-lettered): the sweeper
//     enqueues a message naming the intent's last unit on the thread's group,
//     so delivery takes every open unit, in order, behind whatever the thread
//     has queued. A unit waiting for its retry time, or leased right now,
//     only moves the item's time. Units held in unknown_after_send are
//     reported.
//   - a turn claim still pending past its lease: a turn was cut off and no
//     retry has taken it over. Reported (its inbound message comes back by
//     its visibility timeout, or is in the DLQ), then taken off the list.
//   - a deferred event that is due: enqueued on its thread's group, then its
//     claim moves to enqueued.
//   - a question left open past its expiry: cancelled, and its cancel
//     enqueued on the thread's group, so the agent hears it.
//   - a live preview's record (pv#, on the list from when it is written):
//     dropped once the reply's first bubble finalized the preview; cleared
//     on the platform, then dropped, when its turn ended without settling
//     it (Processor.Previewers); left to a turn that is still to run.
//
// An item a run cannot mend (the queue refuses its message, its record does
// not read) is logged and set back behind the items due now, to be tried
// again at the next run, after them: one that keeps failing never keeps the
// items after it from being looked at.
//
// # Guarantees
//
// Every change is a compare-and-set on the item's sweep time, and every
// message it enqueues is deduplicated, so two runs at once, or a run that
// crashes half-way, do no harm: a re-driven unit is delivered once (the
// intent's states decide), a deferred event is enqueued once (its event key
// is the deduplication id, and the turn's claim absorbs a late repeat). When
// there is nothing to do, a run costs one Query. Each finding is one log line
// with a stable "finding" field that is also an EMF Sweep metric.
package sweeper
