package operator_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/operator"
)

// moveTasks is SQS's message-move task, which fauxqs lacks
// (docs/emulators.md), modelled on fauxqs's own queues as SQS documents
// it: a task moves every message of the source queue, oldest first, to
// the destination, each as a new message in its message group; one task
// at a time per source. It runs to completion inside Start (SQS's runs in
// the background), so a test sees the queues after it.
type moveTasks struct {
	*sqs.Client
	mu    sync.Mutex
	tasks map[string]sqstypes.ListMessageMoveTasksResultEntry // by source ARN
}

func (m *moveTasks) url(ctx context.Context, arn string) (string, error) {
	name := arn[strings.LastIndex(arn, ":")+1:]
	out, err := m.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.QueueUrl), nil
}

func (m *moveTasks) StartMessageMoveTask(ctx context.Context, in *sqs.StartMessageMoveTaskInput, _ ...func(*sqs.Options)) (*sqs.StartMessageMoveTaskOutput, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	src, err := m.url(ctx, aws.ToString(in.SourceArn))
	if err != nil {
		return nil, err
	}
	dst, err := m.url(ctx, aws.ToString(in.DestinationArn))
	if err != nil {
		return nil, err
	}
	moved := int64(0)
	for {
		out, err := m.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(src), MaxNumberOfMessages: 10, VisibilityTimeout: 30,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil {
			return nil, err
		}
		if len(out.Messages) == 0 {
			break
		}
		for _, msg := range out.Messages {
			// A moved message is a new message: SQS gives it a new id and
			// enqueue time; its deduplication id is its old message id.
			if _, err := m.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(dst), MessageBody: msg.Body,
				MessageGroupId: aws.String(msg.Attributes["MessageGroupId"]), MessageDeduplicationId: msg.MessageId}); err != nil {
				return nil, err
			}
			if _, err := m.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(src), ReceiptHandle: msg.ReceiptHandle}); err != nil {
				return nil, err
			}
			moved++
		}
	}
	if m.tasks == nil {
		m.tasks = map[string]sqstypes.ListMessageMoveTasksResultEntry{}
	}
	m.tasks[aws.ToString(in.SourceArn)] = sqstypes.ListMessageMoveTasksResultEntry{
		SourceArn: in.SourceArn, DestinationArn: in.DestinationArn, Status: aws.String("COMPLETED"),
		ApproximateNumberOfMessagesMoved: moved, ApproximateNumberOfMessagesToMove: aws.Int64(moved),
	}
	return &sqs.StartMessageMoveTaskOutput{TaskHandle: aws.String("task-" + aws.ToString(in.SourceArn))}, nil
}

func (m *moveTasks) ListMessageMoveTasks(_ context.Context, in *sqs.ListMessageMoveTasksInput, _ ...func(*sqs.Options)) (*sqs.ListMessageMoveTasksOutput, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := &sqs.ListMessageMoveTasksOutput{}
	if t, ok := m.tasks[aws.ToString(in.SourceArn)]; ok {
		out.Results = append(out.Results, t)
	}
	return out, nil
}

// TestRedriveMovesYoungMessagesThroughTheMoveTask: a dead-letter queue
// whose every message is younger than the max age is moved back to its
// queue by SQS's message-move task (modelled: fauxqs has none), in the
// messages' conversations; a second redrive finds nothing to move.
func TestRedriveMovesYoungMessagesThroughTheMoveTask(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	s.op.SQS = &moveTasks{Client: s.env.SQS}
	a := s.deadLetter("950001", s.now.Add(-10*time.Minute))
	other := message.Thread{Platform: message.Telegram, Account: thread.Account, Chat: "43"}
	b := s.deadLetterIn(other, "950002", s.now.Add(-time.Minute))

	r, err := s.op.Redrive(context.Background(), "inbound", time.Hour)
	if err != nil || r.Outcome != "started" || r.Moving != 2 {
		t.Fatalf("redrive: %+v, %v; want both moved", r, err)
	}
	if n := s.visible(s.env.Resources.InboundDLQURL); n != 0 {
		t.Errorf("dead-letter queue holds %d after the move", n)
	}
	got := map[string]string{}
	for range 5 {
		out, err := s.env.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(s.env.Resources.InboundURL), MaxNumberOfMessages: 10,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			for _, k := range []string{a, b} {
				if strings.Contains(aws.ToString(m.Body), k[strings.LastIndex(k, "#")+1:]) {
					got[k] = m.Attributes["MessageGroupId"]
				}
			}
		}
	}
	if got[a] != thread.Key() || got[b] != other.Key() {
		t.Errorf("moved messages' groups %v: want each in its conversation's", got)
	}
	if r, err := s.op.Redrive(context.Background(), "inbound", time.Hour); err != nil || r.Outcome != "nothing_to_redrive" {
		t.Errorf("second redrive: %+v, %v; want nothing to redrive", r, err)
	}
}

// TestRedriveRefusesWhatItCannotRead: fauxqs hands out one message per
// group at a time (real SQS up to ten), so a second message of a
// conversation stays unread behind the first; the guard replays only what
// it read, and refuses.
func TestRedriveRefusesWhatItCannotRead(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	s.op.SQS = &moveTasks{Client: s.env.SQS}
	s.deadLetter("960001", s.now.Add(-time.Minute))
	s.deadLetter("960002", s.now.Add(-time.Minute))
	r, err := s.op.Redrive(context.Background(), "inbound", time.Hour)
	var refused *operator.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(r.Detail, "could not be read") {
		t.Fatalf("redrive: %+v, %v; want refused for the unread message", r, err)
	}
	if n := s.visible(s.env.Resources.InboundDLQURL); n != 2 {
		t.Errorf("dead-letter queue holds %d visible, want both untouched", n)
	}
}

// TestFauxqsHasNoMessageMoveTask keeps docs/emulators.md true: fauxqs
// refuses StartMessageMoveTask, so a redrive's move is tested on the model
// above. When fauxqs learns it, this fails: test the move on fauxqs then.
func TestFauxqsHasNoMessageMoveTask(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	attr := func(url string) string {
		out, err := s.env.SQS.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Attributes["QueueArn"]
	}
	_, err := s.env.SQS.StartMessageMoveTask(context.Background(), &sqs.StartMessageMoveTaskInput{
		SourceArn: aws.String(attr(s.env.Resources.InboundDLQURL)), DestinationArn: aws.String(attr(s.env.Resources.InboundURL))})
	if err == nil {
		t.Fatal("fauxqs started a message-move task: it supports them now; test Redrive on fauxqs and update docs/emulators.md")
	}
}
