package queue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
)

// Message is one message to enqueue.
type Message struct {
	// Group is the ordering key (a thread key); shaped by message.GroupID.
	Group string
	// Dedup is the idempotency key; shaped by message.DedupID.
	Dedup string
	Body  []byte
}

// maxBatch is SQS's SendMessageBatch and ChangeMessageVisibilityBatch limit.
const maxBatch = 10

// Queue is one SQS queue. Safe for concurrent use.
type Queue struct {
	client *sqs.Client
	url    string
}

// New returns the queue at url.
func New(client *sqs.Client, url string) *Queue { return &Queue{client: client, url: url} }

// URL is the queue's URL.
func (q *Queue) URL() string { return q.url }

// Send enqueues one message.
func (q *Queue) Send(ctx context.Context, m Message) error {
	_, err := q.client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:               aws.String(q.url),
		MessageBody:            aws.String(string(Body(m.Body))),
		MessageGroupId:         aws.String(message.GroupID(m.Group)),
		MessageDeduplicationId: aws.String(message.DedupID(m.Dedup)),
	})
	if err != nil {
		return fmt.Errorf("sqs send message: %w", err)
	}
	return nil
}

// SendBatch enqueues messages in order, ten per request. It stops at the first
// request with a failed entry and returns an error; callers retry the whole
// call, which deduplication makes safe within five minutes, and which the
// store's state makes safe after that.
func (q *Queue) SendBatch(ctx context.Context, msgs []Message) error {
	for start := 0; start < len(msgs); start += maxBatch {
		chunk := msgs[start:min(start+maxBatch, len(msgs))]
		entries := make([]types.SendMessageBatchRequestEntry, len(chunk))
		for i, m := range chunk {
			entries[i] = types.SendMessageBatchRequestEntry{
				Id:                     aws.String(strconv.Itoa(i)),
				MessageBody:            aws.String(string(Body(m.Body))),
				MessageGroupId:         aws.String(message.GroupID(m.Group)),
				MessageDeduplicationId: aws.String(message.DedupID(m.Dedup)),
			}
		}
		out, err := q.client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q.url), Entries: entries})
		if err != nil {
			return fmt.Errorf("sqs send message batch: %w", err)
		}
		if len(out.Failed) > 0 {
			f := out.Failed[0]
			return &BatchError{Failed: len(out.Failed), Code: aws.ToString(f.Code), SenderFault: f.SenderFault}
		}
	}
	return nil
}

// BatchError reports entries of a batch that SQS refused.
type BatchError struct {
	Failed      int
	Code        string
	SenderFault bool
}

func (e *BatchError) Error() string {
	return fmt.Sprintf("sqs send message batch: %d entries failed (first: %s)", e.Failed, e.Code)
}

// ChangeVisibility makes a received message visible again after d (zero:
// now). It is how Parley waits: a rate limit's retry_after or a backoff parks
// the message instead of sleeping in the worker.
func (q *Queue) ChangeVisibility(ctx context.Context, receiptHandle string, d time.Duration) error {
	// Round up: a platform's retry_after is a minimum.
	secs := int32(min(max((d+time.Second-1)/time.Second, 0), 12*60*60))
	_, err := q.client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl:          aws.String(q.url),
		ReceiptHandle:     aws.String(receiptHandle),
		VisibilityTimeout: secs,
	})
	if err != nil {
		// ReceiptHandleIsInvalid: a handle never issued. MessageNotInflight:
		// the API reference's error for a message no longer in flight
		// (deleted, or received again), which fauxqs returns.
		var invalid *types.ReceiptHandleIsInvalid
		var notInflight *types.MessageNotInflight
		if errors.As(err, &invalid) || errors.As(err, &notInflight) {
			return fmt.Errorf("sqs change visibility: %w", ErrReceiptGone)
		}
		return fmt.Errorf("sqs change visibility: %w", err)
	}
	return nil
}

// ErrReceiptGone means the receipt handle no longer names an in-flight
// message (it was deleted, or its visibility ran out and it was received
// again).
var ErrReceiptGone = errors.New("receipt handle no longer valid")

// Units are the outbound messages of an intent's units, in order: each in
// its thread's group, deduplicated on its unit key.
func Units(in intent.Intent) []Message {
	msgs := make([]Message, len(in.Units))
	for i, u := range in.Units {
		msgs[i] = Message{Group: in.Thread.Key(), Dedup: intent.UnitKey(in.ID, u.ID), Body: intent.EncodeUnitRefOf(in, u.ID, i)}
	}
	return msgs
}
