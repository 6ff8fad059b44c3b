package queuetest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/queue"
)

// ErrTooLarge means a message body is over the queue's MaxMessageBytes, or a
// send batch's bodies together are (SQS's BatchRequestTooLong).
var ErrTooLarge = errors.New("message too large")

// ErrInvalidContents means a message body holds a character SQS refuses
// (InvalidMessageContents): anything but #x9, #xA, #xD, #x20–#xD7FF,
// #xE000–#xFFFD and #x10000–#x10FFFF. The model checks the body as
// queue.Queue sends it (queue.Body), so a sender that bypassed that
// encoding, or a character it does not escape, is refused as SQS refuses
// it.
var ErrInvalidContents = errors.New("message body holds characters SQS refuses")

// ErrVisibilityLimit means a visibility change would keep a message invisible
// past 12 hours from when it was received, or asked for more than 43,200 s.
// Real SQS answers InvalidParameterValue; queue.Queue clamps to 43,200 s but
// cannot know the time already spent in flight.
var ErrVisibilityLimit = errors.New("visibility timeout over the 12-hour limit")

const (
	// maxBatch is SQS's receive and send batch limit.
	maxBatch = 10
	// maxVisibility is SQS's limit on a visibility timeout, and on the time
	// a message may stay in flight from one receive.
	maxVisibility = 12 * time.Hour
	// drainPolls bounds Drain, so a handler that never succeeds fails the
	// test instead of hanging it.
	drainPolls = 1000
)

// ids numbers message ids and receipt handles. Process-wide, so a handle or
// id of one queue never names a message of another (a dead-lettered message
// keeps its id in the DLQ).
var ids atomic.Uint64

// Options configures a FIFO.
type Options struct {
	// Now is the model's time source, usually a Clock's Now. Required.
	Now func() time.Time
	// VisibilityTimeout is the queue's default visibility timeout. Defaults
	// to 30 seconds.
	VisibilityTimeout time.Duration
	// MaxReceiveCount moves a message to DLQ once it has been received this
	// many times and would be received again (SQS's redrive policy). 0: no
	// redrive.
	MaxReceiveCount int
	// DLQ receives redriven messages (and is a FIFO like any other). It must
	// not lead back to this queue. Nil: a dead-lettered message is kept in
	// an internal list only (see DeadLettered).
	DLQ *FIFO
	// MaxMessageBytes is the queue's MaximumMessageSize, and the limit on a
	// send batch's bodies together. Defaults to 262144.
	MaxMessageBytes int
	// DedupWindow is the deduplication interval. Defaults to 5 minutes.
	DedupWindow time.Duration
}

func (o Options) withDefaults() Options {
	o.VisibilityTimeout = cmp.Or(o.VisibilityTimeout, 30*time.Second)
	o.MaxMessageBytes = cmp.Or(o.MaxMessageBytes, 262144)
	o.DedupWindow = cmp.Or(o.DedupWindow, 5*time.Minute)
	return o
}

func (o Options) validate() error {
	var errs []error
	if o.Now == nil {
		errs = append(errs, errors.New("Now is required"))
	}
	if o.VisibilityTimeout < 0 || o.VisibilityTimeout > maxVisibility {
		errs = append(errs, fmt.Errorf("VisibilityTimeout %v outside 0..12h", o.VisibilityTimeout))
	}
	if o.MaxReceiveCount < 0 {
		errs = append(errs, fmt.Errorf("MaxReceiveCount %d is negative", o.MaxReceiveCount))
	}
	if o.MaxMessageBytes < 0 {
		errs = append(errs, fmt.Errorf("MaxMessageBytes %d is negative", o.MaxMessageBytes))
	}
	if o.DedupWindow < 0 {
		errs = append(errs, fmt.Errorf("DedupWindow %v is negative", o.DedupWindow))
	}
	return errors.Join(errs...)
}

// Message is a snapshot of one message, for assertions.
type Message struct {
	// ID is the SQS message id. A dead-lettered message keeps it in the DLQ.
	ID string
	// Group is the shaped MessageGroupId (message.GroupID).
	Group string
	// DedupID is the shaped MessageDeduplicationId (message.DedupID); in a
	// DLQ, the message's id.
	DedupID string
	// Body is the message body.
	Body []byte
	// ReceiveCount is how many times the message was received from this
	// queue (ApproximateReceiveCount).
	ReceiveCount int
	// SentAt is when this queue accepted the message. In a DLQ, when it was
	// moved there: SQS resets a FIFO message's enqueue time on redrive.
	SentAt time.Time
	// VisibleAt is when the message is, or was, visible again: SentAt until
	// its first receive, then the end of its latest visibility timeout. For
	// a dead-lettered message, when it was moved.
	VisibleAt time.Time
}

