package runner_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// BenchmarkAWSCallsPerWhatsAppStatuses is BenchmarkAWSCallsPerMessage's
// count for what follows a reply on WhatsApp (docs/capacity.md, ADR 0025): a
// person's message answered with 2 bubbles, then the 6 statuses Meta sends
// for them (sent, delivered, read of each), each its own signed webhook.
// The message is counted as "msg"; the statuses apart, per message, as
// "statuses": the statuses are applied at ingress, so they may cost at most
// one write each no SQS call and no turn invocation (counted by the
// local event source mapping).
func BenchmarkAWSCallsPerWhatsAppStatuses(b *testing.B) {
	h := start(b, options{env: map[string]string{"PARLEY_QUESTIONS": "off"}})
	var msg, sts callTotals
	var turns [2]int64 // the message's turn invocations, the statuses'

	n := 0
	for b.Loop() {
		n++
		before := totalsOf(h)
		turnsBefore := h.turns.Invocations()
		id := fmt.Sprintf("wamid.BENCH%06d", n)
		if code, body := h.postWhatsApp(waText(id, waAda, "/bubbles "+prose(id+"a", 280)+" | "+prose(id+"b", 280), h.clock.Now())); code != http.StatusOK {
			b.Fatalf("%d %s", code, body)
		}
		d := h.waitDelivered(2*n, time.Minute)
		b.StopTimer()
		h.quiesce(30 * time.Second)
		mid, turnsMid := totalsOf(h), h.turns.Invocations()
		msg = msg.plus(mid.minus(before))
		turns[0] += turnsMid - turnsBefore
		b.StartTimer()
		for _, state := range []string{message.StatusSent, message.StatusDelivered, message.StatusRead} {
			for _, dl := range d[len(d)-2:] {
				if code, body := h.postWhatsApp(h.waStatus(dl, state).Body()); code != http.StatusOK {
					b.Fatalf("status: %d %s", code, body)
				}
			}
		}
		b.StopTimer()
		h.quiesce(30 * time.Second)
		sts = sts.plus(totalsOf(h).minus(mid))
		turns[1] += h.turns.Invocations() - turnsMid
		b.StartTimer()
	}
	b.StopTimer()
	in := h.intentFor("evt#whatsapp#" + waPhone + fmt.Sprintf("#wamid.BENCH%06d", n))
	for _, u := range in.Units {
		if u.Reported != message.StatusRead {
			b.Fatalf("unit %s reported %q after its statuses, want read", u.ID, u.Reported)
		}
	}
	reportCalls(b, msg, n, "msg")
	reportCalls(b, sts, n, "statuses")
	b.ReportMetric(float64(turns[0])/float64(n), "turn-invocations/msg")
	b.ReportMetric(float64(turns[1])/float64(n), "turn-invocations/statuses")
	if sts.writes > 6*n || sts.own != sts.ddb || turns[1] != 0 {
		b.Errorf("6 statuses cost %.1f writes, %.1f SQS calls and %.1f turn invocations; want at most 6, none and none",
			float64(sts.writes)/float64(n), float64(sts.own-sts.ddb)/float64(n), float64(turns[1])/float64(n))
	}
}
