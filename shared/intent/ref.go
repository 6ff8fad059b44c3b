package intent

import (
	"encoding/json"
	"errors"
	"fmt"
)

// RefVersion tags outbound.fifo message bodies.
const RefVersion = "parley.outbound.v1"

// Ref is the body of an outbound.fifo message: which unit of which intent to
// deliver. The text stays in the intent, written once before any enqueue.
type Ref struct {
	Version string `json:"version"`
	Intent  string `json:"intent"`
	Unit    string `json:"unit"`
	// Direct says Index is the unit's place in its intent: delivery may
	// lease it without reading the intent before (the lease's answer is the
	// intent). Absent in older bodies, which are delivered the usual way.
	Direct bool `json:"direct,omitempty"`
	Index  int  `json:"index,omitempty"`
	// First is how the previous release said Direct for an intent's first
	// unit; DecodeRef reads it as Direct at index 0.
	First bool `json:"first,omitempty"`
	// Event is the key of the event the unit answers (EventKeyOf its
	// intent's origin), the correlation id: the lines about the message
	// from before its intent is read carry it too. Absent in older bodies.
	Event string `json:"event,omitempty"`
}

// EncodeRef renders an outbound.fifo message body.
func EncodeRef(intentID, unitID string) []byte {
	b, _ := json.Marshal(Ref{Version: RefVersion, Intent: intentID, Unit: unitID})
	return b
}

// EncodeUnitRef renders the body of the unit at index of its intent
// (Ref.Direct).
func EncodeUnitRef(intentID, unitID string, index int) []byte {
	b, _ := json.Marshal(Ref{Version: RefVersion, Intent: intentID, Unit: unitID, Direct: true, Index: index})
	return b
}

// EncodeRefOf is EncodeRef of a unit of in, naming its event (Ref.Event).
func EncodeRefOf(in Intent, unitID string) []byte {
	b, _ := json.Marshal(Ref{Version: RefVersion, Intent: in.ID, Unit: unitID, Event: EventKeyOf(in.Origin)})
	return b
}

// EncodeUnitRefOf is EncodeUnitRef of the unit at index of in, naming its
// event (Ref.Event).
func EncodeUnitRefOf(in Intent, unitID string, index int) []byte {
	b, _ := json.Marshal(Ref{Version: RefVersion, Intent: in.ID, Unit: unitID, Direct: true, Index: index, Event: EventKeyOf(in.Origin)})
	return b
}

// ErrBadRef marks an outbound message body that cannot be delivered, ever.
var ErrBadRef = errors.New("bad outbound message")

// DecodeRef parses an outbound.fifo message body.
func DecodeRef(b []byte) (Ref, error) {
	var r Ref
	if err := json.Unmarshal(b, &r); err != nil {
		return Ref{}, fmt.Errorf("%w: %v", ErrBadRef, err)
	}
	if r.Version != RefVersion || r.Intent == "" || r.Unit == "" || r.Index < 0 {
		return Ref{}, fmt.Errorf("%w: version %q, intent %q, unit %q, index %d", ErrBadRef, r.Version, r.Intent, r.Unit, r.Index)
	}
	if r.First {
		r.Direct, r.Index, r.First = true, 0, false
	}
	if !r.Direct {
		r.Index = 0 // a place means nothing without Direct
	}
	return r, nil
}
