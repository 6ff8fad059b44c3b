package intent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// InboundVersion tags inbound.fifo message bodies.
const InboundVersion = "parley.inbound.v1"

// Inbound is the body of an inbound.fifo message.
type Inbound struct {
	Version string        `json:"version"`
	Event   message.Event `json:"event"`
	// NotBefore defers a proactive event. Parley holds deferred events on
	// their claims and enqueues them when due, so it writes none; a turn
	// still parks a message whose NotBefore lies ahead.
	NotBefore time.Time `json:"not_before,omitzero"`
	// ReceivedAt is when ingress accepted the event (for a deferred event,
	// when it is due): the start of the turn's retry budget, its age.
	ReceivedAt time.Time `json:"received_at,omitzero"`
}

// EncodeInbound renders an inbound.fifo message body. HTML escaping is off:
// json.Marshal writes each < > & as a six-byte \u escape, which can grow a
// body of markup sixfold, past the queue's message size limit. The queue
// escapes what SQS refuses itself (queue.Body).
func EncodeInbound(in Inbound) ([]byte, error) {
	in.Version = InboundVersion
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(in); err != nil {
		return nil, fmt.Errorf("encode inbound message: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// DecodeInbound parses an inbound.fifo message body. Numbers in the event's
// data stay json.Number, so an integer beyond float64's 53 bits reaches the
// agent exactly as the sender wrote it.
func DecodeInbound(b []byte) (Inbound, error) {
	var in Inbound
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		return Inbound{}, fmt.Errorf("decode inbound message: %w", err)
	}
	if in.Version != InboundVersion {
		return Inbound{}, fmt.Errorf("decode inbound message: unknown version %q", in.Version)
	}
	if in.Event.EventID == "" || in.Event.Platform == "" {
		return Inbound{}, fmt.Errorf("decode inbound message: no event")
	}
	return in, nil
}
