package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	stypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/envelope"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/sweeper"
	"github.com/parleyhq/parley/shared/triage"
	"github.com/parleyhq/parley/shared/turn"
)

// receive takes up to 10 visible messages off inbound.fifo.
func (h *harness) receive() []consumer.Record {
	h.t.Helper()
	out, err := h.env.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(h.inbound), MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 60,
		MessageSystemAttributeNames: []stypes.MessageSystemAttributeName{stypes.MessageSystemAttributeNameMessageGroupId},
	})
	if err != nil {
		h.t.Fatal(err)
	}
	recs := make([]consumer.Record, len(out.Messages))
	for i, m := range out.Messages {
		recs[i] = consumer.Record{
			SQSMessage: lambdaevents.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body)},
			Group:      m.Attributes[string(stypes.MessageSystemAttributeNameMessageGroupId)],
		}
	}
	return recs
}

// TestDeferredEventWaitsForQuietHoursEnd: with quiet_mode defer, an event at
// night is accepted for 07:00 local. It is held on its claim, not queued, so
// Ada's own messages go on meanwhile; at 07:00 the sweeper enqueues it on
// Ada's own thread group (finding 8.7: one ordering domain per thread), and
// the turn's age counts from then.
func TestDeferredEventWaitsForQuietHoursEnd(t *testing.T) {
	t.Parallel()
	h := newHarness(t, triage.Config{Default: triage.Policy{
		TimeZone: "Europe/Berlin", QuietHours: "22:00-07:00", QuietMode: triage.QuietDefer, Cooldown: time.Minute, DailyCap: 3,
	}})
	h.clock.Set(berlinTime(t, "2026-03-28 23:30")) // the night DST starts
	h.want(h.post("night-1"), "deferred")
	h.want(h.post("night-2"), "suppressed/cooldown") // both would wake Ada at 07:00
	h.want(h.postHuman(900000301), "enqueued")

	recs := h.receive()
	if len(recs) != 1 || recs[0].Group != message.GroupID(ada.Key()) {
		t.Fatalf("received %d messages, want only Ada's own, in her thread's group", len(recs))
	}
	if n := h.count(ada, "2026-03-29"); n != 1 {
		t.Fatalf("the deferred event counts against %s: count %d, want 1", "2026-03-29", n)
	}
	// Ada's turn is done: her thread's group is free again.
	if _, err := h.env.SQS.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(h.inbound), ReceiptHandle: aws.String(recs[0].ReceiptHandle)}); err != nil {
		t.Fatal(err)
	}

	sw := &sweeper.Processor{Store: h.store, Inbound: queue.New(h.env.SQS, h.inbound), Outbound: queue.New(h.env.SQS, h.env.Resources.OutboundURL), Now: h.clock.Now}
	wake := berlinTime(t, "2026-03-29 07:00")
	if !wake.Equal(time.Date(2026, 3, 29, 5, 0, 0, 0, time.UTC)) {
		t.Fatalf("07:00 Berlin on the DST night is %s", wake)
	}
	h.clock.Set(wake.Add(-time.Minute))
	if r, err := sw.Run(context.Background()); err != nil || r.Undeferred != 0 {
		t.Fatalf("sweep at 06:59 = %+v, %v; want nothing enqueued yet", r, err)
	}
	h.clock.Set(wake)
	if r, err := sw.Run(context.Background()); err != nil || r.Undeferred != 1 {
		t.Fatalf("sweep at 07:00 = %+v, %v; want the deferred event enqueued", r, err)
	}
	recs = h.receive()
	if len(recs) != 1 || recs[0].Group != message.GroupID(ada.Key()) {
		t.Fatalf("received %+v, want the deferred event in Ada's own thread group", recs)
	}
	in, err := intent.DecodeInbound([]byte(recs[0].Body))
	if err != nil {
		t.Fatal(err)
	}
	if in.Event.EventID != "night-1" || !in.ReceivedAt.Equal(wake) {
		t.Fatalf("deferred message = %+v, received at %s; want night-1, its age from %s", in.Event, in.ReceivedAt, wake)
	}
	if r, err := sw.Run(context.Background()); err != nil || r.Due != 0 {
		t.Fatalf("sweep after = %+v, %v; want nothing due", r, err)
	}
}

// channel is the Telegram channel as the turn sees it: capabilities only.
var channel = turn.Channel{Capabilities: message.Capabilities{TextLimit: 4096, Counting: message.CountUTF16}}

// TestSilentEnvelopeSendsNothing: triage is the first layer; the agent's
// envelope is the second. An accepted proactive event whose agent answers
// next: silent plans no bubble.
func TestSilentEnvelopeSendsNothing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		next  string
		units int
	}{{"silent", 0}, {"stop", 1}} {
		t.Run(c.next, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, triage.Config{Default: triage.Policy{DailyCap: 5}})
			var calls atomic.Int32
			var kinds atomic.Value
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				var req agent.TurnRequest
				_ = json.NewDecoder(r.Body).Decode(&req)
				kinds.Store(req.Event.Kind)
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"schema":"openab.turn.v1","messages":[{"id":"b1","text":"all quiet"}],"next":{"type":%q}}`, c.next)
			}))
			defer srv.Close()
			h.want(h.post("tick-1"), "enqueued")
			recs := h.receive()
			if len(recs) != 1 {
				t.Fatalf("received %d, want 1", len(recs))
			}
			p := &turn.Processor{
				Claims: h.store, Intents: h.store, Outbox: queue.New(h.env.SQS, h.env.Resources.OutboundURL),
				Agent:    &agent.Client{URL: srv.URL, Secret: h.secret, Now: h.clock.Now},
				Channels: map[message.Platform]turn.Channel{message.Telegram: channel},
				Config:   turn.Config{Envelope: envelope.Config{}.WithDefaults()},
				Now:      h.clock.Now,
			}
			if err := p.Handle(context.Background(), recs[0]); err != nil {
				t.Fatal(err)
			}
			if calls.Load() != 1 || kinds.Load() != message.KindProactive {
				t.Fatalf("agent called %d times, last with a %v event; want once, proactive", calls.Load(), kinds.Load())
			}
			out, err := h.env.SQS.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
				QueueUrl: aws.String(h.env.Resources.OutboundURL), AttributeNames: []stypes.QueueAttributeName{stypes.QueueAttributeNameApproximateNumberOfMessages},
			})
			if err != nil {
				t.Fatal(err)
			}
			if n := out.Attributes[string(stypes.QueueAttributeNameApproximateNumberOfMessages)]; n != fmt.Sprint(c.units) {
				t.Fatalf("next %s: %s bubbles queued, want %d", c.next, n, c.units)
			}
			claim, err := h.store.GetClaim(context.Background(), store.IntentKey(intent.IDFor("evt#events#alerts#tick-1")), h.clock.Now())
			if err != nil || claim.State != store.ClaimDone {
				t.Fatalf("turn claim = %+v, %v; want done", claim, err)
			}
		})
	}
}