// entry is one message held by a FIFO.
type entry struct {
	seq          uint64
	id           string
	group, dedup string
	body         []byte
	receiveCount int
	sentAt       time.Time
	// firstReceivedAt is ApproximateFirstReceiveTimestamp; receivedAt is
	// the latest receive, which the 12-hour rule counts from.
	firstReceivedAt, receivedAt time.Time
	visibleAt                   time.Time
	// handle is the latest receipt handle; earlier ones no longer work.
	handle string
}

// inFlight reports whether e is received and not yet visible again.
func (e *entry) inFlight(now time.Time) bool { return e.handle != "" && now.Before(e.visibleAt) }

func (e *entry) snapshot() Message {
	return Message{
		ID: e.id, Group: e.group, DedupID: e.dedup, Body: bytes.Clone(e.body),
		ReceiveCount: e.receiveCount, SentAt: e.sentAt, VisibleAt: e.visibleAt,
	}
}

// FIFO is an in-memory SQS FIFO queue with the event source mapping on top.
// Safe for concurrent use. Producers use it as ingress.Enqueuer or
// turn.Outbox, consumers as consumer.Visibility.
type FIFO struct {
	o Options

	mu   sync.Mutex
	msgs []*entry // in send order
	// seen holds when each deduplication id was last accepted.
	seen map[string]time.Time
	dead []Message
	seq  uint64
}

// New returns an empty queue. It panics on invalid Options: they are a
// test's own constants.
func New(o Options) *FIFO {
	if err := o.validate(); err != nil {
		panic("queuetest: invalid Options: " + err.Error())
	}
	return &FIFO{o: o.withDefaults(), seen: map[string]time.Time{}}
}

// Send enqueues one message, shaping its group and deduplication ids and
// encoding its body as queue.Queue does. A duplicate within the
// deduplication window is accepted and dropped, as SQS does.
func (q *FIFO) Send(ctx context.Context, m queue.Message) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("queuetest send message: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	m.Body = queue.Body(m.Body)
	if err := q.check(m.Body); err != nil {
		return fmt.Errorf("queuetest send message: %w", err)
	}
	q.enqueue("", message.GroupID(m.Group), message.DedupID(m.Dedup), m.Body)
	return nil
}

// SendBatch enqueues messages in order, ten per request, with
// queue.Queue.SendBatch's contract: it stops at the first request with a
// failed entry (a body over MaxMessageBytes, InvalidParameterValue, or with
// a character SQS refuses, InvalidMessageContents) and reports it as a
// *queue.BatchError. Within that request the
// entries before the failed one are enqueued; the failed one and every later
// one are not (Failed counts them), so a retry of the whole call, which
// deduplication makes safe, leaves no gap in a group. A request whose bodies
// together exceed MaxMessageBytes is refused whole with ErrTooLarge, as SQS
// refuses it with BatchRequestTooLong.
func (q *FIFO) SendBatch(ctx context.Context, msgs []queue.Message) error {
	for start := 0; start < len(msgs); start += maxBatch {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("queuetest send message batch: %w", err)
		}
		if err := q.sendChunk(msgs[start:min(start+maxBatch, len(msgs))]); err != nil {
			return err
		}
	}
	return nil
}

func (q *FIFO) sendChunk(chunk []queue.Message) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	total := 0
	chunk = slices.Clone(chunk)
	for i := range chunk {
		m := &chunk[i]
		m.Body = queue.Body(m.Body)
		if err := q.check(m.Body); err != nil {
			for _, m := range chunk[:i] {
				q.enqueue("", message.GroupID(m.Group), message.DedupID(m.Dedup), m.Body)
			}
			code := "InvalidParameterValue"
			if errors.Is(err, ErrInvalidContents) {
				code = "InvalidMessageContents"
			}
			return &queue.BatchError{Failed: len(chunk) - i, Code: code, SenderFault: true}
		}
		total += len(m.Body)
	}
	if total > q.o.MaxMessageBytes {
		return fmt.Errorf("queuetest send message batch: %w: %d bytes in one request, limit %d (BatchRequestTooLong)",
			ErrTooLarge, total, q.o.MaxMessageBytes)
	}
	for _, m := range chunk {
		q.enqueue("", message.GroupID(m.Group), message.DedupID(m.Dedup), m.Body)
	}
	return nil
}

