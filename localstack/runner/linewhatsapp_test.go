package runner_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeline"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakewhatsapp"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
)

const (
	lineAda = "Uada00000000000000000000000000042"
	waAda   = "15551230001"
)

func (h *harness) postLine(body []byte) (int, string) {
	return h.post("/line", fakeline.Headers(lineSecret, body), body)
}

func (h *harness) postWhatsApp(body []byte) (int, string) {
	return h.post("/whatsapp", fakewhatsapp.Sign(waSecret, body), body)
}

// lineText is a one-to-one text message webhook from user. Its reply token
// is unknown to the fake, so the first bubble goes by push after LINE's 400.
func lineText(eventID, user, text string, at time.Time) []byte {
	b, _ := json.Marshal(map[string]any{"destination": lineBot, "events": []map[string]any{{
		"type": "message", "webhookEventId": eventID, "timestamp": at.UnixMilli(), "mode": "active",
		"deliveryContext": map[string]any{"isRedelivery": false}, "replyToken": "tok" + eventID,
		"source":  map[string]any{"type": "user", "userId": user},
		"message": map[string]any{"type": "text", "id": "5830" + eventID[len(eventID)-6:], "quoteToken": "q" + eventID, "text": text},
	}}})
	return b
}

// waText is a text message webhook from the person from.
func waText(id, from, text string, at time.Time) []byte {
	b, _ := json.Marshal(map[string]any{"object": "whatsapp_business_account", "entry": []map[string]any{{
		"id": "102290129340398", "changes": []map[string]any{{"field": "messages", "value": map[string]any{
			"messaging_product": "whatsapp",
			"metadata":          map[string]string{"display_phone_number": "15550001234", "phone_number_id": waPhone},
			"contacts":          []map[string]any{{"profile": map[string]string{"name": "Ada Lovelace"}, "wa_id": from}},
			"messages": []map[string]any{{"from": from, "id": id, "timestamp": fmt.Sprint(at.Unix()),
				"type": "text", "text": map[string]string{"body": text}}},
		}}},
	}}})
	return b
}

// TestLINE: a message's bubbles arrive in order, once, even when the first
// push's answer is lost (the resend carries the same retry key, which LINE
// answers 409: sent); a redelivery is a duplicate; a batch of three events
// in two threads is three turns, each thread in order; a question is
// answered by the owner's quick reply.
func TestLINE(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	h.fake.Inject(fakeplatform.Fault{Platform: message.LINE, DropResponseAfterCommit: true})
	// An hour old: its reply token has expired, so the first bubble goes
	// by push, with a retry key.
	sample := readSampleAt(t, "line/message-user.json", time.Now().Add(-time.Hour))
	if code, body := h.postLine(sample); code != http.StatusOK {
		t.Fatalf("webhook: %d %s", code, body)
	}
	d := h.waitDelivered(2, 30*time.Second)
	if !strings.HasPrefix(d[0].Text, "echo: what's the weather") || !strings.Contains(d[1].Text, "via line") || d[0].Chat != lineAda {
		t.Fatalf("delivered %+v", texts(d))
	}
	if code, _ := h.postLine(sample); code != http.StatusOK {
		t.Fatalf("redelivery: %d", code)
	}
	h.quiesce(30 * time.Second)
	if n := len(h.fake.Delivered()); n != 2 {
		t.Fatalf("%d delivered, want 2: a lost answer or a redelivery doubled a bubble", n)
	}
	in := h.intentFor("evt#line#" + lineBot + "#01KB7Z8Y0R3GZ5M2WQ4N6P8T0A")
	if u := in.Units[0]; u.State != message.UnitSent || !u.Resent {
		t.Fatalf("first unit %+v: want sent after a resend", u)
	}

	// Three events, two threads, one POST.
	batch := readSample(t, "line/batch.json")
	if code, body := h.postLine(batch); code != http.StatusOK {
		t.Fatalf("batch: %d %s", code, body)
	}
	h.waitDelivered(2+6, 30*time.Second)
	ada := h.agent.texts("line:" + lineBot + ":" + lineAda)
	if !slices.Equal(ada, []string{"what's the weather in Lisbon tomorrow?", "also book a table for two", "at 8pm, please"}) {
		t.Fatalf("Ada's thread reached the agent as %q", ada)
	}
	if g := h.agent.texts("line:" + lineBot + ":C9e0000000000000000000000000c0de1"); !slices.Equal(g, []string{"and order the cake"}) {
		t.Fatalf("the group's thread reached the agent as %q", g)
	}

	// A question, answered with its quick reply.
	now := h.clock.Now()
	if code, _ := h.postLine(lineText("01KQ00000000000000000000A1", lineAda, "/ask seat", now)); code != http.StatusOK {
		t.Fatal("ask")
	}
	d = h.waitDelivered(8+2, 30*time.Second)
	q := d[len(d)-1]
	if len(q.Controls) == 0 {
		t.Fatalf("the question has no quick replies: %+v", q)
	}
	press := fakeline.Postback(lineBot, lineAda, lineAda, "01KQ00000000000000000000A2", "", now.Add(time.Second), q.Controls[0].Data)
	if code, _ := h.postLine(press); code != http.StatusOK {
		t.Fatal("press")
	}
	if got := h.waitAnswers(1); got[0].Action != "accept" || got[0].Content["seat"] == nil {
		t.Fatalf("answers %+v", got)
	}
}

