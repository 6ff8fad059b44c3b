package delivery

import (
	"testing"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
)

// TestFinalStatusReaction: the status reaction ends answered unless a
// bubble before it failed for good; a bubble a newer message superseded,
// and a reaction the platform refused, are no such failure.
func TestFinalStatusReaction(t *testing.T) {
	status := intent.Unit{ID: "status#1", Content: message.Content{React: &message.React{Emoji: "✅", Failed: "❌", Status: true, Received: "👀"}}}
	bubble := func(st message.UnitState, class message.FailureClass) intent.Unit {
		return intent.Unit{ID: "b#1", Content: message.Text("x"), State: st, FailureClass: class}
	}
	react := intent.Unit{ID: "react#1", Content: message.Content{React: &message.React{Emoji: "🦄"}}, State: message.UnitFailed, FailureClass: message.FailInvalidPayload}
	for name, c := range map[string]struct {
		units []intent.Unit
		want  string
	}{
		"Delivered":         {[]intent.Unit{bubble(message.UnitSent, ""), status}, "✅"},
		"NothingToSay":      {[]intent.Unit{status}, "✅"},
		"BubbleFailed":      {[]intent.Unit{bubble(message.UnitSent, ""), bubble(message.UnitFailed, message.FailPermission), status}, "❌"},
		"Superseded":        {[]intent.Unit{bubble(message.UnitSent, ""), bubble(message.UnitFailed, message.FailSuperseded), status}, "✅"},
		"ReactionRefused":   {[]intent.Unit{react, bubble(message.UnitSent, ""), status}, "✅"},
		"HeldUnknownIsSent": {[]intent.Unit{bubble(message.UnitUnknown, message.FailUnknown), status}, "✅"},
	} {
		in := intent.Intent{ID: "i", Units: c.units}
		got := final(in, len(c.units)-1)
		if got.Emoji != c.want || got.Received != "👀" {
			t.Errorf("%s: %+v, want %s", name, got, c.want)
		}
		if in.Units[len(c.units)-1].Content.React.Emoji != "✅" {
			t.Fatalf("%s: final changed the stored unit", name)
		}
	}
}