// check refuses a body SQS would: over the size limit, or holding a
// character outside SQS's set.
func (q *FIFO) check(body []byte) error {
	if n := len(body); n > q.o.MaxMessageBytes {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, n, q.o.MaxMessageBytes)
	}
	if i := bytes.IndexFunc(body, func(r rune) bool { return !sqsCharacter(r) }); i >= 0 {
		return fmt.Errorf("%w: %q at byte %d (InvalidMessageContents)", ErrInvalidContents, []rune(string(body[i:]))[0], i)
	}
	return nil
}

// sqsCharacter reports whether SQS accepts r in a message body. bytes.IndexFunc
// reads a byte that is not UTF-8 as U+FFFD, which SQS accepts: the model
// leaves such bodies to the real queue's tests.
func sqsCharacter(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD || (r >= 0x20 && r <= 0xD7FF) ||
		(r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}

// enqueue appends a message unless its deduplication id was accepted within
// the window. An empty id draws a new one. Callers hold q.mu.
func (q *FIFO) enqueue(id, group, dedup string, body []byte) {
	now := q.o.Now()
	// The window runs from the accepted send: duplicates do not extend it.
	if at, ok := q.seen[dedup]; ok && now.Before(at.Add(q.o.DedupWindow)) {
		return
	}
	q.seen[dedup] = now
	if id == "" {
		id = fmt.Sprintf("00000000-0000-4000-8000-%012d", ids.Add(1))
	}
	q.seq++
	q.msgs = append(q.msgs, &entry{
		seq: q.seq, id: id, group: group, dedup: dedup, body: bytes.Clone(body),
		sentAt: now, visibleAt: now,
	})
}

// Receive takes up to n messages (clamped to 1..10), as ReceiveMessage
// does on a FIFO queue: all visible messages of the group whose oldest
// message is oldest, in order, then the next group's, until n. A group
// with a message in flight is skipped. Each message returned is counted,
// invisible for VisibilityTimeout, and gets a new receipt handle. A message
// already received MaxReceiveCount times is moved to the DLQ instead of
// being returned, and Receive goes on with what follows it.
func (q *FIFO) Receive(n int) []events.SQSMessage {
	n = min(max(n, 1), maxBatch)
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.o.Now()

	// done holds groups that may not be served: in flight before this
	// receive, or already served by it.
	done := map[string]bool{}
	for _, e := range q.msgs {
		if e.inFlight(now) {
			done[e.group] = true
		}
	}
	var recs []events.SQSMessage
	moved := map[*entry]bool{}
	for len(recs) < n {
		// Messages are in send order, so the first message of an available
		// group is the oldest head of any available group.
		i := slices.IndexFunc(q.msgs, func(e *entry) bool { return !done[e.group] && !moved[e] })
		if i < 0 {
			break
		}
		group := q.msgs[i].group
		done[group] = true
		for _, e := range q.msgs[i:] {
			if len(recs) == n {
				break
			}
			if e.group != group {
				continue
			}
			if q.o.MaxReceiveCount > 0 && e.receiveCount >= q.o.MaxReceiveCount {
				moved[e] = true
				q.deadLetter(e, now)
				continue
			}
			recs = append(recs, q.deliver(e, now))
		}
	}
	if len(moved) > 0 {
		q.msgs = slices.DeleteFunc(q.msgs, func(e *entry) bool { return moved[e] })
	}
	return recs
}

// deliver receives e now and returns its record. Callers hold q.mu.
func (q *FIFO) deliver(e *entry, now time.Time) events.SQSMessage {
	e.receiveCount++
	if e.firstReceivedAt.IsZero() {
		e.firstReceivedAt = now
	}
	e.receivedAt = now
	e.visibleAt = now.Add(q.o.VisibilityTimeout)
	e.handle = fmt.Sprintf("rh-%d-%s", ids.Add(1), e.id)
	sum := md5.Sum(e.body) // Md5OfBody, as Lambda passes it on
	return events.SQSMessage{
		MessageId:     e.id,
		ReceiptHandle: e.handle,
		Body:          string(e.body),
		Md5OfBody:     hex.EncodeToString(sum[:]),
		EventSource:   "aws:sqs",
		Attributes: map[string]string{
			"MessageGroupId":                   e.group,
			"MessageDeduplicationId":           e.dedup,
			"SequenceNumber":                   fmt.Sprintf("%020d", e.seq),
			"ApproximateReceiveCount":          strconv.Itoa(e.receiveCount),
			"SentTimestamp":                    strconv.FormatInt(e.sentAt.UnixMilli(), 10),
			"ApproximateFirstReceiveTimestamp": strconv.FormatInt(e.firstReceivedAt.UnixMilli(), 10),
		},
	}
}

// deadLetter records e as redriven and sends it to the DLQ, with its id as
// the deduplication id so no earlier message can suppress it. The caller
// removes e from q.msgs. Callers hold q.mu (and so lock the DLQ inside it,
// which is why a DLQ must not lead back).
func (q *FIFO) deadLetter(e *entry, now time.Time) {
	m := e.snapshot()
	m.VisibleAt = now
	q.dead = append(q.dead, m)
	if dlq := q.o.DLQ; dlq != nil {
		dlq.mu.Lock()
		defer dlq.mu.Unlock()
		// No size check: SQS moves a message it already accepted.
		dlq.enqueue(e.id, e.group, e.id, e.body)
	}
}

// current returns the in-flight message whose latest receipt handle is
// handle, or nil. Callers hold q.mu.
func (q *FIFO) current(handle string, now time.Time) *entry {
	for _, e := range q.msgs {
		if e.handle == handle {
			if e.inFlight(now) {
				return e
			}
			return nil
		}
	}
	return nil
}

// ChangeVisibility makes a received message visible again after d, rounded
// up to whole seconds as queue.Queue rounds it (zero or less: now). It fails
// with queue.ErrReceiptGone if the handle is not the latest receipt of an
// in-flight message, and with ErrVisibilityLimit, changing nothing, if d is
// over 43,200 s or the message would stay invisible past 12 hours from that
// receipt's receive.
func (q *FIFO) ChangeVisibility(ctx context.Context, receiptHandle string, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("queuetest change visibility: %w", err)
	}
	vis := max((d+time.Second-1)/time.Second, 0) * time.Second
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.o.Now()
	e := q.current(receiptHandle, now)
	if e == nil {
		return fmt.Errorf("queuetest change visibility: %w", queue.ErrReceiptGone)
	}
	// Over 43,200 s is refused outright; less is refused when it would end
	// past 12 hours from this receipt's receive.
	if held := now.Sub(e.receivedAt); vis > maxVisibility || held+vis > maxVisibility {
		return fmt.Errorf("queuetest change visibility: %w: %v asked after %v in flight", ErrVisibilityLimit, vis, held)
	}
	e.visibleAt = now.Add(vis)
	return nil
}

