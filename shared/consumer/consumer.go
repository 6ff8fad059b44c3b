package consumer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/parleyhq/parley/shared/queue"
)

// Record is one SQS record with its parsed attributes.
type Record struct {
	events.SQSMessage
	// Group is the record's MessageGroupId.
	Group string
	// ReceiveCount is ApproximateReceiveCount: 1 on the first delivery.
	ReceiveCount int
}

// HandlerFunc processes one record. nil means done: the record is deleted.
type HandlerFunc func(ctx context.Context, r Record) error

// Visibility parks a received message: visible again after d.
type Visibility interface {
	ChangeVisibility(ctx context.Context, receiptHandle string, d time.Duration) error
}

// RetryError asks for the record to be retried after After.
type RetryError struct {
	After time.Duration
	Err   error
}

func (e *RetryError) Error() string {
	if e.Err == nil {
		return "retry after " + e.After.String()
	}
	return e.Err.Error() + " (retry after " + e.After.String() + ")"
}

func (e *RetryError) Unwrap() error { return e.Err }

// Retry wraps err so the record is retried after d: exactly d, or, when d
// reaches past what SQS allows (12 hours from the receive), as late as it
// allows. A handler asked to wait longer must find the rest of its wait in
// its own state when the record comes back, and ask again.
func Retry(err error, d time.Duration) error { return &RetryError{After: d, Err: err} }

// ParkedError reports a record its handler parked itself: it set the
// message's visibility on the queue before returning, and a change made
// after that (a wake, ChangeMessageVisibility to zero from another
// function) must stand. The consumer reports the record failed, so it is
// not deleted, and leaves its visibility alone. The rest of its group in
// the batch goes back visible at once: SQS FIFO serves none of them while
// the parked message is in flight, and they must not be held past it.
type ParkedError struct{ Err error }

func (e *ParkedError) Error() string { return "parked: " + e.Err.Error() }

func (e *ParkedError) Unwrap() error { return e.Err }

// Parked wraps err for a record whose handler parked its message itself.
func Parked(err error) error { return &ParkedError{Err: err} }

// DeadLetterError asks for a record that can never be processed (it does
// not decode, or its work has run out of time) to go to the dead-letter
// queue now, alone.
type DeadLetterError struct{ Err error }

func (e *DeadLetterError) Error() string { return "dead letter: " + e.Err.Error() }

func (e *DeadLetterError) Unwrap() error { return e.Err }

// DeadLetter wraps err so the record is moved to the dead-letter queue.
func DeadLetter(err error) error { return &DeadLetterError{Err: err} }

// DeadLetters is the dead-letter queue of the consumed queue.
type DeadLetters interface {
	Send(ctx context.Context, m queue.Message) error
}

// MaxVisibility is the longest SQS keeps a received message invisible,
// counted from its receive: a ChangeMessageVisibility reaching past it is
// refused.
const MaxVisibility = 12 * time.Hour

// receiveMargin covers the time between the event source mapping's receive
// and the invocation, which the consumer cannot see.
const receiveMargin = 5 * time.Minute

// Consumer runs batches. Configure it once; Handle is safe for concurrent use.
type Consumer struct {
	// Handle processes one record.
	Handle HandlerFunc
	// Visibility schedules retries. Required.
	Visibility Visibility
	// Backoff is the delay before retrying a record that failed without a
	// Retry delay, given its receive count. Defaults to Backoff.
	Backoff func(receiveCount int) time.Duration
	// Reserve is the time kept before the deadline to report. Defaults to
	// 2 seconds.
	Reserve time.Duration
	// MinStart is the least time left that a record needs to be started.
	// Defaults to 5 seconds.
	MinStart time.Duration
	// Groups is how many message groups run at once. Defaults to 10.
	Groups int
	// DeadLetters takes the records a handler dead-letters (DeadLetter) or
	// panics on. Moving such a record itself, instead of returning it until
	// its receive count reaches the queue's maxReceiveCount, keeps it from
	// holding up its group and from dragging the group's later records to
	// the DLQ with it (each return counts a receive for them too). Nil:
	// such records are returned at once and reach the DLQ by the redrive
	// policy.
	DeadLetters DeadLetters
	// Now is the clock the 12-hour visibility rule is measured with.
	// Defaults to time.Now.
	Now func() time.Time
	// Log receives one line per failed record. Defaults to slog.Default().
	Log *slog.Logger
	// Correlate names the message a record carries, as fields of the
	// consumer's lines about it (an inbound event's event_key, an outbound
	// unit's intent_id), so a query for one message finds them too. Nil:
	// the lines name the record only.
	Correlate func(Record) []any
}

// about is log with the fields that name r's message.
func (c *Consumer) about(log *slog.Logger, r Record) *slog.Logger {
	if c.Correlate == nil {
		return log
	}
	return log.With(c.Correlate(r)...)
}

// Backoff is the default retry delay: exponential from 2 s, capped at 5
// minutes, with full jitter over its upper half so retries of many threads
// spread out.
func Backoff(receiveCount int) time.Duration {
	return BackoffFrom(receiveCount, rand.N[time.Duration])
}

// BackoffFrom is Backoff with its jitter drawn by jitter(n), a value in
// [0, n): a simulation draws it from its seeded source.
func BackoffFrom(receiveCount int, jitter func(n time.Duration) time.Duration) time.Duration {
	d := 2 * time.Second
	for i := 1; i < receiveCount && d < 5*time.Minute; i++ {
		d *= 2
	}
	d = min(d, 5*time.Minute)
	return d/2 + jitter(d/2+1)
}

