package runner_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// BenchmarkAWSCallsPerMessage counts the AWS API calls one human message
// costs end to end — webhook, turn, delivery — through the real functions on
// DynamoDB Local and fauxqs, for a 1-, 2- and 3-bubble reply (docs/capacity.md). The event
// source mapping's own ReceiveMessage/DeleteMessageBatch calls are Lambda's,
// not Parley's, and are reported apart. ns/op is the end-to-end latency on the
// emulators, not a production figure.
func BenchmarkAWSCallsPerMessage(b *testing.B) {
	for _, bubbles := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("%d-bubble", bubbles), func(b *testing.B) {
			h := start(b, options{})
			parts := make([]string, bubbles)
			for i := range parts {
				parts[i] = fmt.Sprintf("part %d", i+1)
			}
			text := "/bubbles " + strings.Join(parts, " | ")
			h.calls.Reset()
			b.ResetTimer()
			n := 0
			for b.Loop() {
				n++
				if status, body := h.postTelegram(telegramUpdate(800000+n, 900, text)); status != http.StatusOK {
					b.Fatalf("%d %s", status, body)
				}
				h.waitDelivered(n*bubbles, time.Minute)
			}
			b.StopTimer()
			h.quiesce(30 * time.Second)
			esm := func(op string) bool { return op == "SQS.ReceiveMessage" || op == "SQS.DeleteMessageBatch" }
			own := h.calls.Total(func(op string) bool { return !esm(op) })
			ddb := h.calls.Total(func(op string) bool { return strings.HasPrefix(op, "DynamoDB.") })
			writes := h.calls.Total(func(op string) bool {
				return op == "DynamoDB.PutItem" || op == "DynamoDB.UpdateItem" || op == "DynamoDB.DeleteItem"
			})
			b.ReportMetric(float64(own)/float64(n), "aws-calls/msg")
			b.ReportMetric(float64(ddb)/float64(n), "dynamodb-calls/msg")
			b.ReportMetric(float64(writes)/float64(n), "dynamodb-writes/msg")
			b.ReportMetric(float64(own-ddb)/float64(n), "sqs-calls/msg")
			b.Logf("calls for %d messages: %s", n, h.calls)
		})
	}
}
