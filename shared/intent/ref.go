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
	// First says the unit is its intent's first: delivery may lease it
	// without reading the intent before (the lease's answer is the intent).
	// Absent in older bodies, which are delivered the usual way.
	First bool `json:"first,omitempty"`
}

// EncodeRef renders an outbound.fifo message body.
func EncodeRef(intentID, unitID string) []byte {
	b, _ := json.Marshal(Ref{Version: RefVersion, Intent: intentID, Unit: unitID})
	return b
}

// EncodeFirstRef renders the body of an intent's first unit (Ref.First).
func EncodeFirstRef(intentID, unitID string) []byte {
	b, _ := json.Marshal(Ref{Version: RefVersion, Intent: intentID, Unit: unitID, First: true})
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
	if r.Version != RefVersion || r.Intent == "" || r.Unit == "" {
		return Ref{}, fmt.Errorf("%w: version %q, intent %q, unit %q", ErrBadRef, r.Version, r.Intent, r.Unit)
	}
	return r, nil
}
