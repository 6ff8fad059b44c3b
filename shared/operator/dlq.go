package operator

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/store"
)

// DLQMessage is a message of a dead-letter queue, dated by its content.
type DLQMessage struct {
	Queue     string `json:"queue"`
	MessageID string `json:"message_id"`
	// Thread is its conversation (its message group).
	Thread        string `json:"thread"`
	CorrelationID string `json:"correlation_id,omitempty"`
	// Unit is an outbound message's unit key.
	Unit string `json:"unit,omitempty"`
	// Kind is an inbound event's kind, "unit" for an outbound message.
	Kind string `json:"kind,omitempty"`
	// Made is when its content was made: when ingress received the event,
	// when the turn planned the reply. Zero: it cannot be dated (Problem
	// says why), and a redrive refuses it.
	Made time.Time `json:"made,omitzero"`
	// Age is Made's age at the look.
	Age time.Duration `json:"age_ns,omitempty"`
	// DeadLetteredAt is when it reached the dead-letter queue: a FIFO
	// dead-letter queue stamps a message anew when it arrives.
	DeadLetteredAt time.Time `json:"dead_lettered_at,omitzero"`
	ReceiveCount   int       `json:"receive_count,omitempty"`
	Problem        string    `json:"problem,omitempty"`

	receipt string
}

// Detail is the message in words.
func (m DLQMessage) Detail() string {
	if m.Problem != "" {
		return "dead-lettered; " + m.Problem
	}
	what := "event"
	if m.Kind == "unit" {
		what = "reply unit " + m.Unit
	} else if m.Kind != "" {
		what = m.Kind + " event"
	}
	return fmt.Sprintf("dead-lettered %s, made %s ago", what, m.Age.Round(time.Second))
}

// Peek counts what a look at a dead-letter queue saw.
type Peek struct {
	// Visible is the queue's count of messages before the look.
	Visible int `json:"visible"`
	// Seen is how many the look read; Hidden how many it could not, each
	// waiting behind an earlier message of its conversation (a FIFO queue
	// hands out a group's next message only once the one before it is
	// gone).
	Seen   int `json:"seen"`
	Hidden int `json:"hidden"`
}

// holdFor is how long a look holds the messages it read: longer than a
// look takes, so none is read twice.
const holdFor = 60 * time.Second

// peek reads every message of q's dead-letter queue it can, dating each,
// and holds them (invisible) until release; hold false releases them at
// once. Reading a dead-letter message counts a receive, which nothing
// reads there.
func (o *Operator) peek(ctx context.Context, q Queue, hold bool) ([]DLQMessage, Peek, error) {
	visible, err := o.count(ctx, q.DLQURL)
	if err != nil {
		return nil, Peek{}, err
	}
	var msgs []DLQMessage
	for round := 0; round < 100 && len(msgs) < visible; round++ {
		out, err := o.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(q.DLQURL), MaxNumberOfMessages: 10, VisibilityTimeout: int32(holdFor / time.Second),
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
		})
		if err != nil {
			o.release(context.WithoutCancel(ctx), q, msgs)
			return nil, Peek{}, fmt.Errorf("read %s's dead-letter queue: %w", q.Name, err)
		}
		if len(out.Messages) == 0 {
			break
		}
		for _, m := range out.Messages {
			msgs = append(msgs, o.date(ctx, q, m))
		}
	}
	if !hold {
		o.release(context.WithoutCancel(ctx), q, msgs)
	}
	return msgs, Peek{Visible: visible, Seen: len(msgs), Hidden: max(visible-len(msgs), 0)}, nil
}

// release makes the messages a look held visible again.
func (o *Operator) release(ctx context.Context, q Queue, msgs []DLQMessage) {
	for _, m := range msgs {
		_, _ = o.SQS.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
			QueueUrl: aws.String(q.DLQURL), ReceiptHandle: aws.String(m.receipt), VisibilityTimeout: 0,
		})
	}
}

func (o *Operator) count(ctx context.Context, url string) (int, error) {
	out, err := o.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages},
	})
	if err != nil {
		return 0, fmt.Errorf("count %s: %w", url, err)
	}
	n, _ := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)])
	return n, nil
}

