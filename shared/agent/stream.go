package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// StreamType is the media type of a streamed reply: newline-delimited JSON,
// one StreamEvent a line (docs/schema/parley.stream.v1.json).
const StreamType = "application/x-ndjson"

// DefaultMaxStreamBytes bounds a whole streamed reply: its deltas repeat the
// text its final holds, so it is larger than a body.
const DefaultMaxStreamBytes = 4 << 20

// Stream event types.
const (
	// EventDelta appends Text to the reply being written: a preview only.
	EventDelta = "delta"
	// EventStatus replaces the status line ("searching flights…"); an
	// empty Text clears it. A preview only.
	EventStatus = "status"
	// EventFinal is the reply: an Envelope (openab.turn.v1) or a Text,
	// handled exactly as a body of application/json or text/plain. Nothing
	// after it is read.
	EventFinal = "final"
)

// StreamEvent is one line of a streamed reply.
type StreamEvent struct {
	Type string `json:"type"`
	// Text is a delta's text, a status line, or a final text reply.
	Text *string `json:"text,omitempty"`
	// Envelope is a final's openab.turn.v1 envelope, verbatim.
	Envelope json.RawMessage `json:"envelope,omitempty"`
}

// PreviewFunc receives a stream's deltas and status lines as they are read,
// never its final. It must not block: the stream is read on its goroutine.
type PreviewFunc func(StreamEvent)

// ErrStream: a streamed reply broke the protocol (a malformed or unknown
// line, no final event).
var ErrStream = errors.New("malformed agent reply stream")

// ReadStream reads a streamed reply from r: each delta and status line goes
// to preview (when not nil) as it is read, and the final comes back as the
// Reply a body would have been. A line over maxLine bytes, or a stream over
// maxTotal, is ErrReplyTooLarge; anything else against the protocol is
// ErrStream. A failure to read is returned as it is (the caller classifies
// it). Blank lines are skipped.
func ReadStream(r io.Reader, maxLine, maxTotal int64, preview PreviewFunc) (Reply, error) {
	lr := &io.LimitedReader{R: r, N: maxTotal + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, min(maxLine+1, 64<<10)), int(maxLine)+1)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if int64(len(sc.Bytes())) > maxLine {
			return Reply{}, fmt.Errorf("%w: line %d over %d bytes", ErrReplyTooLarge, line, maxLine)
		}
		if len(b) == 0 {
			continue
		}
		ev, err := decodeEvent(b)
		if err != nil && lr.N <= 0 {
			// The line was cut at the stream's limit.
			return Reply{}, fmt.Errorf("%w: stream over %d bytes", ErrReplyTooLarge, maxTotal)
		}
		if err != nil {
			return Reply{}, fmt.Errorf("%w: line %d: %w", ErrStream, line, err)
		}
		if ev.Type == EventFinal {
			if ev.Envelope != nil {
				return Reply{Status: 200, ContentType: "application/json", Body: ev.Envelope}, nil
			}
			return Reply{Status: 200, ContentType: "text/plain", Body: []byte(*ev.Text)}, nil
		}
		if preview != nil {
			preview(ev)
		}
	}
	err := sc.Err()
	switch {
	case errors.Is(err, bufio.ErrTooLong):
		return Reply{}, fmt.Errorf("%w: line %d over %d bytes", ErrReplyTooLarge, line+1, maxLine)
	case err != nil:
		return Reply{}, err
	case lr.N <= 0:
		return Reply{}, fmt.Errorf("%w: stream over %d bytes", ErrReplyTooLarge, maxTotal)
	}
	return Reply{}, fmt.Errorf("%w: it ended without a final event", ErrStream)
}

// decodeEvent decodes one line strictly: one JSON object, known members,
// the members its type needs and no others.
func decodeEvent(b []byte) (StreamEvent, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var ev StreamEvent
	if err := dec.Decode(&ev); err != nil {
		return StreamEvent{}, errors.New("not a stream event object")
	}
	if dec.More() {
		return StreamEvent{}, errors.New("more than one JSON value on the line")
	}
	switch ev.Type {
	case EventDelta, EventStatus:
		if ev.Text == nil || ev.Envelope != nil {
			return StreamEvent{}, fmt.Errorf("a %s event has a text and nothing else", ev.Type)
		}
		if ev.Type == EventDelta && *ev.Text == "" {
			return StreamEvent{}, errors.New("a delta event's text is empty")
		}
	case EventFinal:
		if (ev.Text == nil) == (ev.Envelope == nil) {
			return StreamEvent{}, errors.New("a final event has an envelope or a text, not both")
		}
		if ev.Envelope != nil && (ev.Envelope[0] != '{') {
			return StreamEvent{}, errors.New("a final event's envelope is not an object")
		}
	default:
		return StreamEvent{}, errors.New("unknown event type")
	}
	return ev, nil
}
