package intent_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
)

// humanEvent is a Telegram private-chat message.
func humanEvent(id string) message.Event {
	th := message.Thread{Platform: message.Telegram, Account: "7000000001", Chat: "42"}
	return message.Event{
		Platform: message.Telegram, Account: "7000000001", EventID: id, Kind: message.KindMessage,
		Thread: th, Sender: message.Sender{ID: "42", Name: "Ada"}, Text: "hello " + id,
		MessageID: "m" + id, ChatType: message.ChatPrivate, Time: t0,
	}
}

// proactiveEvent is a Standard Webhooks event for the same conversation.
func proactiveEvent(id string) message.Event {
	ev := humanEvent(id)
	ev.Platform, ev.Account, ev.Kind = message.Events, "events", message.KindProactive
	ev.Sender = message.Sender{ID: "ci", IsBot: true}
	ev.Data = map[string]any{"build": "failed", "n": 3.0}
	return ev
}

func TestInboundRoundTrip(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]intent.Inbound{
		"Message":  {Event: humanEvent("1")},
		"Deferred": {Event: proactiveEvent("2"), NotBefore: t0.Add(8 * time.Hour)},
		"Threaded": {Event: func() message.Event {
			ev := humanEvent("3")
			ev.Thread.Thread, ev.ChatType, ev.ReplyTo = "77", message.ChatGroup, "m2"
			return ev
		}()},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in.Version = "ignored: EncodeInbound sets it"
			b, err := intent.EncodeInbound(in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := intent.DecodeInbound(b)
			if err != nil {
				t.Fatalf("DecodeInbound(%s): %v", b, err)
			}
			if got.Version != intent.InboundVersion || !got.NotBefore.Equal(in.NotBefore) {
				t.Fatalf("version %q, not_before %v", got.Version, got.NotBefore)
			}
			a, _ := json.Marshal(got.Event)
			w, _ := json.Marshal(in.Event)
			if !bytes.Equal(a, w) {
				t.Fatalf("event changed in the round trip:\n got %s\nwant %s", a, w)
			}
			if in.NotBefore.IsZero() && bytes.Contains(b, []byte("not_before")) {
				t.Fatalf("a zero NotBefore is written: %s", b)
			}
		})
	}

	t.Run("UnencodableDataIsAnError", func(t *testing.T) {
		t.Parallel()
		ev := proactiveEvent("4")
		ev.Data = map[string]any{"f": func() {}}
		if _, err := intent.EncodeInbound(intent.Inbound{Event: ev}); err == nil {
			t.Fatal("EncodeInbound encoded a func")
		}
	})
}

func TestDecodeInboundRejects(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"NotJSON":      `hello`,
		"Empty":        ``,
		"NoVersion":    `{"event":{"platform":"telegram","event_id":"1"}}`,
		"OtherVersion": `{"version":"parley.inbound.v2","event":{"platform":"telegram","event_id":"1"}}`,
		"OutboundRef":  `{"version":"parley.outbound.v1","intent":"i","unit":"u"}`,
		"NoEvent":      `{"version":"parley.inbound.v1"}`,
		"NoEventID":    `{"version":"parley.inbound.v1","event":{"platform":"telegram"}}`,
		"NoPlatform":   `{"version":"parley.inbound.v1","event":{"event_id":"1"}}`,
		"BadTime":      `{"version":"parley.inbound.v1","event":{"platform":"telegram","event_id":"1","time":"yesterday"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := intent.DecodeInbound([]byte(body)); err == nil {
				t.Fatalf("DecodeInbound(%q) accepted it", body)
			}
		})
	}
}

// FuzzDecodeInbound: any body is rejected with an error or decodes to a
// complete message whose encoding is stable; never a panic.
func FuzzDecodeInbound(f *testing.F) {
	seed, _ := intent.EncodeInbound(intent.Inbound{Event: proactiveEvent("1"), NotBefore: t0})
	f.Add(seed)
	f.Add([]byte(`{"version":"parley.inbound.v1","event":{"platform":"telegram","event_id":"1","data":{"a":[1,{"b":null}]}}}`))
	f.Add([]byte(`{"version":"parley.inbound.v1","event":{"platform":"x","event_id":"\u0000"},"not_before":"0001-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"version":"parley.inbound.v1","event":{"platform":"x","event_id":"1","time":"9999-12-31T23:59:59.999999999+14:00"}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := intent.DecodeInbound(b)
		if err != nil {
			return
		}
		if in.Version != intent.InboundVersion || in.Event.EventID == "" || in.Event.Platform == "" {
			t.Fatalf("accepted an incomplete message: %+v", in)
		}
		enc, err := intent.EncodeInbound(in)
		if err != nil {
			// Times outside what JSON can hold (year > 9999) decode from
			// other layouts only; they must be refused, not panic.
			return
		}
		again, err := intent.DecodeInbound(enc)
		if err != nil {
			t.Fatalf("re-encoded message does not decode: %v\n%s", err, enc)
		}
		enc2, err := intent.EncodeInbound(again)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not stable:\n%s\n%s (%v)", enc, enc2, err)
		}
	})
}

// TestInboundMessageKeepsMarkupSmall (finding 8.12): json.Marshal writes each
// < > & as a six-byte escape, so a webhook body of markup grew sixfold on its
// way to inbound.fifo, past the queue's size limit, and was answered 503
// forever. The encoding keeps them as they are.
func TestInboundMessageKeepsMarkupSmall(t *testing.T) {
	t.Parallel()
	ev := humanEvent("1")
	ev.Text = strings.Repeat("<b>&amp;</b>", 10_000) // 120,000 bytes of markup
	b, err := intent.EncodeInbound(intent.Inbound{Event: ev})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > len(ev.Text)+1024 {
		t.Fatalf("a %d-byte text encodes to %d bytes: markup is escaped", len(ev.Text), len(b))
	}
	got, err := intent.DecodeInbound(b)
	if err != nil || got.Event.Text != ev.Text {
		t.Fatalf("round trip changed the text (%v)", err)
	}
}

// TestInboundDataKeepsLargeIntegersExact (finding 9.8): a number beyond
// float64's 53 bits reached the agent rounded (12345678901234567891 became
// 12345678901234567000). Decoding keeps every digit.
func TestInboundDataKeepsLargeIntegersExact(t *testing.T) {
	t.Parallel()
	body := []byte(`{"version":"parley.inbound.v1","event":{"platform":"events","account":"ci","event_id":"1",` +
		`"data":{"id":12345678901234567891,"nested":[{"n":-98765432109876543210}],"f":0.1}}}`)
	in, err := intent.DecodeInbound(body)
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(in.Event.Data)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"id":12345678901234567891`, `"n":-98765432109876543210`, `"f":0.1`} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("data re-encodes to %s; want it to hold %s", out, want)
		}
	}
}
