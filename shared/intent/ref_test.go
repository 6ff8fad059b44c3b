package intent_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/intent"
)

func TestRefRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ intent, unit string }{
		{intent.IDFor("evt#telegram#1#1"), "bubble_1#1"},
		{"i", "u"},
		{`quo"te\back`, "üñí#2"},
		{"<script>&", "\u2028"},
	} {
		b := intent.EncodeRef(tc.intent, tc.unit)
		r, err := intent.DecodeRef(b)
		if err != nil {
			t.Fatalf("DecodeRef(EncodeRef(%q, %q)): %v", tc.intent, tc.unit, err)
		}
		if r.Version != intent.RefVersion || r.Intent != tc.intent || r.Unit != tc.unit {
			t.Fatalf("round trip of (%q, %q) = %+v", tc.intent, tc.unit, r)
		}
	}
	// The wire form is the documented one.
	var wire map[string]string
	if err := json.Unmarshal(intent.EncodeRef("i1", "a#1"), &wire); err != nil ||
		wire["version"] != "parley.outbound.v1" || wire["intent"] != "i1" || wire["unit"] != "a#1" || len(wire) != 3 {
		t.Fatalf("EncodeRef wire form = %v (%v)", wire, err)
	}
}

// TestUnitRef: a unit's body carries its place in the intent, and the
// previous release's first-unit body reads as the same.
func TestUnitRef(t *testing.T) {
	t.Parallel()
	r, err := intent.DecodeRef(intent.EncodeUnitRef("i1", "b#1", 2))
	if err != nil || r != (intent.Ref{Version: intent.RefVersion, Intent: "i1", Unit: "b#1", Direct: true, Index: 2}) {
		t.Fatalf("DecodeRef(EncodeUnitRef) = %+v, %v", r, err)
	}
	r, err = intent.DecodeRef([]byte(`{"version":"parley.outbound.v1","intent":"i1","unit":"a#1","first":true}`))
	if err != nil || r != (intent.Ref{Version: intent.RefVersion, Intent: "i1", Unit: "a#1", Direct: true}) {
		t.Fatalf("DecodeRef(a first-unit body) = %+v, %v", r, err)
	}
	if r, err := intent.DecodeRef(intent.EncodeRef("i1", "a#1")); err != nil || r.Direct {
		t.Fatalf("a plain body reads as %+v, %v; want the usual way", r, err)
	}
}

func TestDecodeRefRejects(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"Empty":          ``,
		"NotJSON":        `intent=1`,
		"Array":          `["parley.outbound.v1","i","u"]`,
		"NoVersion":      `{"intent":"i","unit":"u"}`,
		"OtherVersion":   `{"version":"parley.outbound.v2","intent":"i","unit":"u"}`,
		"InboundMessage": `{"version":"parley.inbound.v1","event":{}}`,
		"NoIntent":       `{"version":"parley.outbound.v1","unit":"u"}`,
		"NoUnit":         `{"version":"parley.outbound.v1","intent":"i"}`,
		"WrongType":      `{"version":"parley.outbound.v1","intent":1,"unit":"u"}`,
		"Truncated":      `{"version":"parley.outbound.v1","intent":"i","unit":"u"`,
		"NegativeIndex":  `{"version":"parley.outbound.v1","intent":"i","unit":"u","direct":true,"index":-1}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := intent.DecodeRef([]byte(body)); !errors.Is(err, intent.ErrBadRef) {
				t.Fatalf("DecodeRef(%q) = %v, want ErrBadRef", body, err)
			}
		})
	}
}

// FuzzDecodeRef: any body either decodes to a complete ref that re-encodes to
// itself, or fails with ErrBadRef; never a panic.
func FuzzDecodeRef(f *testing.F) {
	f.Add(intent.EncodeRef("0123456789abcdef0123456789abcdef", "bubble_1#1"))
	f.Add([]byte(`{"version":"parley.outbound.v1","intent":"i","unit":"u","extra":[1,2]}`))
	f.Add([]byte(`{"version":"parley.outbound.v1","intent":"\ud800","unit":"\u0000"}`))
	f.Add([]byte(`{"version":"parley.outbound.v1","intent":"","unit":"u"}`))
	f.Add(intent.EncodeUnitRef("i", "u", 3))
	f.Add([]byte(`{"version":"parley.outbound.v1","intent":"i","unit":"u","first":true,"index":4}`))
	f.Add([]byte(`null`))
	f.Add([]byte("\xff\xfe"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := intent.DecodeRef(b)
		if err != nil {
			if !errors.Is(err, intent.ErrBadRef) {
				t.Fatalf("error %v does not wrap ErrBadRef", err)
			}
			return
		}
		if r.Version != intent.RefVersion || r.Intent == "" || r.Unit == "" {
			t.Fatalf("accepted an incomplete ref %+v", r)
		}
		body := intent.EncodeRef(r.Intent, r.Unit)
		if r.Direct {
			body = intent.EncodeUnitRef(r.Intent, r.Unit, r.Index)
		}
		again, err := intent.DecodeRef(body)
		if err != nil || again != r {
			t.Fatalf("re-encoded ref %+v decodes to %+v, %v", r, again, err)
		}
		if strings.Contains(string(intent.EncodeRef(r.Intent, r.Unit)), "\n") {
			t.Fatalf("encoded ref spans lines")
		}
	})
}

// TestRefNamesItsEvent: a unit's outbound message names the event its
// intent answers, the correlation id, also for a sequential post's intent,
// whose origin is the turn's event key and the post.
func TestRefNamesItsEvent(t *testing.T) {
	t.Parallel()
	for origin, want := range map[string]string{
		"evt#telegram#1#9": "evt#telegram#1#9",
		"evt#slack#T1#C1:1.2" + intent.PostMark + "p1": "evt#slack#T1#C1:1.2",
	} {
		in := intent.Intent{ID: intent.IDFor(origin), Origin: origin}
		for _, b := range [][]byte{intent.EncodeRefOf(in, "a#1"), intent.EncodeUnitRefOf(in, "a#1", 1)} {
			r, err := intent.DecodeRef(b)
			if err != nil || r.Event != want || r.Intent != in.ID || r.Unit != "a#1" {
				t.Errorf("DecodeRef(%s) = %+v, %v; want event %q", b, r, err, want)
			}
		}
	}
}
