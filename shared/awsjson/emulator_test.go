package awsjson_test

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/awsenv"
	"github.com/parleyhq/parley/shared/awsjson"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

type (
	sendIn struct {
		QueueUrl, MessageBody, MessageGroupId, MessageDeduplicationId string
	}
	receiveIn struct {
		QueueUrl            string
		MaxNumberOfMessages int
		WaitTimeSeconds     int
	}
	receiveOut struct {
		Messages []struct{ MessageId, ReceiptHandle, Body string }
	}
)

// TestSQSOnTheEmulator: a configuration from the environment (as functions
// build theirs) reaches fauxqs through AWS_ENDPOINT_URL_SQS, and SQS's
// answers and refusals decode as AWS sends them.
func TestSQSOnTheEmulator(t *testing.T) {
	env := emulatortest.New(t)
	cfg, err := awsenv.Load(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	c := awsjson.New(cfg, awsjson.SQS)
	url := env.Resources.InboundURL
	var sent struct{ MessageId string }
	if err := c.Call(t.Context(), "SendMessage", sendIn{QueueUrl: url, MessageBody: "héllo {}", MessageGroupId: "g", MessageDeduplicationId: "d1"}, &sent); err != nil {
		t.Fatal(err)
	}
	if sent.MessageId == "" {
		t.Fatal("SendMessage answered no MessageId")
	}
	var got receiveOut
	if err := c.Call(t.Context(), "ReceiveMessage", receiveIn{QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 5}, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 || got.Messages[0].Body != "héllo {}" || got.Messages[0].MessageId != sent.MessageId {
		t.Fatalf("received %+v; want the one message sent (%s)", got.Messages, sent.MessageId)
	}
	del := map[string]string{"QueueUrl": url, "ReceiptHandle": got.Messages[0].ReceiptHandle}
	if err := c.Call(t.Context(), "DeleteMessage", del, nil); err != nil {
		t.Fatal(err)
	}

	err = c.Call(t.Context(), "SendMessage", sendIn{QueueUrl: url + "-missing", MessageBody: "x", MessageGroupId: "g", MessageDeduplicationId: "d2"}, nil)
	var api *awsjson.APIError
	if !errors.As(err, &api) || api.Code != "QueueDoesNotExist" || api.Status != 400 {
		t.Fatalf("a missing queue: %v; want an APIError QueueDoesNotExist", err)
	}
	err = c.Call(t.Context(), "ChangeMessageVisibility", map[string]any{"QueueUrl": url, "ReceiptHandle": "never-issued", "VisibilityTimeout": 0}, nil)
	// AWS answers ReceiptHandleIsInvalid; fauxqs, MessageNotInflight.
	if !errors.As(err, &api) || (api.Code != "ReceiptHandleIsInvalid" && api.Code != "MessageNotInflight") {
		t.Fatalf("a handle never issued: %v; want ReceiptHandleIsInvalid or MessageNotInflight", err)
	}
}

// BenchmarkSendMessageVsSDK sends to fauxqs with the client functions use
// and, interleaved in the same run, with the SDK's SQS client, and reports
// both p50s and their ratio (vs-sdk; below 1 is faster).
func BenchmarkSendMessageVsSDK(b *testing.B) {
	env := emulatortest.New(b)
	c := awsjson.New(env.AWS, awsjson.SQS)
	url := env.Resources.InboundURL
	var ours, sdk []time.Duration
	i := 0
	for b.Loop() {
		i++
		start := time.Now()
		if err := c.Call(b.Context(), "SendMessage", sendIn{QueueUrl: url, MessageBody: "bench", MessageGroupId: "g", MessageDeduplicationId: fmt.Sprint("j", i)}, nil); err != nil {
			b.Fatal(err)
		}
		ours = append(ours, time.Since(start))
		start = time.Now()
		if _, err := env.SQS.SendMessage(b.Context(), &sqs.SendMessageInput{
			QueueUrl: aws.String(url), MessageBody: aws.String("bench"), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String(fmt.Sprint("s", i)),
		}); err != nil {
			b.Fatal(err)
		}
		sdk = append(sdk, time.Since(start))
	}
	p50 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds())
	}
	o, s := p50(ours), p50(sdk)
	b.ReportMetric(o, "awsjson-p50-us")
	b.ReportMetric(s, "sdk-p50-us")
	b.ReportMetric(o/s, "vs-sdk")
}