// outcome is what became of one record.
type outcome struct {
	failed bool
	after  time.Duration
	// parked: the handler set the visibility itself (ParkedError).
	parked bool
}

// HandleSQS processes a batch and reports its failures. It never returns an
// error: a returned error would make Lambda retry the whole batch.
func (c *Consumer) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	reserve := cmp.Or(c.Reserve, 2*time.Second)
	minStart := cmp.Or(c.MinStart, 5*time.Second)
	log := c.Log
	if log == nil {
		log = slog.Default()
	}

	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	start := now()

	workCtx := ctx
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		workCtx, cancel = context.WithDeadline(ctx, dl.Add(-reserve))
		defer cancel()
	}

	// Records by group, in batch order.
	var order []string
	groups := map[string][]int{}
	recs := make([]Record, len(ev.Records))
	for i, m := range ev.Records {
		recs[i] = Record{SQSMessage: m, Group: m.Attributes["MessageGroupId"]}
		recs[i].ReceiveCount, _ = strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
		g := recs[i].Group
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], i)
	}

	outcomes := make([]outcome, len(recs))
	sem := make(chan struct{}, cmp.Or(c.Groups, 10))
	var wg sync.WaitGroup
	for _, g := range order {
		idx := groups[g]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c.runGroup(workCtx, log, minStart, recs, idx, outcomes)
		}()
	}
	wg.Wait()

	var resp events.SQSEventResponse
	// Visibility changes use the outer context: they must happen even when
	// the work ran out of time.
	for i, o := range outcomes {
		if !o.failed {
			continue
		}
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: recs[i].MessageId})
		if o.parked {
			continue
		}
		after := o.after
		if limit := MaxVisibility - receiveMargin - now().Sub(start); after > limit {
			// The rest of a longer wait is the handler's to ask for again.
			after = max(limit, 0)
		}
		if err := c.Visibility.ChangeVisibility(ctx, recs[i].ReceiptHandle, after); err != nil {
			c.about(log, recs[i]).Warn("change visibility failed", "message_id", recs[i].MessageId, "error", err)
		}
	}
	return resp, nil
}

func (c *Consumer) runGroup(ctx context.Context, log *slog.Logger, minStart time.Duration, recs []Record, idx []int, outcomes []outcome) {
	for k, i := range idx {
		// Deadlines are wall-clock time, whatever clock the handlers use.
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < minStart {
			// Out of time: the rest of the group goes back now, in order.
			for _, j := range idx[k:] {
				outcomes[j] = outcome{failed: true}
			}
			log.Warn("deadline near: records returned unprocessed", "group", recs[i].Group, "count", len(idx)-k)
			return
		}
		err := c.call(ctx, recs[i])
		if err == nil {
			continue
		}
		var dead *DeadLetterError
		if errors.As(err, &dead) && c.DeadLetters != nil {
			if ferr := c.deadLetter(ctx, recs[i]); ferr == nil {
				c.about(log, recs[i]).Error("record dead-lettered", "message_id", recs[i].MessageId, "group", recs[i].Group,
					"receive_count", recs[i].ReceiveCount, "error", err)
				continue // done here; the group goes on
			} else {
				err = fmt.Errorf("%w (and moving it to the dead-letter queue failed: %v)", err, ferr)
			}
		}
		after := c.delay(recs[i].ReceiveCount)
		if dead != nil && c.DeadLetters == nil {
			after = 0 // on to the DLQ by the redrive policy
		}
		var re *RetryError
		if errors.As(err, &re) {
			after = re.After
		}
		var parked *ParkedError
		if errors.As(err, &parked) {
			c.about(log, recs[i]).Debug("record parked by its handler", "message_id", recs[i].MessageId, "group", recs[i].Group,
				"receive_count", recs[i].ReceiveCount, "reason", err.Error())
			outcomes[i] = outcome{failed: true, parked: true}
			for _, j := range idx[k+1:] {
				outcomes[j] = outcome{failed: true}
			}
			return
		}
		c.about(log, recs[i]).Warn("record failed", "message_id", recs[i].MessageId, "group", recs[i].Group,
			"receive_count", recs[i].ReceiveCount, "retry_after_ms", after.Milliseconds(), "error", err)
		// The FIFO rule: this record and the rest of its group come back
		// together, in order.
		for _, j := range idx[k:] {
			outcomes[j] = outcome{failed: true, after: after}
		}
		return
	}
}

// call runs the handler on r, turning a panic into a dead letter: a record
// that crashes the handler would crash it again on every receive.
func (c *Consumer) call(ctx context.Context, r Record) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = DeadLetter(fmt.Errorf("handler panicked: %v\n%s", p, debug.Stack()))
		}
	}()
	return c.Handle(ctx, r)
}

// deadLetter moves r to the dead-letter queue, in its own group, under a
// deduplication id of its message id, so a retried move is one message.
func (c *Consumer) deadLetter(ctx context.Context, r Record) error {
	return c.DeadLetters.Send(context.WithoutCancel(ctx), queue.Message{Group: r.Group, Dedup: "dlq#" + r.MessageId, Body: []byte(r.Body)})
}

func (c *Consumer) delay(receiveCount int) time.Duration {
	if c.Backoff != nil {
		return c.Backoff(receiveCount)
	}
	return Backoff(receiveCount)
}
