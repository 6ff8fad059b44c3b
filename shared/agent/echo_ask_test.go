package agent

import (
	"testing"

	env "github.com/parleyhq/parley/shared/envelope"
	"github.com/parleyhq/parley/shared/message"
)

// TestEchoAsks: /ask answers with a valid envelope asking the named form.
func TestEchoAsks(t *testing.T) {
	t.Parallel()
	for form, fields := range map[string]int{"": 3, "seat": 1, "extras": 1, "note": 1, "optional": 1} {
		req := TurnRequest{Version: Version, TurnID: "t", Event: message.Event{Text: "/ask " + form}}
		ctype, body := echoReply(req)
		plan, err := env.Build(env.Reply{Body: body, ContentType: ctype}, env.Config{}, message.Capabilities{TextLimit: 4096, Counting: message.CountRunes})
		if err != nil || plan.Next.Type != env.NextAsk || plan.Next.Ask == nil || len(plan.Next.Ask.Fields) != fields || len(plan.Units) != 1 {
			t.Fatalf("/ask %s: %+v %v", form, plan, err)
		}
	}
}
