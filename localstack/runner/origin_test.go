package runner_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/shared/message"
)

// slackBotMessage is a message another bot posted in a DM-like channel the
// bot reads, with metadata when given.
func slackBotMessage(ts, text string, metadata map[string]any) []byte {
	ev := map[string]any{
		"type": "message", "channel": "C0CHAN0001", "channel_type": "channel", "bot_id": "B0OTHER001",
		"user": "U0OTHER001", "text": "<@U0BOT00001> " + text, "ts": ts,
	}
	if metadata != nil {
		ev["metadata"] = metadata
	}
	b, _ := json.Marshal(map[string]any{
		"type": "event_callback", "team_id": "T0TEAM0001", "api_app_id": "A0APP00001",
		"event_id": "Ev" + strings.ReplaceAll(ts, ".", ""), "event_time": time.Now().Unix(),
		"authorizations": []map[string]any{{"team_id": "T0TEAM0001", "user_id": "U0BOT00001", "is_bot": true}},
		"event":          ev,
	})
	return b
}

// TestEchoOfParleysOutputIsDropped: with bots allowed, a bot's message that
// carries Parley's own origin tag is dropped, by tag; an untagged bot
// message with the same text reaches the agent. Without PARLEY_ALLOW_BOTS
// no bot does.
func TestEchoOfParleysOutputIsDropped(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{"PARLEY_ALLOW_BOTS": "true"}})
	tag := map[string]any{"event_type": "parley_unit", "event_payload": map[string]any{"unit": "x#error#1", "origin": "parley"}}
	if code, body := h.postSlack(slackBotMessage("1764432500.000100", "Sorry, something went wrong.", tag)); code != http.StatusOK || !strings.Contains(body, "parley_echo") {
		t.Fatalf("tagged echo: %d %s", code, body)
	}
	if code, body := h.postSlack(slackBotMessage("1764432500.000200", "Sorry, something went wrong.", nil)); code != http.StatusOK || !strings.Contains(body, "enqueued") {
		t.Fatalf("untagged bot message: %d %s", code, body)
	}
	h.waitDelivered(2, 20*time.Second)
	h.quiesce(20 * time.Second)
	if n := h.agent.calls(); n != 1 {
		t.Fatalf("the agent was asked %d times, want once (the untagged message)", n)
	}

	off := start(t, options{})
	if code, body := off.postSlack(slackBotMessage("1764432500.000300", "hi", nil)); code != http.StatusOK || !strings.Contains(body, `"bot"`) {
		t.Fatalf("a bot message with bots not allowed: %d %s", code, body)
	}
}

// TestSlackUnknownSendIsReconciled: a Slack send whose answer was lost is
// looked up in the thread by its unit's tag before anything is resent:
// found, it is recorded as sent; missing, it is sent again, once.
func TestSlackUnknownSendIsReconciled(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	// The message is posted, the answer lost.
	h.fake.Inject(fakeplatform.Fault{Platform: message.Slack, DropResponseAfterCommit: true})
	h.postSlack(slackDM("D0DM000001", "1764432600.000100", "hello"))
	d := h.waitDelivered(2, 30*time.Second)
	h.quiesce(30 * time.Second)
	if n := len(h.fake.Delivered()); n != 2 || d[0].Text != "echo: hello" {
		t.Fatalf("delivered %q: the posted bubble was sent again", texts(h.fake.Delivered()))
	}
	in := h.intentFor("evt#slack#T0TEAM0001#D0DM000001:1764432600.000100")
	if u := in.Units[0]; u.State != message.UnitSent || u.Resent || len(u.Receipt) != 1 || u.Receipt[0] != d[0].MessageID {
		t.Fatalf("unit %+v: want sent, found by its tag, not resent", u)
	}

	// Slack's edge fails before posting (a 502): nothing to find, so the
	// unit is sent again.
	h.fake.Inject(fakeplatform.Fault{Platform: message.Slack, Status: http.StatusBadGateway})
	h.postSlack(slackDM("D0DM000001", "1764432700.000100", "again"))
	h.waitDelivered(4, 30*time.Second)
	h.quiesce(30 * time.Second)
	if got := texts(h.fake.Delivered()); len(got) != 4 || got[2] != "echo: again" {
		t.Fatalf("delivered %q", got)
	}
	in = h.intentFor("evt#slack#T0TEAM0001#D0DM000001:1764432700.000100")
	if u := in.Units[0]; u.State != message.UnitSent || !u.Resent {
		t.Fatalf("unit %+v: want sent after a resend", u)
	}
}
