package ingress_test

import (
	"fmt"
	"testing"

	"github.com/parleyhq/parley/shared/ingress"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/triage"
)

func TestParseReactions(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"": "{false [] false false}", "off": "{false [] false false}", "on": "{true [] false false}",
		"👍,👎": "{true [👍 👎] false false}", "on, triage": "{true [] true false}", "👎,triage": "{true [👎] true false}",
	} {
		got, err := ingress.ParseReactions(in)
		if err != nil || fmt.Sprint(got) != want {
			t.Errorf("ParseReactions(%q) = %s, %v; want %s", in, fmt.Sprint(got), err, want)
		}
	}
	for _, in := range []string{"triage", "thumbs up", "yes please"} {
		if _, err := ingress.ParseReactions(in); err == nil {
			t.Errorf("ParseReactions(%q) accepted", in)
		}
	}
}

// TestOptionalKindsCostNothingWhenOff: a reaction, an edit and a deletion
// are ignored with their stable reasons, and the request makes no AWS call
// at all, unless the deployment takes them; taken, they are enqueued like
// messages; a reaction outside the listed emoji is ignored; taken through
// triage, a reaction is the triage's to suppress.
func TestOptionalKindsCostNothingWhenOff(t *testing.T) {
	t.Parallel()
	react := func(id, emoji string) message.Event {
		ev := humanEvent(id)
		ev.Kind, ev.Text, ev.Reaction = message.KindReaction, "", &message.Reaction{MessageID: "m1", Emoji: emoji}
		return ev
	}
	edit, del := humanEvent("e1"), humanEvent("d1")
	edit.Kind, del.Kind, del.Text = message.KindEdit, message.KindDelete, ""
	all := []message.Event{react("r1", "👍"), edit, del}

	off := newRig(t, &scriptReceiver{})
	if a := decodeAck(t, off.postScript(script{Events: all})); a.results() != "r1=ignored(reaction) e1=ignored(edited) d1=ignored(deleted)" {
		t.Fatalf("off: %s", a.results())
	}
	if n := off.awsCalls(); n != 0 {
		t.Fatalf("off: %d AWS calls for events nobody asked for", n)
	}

	on := newRig(t, &scriptReceiver{})
	on.pipeline.Optional = ingress.Optional{Reactions: true, Emoji: []string{"👎"}, Edits: true}
	if a := decodeAck(t, on.postScript(script{Events: append(all, react("r2", "👎"))})); a.results() != "r1=ignored(reaction) e1=enqueued d1=enqueued r2=enqueued" {
		t.Fatalf("on: %s", a.results())
	}
	if got := on.queued(); len(got) != 3 || got[2].in.Event.Reaction.Emoji != "👎" {
		t.Fatalf("on: queued %+v", got)
	}

	triaged := newRig(t, &scriptReceiver{})
	tr := &fakeTriage{decision: triage.Decision{Reason: triage.ReasonCooldown}}
	triaged.pipeline.Triage = tr
	triaged.pipeline.Optional = ingress.Optional{Reactions: true, TriageReactions: true}
	if a := decodeAck(t, triaged.postScript(script{Events: []message.Event{react("r3", "👍"), humanEvent("m2")}})); a.results() != "r3=suppressed(cooldown) m2=enqueued" {
		t.Fatalf("triaged: %s", a.results())
	}
	if tr.admitted.Load() != 1 {
		t.Fatalf("triage decided %d events, want the reaction only (a person's message is never triaged)", tr.admitted.Load())
	}
}