// Delete removes the in-flight message whose latest receipt handle is
// receiptHandle. It is stricter than SQS: any other handle (unknown, of a
// deleted message, superseded by a later receive, or whose visibility ran
// out) fails with queue.ErrReceiptGone, where SQS sometimes answers success,
// so a test catches a consumer deleting what it no longer holds.
func (q *FIFO) Delete(receiptHandle string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	e := q.current(receiptHandle, q.o.Now())
	if e == nil {
		return fmt.Errorf("queuetest delete message: %w", queue.ErrReceiptGone)
	}
	q.msgs = slices.DeleteFunc(q.msgs, func(x *entry) bool { return x == e })
	return nil
}

// Poll is one round of the event source mapping, like the local runner's
// poller: Receive(max); if any, invoke handler with an events.SQSEvent whose
// context has a wall-clock deadline of timeout (like a Lambda invocation; 0
// means 30s); delete every record not listed in the response's
// BatchItemFailures. If the handler returns an error, panics, returns after
// its deadline, or lists an item identifier that is not in the batch (Lambda
// then treats the whole batch as failed), nothing is deleted: the whole batch
// waits for its visibility timeout, and Poll returns an error. A delete that
// fails (the handler let a record's visibility run out on the model's clock)
// is reported too. Poll returns how many messages were received.
func (q *FIFO) Poll(ctx context.Context, handler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), max int, timeout time.Duration) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("queuetest poll: %w", err)
	}
	recs := q.Receive(max)
	if len(recs) == 0 {
		return 0, nil
	}
	// Like Lambda, the invocation ends at its deadline only.
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cmp.Or(timeout, 30*time.Second))
	resp, err := invoke(ictx, handler, events.SQSEvent{Records: slices.Clone(recs)})
	cancel()
	if err != nil {
		return len(recs), fmt.Errorf("queuetest poll: invocation failed, batch left to its visibility timeout: %w", err)
	}
	inBatch := map[string]bool{}
	for _, r := range recs {
		inBatch[r.MessageId] = true
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		if !inBatch[f.ItemIdentifier] {
			return len(recs), fmt.Errorf("queuetest poll: batch item failure %q is not in the batch: whole batch left to its visibility timeout", f.ItemIdentifier)
		}
		failed[f.ItemIdentifier] = true
	}
	var errs []error
	for _, r := range recs {
		if failed[r.MessageId] {
			continue
		}
		if err := q.Delete(r.ReceiptHandle); err != nil {
			errs = append(errs, fmt.Errorf("message %s: %w", r.MessageId, err))
		}
	}
	if len(errs) > 0 {
		return len(recs), fmt.Errorf("queuetest poll: delete after the invocation: %w", errors.Join(errs...))
	}
	return len(recs), nil
}

