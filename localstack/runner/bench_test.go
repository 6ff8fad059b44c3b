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
// DynamoDB Local and fauxqs, for a 1-, 2- and 3-bubble reply of 280-character
// bubbles, with the agent's questions off and on (docs/capacity.md). Beside
// each count is the design's floor, 5 + 2N for N bubbles: one conditional
// write and one send at ingress; the turn's claim, its commit and one batch
// send; a lease and a receipt per bubble. Questions add one read of the
// thread's question per message. The consumed DynamoDB capacity
// (ReturnConsumedCapacity, index writes included) is reported per message
// too. The event source mapping's own ReceiveMessage/DeleteMessageBatch calls
// are Lambda's, not Parley's, and are left out. ns/op is the end-to-end
// latency on the emulators, not a production figure.
func BenchmarkAWSCallsPerMessage(b *testing.B) {
	for _, bubbles := range []int{1, 2, 3} {
		for _, questions := range []string{"off", "on"} {
			b.Run(fmt.Sprintf("%d-bubble/questions-%s", bubbles, questions), func(b *testing.B) {
				benchCalls(b, bubbles, questions)
			})
		}
	}
}

func benchCalls(b *testing.B, bubbles int, questions string) {
	h := start(b, options{env: map[string]string{"PARLEY_QUESTIONS": questions}})
	parts := make([]string, bubbles)
	for i := range parts {
		parts[i] = fmt.Sprintf("part %d %s", i+1, strings.Repeat("a realistic reply sentence. ", 10))[:280]
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
	// The event source mapping's calls are Lambda's; the sweeper's Query
	// is a schedule's (every 3 s here, every minute in AWS), whichever
	// messages it lands among: neither is a message's.
	esm := func(op string) bool {
		return op == "SQS.ReceiveMessage" || op == "SQS.DeleteMessageBatch" || op == "DynamoDB.Query"
	}
	own := h.calls.Total(func(op string) bool { return !esm(op) })
	ddb := h.calls.Total(func(op string) bool { return strings.HasPrefix(op, "DynamoDB.") && !esm(op) })
	writes := h.calls.Total(func(op string) bool {
		return op == "DynamoDB.PutItem" || op == "DynamoDB.UpdateItem" || op == "DynamoDB.DeleteItem"
	})
	b.ReportMetric(float64(own)/float64(n), "aws-calls/msg")
	b.ReportMetric(float64(ddb)/float64(n), "dynamodb-calls/msg")
	b.ReportMetric(float64(writes)/float64(n), "dynamodb-writes/msg")
	b.ReportMetric(float64(own-ddb)/float64(n), "sqs-calls/msg")
	cu := h.calls.Capacity()
	b.ReportMetric(cu.Write/float64(n), "wcu/msg")
	b.ReportMetric(cu.Read/float64(n), "rcu/msg")
	floor := 5 + 2*bubbles
	b.ReportMetric(float64(floor), "floor-calls/msg")
	b.Logf("calls for %d messages: %s", n, h.calls)
	if limit := floor + map[string]int{"off": 0, "on": 1}[questions]; own > limit*n {
		b.Errorf("%d AWS calls per message, want at most %d", own/n, limit)
	}
}
