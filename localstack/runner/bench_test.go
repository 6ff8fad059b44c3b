package runner_test

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/message"
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
//
// Bubbles of 1,000 characters run too, questions on (the default): what a
// message costs in write units depends on its text's size, since DynamoDB
// bills a write per KB of the larger of the item before and after it. The
// bubbles are chat text (chatText), which compresses as chat does. Where
// the intent's item stays under 1 KB through every write (1 and 2 bubbles
// of 280 characters, 1 of 1,000: ADR 0019), the benchmark fails above the
// write-unit floor, one unit per write plus the two index writes of the
// sweeper's list (the claim enters it, the last receipt leaves it).
func BenchmarkAWSCallsPerMessage(b *testing.B) {
	for _, bubbles := range []int{1, 2, 3} {
		for _, questions := range []string{"off", "on"} {
			b.Run(fmt.Sprintf("%d-bubble/questions-%s", bubbles, questions), func(b *testing.B) {
				benchCalls(b, bubbles, 280, questions)
			})
		}
	}
	for _, bubbles := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("%d-bubble-1000-chars/questions-on", bubbles), func(b *testing.B) {
			benchCalls(b, bubbles, 1000, "on")
		})
	}
}

// chatPara is chat text to cut bubbles from: a reply as an assistant
// writes one, with names, times and numbers, no "|" (the echo agent's
// bubble mark). Cut at different places, it compresses as a message does,
// not as a repeated phrase would.
const chatPara = "Sure! Your flight LH 4711 from Frankfurt now leaves at 20:05 instead of 18:30, from gate B12. " +
	"Boarding starts 40 minutes before departure, so please be at the gate by 19:25. I've moved your airport " +
	"transfer to 17:45 and let the hotel in Lisbon know you'll check in late; they confirmed your room stays " +
	"reserved. Do you want me to rebook dinner on Friday too, or keep the table at eight? The weather in Lisbon " +
	"looks mild: 19°C and sunny, with some wind in the afternoon. Don't forget your passport and the printed " +
	"boarding pass, since the app was down for some travellers this morning. If anything else changes I'll " +
	"message you right away. Meanwhile, the invoice for order 88213 was paid on Tuesday; the refund of the old " +
	"booking (EUR 142.50) should reach your card within five working days. Your dentist appointment moved to " +
	"Thursday 9:30, and the library books are due next Monday. I also found two cheaper options for the train " +
	"to Porto on Sunday morning: 8:12 arriving 11:05 for EUR 24, or 9:40 arriving 12:31 for EUR 19, both with " +
	"seat reservation included. Tell me which one you prefer and I'll book it with your saved card ending in " +
	"4421. The electrician confirmed Wednesday between 14:00 and 16:00 for the kitchen lights, and your sister " +
	"asked whether you can bring the folding chairs to the party on Saturday."

// chatText is the i-th bubble of n bytes cut from chatPara.
func chatText(i, n int) string {
	s := strings.Repeat(chatPara+" ", 2+n/len(chatPara))
	off := (i * 397) % len(chatPara)
	return strings.TrimSpace(s[off:off+n-1]) + "."
}