// invoke calls handler, turning a panic into an error as the Lambda runtime
// does, and a response after the deadline into one as Lambda's timeout does.
func invoke(ctx context.Context, handler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), ev events.SQSEvent) (resp events.SQSEventResponse, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panicked: %v", r)
		}
	}()
	resp, err = handler(ctx, ev)
	if err == nil && ctx.Err() != nil {
		err = errors.New("handler returned after its deadline")
	}
	return resp, err
}

// Drain polls until the queue holds nothing, and whenever a poll finds
// nothing visible advances clock to when the next message becomes visible
// again, so retries and backoffs play out at once. clock must be the queue's
// time source. It returns the first Poll error, or an error if the queue is
// not empty after 1000 polls (a handler that never succeeds, without
// redrive).
func (q *FIFO) Drain(ctx context.Context, clock *Clock, handler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), max int, timeout time.Duration) error {
	for range drainPolls {
		if q.Len() == 0 {
			return nil
		}
		n, err := q.Poll(ctx, handler, max, timeout)
		if err != nil {
			return fmt.Errorf("queuetest drain: %w", err)
		}
		if n > 0 {
			continue
		}
		if at, ok := q.NextVisible(); ok {
			if d := at.Sub(clock.Now()); d > 0 {
				clock.Advance(d)
			}
		}
	}
	return fmt.Errorf("queuetest drain: %d messages left after %d polls", q.Len(), drainPolls)
}

// NextVisible reports when the first in-flight message becomes visible
// again; false if none is in flight.
func (q *FIFO) NextVisible() (time.Time, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.o.Now()
	var at time.Time
	for _, e := range q.msgs {
		if e.inFlight(now) && (at.IsZero() || e.visibleAt.Before(at)) {
			at = e.visibleAt
		}
	}
	return at, !at.IsZero()
}

// Len is how many messages the queue holds, visible or in flight; not the
// dead-lettered ones.
func (q *FIFO) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.msgs)
}

// InFlight is how many messages are received and not yet visible again.
func (q *FIFO) InFlight() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.o.Now()
	n := 0
	for _, e := range q.msgs {
		if e.inFlight(now) {
			n++
		}
	}
	return n
}

// DeadLettered returns every message this queue redrove, in order, as each
// was when moved (ReceiveCount is MaxReceiveCount), whether or not DLQ is
// set.
func (q *FIFO) DeadLettered() []Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]Message, len(q.dead))
	for i, m := range q.dead {
		m.Body = bytes.Clone(m.Body)
		out[i] = m
	}
	return out
}

// Messages returns the messages the queue holds, in send order, which is
// each group's delivery order.
func (q *FIFO) Messages() []Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]Message, len(q.msgs))
	for i, e := range q.msgs {
		out[i] = e.snapshot()
	}
	return out
}