// date reads what a dead-lettered message carries and when it was made.
func (o *Operator) date(ctx context.Context, q Queue, m sqstypes.Message) DLQMessage {
	d := DLQMessage{Queue: q.Name, MessageID: aws.ToString(m.MessageId), Thread: m.Attributes["MessageGroupId"], receipt: aws.ToString(m.ReceiptHandle)}
	if ms, err := strconv.ParseInt(m.Attributes["SentTimestamp"], 10, 64); err == nil {
		d.DeadLetteredAt = time.UnixMilli(ms).UTC()
	}
	d.ReceiveCount, _ = strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
	body := []byte(aws.ToString(m.Body))
	switch q.Name {
	case "inbound":
		in, err := intent.DecodeInbound(body)
		if err != nil {
			d.Problem = "its body does not decode as an inbound event: " + err.Error()
			return d
		}
		d.CorrelationID, d.Kind, d.Made = in.Event.Key(), string(in.Event.Kind), in.ReceivedAt
		if d.Made.IsZero() {
			d.Problem = "it carries no time it was received"
		}
	case "outbound":
		ref, err := intent.DecodeRef(body)
		if err != nil {
			d.Problem = "its body does not decode as a reply unit: " + err.Error()
			return d
		}
		d.Kind, d.Unit, d.CorrelationID = "unit", intent.UnitKey(ref.Intent, ref.Unit), ref.Event
		in, err := o.Store.GetIntent(ctx, ref.Intent)
		switch {
		case errors.Is(err, store.ErrNotFound):
			d.Problem = "its intent " + ref.Intent + " is gone"
			return d
		case err != nil:
			d.Problem = "its intent could not be read: " + err.Error()
			return d
		}
		d.CorrelationID, d.Made = intent.EventKeyOf(in.Origin), in.CreatedAt
	default:
		d.Problem = "a queue this version of Parley does not know"
	}
	if !d.Made.IsZero() {
		d.Age = o.now().Sub(d.Made)
	}
	return d
}

// DeadLetters lists the messages of the dead-letter queue of the queue
// named name (inbound, outbound), oldest content first as the queue hands
// them out. Looking changes nothing: each message is visible again after.
func (o *Operator) DeadLetters(ctx context.Context, name string) ([]DLQMessage, Peek, error) {
	q, ok := o.Target.Queue(name)
	if !ok {
		return nil, Peek{}, fmt.Errorf("%w: no queue %q: want one of %s", ErrAmbiguous, name, o.Target.QueueNames())
	}
	return o.peek(ctx, q, false)
}

// RedriveResult is what a redrive did.
type RedriveResult struct {
	Queue  string        `json:"queue"`
	MaxAge time.Duration `json:"max_age_ns"`
	// Outcome is a stable word: started, nothing_to_redrive, refused,
	// task_running.
	Outcome string `json:"outcome"`
	Detail  string `json:"detail"`
	// Moving is how many messages the move task takes.
	Moving     int    `json:"moving,omitempty"`
	TaskHandle string `json:"task_handle,omitempty"`
	// Refused are the messages that stopped it.
	Refused []DLQMessage `json:"refused,omitempty"`
}

// RefusedError is a redrive the age guard stopped; nothing was moved.
type RefusedError struct{ Result RedriveResult }

func (e *RefusedError) Error() string { return e.Result.Detail }

// guardRounds bounds the looks of a redrive whose dead-letter queue keeps
// growing while it looks.
const guardRounds = 3

