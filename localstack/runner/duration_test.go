package runner_test

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/parleyhq/parley/localstack/runner"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/resources"
)

// durations records each function's invocations and their billed time, as
// Lambda bills it: each invocation rounded up to the millisecond.
type durations struct {
	mu  sync.Mutex
	ms  map[string]float64
	inv map[string]int
}

func newDurations() *durations { return &durations{ms: map[string]float64{}, inv: map[string]int{}} }

func (d *durations) add(fn string, took time.Duration) {
	d.mu.Lock()
	d.ms[fn] += math.Ceil(float64(took) / float64(time.Millisecond))
	d.inv[fn]++
	d.mu.Unlock()
}

func (d *durations) reset() {
	d.mu.Lock()
	clear(d.ms)
	clear(d.inv)
	d.mu.Unlock()
}

// timeSQS times a consumer function's invocations as fn.
func (d *durations) timeSQS(fn string, h runner.SQSHandlerFunc) runner.SQSHandlerFunc {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		start := time.Now()
		defer func() { d.add(fn, time.Since(start)) }()
		return h(ctx, ev)
	}
}

// timeURL times the Function URLs' invocations, each as its function
// (the path's first segment: an ingress function, or reply).
func (d *durations) timeURL(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fn, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		start := time.Now()
		defer func() { d.add(fn, time.Since(start)) }()
		h.ServeHTTP(w, r)
	})
}

// memoryMB is each function's configured memory (shared/resources, which
// the CDK stack deploys): a chat platform's ingress is named for it.
func memoryMB(fn string) int {
	for _, f := range resources.FunctionsWith(nil) {
		if f.Name == fn {
			return f.MemoryMB
		}
	}
	return resources.IngressFor(resources.PlatformSpec{Name: fn}).MemoryMB
}

// List prices, us-east-1, on demand (docs/capacity.md).
const (
	usdPerGBSecond   = 0.0000133334 // Lambda, arm64
	usdPerInvocation = 0.20 / 1e6
	usdPerWCU        = 0.625 / 1e6
	usdPerRCU        = 0.125 / 1e6
	usdPerSQSRequest = 0.50 / 1e6 // FIFO
)

// What the emulators cannot show, taken as docs/capacity.md states them: a
// synchronous agent's latency, a platform's answer to a send, and the
// delay between two bubbles (PARLEY_BUBBLE_DELAY's default), each billed
// while the function waits.
const (
	syncAgentLatency = 2 * time.Second
	platformSend     = 200 * time.Millisecond
	bubbleDelay      = time.Second
)

// BenchmarkLambdaDurationPerMessage measures the billed duration of each
// function's handler per message (Lambda rounds each invocation up to the
// millisecond), for a 2-bubble reply of 280 characters of chat text,
// questions on: with a synchronous agent, and with an async one (202,
// then POST /reply). It reports the GB-seconds at each function's
// configured memory and the all-in cost per million messages at list
// prices: the measured write and read units, SQS calls (the event source
// mappings' counted as one receive per batch they delete), Lambda
// invocations and GB-seconds, plus what the emulators cannot show
// (syncAgentLatency, platformSend, bubbleDelay), added at the memory of the
// function that waits for it. The handlers' own time on the emulators is
// not AWS's (a local DynamoDB call takes about a millisecond): it is
// reported so a change that makes a handler slower shows.
func BenchmarkLambdaDurationPerMessage(b *testing.B) {
	for _, mode := range []string{"sync", "async"} {
		b.Run(mode, func(b *testing.B) { benchDuration(b, mode) })
	}
}

func benchDuration(b *testing.B, mode string) {
	h := start(b, options{timed: true})
	if mode == "async" {
		h.agent.fail = later
	}
	parts := []string{chatText(0, 280), chatText(1, 280)}
	h.calls.Reset()
	h.durations.reset()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		n++
		update := 830000 + n
		text := "/bubbles " + strings.Join(parts, " | ")
		if mode == "async" {
			text = "later " + strconv.Itoa(n)
		}
		if status, body := h.postTelegram(telegramUpdate(update, 930, text)); status != http.StatusOK {
			b.Fatalf("%d %s", status, body)
		}
		if mode == "async" {
			turnID := intent.IDFor("evt#telegram#" + tgBotID + "#" + strconv.Itoa(update))
			h.waitAwait(turnID)
			if status, body := h.postReply("msg_"+turnID, replyBody(turnID, parts...)); status >= 300 {
				b.Fatalf("reply: %d %s", status, body)
			}
		}
		h.waitDelivered(2*n, time.Minute)
	}
	b.StopTimer()
	h.quiesce(30 * time.Second)

	h.durations.mu.Lock()
	defer h.durations.mu.Unlock()
	per := func(v float64) float64 { return v / float64(n) }
	gbs, invocations := 0.0, 0
	for fn, ms := range h.durations.ms {
		g := ms / 1000 * float64(memoryMB(fn)) / 1024
		b.ReportMetric(per(ms), fn+"-ms/msg")
		b.ReportMetric(per(g), fn+"-gbs/msg")
		gbs += g
		invocations += h.durations.inv[fn]
	}
	waits := 2*platformSend + bubbleDelay // delivery, 128 MB
	waitGBs := waits.Seconds() * float64(resources.Delivery.MemoryMB) / 1024
	if mode == "sync" {
		waitGBs += syncAgentLatency.Seconds() * float64(resources.Turn.MemoryMB) / 1024
	}
	allGBs := per(gbs) + waitGBs
	b.ReportMetric(per(gbs), "measured-gbs/msg")
	b.ReportMetric(allGBs, "gbs/msg")
	cu := h.calls.Capacity()
	sqsOwn := h.calls.Total(func(op string) bool {
		return strings.HasPrefix(op, "SQS.") && op != "SQS.ReceiveMessage" && op != "SQS.DeleteMessageBatch"
	})
	esm := 2 * h.calls.Total(func(op string) bool { return op == "SQS.DeleteMessageBatch" })
	usd := per(cu.Write)*usdPerWCU + per(cu.Read)*usdPerRCU + per(float64(sqsOwn+esm))*usdPerSQSRequest +
		per(float64(invocations))*usdPerInvocation + allGBs*usdPerGBSecond
	own := h.calls.Total(func(op string) bool {
		return op != "SQS.ReceiveMessage" && op != "SQS.DeleteMessageBatch" && op != "DynamoDB.Query"
	})
	b.ReportMetric(per(float64(own)), "aws-calls/msg")
	b.ReportMetric(per(cu.Write), "wcu/msg")
	b.ReportMetric(per(cu.Read), "rcu/msg")
	b.ReportMetric(per(float64(invocations)), "invocations/msg")
	b.ReportMetric(usd*1e6, "usd-per-million")
	b.Logf("%d messages: calls %s; billed ms %v over %v invocations", n, h.calls, h.durations.ms, h.durations.inv)
}