func benchCalls(b *testing.B, bubbles, chars int, questions string) {
	h := start(b, options{env: map[string]string{"PARLEY_QUESTIONS": questions}})
	parts := make([]string, bubbles)
	for i := range parts {
		parts[i] = chatText(i, chars)
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
	b.ReportMetric(float64(writes)/float64(n)+2, "floor-wcu/msg")
	b.Logf("calls for %d messages: %s", n, h.calls)
	if limit := floor + map[string]int{"off": 0, "on": 1}[questions]; own > limit*n {
		b.Errorf("%d AWS calls per message, want at most %d", own/n, limit)
	}
	if underKB := bubbles*chars <= 560 || bubbles == 1; underKB && cu.Write > float64(writes+2*n) {
		b.Errorf("%.1f write units per message, want at most %.1f: one per write, and two for the sweeper's list",
			cu.Write/float64(n), float64(writes)/float64(n)+2)
	}
}

// BenchmarkAWSCallsPerMessageWithContext is what each conversation-context
// feature adds to a person's message with a 1-bubble reply, questions off
// (docs/capacity.md, ADR 0022): history (PARLEY_HISTORY, every message of
// one thread, so its transcript grows to its bound), status reactions,
// reactions in (on, a message costs what it did), the busy policies
// (collect for a message to an idle thread, and four messages of which
// three came during a slow turn; interrupt), and a reaction event the
// agent is woken for (a turn with nothing to say), counted apart from the
// message it reacts to. Each reports the metrics of
// BenchmarkAWSCallsPerMessage, per message (per reaction for the last).
func BenchmarkAWSCallsPerMessageWithContext(b *testing.B) {
	for _, c := range []struct {
		name string
		env  map[string]string
		run  func(b *testing.B, h *harness, n int) (msgs, bubbles int)
	}{
		{name: "baseline", run: oneMessage},
		{name: "history", env: map[string]string{"PARLEY_HISTORY": "20"}, run: oneMessage},
		{name: "status-reactions", env: map[string]string{"PARLEY_STATUS_REACTIONS": "on"}, run: oneMessage},
		{name: "reactions-in", env: map[string]string{"PARLEY_REACTIONS": "on", "PARLEY_EDITS": "on"}, run: oneMessage},
		{name: "collect-idle-thread", env: map[string]string{"PARLEY_BUSY_POLICY": "collect"}, run: oneMessage},
		{name: "collect-three-during-a-turn", env: map[string]string{"PARLEY_BUSY_POLICY": "collect"}, run: collectedFour},
		{name: "interrupt", env: map[string]string{"PARLEY_BUSY_POLICY": "interrupt"}, run: oneMessage},
	} {
		b.Run(c.name, func(b *testing.B) {
			env := map[string]string{"PARLEY_QUESTIONS": "off"}
			for k, v := range c.env {
				env[k] = v
			}
			h := start(b, options{env: env})
			h.agent.answer = func(req agent.TurnRequest) (string, bool) {
				if strings.HasPrefix(req.Event.Text, "slow") {
					time.Sleep(time.Second)
				}
				return `{"schema":"openab.turn.v1","messages":[{"id":"b1","text":"` + prose(req.TurnID, 280) + `"}]}`, true
			}
			h.calls.Reset()
			b.ResetTimer()
			n, msgs, delivered := 0, 0, 0
			for b.Loop() {
				n++
				m, bubbles := c.run(b, h, n)
				msgs, delivered = msgs+m, delivered+bubbles
				h.waitDelivered(delivered, time.Minute)
			}
			b.StopTimer()
			h.quiesce(30 * time.Second)
			reportCalls(b, totalsOf(h), msgs, "msg")
		})
	}
	b.Run("reaction-event", func(b *testing.B) {
		h := start(b, options{env: map[string]string{"PARLEY_QUESTIONS": "off", "PARLEY_REACTIONS": "on"}})
		h.agent.fail = func(req agent.TurnRequest) (int, bool) {
			return http.StatusNoContent, req.Event.Kind == message.KindReaction
		}
		var sum callTotals
		n := 0
		for b.Loop() {
			n++
			b.StopTimer()
			if status, body := h.postTelegram(telegramUpdate(830000+n, 930, "react to this")); status != http.StatusOK {
				b.Fatalf("%d %s", status, body)
			}
			ds := h.waitDelivered(n*2, time.Minute)
			h.quiesce(30 * time.Second)
			before := totalsOf(h)
			b.StartTimer()
			if status, body := h.postTelegram(telegramReaction(840000+n, 930, int64(mustAtoi(b, ds[len(ds)-1].MessageID)), "👍")); status != http.StatusOK {
				b.Fatalf("%d %s", status, body)
			}
			h.waitRequests("telegram:"+tgBotID+":930", 2*n, time.Minute)
			b.StopTimer()
			h.quiesce(30 * time.Second)
			sum = sum.plus(totalsOf(h).minus(before))
			b.StartTimer()
		}
		b.StopTimer()
		reportCalls(b, sum, n, "reaction")
	})
}

// oneMessage posts one person's message to one thread; its reply is one
// bubble.
func oneMessage(b *testing.B, h *harness, n int) (int, int) {
	if status, body := h.postTelegram(telegramUpdate(810000+n, 910, prose(strconv.Itoa(n), 80))); status != http.StatusOK {
		b.Fatalf("%d %s", status, body)
	}
	return 1, 1
}

// prose is n bytes of words drawn from a short vocabulary, seeded by seed:
// text that compresses about as well as a conversation does, unlike one
// sentence repeated.
func prose(seed string, n int) string {
	words := strings.Fields("the flight moves to eight in the evening gate twelve near security please bring your passport " +
		"and boarding pass hotel breakfast starts at seven we booked a table for two on friday weather looks sunny " +
		"tomorrow with light wind remind me to call the bank about my card invoice number order shipped yesterday")
	h := fnv.New64a()
	_, _ = h.Write([]byte(seed))
	r := rand.New(rand.NewPCG(h.Sum64(), 0))
	var sb strings.Builder
	for sb.Len() < n {
		sb.WriteString(words[r.IntN(len(words))])
		sb.WriteByte(' ')
	}
	return sb.String()[:n]
}

// collectedFour posts a message whose turn is slow and, while it runs,
// three more: two turns answer the four.
func collectedFour(b *testing.B, h *harness, n int) (int, int) {
	thread := "telegram:" + tgBotID + ":920"
	before := len(h.agent.requests(thread))
	if status, body := h.postTelegram(telegramUpdate(820000+10*n, 920, "slow")); status != http.StatusOK {
		b.Fatalf("%d %s", status, body)
	}
	h.waitRequests(thread, before+1, time.Minute)
	for i := 1; i <= 3; i++ {
		if status, body := h.postTelegram(telegramUpdate(820000+10*n+i, 920, "more")); status != http.StatusOK {
			b.Fatalf("%d %s", status, body)
		}
	}
	return 4, 2
}

// callTotals are a harness's counted calls, without the event source
// mappings' and the sweeper's.
type callTotals struct {
	own, ddb, writes int
	wcu, rcu         float64
}

func totalsOf(h *harness) callTotals {
	esm := func(op string) bool {
		return op == "SQS.ReceiveMessage" || op == "SQS.DeleteMessageBatch" || op == "DynamoDB.Query"
	}
	cu := h.calls.Capacity()
	return callTotals{
		own: h.calls.Total(func(op string) bool { return !esm(op) }),
		ddb: h.calls.Total(func(op string) bool { return strings.HasPrefix(op, "DynamoDB.") && !esm(op) }),
		writes: h.calls.Total(func(op string) bool {
			return op == "DynamoDB.PutItem" || op == "DynamoDB.UpdateItem" || op == "DynamoDB.DeleteItem"
		}),
		wcu: cu.Write, rcu: cu.Read,
	}
}

func (a callTotals) minus(b callTotals) callTotals {
	return callTotals{a.own - b.own, a.ddb - b.ddb, a.writes - b.writes, a.wcu - b.wcu, a.rcu - b.rcu}
}

func (a callTotals) plus(b callTotals) callTotals {
	return callTotals{a.own + b.own, a.ddb + b.ddb, a.writes + b.writes, a.wcu + b.wcu, a.rcu + b.rcu}
}

// reportCalls reports t per unit (a message, a reaction) of n.
func reportCalls(b *testing.B, t callTotals, n int, unit string) {
	per := func(v float64) float64 { return v / float64(n) }
	b.ReportMetric(per(float64(t.own)), "aws-calls/"+unit)
	b.ReportMetric(per(float64(t.ddb)), "dynamodb-calls/"+unit)
	b.ReportMetric(per(float64(t.writes)), "dynamodb-writes/"+unit)
	b.ReportMetric(per(float64(t.own-t.ddb)), "sqs-calls/"+unit)
	b.ReportMetric(per(t.wcu), "wcu/"+unit)
	b.ReportMetric(per(t.rcu), "rcu/"+unit)
}