// Redrive moves the messages of the dead-letter queue of the queue named
// name back to it, through SQS's own message-move task
// (StartMessageMoveTask), once every one of them is younger than maxAge:
// made (received, planned) less than maxAge ago, so a stale reply is never
// replayed into a conversation that moved on. It first reads every
// message (holding them while it looks), and refuses, moving nothing, when
// one is older or cannot be dated, or when some cannot be read (behind
// others of their conversation): a *RefusedError listing them. A redrive
// run twice finds the first one's task running, or the queue empty.
func (o *Operator) Redrive(ctx context.Context, name string, maxAge time.Duration) (RedriveResult, error) {
	q, ok := o.Target.Queue(name)
	if !ok {
		return RedriveResult{}, fmt.Errorf("%w: no queue %q: want one of %s", ErrAmbiguous, name, o.Target.QueueNames())
	}
	if maxAge <= 0 {
		return RedriveResult{}, fmt.Errorf("%w: --max-age must be more than 0: how old a message may be and still be replayed", ErrAmbiguous)
	}
	r := RedriveResult{Queue: q.Name, MaxAge: maxAge}
	for range guardRounds {
		msgs, peek, err := o.peek(ctx, q, true)
		if err != nil {
			return RedriveResult{}, err
		}
		if len(msgs) == 0 && peek.Visible == 0 {
			r.Outcome, r.Detail = "nothing_to_redrive", q.Name+"'s dead-letter queue is empty"
			return r, nil
		}
		r.Refused = nil
		for _, m := range msgs {
			if m.Made.IsZero() || m.Age > maxAge {
				r.Refused = append(r.Refused, m)
			}
		}
		o.release(context.WithoutCancel(ctx), q, msgs)
		switch {
		case peek.Hidden > 0:
			r.Outcome = "refused"
			r.Detail = fmt.Sprintf("%d of %d message(s) of %s's dead-letter queue could not be read (each behind an earlier one of its conversation): nothing was moved; the guard replays only what it has read", peek.Hidden, peek.Visible, q.Name)
			return r, &RefusedError{Result: r}
		case len(r.Refused) > 0:
			r.Outcome = "refused"
			r.Detail = fmt.Sprintf("%d message(s) of %s's dead-letter queue are older than %s or cannot be dated: nothing was moved, so no stale reply reaches a conversation that moved on. Look at them with parley message or parley dlq list; a message-move task moves a queue whole", len(r.Refused), q.Name, maxAge)
			return r, &RefusedError{Result: r}
		}
		// Moved only if nothing arrived meanwhile: the task takes the
		// queue whole.
		now, err := o.count(ctx, q.DLQURL)
		if err != nil {
			return RedriveResult{}, err
		}
		if now > len(msgs) {
			continue
		}
		return o.move(ctx, q, r, len(msgs))
	}
	r.Outcome, r.Detail = "refused", q.Name+"'s dead-letter queue kept growing while it was read: nothing was moved; try again"
	return r, &RefusedError{Result: r}
}

// move starts the message-move task from q's dead-letter queue to q.
func (o *Operator) move(ctx context.Context, q Queue, r RedriveResult, n int) (RedriveResult, error) {
	src, err := o.arn(ctx, q.DLQURL)
	if err != nil {
		return RedriveResult{}, err
	}
	dst, err := o.arn(ctx, q.URL)
	if err != nil {
		return RedriveResult{}, err
	}
	tasks, err := o.SQS.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(src), MaxResults: aws.Int32(1)})
	if err != nil {
		return RedriveResult{}, fmt.Errorf("list %s's message-move tasks: %w", q.Name, err)
	}
	for _, t := range tasks.Results {
		if aws.ToString(t.Status) == "RUNNING" {
			r.Outcome, r.TaskHandle = "task_running", aws.ToString(t.TaskHandle)
			r.Detail = fmt.Sprintf("a message-move task from %s's dead-letter queue is running already (%d moved so far): nothing started", q.Name, t.ApproximateNumberOfMessagesMoved)
			return r, nil
		}
	}
	// To the queue itself, named: a consumer's own dead-letter message
	// has no source SQS would know.
	out, err := o.SQS.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(src), DestinationArn: aws.String(dst)})
	if err != nil {
		return RedriveResult{}, fmt.Errorf("start the message-move task from %s's dead-letter queue: %w", q.Name, err)
	}
	r.Outcome, r.Moving, r.TaskHandle = "started", n, aws.ToString(out.TaskHandle)
	r.Detail = fmt.Sprintf("SQS is moving %d message(s), each younger than %s, from %s's dead-letter queue back to %s, in their conversations' groups", n, r.MaxAge, q.Name, q.Name)
	return r, nil
}

func (o *Operator) arn(ctx context.Context, url string) (string, error) {
	out, err := o.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return "", fmt.Errorf("read %s's ARN: %w", url, err)
	}
	arn := out.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
	if !strings.HasPrefix(arn, "arn:") {
		return "", fmt.Errorf("%s has no ARN", url)
	}
	return arn, nil
}
