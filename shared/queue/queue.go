package queue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/parleyhq/parley/shared/awsjson"
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
	client *awsjson.Client
	url    string
}

// New returns the queue at url, called through client (awsjson.SQS).
func New(client *awsjson.Client, url string) *Queue { return &Queue{client: client, url: url} }

// The operations' inputs and outputs, as SQS's JSON protocol names them.
type (
	sendInput struct {
		QueueUrl               string
		MessageBody            string
		MessageGroupId         string
		MessageDeduplicationId string
	}
	batchEntry struct {
		Id                     string
		MessageBody            string
		MessageGroupId         string
		MessageDeduplicationId string
	}
	batchInput struct {
		QueueUrl string
		Entries  []batchEntry
	}
	batchOutput struct {
		Failed []struct {
			Id, Code, Message string
			SenderFault       bool
		}
	}
	visibilityInput struct {
		QueueUrl          string
		ReceiptHandle     string
		VisibilityTimeout int
	}
)

// URL is the queue's URL.
func (q *Queue) URL() string { return q.url }

// Send enqueues one message.
func (q *Queue) Send(ctx context.Context, m Message) error {
	err := q.client.Call(ctx, "SendMessage", sendInput{
		QueueUrl:               q.url,
		MessageBody:            string(Body(m.Body)),
		MessageGroupId:         message.GroupID(m.Group),
		MessageDeduplicationId: message.DedupID(m.Dedup),
	}, nil)
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
		entries := make([]batchEntry, len(chunk))
		for i, m := range chunk {
			entries[i] = batchEntry{
				Id:                     strconv.Itoa(i),
				MessageBody:            string(Body(m.Body)),
				MessageGroupId:         message.GroupID(m.Group),
				MessageDeduplicationId: message.DedupID(m.Dedup),
			}
		}
		var out batchOutput
		if err := q.client.Call(ctx, "SendMessageBatch", batchInput{QueueUrl: q.url, Entries: entries}, &out); err != nil {
			return fmt.Errorf("sqs send message batch: %w", err)
		}
		if len(out.Failed) > 0 {
			f := out.Failed[0]
			return &BatchError{Failed: len(out.Failed), Code: f.Code, SenderFault: f.SenderFault}
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
	secs := int(min(max((d+time.Second-1)/time.Second, 0), 12*60*60))
	err := q.client.Call(ctx, "ChangeMessageVisibility", visibilityInput{
		QueueUrl:          q.url,
		ReceiptHandle:     receiptHandle,
		VisibilityTimeout: secs,
	}, nil)
	if err != nil {
		// ReceiptHandleIsInvalid: a handle never issued. MessageNotInflight:
		// the API reference's error for a message no longer in flight
		// (deleted, or received again), which fauxqs returns.
		var api *awsjson.APIError
		if errors.As(err, &api) && (api.Code == "ReceiptHandleIsInvalid" || api.Code == "MessageNotInflight") {
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
		msgs[i] = Message{Group: in.Thread.Key(), Dedup: intent.UnitKey(in.ID, u.ID), Body: intent.EncodeUnitRef(in.ID, u.ID, i)}
	}
	return msgs
}
