package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/parleyhq/parley/shared/wait"
)

// SQSHandlerFunc is a consumer function's Lambda handler.
type SQSHandlerFunc func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error)

// Poller behaves like Lambda's SQS event source mapping for one function.
type Poller struct {
	SQS      *sqs.Client
	QueueURL string
	// QueueARN is reported as each record's eventSourceARN.
	QueueARN string
	Handler  SQSHandlerFunc
	// Timeout is the function's timeout: each invocation's deadline.
	Timeout time.Duration
	// BatchSize is at most 10. Defaults to 10.
	BatchSize int
	// Concurrency is how many invocations run at once (the mapping's
	// maximum concurrency). Defaults to 2.
	Concurrency int
	// WaitTime is the long-poll wait. Defaults to 1 second.
	WaitTime time.Duration
	Log      *slog.Logger

	invocations atomic.Int64
}

// Invocations is how many times the handler was invoked: the Lambda
// invocations the event source mapping would have made.
func (p *Poller) Invocations() int64 { return p.invocations.Load() }

// Run polls until ctx ends, then waits for running invocations.
func (p *Poller) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for range cmp.Or(p.Concurrency, 2) {
		wg.Go(func() {
			for ctx.Err() == nil {
				if err := p.poll(ctx); err != nil && ctx.Err() == nil {
					p.log().Warn("poll failed", "queue_url", p.QueueURL, "error", err)
					_ = wait.For(ctx, time.Second) // a done ctx ends the loop above
				}
			}
		})
	}
	wg.Wait()
	return nil
}

func (p *Poller) log() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.Default()
}

// poll receives one batch, invokes the handler and deletes the successes.
func (p *Poller) poll(ctx context.Context) error {
	out, err := p.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    aws.String(p.QueueURL),
		MaxNumberOfMessages:         int32(cmp.Or(p.BatchSize, 10)),
		WaitTimeSeconds:             int32(cmp.Or(p.WaitTime, time.Second) / time.Second),
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	})
	if err != nil {
		return fmt.Errorf("receive: %w", err)
	}
	if len(out.Messages) == 0 {
		return nil
	}
	ev := events.SQSEvent{Records: make([]events.SQSMessage, len(out.Messages))}
	for i, m := range out.Messages {
		attrs := map[string]string{}
		for k, v := range m.Attributes {
			attrs[k] = v
		}
		ev.Records[i] = events.SQSMessage{
			MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
			Body: aws.ToString(m.Body), Md5OfBody: aws.ToString(m.MD5OfBody), Attributes: attrs,
			EventSource: "aws:sqs", EventSourceARN: p.QueueARN, AWSRegion: "us-east-1",
		}
	}

	// The invocation's deadline, like Lambda's; the handler must return
	// before it. The poller's own shutdown does not cut an invocation short.
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cmp.Or(p.Timeout, 30*time.Second))
	p.invocations.Add(1)
	resp, herr := p.invoke(ictx, ev)
	cancel()
	if herr != nil {
		// Like Lambda: a failed invocation leaves the whole batch to its
		// visibility timeout.
		p.log().Error("invocation failed: batch left to its visibility timeout", "error", herr)
		return nil
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	var del []types.DeleteMessageBatchRequestEntry
	for i, r := range ev.Records {
		if !failed[r.MessageId] {
			del = append(del, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(r.ReceiptHandle)})
		}
	}
	if len(del) == 0 {
		return nil
	}
	dout, err := p.SQS.DeleteMessageBatch(context.WithoutCancel(ctx), &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(p.QueueURL), Entries: del})
	if err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	if len(dout.Failed) > 0 {
		return fmt.Errorf("delete: %d entries failed (%s)", len(dout.Failed), aws.ToString(dout.Failed[0].Code))
	}
	return nil
}

// invoke calls the handler, turning a panic into an invocation error as the
// Lambda runtime does.
func (p *Poller) invoke(ctx context.Context, ev events.SQSEvent) (resp events.SQSEventResponse, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panicked: %v", r)
		}
	}()
	resp, err = p.Handler(ctx, ev)
	if err == nil && ctx.Err() != nil {
		err = errors.New("handler returned after its deadline")
	}
	return resp, err
}
