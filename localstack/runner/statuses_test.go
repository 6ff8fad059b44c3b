package runner_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/parleyhq/parley/localstack/awsfault"
	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakewhatsapp"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
)

// waStatus is Meta's status webhook for the message d sent to Ada, echoing
// the tag the send attached.
func (h *harness) waStatus(d fakeplatform.Delivery, state string) fakewhatsapp.Status {
	var tag string
	_ = json.Unmarshal(d.Args["biz_opaque_callback_data"], &tag)
	return fakewhatsapp.Status{WABA: "102290129340398", PhoneNumberID: waPhone, DisplayPhoneNumber: "15550001234",
		ID: d.MessageID, To: waAda, State: state, Tag: tag, At: h.clock.Now()}
}

// holds reports whether a write carries s among its values (a receipt's
// message id).
func holds(in any, s string) bool {
	u, ok := in.(*dynamodb.UpdateItemInput)
	if !ok {
		return false
	}
	var walk func(v types.AttributeValue) bool
	walk = func(v types.AttributeValue) bool {
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			return strings.Contains(v.Value, s)
		case *types.AttributeValueMemberSS:
			return strings.Contains(strings.Join(v.Value, " "), s)
		case *types.AttributeValueMemberL:
			for _, e := range v.Value {
				if walk(e) {
					return true
				}
			}
		case *types.AttributeValueMemberM:
			for _, e := range v.Value {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	for _, v := range u.ExpressionAttributeValues {
		if walk(v) {
			return true
		}
	}
	return false
}

// TestWhatsAppStatusRacingItsReceipt: WhatsApp reports the second bubble
// failed before the delivery function has recorded its receipt. Ingress
// cannot apply it yet and queues it apart from the conversation; the turn
// applies it once the receipt is there, and the unit fails with its code,
// once. A status naming no unit writes and queues nothing.
func TestWhatsAppStatusRacingItsReceipt(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	var (
		mu  sync.Mutex
		ack string
	)
	// Just before the second bubble's receipt is written, its failure
	// arrives (a real signed webhook, through the ingress function).
	fired := h.faults.Add(awsfault.Fault{Op: "DynamoDB.UpdateItem", Pass: true,
		Match: func(in any) bool {
			d := h.fake.Delivered()
			return len(d) == 2 && holds(in, d[1].MessageID)
		},
		OnFire: func(any) {
			st := h.waStatus(h.fake.Delivered()[1], message.StatusFailed)
			st.Code, st.Title = 131026, "Message undeliverable"
			code, body := h.postWhatsApp(st.Body())
			mu.Lock()
			defer mu.Unlock()
			ack = http.StatusText(code) + " " + body
		}})
	if code, body := h.postWhatsApp(waText("wamid.RACE1", waAda, "/bubbles one | two", h.clock.Now())); code != http.StatusOK {
		t.Fatalf("webhook: %d %s", code, body)
	}
	h.waitDelivered(2, 30*time.Second)
	in := h.intentFor("evt#whatsapp#" + waPhone + "#wamid.RACE1")
	deadline := time.Now().Add(40 * time.Second)
	for u := in.Units[1]; u.State != message.UnitFailed; u = h.intentFor(in.Origin).Units[1] {
		if time.Now().After(deadline) {
			t.Fatalf("the failed status left the unit %s (fired %d)", u.State, fired())
		}
		time.Sleep(200 * time.Millisecond)
	}
	mu.Lock()
	got := ack
	mu.Unlock()
	if fired() != 1 || !strings.HasPrefix(got, "OK ") || !strings.Contains(got, `"status_wait"`) {
		t.Fatalf("the racing status was posted %d times, answered %q", fired(), got)
	}
	u := h.intentFor(in.Origin).Units[1]
	if !strings.Contains(u.FailureReason, "131026") || len(u.Receipt) != 1 || u.Reported != message.StatusFailed {
		t.Fatalf("failed unit %+v: want the platform's code and its receipt", u)
	}
	if u0 := h.intentFor(in.Origin).Units[0]; u0.State != message.UnitSent {
		t.Fatalf("the other unit moved to %s", u0.State)
	}

	// Statuses that name no unit: another unit of the intent, and a tag
	// that is no unit key.
	h.quiesce(30 * time.Second)
	before := totalsOf(h)
	d := h.fake.Delivered()
	stray := h.waStatus(d[0], message.StatusRead)
	stray.Tag = intent.UnitKey(in.ID, "b9#1")
	garbage := h.waStatus(d[0], message.StatusFailed)
	garbage.Tag, garbage.Code = "not a unit", 131026
	for _, st := range []fakewhatsapp.Status{stray, garbage} {
		if code, body := h.postWhatsApp(st.Body()); code != http.StatusOK || !strings.Contains(body, "status_unmatched") {
			t.Fatalf("status for no unit: %d %s", code, body)
		}
	}
	spent := totalsOf(h).minus(before)
	if spent.writes != 0 || spent.own != spent.ddb {
		t.Fatalf("statuses for no unit cost %d writes and %d SQS calls", spent.writes, spent.own-spent.ddb)
	}
	if u0 := h.intentFor(in.Origin).Units[0]; u0.State != message.UnitSent || u0.Reported != "" {
		t.Fatalf("a status for no unit moved unit 0: %s %q", u0.State, u0.Reported)
	}
}
