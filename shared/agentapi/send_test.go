package agentapi_test

import (
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/agentapi"
	"github.com/parleyhq/parley/shared/message"
)

var t0 = time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)

// TestDigestStandsForTheWholeSend: a send's digest changes with anything
// its idempotency key stands for, and only with that (finding 8).
func TestDigestStandsForTheWholeSend(t *testing.T) {
	t.Parallel()
	r := &agentapi.SendReceiver{}
	base := func() message.Event {
		return message.Event{Kind: message.KindSend, EventID: "k", Time: t0,
			Send: &message.Send{ContentType: "text/plain; charset=utf-8", Body: "hi", Relation: "followup"}}
	}
	d := r.Digest(base())
	later := base()
	later.Time = t0.Add(time.Hour)
	if r.Digest(later) != d {
		t.Error("the same send posted later has another digest")
	}
	for name, change := range map[string]func(*message.Event){
		"text":     func(e *message.Event) { e.Send.Body = "hello" },
		"type":     func(e *message.Event) { e.Send.ContentType = "application/json" },
		"relation": func(e *message.Event) { e.Send.Relation = "system" },
		"triage":   func(e *message.Event) { e.Send.Triage = true },
		"owner":    func(e *message.Event) { e.Owner = "42" },
	} {
		ev := base()
		change(&ev)
		if r.Digest(ev) == d {
			t.Errorf("%s changed, digest the same", name)
		}
	}
}
