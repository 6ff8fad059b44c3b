package ingress_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/parleyhq/parley/localstack/awsfault"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
	"github.com/parleyhq/parley/shared/triage"
)

// The ack's conditional writes with their answer lost after DynamoDB
// applied them, which the SDK retries (awsfault.LostAnswer): the retry
// meets the write's own success, and the ack answers as if the first
// answer had arrived.
func TestAckWritesWithTheirAnswerLost(t *testing.T) {
	t.Parallel()

	// The event's key is written and its answer lost: the retry finds the
	// key the ack itself wrote, which is no duplicate.
	t.Run("KeyIsNoDuplicateOfItself", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		ev := humanEvent("l1")
		fired := b.faults.Add(awsfault.Fault{Op: "DynamoDB.PutItem", LostAnswer: true})
		if a := decodeAck(t, b.postScript(script{Events: []message.Event{ev}})); a.results() != "l1=enqueued" || fired() != 1 {
			t.Fatalf("ack = %s (answer lost %d times), want enqueued", a.results(), fired())
		}
		if c, err := b.claim(ev); err != nil || c.State != store.ClaimEnqueued {
			t.Fatalf("claim = %+v, %v; want enqueued", c, err)
		}
		if got := b.queued(); len(got) != 1 {
			t.Fatalf("queued %d messages, want 1", len(got))
		}
	})

	// The send fails and the key is forgotten, but the delete's answer is
	// lost: its retry finds the key gone, which is what it wanted.
	t.Run("ForgetFindsItsOwnDelete", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		ev := humanEvent("l2")
		b.faults.Add(awsfault.Fault{Op: "SQS.SendMessage"})
		fired := b.faults.Add(awsfault.Fault{Op: "DynamoDB.DeleteItem", LostAnswer: true})
		if w := b.postScript(script{Events: []message.Event{ev}}); w.Code != http.StatusServiceUnavailable || fired() != 1 {
			t.Fatalf("status %d (answer lost %d times), want 503", w.Code, fired())
		}
		if _, err := b.claim(ev); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("claim: %v; want it forgotten", err)
		}
		if strings.Contains(b.logText(), "forget event claim failed") {
			t.Fatalf("a forget that happened is logged as failed:\n%s", b.logText())
		}
		if a := decodeAck(t, b.postScript(script{Events: []message.Event{ev}})); a.results() != "l2=enqueued" {
			t.Fatalf("retry ack = %s", a.results())
		}
	})

	// A proactive event is counted, its send fails, and the give-back's
	// answer is lost: the retry finds the count given back by itself, not
	// "moved on", and the platform's retry is counted once.
	t.Run("GiveBackFindsItsOwnWrite", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		tr, err := triage.New(triage.Config{Default: triage.Policy{Cooldown: 10 * time.Minute, DailyCap: 1}},
			b.pipeline.Claims.(*dynamostore.Store), b.pipeline.Log)
		if err != nil {
			t.Fatal(err)
		}
		b.pipeline.Triage = tr
		b.faults.Add(awsfault.Fault{Op: "SQS.SendMessage"})
		fired := b.faults.Add(awsfault.Fault{Op: "DynamoDB.UpdateItem", LostAnswer: true, Match: func(in any) bool {
			u, ok := in.(*dynamodb.UpdateItemInput)
			return ok && strings.Contains(aws.ToString(u.ConditionExpression), "#acc = :tok")
		}})
		ev := proactiveEvent("l3")
		if w := b.postScript(script{Events: []message.Event{ev}}); w.Code != http.StatusServiceUnavailable || fired() != 1 {
			t.Fatalf("status %d (answer lost %d times), want 503", w.Code, fired())
		}
		if strings.Contains(b.logText(), "give-back skipped") {
			t.Fatalf("a give-back that happened is logged as skipped:\n%s", b.logText())
		}
		if a := decodeAck(t, b.postScript(script{Events: []message.Event{ev}})); a.results() != "l3=enqueued" {
			t.Fatalf("retry ack = %s", a.results())
		}
		c, err := b.store.GetCounter(t.Context(), triage.CounterKey(ev.Thread))
		if err != nil || c.Days[t0.Format(triage.DayLayout)] != 1 {
			t.Fatalf("counter = %+v, %v; want the event counted once", c, err)
		}
	})
}