// TestWhatsApp: a message's bubbles arrive in order, once, each tagged with
// its unit; a redelivery is a duplicate; a failed status after an accepted
// send marks that unit failed with its code; a question is answered by the
// owner's button.
func TestWhatsApp(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	// Dated now: a reply to a message of 2025 would be outside Ada's
	// 24-hour window.
	sample := readSampleAt(t, "whatsapp/text.json", h.clock.Now())
	for range 2 {
		if code, body := h.postWhatsApp(sample); code != http.StatusOK {
			t.Fatalf("webhook: %d %s", code, body)
		}
	}
	d := h.waitDelivered(2, 30*time.Second)
	h.quiesce(30 * time.Second)
	if n := len(h.fake.Delivered()); n != 2 || !strings.HasPrefix(d[0].Text, "echo: what") || d[0].Chat != waAda {
		t.Fatalf("delivered %q", texts(h.fake.Delivered()))
	}
	in := h.intentFor("evt#whatsapp#" + waPhone + "#wamid.FTE1NTUxMjMwMDAxFQIAEhgUM0VCMEFEQTAwMDAwMDAwMDAwMDAwMDE=")
	tag := intent.UnitKey(in.ID, in.Units[1].ID)
	var sentTag string
	_ = json.Unmarshal(d[1].Args["biz_opaque_callback_data"], &sentTag)
	if sentTag != tag {
		t.Fatalf("the send carried tag %q, want the unit's key %q", sentTag, tag)
	}

	// WhatsApp accepted the second bubble, then could not deliver it.
	st := fakewhatsapp.Status{WABA: "102290129340398", PhoneNumberID: waPhone, DisplayPhoneNumber: "15550001234",
		ID: d[1].MessageID, To: waAda, State: "failed", Tag: tag, Code: 131026, Title: "Message undeliverable", At: h.clock.Now()}
	if code, body := h.postWhatsApp(st.Body()); code != http.StatusOK {
		t.Fatalf("status: %d %s", code, body)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		u := h.intentFor(in.Origin).Units[1]
		if u.State == message.UnitFailed {
			if !strings.Contains(u.FailureReason, "131026") || len(u.Receipt) != 1 {
				t.Fatalf("failed unit %+v: want the platform's code and its receipt", u)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the failed status left the unit %s", u.State)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if u := h.intentFor(in.Origin).Units[0]; u.State != message.UnitSent {
		t.Fatalf("the other unit moved to %s", u.State)
	}

	// A question, answered with its first button.
	if code, _ := h.postWhatsApp(waText("wamid.ASK1", waAda, "/ask seat", h.clock.Now())); code != http.StatusOK {
		t.Fatal("ask")
	}
	d = h.waitDelivered(4, 30*time.Second)
	q := d[3]
	if len(q.Controls) == 0 {
		t.Fatalf("the question has no buttons: %+v", q)
	}
	reply := fakewhatsapp.Reply{WABA: "102290129340398", PhoneNumberID: waPhone, DisplayPhoneNumber: "15550001234",
		From: waAda, Name: "Ada Lovelace", ID: "wamid.PRESS1", Question: q.MessageID, Data: q.Controls[0].Data, Title: q.Controls[0].Label, At: h.clock.Now()}
	if code, _ := h.postWhatsApp(reply.Body()); code != http.StatusOK {
		t.Fatal("press")
	}
	if got := h.waitAnswers(1); got[0].Action != "accept" || got[0].Content["seat"] == nil {
		t.Fatalf("answers %+v", got)
	}
	// Someone else's button press is not an answer.
	other := reply
	other.From, other.ID = "15551230002", "wamid.PRESS2"
	h.postWhatsApp(other.Body())
	h.quiesce(30 * time.Second)
	if n := len(h.agent.gotAnswers()); n != 1 {
		t.Fatalf("%d answers, want 1", n)
	}
}

// waLarge is a webhook of about size bytes: a text message from the person
// from, batched with changes of another of the business's phone numbers,
// as Meta batches them (it documents payloads of up to 3 MB).
func waLarge(id, from, text string, at time.Time, size int) []byte {
	var ours struct {
		Object string           `json:"object"`
		Entry  []map[string]any `json:"entry"`
	}
	if err := json.Unmarshal(waText(id, from, text, at), &ours); err != nil {
		panic(err)
	}
	changes := ours.Entry[0]["changes"].([]any)
	other := map[string]any{"field": "messages", "value": map[string]any{
		"messaging_product": "whatsapp",
		"metadata":          map[string]string{"display_phone_number": "15550009999", "phone_number_id": "109999999999999"},
		"messages": []map[string]any{{"from": "15551239999", "id": "wamid.OTHER", "timestamp": fmt.Sprint(at.Unix()),
			"type": "text", "text": map[string]string{"body": strings.Repeat("x", 4000)}}},
	}}
	for n := len(waText(id, from, text, at)); n < size; n += 4200 {
		changes = append(changes, other)
	}
	ours.Entry[0]["changes"] = changes
	b, err := json.Marshal(ours)
	if err != nil {
		panic(err)
	}
	return b
}

// TestWhatsAppTakesMetasLargestPayloads: a webhook of up to 3 MB, the most
// Meta documents, is taken (refused, Meta would retry it for days and the
// person's message in it would never arrive); a larger one is refused 413
// before anything is written.
func TestWhatsAppTakesMetasLargestPayloads(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	big := waLarge("wamid.BIG1", waAda, "hello from a big batch", h.clock.Now(), 2_900_000)
	if code, body := h.postWhatsApp(big); code != http.StatusOK {
		t.Fatalf("a %d-byte webhook: %d %.200s", len(big), code, body)
	}
	if d := h.waitDelivered(1, 30*time.Second); !strings.HasPrefix(d[0].Text, "echo: hello from a big batch") {
		t.Fatalf("delivered %q", texts(d))
	}
	tooBig := waLarge("wamid.BIG2", waAda, "too big", h.clock.Now(), 3<<20+4096)
	if code, body := h.postWhatsApp(tooBig); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a %d-byte webhook: %d %.200s; want 413", len(tooBig), code, body)
	}
	h.quiesce(30 * time.Second)
	if n := len(h.fake.Delivered()); n != 2 {
		t.Fatalf("%d delivered, want the first message's 2 bubbles only", n)
	}
}
