package consumer_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/queue"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// receive takes at most one message off url, waiting up to wait, as Lambda's
// event source mapping hands it to a function.
func receive(t *testing.T, client *sqs.Client, url string, wait int32) (events.SQSMessage, bool) {
	t.Helper()
	out, err := client.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(url), MaxNumberOfMessages: 1, WaitTimeSeconds: wait,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
	})
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	if len(out.Messages) == 0 {
		return events.SQSMessage{}, false
	}
	m := out.Messages[0]
	return events.SQSMessage{
		MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
		Body: aws.ToString(m.Body), Attributes: m.Attributes,
	}, true
}

// TestRetryParksARealMessage runs one real message through the consumer on
// fauxqs: a Retry of 2 s must hide it (the queue's own visibility timeout is
// minutes) and bring it back after about 2 s, received a second time.
func TestRetryParksARealMessage(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	q := queue.New(env.SQS, env.Resources.InboundURL)
	if err := q.Send(t.Context(), queue.Message{Group: "telegram:1:42", Dedup: "evt#1", Body: []byte("hello")}); err != nil {
		t.Fatal(err)
	}
	msg, ok := receive(t, env.SQS, env.Resources.InboundURL, 5)
	if !ok {
		t.Fatal("the sent message was not received")
	}

	c := &consumer.Consumer{Visibility: q, Log: quiet, Handle: func(_ context.Context, r consumer.Record) error {
		if r.Group != "telegram:1:42" || r.ReceiveCount != 1 {
			t.Errorf("record group %q, receive count %d; want telegram:1:42, 1", r.Group, r.ReceiveCount)
		}
		return consumer.Retry(errors.New("rate limited"), 2*time.Second)
	}}
	resp, err := c.HandleSQS(t.Context(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != msg.MessageId {
		t.Fatalf("HandleSQS = %+v, %v; want the message reported failed", resp, err)
	}
	parked := time.Now()

	if m, ok := receive(t, env.SQS, env.Resources.InboundURL, 0); ok {
		t.Fatalf("message %s visible right after being parked for 2s", m.MessageId)
	}
	var again events.SQSMessage
	for back := false; !back; {
		if time.Since(parked) > 15*time.Second {
			t.Fatal("message not visible again 15 s after a 2 s retry")
		}
		again, back = receive(t, env.SQS, env.Resources.InboundURL, 1)
	}
	if waited := time.Since(parked); waited < time.Second {
		t.Fatalf("message back after %v, before its 2 s retry delay", waited)
	}
	if again.MessageId != msg.MessageId || again.Body != "hello" || again.Attributes["ApproximateReceiveCount"] != "2" {
		t.Fatalf("received %+v, want the same message on its second receive", again)
	}
}
